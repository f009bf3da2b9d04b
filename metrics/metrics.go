package metrics

import (
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/lanleader/lanleader/wire"
)

// View is the agent's state at scrape time, from its latest snapshot.
type View struct {
	State      string         // leader, follower, candidate, conflict, starting
	Term       uint64         // exported as a float64: exact up to 2^53
	LeaderID   uint64         // 0: none known
	LeaderName string         // ignored when LeaderID is 0
	Members    map[string]int // memberlist status ("alive","suspect","dead","left") → count of OTHER members
	// Priority is this node's effective priority: the configured one less
	// the weights of its failing health checks (1 after a job hand-over).
	Priority uint16
	// ChecksFailing is how many of this node's health checks fail now.
	ChecksFailing int
	// VIPs are the virtual addresses and whether each is on this host.
	VIPs []VIP
	// Checks are the health checks and whether each is OK now.
	Checks []Check
	// Fault: this node is out of the elections now (a fault check
	// failed, a track file present, a link down).
	Fault bool
	// Role is this node's role (one of Roles); MemberRoles counts the
	// other alive members by the role their metadata announces.
	Role        string
	MemberRoles map[string]int
}

// Check is one health check in a View.
type Check struct {
	Name string // the label
	Up   bool   // OK now, by its rise and fall
}

// CheckResults lists the values of the check_result label of
// lanleader_check_runs_total.
var CheckResults = []string{"pass", "fail", "timeout"}

// VIP is one virtual address in a View.
type VIP struct {
	Address string // the label: 198.18.0.100/24
	Up      bool   // on this host now
}

// States lists the values of the state label of lanleader_state, in order.
var States = []string{"starting", "follower", "candidate", "leader", "conflict"}

// MemberStatuses lists the values of the status label of lanleader_members.
var MemberStatuses = []string{"alive", "suspect", "dead", "left"}

// DropReasons lists the values of the reason label of
// lanleader_packets_dropped_total: why a received datagram was dropped
// before the election machine saw it, or (sndbuf) why one sent was.
var DropReasons = []string{
	"short",    // wire.ErrShort: shorter than the header or its type's body
	"magic",    // wire.ErrBadMagic: not a lanleader packet
	"version",  // wire.ErrUnknownVersion: a protocol version we do not speak
	"type",     // wire.ErrUnknownType: a message type outside the enum
	"length",   // wire.ErrBadLength: a body length its type does not allow
	"trailing", // wire.ErrTrailing: bytes left after the body
	"cluster",  // a valid packet with another cluster id
	"ttl",      // IP TTL / hop limit below 255: it crossed a router
	"self",     // our own packet, looped back to us
	"conflict", // a packet from another node that uses our node_id
	"addr",     // a discovery beacon announcing an address other than its sender's
	"auth",     // with a key: no tag, or a tag that does not verify (without a key: a signed packet)
	"replay",   // with a key: a sequence number seen before, or an earlier run of its sender
	"outsider", // from a member that takes no part in elections (it runs another --algorithm)
	"notice",   // a NOTICE (a crashed leader's guard's) of a leadership this node neither follows nor voted for: another leader, another term
	"sndbuf",   // one this node sent that its kernel could not take at once (the socket's send buffer full)
}

// Hooks lists the values of the hook label of lanleader_hook_runs_total.
var Hooks = []string{"on_leader", "on_follower", "on_change"}

// HookOutcomes lists the values of the outcome label of
// lanleader_hook_runs_total.
var HookOutcomes = []string{
	"ok",      // exited 0
	"failed",  // exited non-zero, was killed by a signal, or did not start
	"timeout", // still running after the hook timeout: killed
	"dropped", // not run: the queue of hooks was full
}

// ReloadResults lists the values of the result label of
// lanleader_config_reloads_total.
var ReloadResults = []string{
	"ok",    // the new configuration was applied (but what needs a restart)
	"error", // it was refused: the running one is kept
}

// ElectionResults lists the values of the result label of
// lanleader_elections_total.
var ElectionResults = []string{
	"won",  // this node became leader
	"lost", // this node followed another node
}

