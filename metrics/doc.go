// Package metrics defines lanleader's Prometheus metrics: their names, help
// strings, labels and label values, and the collector that exports the
// agent's state at scrape time. It does nothing else.
//
// # Names are the interface
//
// Metric names, label names and label values are part of lanleader's
// interface (docs/monitoring.md lists them): dashboards and alerts are
// written against them. They are declared once, in metrics.go, and every
// metric is built from those declarations; [Describe] lists them in a fixed
// order for the table of docs/monitoring.md and its test. Renaming one is a
// breaking change. The label values of every vector are fixed lists ([States],
// [MemberStatuses], [DropReasons], [ElectionResults], [MessageTypes]) and
// [New] creates every series at 0, so a rate() or an absent() alert works
// from the first scrape.
//
// # Registry
//
// The agent owns the registry and passes it to [New]; this package never
// touches prometheus.DefaultRegisterer. New registers every lanleader_*
// metric, lanleader_build_info and the Go and process collectors, and
// panics, as prometheus.MustRegister does, when a collector cannot be
// registered (for example when New is called twice on one registry): that
// is a programming error, found by the first test that builds an agent.
//
// # Two kinds of metrics
//
// Events (elections, messages, dropped packets, failover times, job
// restarts) are counters and a histogram in [Metrics], updated by the agent
// when they happen. State that already lives in the agent (its role, term,
// leader and members) is not mirrored into gauges by hand: a collector
// calls the view function given to New at each scrape and emits const
// metrics from the [View] it returns, so /metrics can never disagree with
// /status.
//
// What this package must not do: use the global registry, start
// goroutines, hold locks across a scrape, read the election machine or the
// membership directly (it sees only the View), or add a label whose values
// are not bounded by a list declared here (node names appear only in the
// single lanleader_leader_info series).
package metrics
