package metrics

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

// busyRegistry is a registry in which every series of every vector has
// counted something and the histogram has observations, seen from a node
// with the given identity.
func busyRegistry(t *testing.T, version string, v View) *prometheus.Registry {
	t.Helper()
	if v.VIPs == nil {
		v.VIPs = []VIP{{Address: "198.18.0.100/24", Up: true}}
	}
	if v.Checks == nil {
		v.Checks = []Check{{Name: "db", Up: true}}
	}
	reg, m := newTestRegistry(t, version, fixedView(v))
	m.VIPInit("198.18.0.100/24")
	m.CheckInit("db")
	m.CheckRuns.WithLabelValues("db", "pass").Inc()
	m.VIPAnnouncements.WithLabelValues("198.18.0.100/24").Add(5)
	m.VIPConflicts.WithLabelValues("198.18.0.100/24").Inc()
	for _, r := range ElectionResults {
		m.Elections.WithLabelValues(r).Inc()
	}
	for _, typ := range MessageTypes {
		m.MessagesSent.WithLabelValues(typ).Add(2)
		m.MessagesReceived.WithLabelValues(typ).Add(3)
	}
	for _, r := range DropReasons {
		m.PacketsDropped.WithLabelValues(r).Inc()
	}
	m.LeaderChanges.Inc()
	m.Failover.Observe(0.25)
	m.JobRunning.Set(1)
	m.JobRestarts.Inc()
	for _, h := range Hooks {
		for _, o := range HookOutcomes {
			m.HookRuns.WithLabelValues(h, o).Inc()
		}
	}
	return reg
}

// TestLintEverything: client_golang's promlint (the linter of `promtool
// check metrics`) finds nothing in any family the agent serves, the Go
// and process collectors' included, once every series has counted.
func TestLintEverything(t *testing.T) {
	reg := busyRegistry(t, "v1.0.0", View{State: "leader", Term: 3, LeaderID: 7, LeaderName: "host-a",
		Members: map[string]int{"alive": 2, "suspect": 1, "dead": 1, "left": 1}})
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) < len(Describe())+10 {
		t.Errorf("linted %d families, want lanleader's %d and the Go and process collectors'", len(mfs), len(Describe()))
	}
}

var (
	metricNameRE = regexp.MustCompile(`^lanleader_[a-z]+(_[a-z]+)*$`)
	labelNameRE  = regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
	// Units that are not Prometheus base units, as name parts.
	nonBaseUnits = []string{"ms", "millis", "milliseconds", "us", "microseconds", "ns", "nanoseconds",
		"minutes", "hours", "days", "kb", "kilobytes", "mb", "megabytes", "percent", "bits"}
	// Labels whose values name a node or a build: only on a one-series
	// _info metric, never on a metric with a series per value.
	identityLabels = []string{"leader_id", "leader_name", "version"}
)

// TestNamingConventions: metric and label names follow Prometheus's
// conventions (prometheus.io/docs/practices/naming): lanleader_ and
// lower-case words without digits (so no node id or number is ever part of
// a name), counters and only counters end in _total, the histogram is in
// seconds, no part is a non-base unit, label names are not reserved and
// do not clash with the target labels job and instance, and labels that
// identify a node or build appear only on _info gauges.
func TestNamingConventions(t *testing.T) {
	for _, m := range Describe() {
		if !metricNameRE.MatchString(m.Name) {
			t.Errorf("%s: not lanleader_ and lower-case words", m.Name)
		}
		if (m.Type == typeCounter) != strings.HasSuffix(m.Name, "_total") {
			t.Errorf("%s: a %s; counters and only counters end in _total", m.Name, m.Type)
		}
		if m.Type == typeHistogram && !strings.HasSuffix(m.Name, "_seconds") {
			t.Errorf("%s: a histogram of durations must be in seconds", m.Name)
		}
		for _, part := range strings.Split(m.Name, "_") {
			if slices.Contains(nonBaseUnits, part) {
				t.Errorf("%s: %q is not a base unit", m.Name, part)
			}
		}
		info := strings.HasSuffix(m.Name, "_info")
		if info && (m.Type != typeGauge || m.Labels == "") {
			t.Errorf("%s: an _info metric is a gauge with labels", m.Name)
		}
		if m.Labels == "" {
			continue
		}
		for _, l := range strings.Split(m.Labels, ",") {
			if !labelNameRE.MatchString(l) || slices.Contains([]string{"le", "quantile", "job", "instance"}, l) {
				t.Errorf("%s: label %q is not lower-case words, or is reserved or a target label", m.Name, l)
			}
			if slices.Contains(identityLabels, l) && !info {
				t.Errorf("%s: label %q identifies a node or build: only on an _info metric", m.Name, l)
			}
		}
	}
}