// MessageTypes lists the values of the type label of
// lanleader_messages_sent_total and lanleader_messages_received_total: the
// protocol names of the wire message types, wire.Type(1).String() onwards
// (ELECTION, ANSWER, COORDINATOR, …). Count a message with
// WithLabelValues(msg.Type.String()).
var MessageTypes = messageTypes()

func messageTypes() []string {
	var names []string
	for t := 1; t <= 255; t++ {
		s := wire.Type(t).String()
		if strings.HasPrefix(s, "TYPE(") {
			break
		}
		names = append(names, s)
	}
	return names
}

// Metric types, as in the exposition format's # TYPE line.
const (
	typeCounter   = "counter"
	typeGauge     = "gauge"
	typeHistogram = "histogram"
)

// spec declares one lanleader metric. Every metric, and Describe, is built
// from these values, so the names live in exactly one place.
type spec struct {
	name   string
	typ    string
	labels []string
	help   string
}

var (
	specIsLeader = spec{"lanleader_is_leader", typeGauge, nil,
		"Whether this node is the leader (1) or not (0)."}
	specTerm = spec{"lanleader_term", typeGauge, nil,
		"Election term currently known at this node."}
	specLeaderInfo = spec{"lanleader_leader_info", typeGauge, []string{"leader_id", "leader_name"},
		"Leader known at this node, as labels (leader_id \"0\" and an empty leader_name when none is known); always 1."}
	specState = spec{"lanleader_state", typeGauge, []string{"state"},
		"Election state of this node: 1 for the current state, 0 for the others."}
	specMembers = spec{"lanleader_members", typeGauge, []string{"status"},
		"Number of other cluster members known to the membership layer, by status."}
	specElections = spec{"lanleader_elections_total", typeCounter, []string{"result"},
		"Elections this node finished, by result (won: it became leader; lost: it followed another node)."}
	specLeaderChanges = spec{"lanleader_leader_changes_total", typeCounter, nil,
		"Times the leader known at this node changed."}
	specMessagesSent = spec{"lanleader_messages_sent_total", typeCounter, []string{"type"},
		"Election messages sent by this node, by protocol message type."}
	specMessagesReceived = spec{"lanleader_messages_received_total", typeCounter, []string{"type"},
		"Election messages received and accepted by this node, by protocol message type."}
	specPacketsDropped = spec{"lanleader_packets_dropped_total", typeCounter, []string{"reason"},
		"Election datagrams dropped, by reason: received ones before reaching the election machine, and sent ones the kernel could not take at once (sndbuf)."}
	specFailover = spec{"lanleader_failover_seconds", typeHistogram, nil,
		"Time in seconds from the old leader's last word heard at this node (its last heartbeat, or its RESIGN) to a new leader known here; a preemption is not a failover."}
	specJobRunning = spec{"lanleader_job_running", typeGauge, nil,
		"Whether the leader-only job is running on this node (1) or not (0)."}
	specJobRestarts = spec{"lanleader_job_restarts_total", typeCounter, nil,
		"Times the leader-only job was restarted after it exited while this node led."}
	specPriority = spec{"lanleader_priority", typeGauge, nil,
		"Effective priority of this node: its configured priority less the weights of its failing health checks (1 while it is penalised for a failing job)."}
	specChecksFailing = spec{"lanleader_checks_failing", typeGauge, nil,
		"Health checks of this node that fail now."}
	specCheckUp = spec{"lanleader_check_up", typeGauge, []string{"check"},
		"Whether the health check is OK now (1) or failed (0), by its rise and fall."}
	specCheckRuns = spec{"lanleader_check_runs_total", typeCounter, []string{"check", "check_result"},
		"Runs of the health check, by result (pass, fail: non-zero exit, timeout)."}
	specFault = spec{"lanleader_fault", typeGauge, nil,
		"Whether this node is out of the elections now (1: the election interface has no carrier, a fault check failed, a track file is present or a link of the virtual addresses is down) or not (0)."}
	specHookRuns = spec{"lanleader_hook_runs_total", typeCounter, []string{"hook", "outcome"},
		"Hook runs (on_leader, on_follower, on_change), by outcome."}
	specConfigReloads = spec{"lanleader_config_reloads_total", typeCounter, []string{"result"},
		"Reloads of the configuration (SIGHUP), by result: ok (applied; settings that need a restart kept their value) or error (the running configuration kept)."}
	specVIPUp = spec{"lanleader_vip_up", typeGauge, []string{"address"},
		"Whether the virtual address is on this host now (1) or not (0)."}
	specVIPAnnouncements = spec{"lanleader_vip_announcements_total", typeCounter, []string{"address"},
		"Announcements (gratuitous ARP, unsolicited neighbour advertisements) of the virtual address sent by this node."}
	specVIPConflicts = spec{"lanleader_vip_conflicts_total", typeCounter, []string{"address"},
		"Times another host was found holding the virtual address at this node's start while no other leader did."}
	specRole = spec{"lanleader_role", typeGauge, []string{"role"},
		"Role of this node in the elections (candidate, witness, observer): 1 for its role, 0 for the others."}
	specMemberRoles = spec{"lanleader_member_roles", typeGauge, []string{"role"},
		"Number of other alive cluster members by the role they announce (candidate, witness, observer)."}
	specBuildInfo = spec{"lanleader_build_info", typeGauge, []string{"version"},
		"Build information of this lanleader binary, with its version as a label; always 1."}
)