// valueLists maps each bounded label to its fixed list of values.
var valueLists = map[string][]string{
	"state": States, "status": MemberStatuses, "reason": DropReasons,
	"result": ElectionResults, "type": MessageTypes, "hook": Hooks, "outcome": HookOutcomes,
	"role": Roles,
	// address takes the configured virtual addresses only: busyRegistry's.
	"address": {"198.18.0.100/24"},
	// check takes the configured checks' names only: busyRegistry's.
	"check": {"db"}, "check_result": CheckResults,
}

// metricValueLists are the lists of labels whose name another metric
// uses with other values, by metric.
var metricValueLists = map[string]map[string][]string{
	"lanleader_config_reloads_total": {"result": ReloadResults},
}

// shape describes a registry's lanleader families: name, type, label
// names and series count, one line each.
func shape(t *testing.T, reg prometheus.Gatherer) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "lanleader_") {
			continue
		}
		var labels []string
		for _, l := range mf.GetMetric()[0].GetLabel() {
			labels = append(labels, l.GetName())
		}
		fmt.Fprintf(&b, "%s %s {%s} %d\n", mf.GetName(), mf.GetType(), strings.Join(labels, ","), len(mf.GetMetric()))
	}
	return b.String()
}

// TestLabelValuesAreBounded: every value of every lanleader label comes
// from its fixed list, except on the _info gauges, which have exactly one
// series; and the families, their labels and their series counts are the
// same whatever the node, its leader, its members and its version.
func TestLabelValuesAreBounded(t *testing.T) {
	views := []View{
		{State: "leader", Term: 3, LeaderID: 7, LeaderName: "host-a", Members: map[string]int{"alive": 2}},
		{State: "follower", Term: 1 << 40, LeaderID: 1<<53 - 1, LeaderName: "a-much-longer-host-name.example",
			Members: map[string]int{"alive": 60, "suspect": 2, "dead": 1, "left": 3, "bogus": 1}},
		{State: "weird", LeaderID: 0, LeaderName: "stale"},
	}
	var first string
	for i, v := range views {
		reg := busyRegistry(t, fmt.Sprintf("v0.%d.0", i), v)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if !strings.HasPrefix(mf.GetName(), "lanleader_") {
				continue
			}
			checkBounded(t, mf)
		}
		s := shape(t, reg)
		if i == 0 {
			first = s
			continue
		}
		if s != first {
			t.Errorf("view %d: families differ from view 0's:\n%s\nview 0:\n%s", i, s, first)
		}
	}
	want := `lanleader_build_info GAUGE {version} 1
lanleader_check_runs_total COUNTER {check,check_result} 3
lanleader_check_up GAUGE {check} 1
lanleader_checks_failing GAUGE {} 1
lanleader_config_reloads_total COUNTER {result} 2
lanleader_elections_total COUNTER {result} 2
lanleader_failover_seconds HISTOGRAM {} 1
lanleader_fault GAUGE {} 1
lanleader_hook_runs_total COUNTER {hook,outcome} 12
lanleader_is_leader GAUGE {} 1
lanleader_job_restarts_total COUNTER {} 1
lanleader_job_running GAUGE {} 1
lanleader_leader_changes_total COUNTER {} 1
lanleader_leader_info GAUGE {leader_id,leader_name} 1
lanleader_member_roles GAUGE {role} 3
lanleader_members GAUGE {status} 4
lanleader_messages_received_total COUNTER {type} 17
lanleader_messages_sent_total COUNTER {type} 17
lanleader_packets_dropped_total COUNTER {reason} 16
lanleader_priority GAUGE {} 1
lanleader_role GAUGE {role} 3
lanleader_state GAUGE {state} 5
lanleader_term GAUGE {} 1
lanleader_vip_announcements_total COUNTER {address} 1
lanleader_vip_conflicts_total COUNTER {address} 1
lanleader_vip_up GAUGE {address} 1
`
	if first != want {
		t.Errorf("families:\n%s\nwant:\n%s", first, want)
	}
}

func checkBounded(t *testing.T, mf *dto.MetricFamily) {
	t.Helper()
	name := mf.GetName()
	if strings.HasSuffix(name, "_info") {
		if len(mf.GetMetric()) != 1 || mf.GetMetric()[0].GetGauge().GetValue() != 1 {
			t.Errorf("%s: %d series, want one, of value 1", name, len(mf.GetMetric()))
		}
		return
	}
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			list, ok := valueLists[l.GetName()]
			if own, found := metricValueLists[name][l.GetName()]; found {
				list, ok = own, true
			}
			if !ok {
				t.Errorf("%s: label %s has no fixed list of values", name, l.GetName())
				continue
			}
			if !slices.Contains(list, l.GetValue()) {
				t.Errorf("%s: %s=%q is not in its list %q", name, l.GetName(), l.GetValue(), list)
			}
		}
	}
}