// specs is every lanleader metric, in the order Describe lists them.
var specs = []*spec{
	&specIsLeader,
	&specTerm,
	&specLeaderInfo,
	&specState,
	&specMembers,
	&specElections,
	&specLeaderChanges,
	&specMessagesSent,
	&specMessagesReceived,
	&specPacketsDropped,
	&specFailover,
	&specJobRunning,
	&specJobRestarts,
	&specPriority,
	&specChecksFailing,
	&specCheckUp,
	&specCheckRuns,
	&specFault,
	&specHookRuns,
	&specVIPUp,
	&specVIPAnnouncements,
	&specVIPConflicts,
	&specConfigReloads,
	&specRole,
	&specMemberRoles,
	&specBuildInfo,
}

// failoverBuckets covers failovers from 10 ms (a resignation on a quiet
// LAN) to 30 s (a suspicion timeout with slow settings), in seconds.
var failoverBuckets = []float64{.01, .025, .05, .1, .2, .3, .5, .75, 1, 1.5, 2, 3, 5, 10, 30}

// Info describes one lanleader metric, for documentation.
type Info struct {
	Name   string // full metric name, e.g. "lanleader_term"
	Type   string // "counter", "gauge" or "histogram"
	Labels string // label names, comma-separated, in order; "" for none
	Help   string // the help string, as exposed
}

// Describe lists every lanleader_* metric that New registers (not the Go
// and process metrics), in a fixed order. It needs no registry.
func Describe() []Info {
	out := make([]Info, len(specs))
	for i, s := range specs {
		out[i] = Info{Name: s.name, Type: s.typ, Labels: strings.Join(s.labels, ","), Help: s.help}
	}
	return out
}

// Metrics holds the metrics the agent updates when events happen. Every
// field is safe for concurrent use.
type Metrics struct {
	Elections        *prometheus.CounterVec // lanleader_elections_total{result}, values in ElectionResults
	LeaderChanges    prometheus.Counter     // lanleader_leader_changes_total
	MessagesSent     *prometheus.CounterVec // lanleader_messages_sent_total{type}, values in MessageTypes
	MessagesReceived *prometheus.CounterVec // lanleader_messages_received_total{type}, values in MessageTypes
	PacketsDropped   *prometheus.CounterVec // lanleader_packets_dropped_total{reason}, values in DropReasons
	Failover         prometheus.Histogram   // lanleader_failover_seconds
	JobRunning       prometheus.Gauge       // lanleader_job_running
	JobRestarts      prometheus.Counter     // lanleader_job_restarts_total
	HookRuns         *prometheus.CounterVec // lanleader_hook_runs_total{hook,outcome}, values in Hooks and HookOutcomes
	ConfigReloads    *prometheus.CounterVec // lanleader_config_reloads_total{result}, values in ReloadResults
	// CheckRuns counts by the configured checks' names (their check
	// label), whose series CheckInit creates.
	CheckRuns *prometheus.CounterVec // lanleader_check_runs_total{check,check_result}, check_result in CheckResults
	// VIPAnnouncements and VIPConflicts count by the configured addresses
	// (their address label), whose series VIPInit creates.
	VIPAnnouncements *prometheus.CounterVec // lanleader_vip_announcements_total{address}
	VIPConflicts     *prometheus.CounterVec // lanleader_vip_conflicts_total{address}
}

// VIPInit creates the series of the virtual address addr (its label,
// 198.18.0.100/24) at 0. The address label takes its values from the
// configured addresses only.
func (m *Metrics) VIPInit(addr string) {
	m.VIPAnnouncements.WithLabelValues(addr)
	m.VIPConflicts.WithLabelValues(addr)
}

// CheckInit creates the series of the health check name at 0.
func (m *Metrics) CheckInit(name string) {
	for _, r := range CheckResults {
		m.CheckRuns.WithLabelValues(name, r)
	}
}

// New registers every lanleader metric on reg, plus the Go and process
// collectors (collectors.NewGoCollector, collectors.NewProcessCollector),
// and lanleader_build_info{version} = 1. Every series of every vector is
// created at 0. view is called at each scrape, from the scraping goroutine
// (it must be safe to call from any goroutine and should return quickly);
// New does not call it.
//
// Like prometheus.MustRegister, New panics if reg refuses a collector, for
// example when New was already called on reg: the panic value is an error
// that wraps the registry's (a prometheus.AlreadyRegisteredError in that
// case). It also panics if reg or view is nil.
func New(reg prometheus.Registerer, version string, view func() View) *Metrics {
	if reg == nil || view == nil {
		panic("metrics: New needs a non-nil registry and view function")
	}
	m := &Metrics{
		Elections:        specElections.counterVec(ElectionResults),
		LeaderChanges:    specLeaderChanges.counter(),
		MessagesSent:     specMessagesSent.counterVec(MessageTypes),
		MessagesReceived: specMessagesReceived.counterVec(MessageTypes),
		PacketsDropped:   specPacketsDropped.counterVec(DropReasons),
		Failover: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    specFailover.name,
			Help:    specFailover.help,
			Buckets: failoverBuckets,
		}),
		JobRunning:       specJobRunning.gauge(),
		JobRestarts:      specJobRestarts.counter(),
		HookRuns:         prometheus.NewCounterVec(prometheus.CounterOpts{Name: specHookRuns.name, Help: specHookRuns.help}, specHookRuns.labels),
		ConfigReloads:    specConfigReloads.counterVec(ReloadResults),
		VIPAnnouncements: specVIPAnnouncements.counterVec(nil),
		VIPConflicts:     specVIPConflicts.counterVec(nil),
		CheckRuns:        prometheus.NewCounterVec(prometheus.CounterOpts{Name: specCheckRuns.name, Help: specCheckRuns.help}, specCheckRuns.labels),
	}
	for _, h := range Hooks {
		for _, o := range HookOutcomes {
			m.HookRuns.WithLabelValues(h, o)
		}
	}
	buildInfo := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: specBuildInfo.name, Help: specBuildInfo.help}, specBuildInfo.labels)
	buildInfo.WithLabelValues(version).Set(1)

	for _, c := range []prometheus.Collector{
		newStateCollector(view),
		m.Elections,
		m.LeaderChanges,
		m.MessagesSent,
		m.MessagesReceived,
		m.PacketsDropped,
		m.Failover,
		m.JobRunning,
		m.JobRestarts,
		m.HookRuns,
		m.ConfigReloads,
		m.CheckRuns,
		m.VIPAnnouncements,
		m.VIPConflicts,
		buildInfo,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			panic(fmt.Errorf("metrics: registering lanleader metrics: %w", err))
		}
	}
	return m
}

func (s *spec) counter() prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: s.name, Help: s.help})
}

func (s *spec) gauge() prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: s.name, Help: s.help})
}

// counterVec returns a vector with one label and creates the series of
// every value in values, so that each exists at 0 from the start.
func (s *spec) counterVec(values []string) *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: s.name, Help: s.help}, s.labels)
	for _, value := range values {
		v.WithLabelValues(value)
	}
	return v
}

func (s *spec) desc() *prometheus.Desc {
	return prometheus.NewDesc(s.name, s.help, s.labels, nil)
}
