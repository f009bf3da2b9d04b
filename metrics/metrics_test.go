package metrics

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

// newTestRegistry builds a pedantic registry (it checks that what a
// collector collects matches what it describes) with New on it.
func newTestRegistry(t *testing.T, version string, view func() View) (*prometheus.Registry, *Metrics) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	m := New(reg, version, view)
	return reg, m
}

func fixedView(v View) func() View { return func() View { return v } }

const stateHelp = `
# HELP lanleader_is_leader Whether this node is the leader (1) or not (0).
# TYPE lanleader_is_leader gauge
# HELP lanleader_term Election term currently known at this node.
# TYPE lanleader_term gauge
# HELP lanleader_leader_info Leader known at this node, as labels (leader_id "0" and an empty leader_name when none is known); always 1.
# TYPE lanleader_leader_info gauge
# HELP lanleader_state Election state of this node: 1 for the current state, 0 for the others.
# TYPE lanleader_state gauge
# HELP lanleader_members Number of other cluster members known to the membership layer, by status.
# TYPE lanleader_members gauge
# HELP lanleader_priority Effective priority of this node: its configured priority less the weights of its failing health checks (1 while it is penalised for a failing job).
# TYPE lanleader_priority gauge
# HELP lanleader_checks_failing Health checks of this node that fail now.
# TYPE lanleader_checks_failing gauge
# HELP lanleader_fault Whether this node is out of the elections now (1: the election interface has no carrier, a fault check failed, a track file is present or a link of the virtual addresses is down) or not (0).
# TYPE lanleader_fault gauge
`

func TestStateCollector(t *testing.T) {
	cases := []struct {
		name string
		view View
		want string
	}{
		{
			name: "leader",
			view: View{State: "leader", Term: 7, LeaderID: 3, LeaderName: "host-a",
				Members: map[string]int{"alive": 2, "dead": 1}, Priority: 150, ChecksFailing: 1},
			want: `
lanleader_is_leader 1
lanleader_term 7
lanleader_leader_info{leader_id="3",leader_name="host-a"} 1
lanleader_state{state="candidate"} 0
lanleader_state{state="conflict"} 0
lanleader_state{state="follower"} 0
lanleader_state{state="leader"} 1
lanleader_state{state="starting"} 0
lanleader_members{status="alive"} 2
lanleader_members{status="dead"} 1
lanleader_members{status="left"} 0
lanleader_members{status="suspect"} 0
lanleader_priority 150
lanleader_checks_failing 1
lanleader_fault 0
`,
		},
		{
			// No leader known: the name is ignored even if the snapshot
			// still carries one; nil Members is all zeros.
			name: "follower with no leader",
			view: View{State: "follower", Term: 12, LeaderID: 0, LeaderName: "stale"},
			want: `
lanleader_is_leader 0
lanleader_term 12
lanleader_leader_info{leader_id="0",leader_name=""} 1
lanleader_state{state="candidate"} 0
lanleader_state{state="conflict"} 0
lanleader_state{state="follower"} 1
lanleader_state{state="leader"} 0
lanleader_state{state="starting"} 0
lanleader_members{status="alive"} 0
lanleader_members{status="dead"} 0
lanleader_members{status="left"} 0
lanleader_members{status="suspect"} 0
lanleader_priority 0
lanleader_checks_failing 0
lanleader_fault 0
`,
		},
		{
			// Statuses outside MemberStatuses are not exported.
			name: "conflict",
			view: View{State: "conflict", Term: 4, LeaderID: 18446744073709551615, LeaderName: "host-b",
				Members: map[string]int{"alive": 1, "suspect": 1, "left": 3, "bogus": 9}},
			want: `
lanleader_is_leader 0
lanleader_term 4
lanleader_leader_info{leader_id="18446744073709551615",leader_name="host-b"} 1
lanleader_state{state="candidate"} 0
lanleader_state{state="conflict"} 1
lanleader_state{state="follower"} 0
lanleader_state{state="leader"} 0
lanleader_state{state="starting"} 0
lanleader_members{status="alive"} 1
lanleader_members{status="dead"} 0
lanleader_members{status="left"} 3
lanleader_members{status="suspect"} 1
lanleader_priority 0
lanleader_checks_failing 0
lanleader_fault 0
`,
		},
		{
			// A state outside States: every lanleader_state series is 0,
			// and a leader name that is not UTF-8 is repaired, not a panic.
			name: "unknown state",
			view: View{State: "", LeaderID: 5, LeaderName: "h\xffst"},
			want: `
lanleader_is_leader 0
lanleader_term 0
lanleader_leader_info{leader_id="5",leader_name="h\ufffdst"} 1
lanleader_state{state="candidate"} 0
lanleader_state{state="conflict"} 0
lanleader_state{state="follower"} 0
lanleader_state{state="leader"} 0
lanleader_state{state="starting"} 0
lanleader_members{status="alive"} 0
lanleader_members{status="dead"} 0
lanleader_members{status="left"} 0
lanleader_members{status="suspect"} 0
lanleader_priority 0
lanleader_checks_failing 0
lanleader_fault 0
`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := stateHelp + strings.ReplaceAll(tc.want, `\ufffd`, "\uFFFD")
			names := []string{"lanleader_is_leader", "lanleader_term", "lanleader_leader_info",
				"lanleader_state", "lanleader_members", "lanleader_priority", "lanleader_checks_failing", "lanleader_fault"}
			c := newStateCollector(fixedView(tc.view))
			if err := testutil.CollectAndCompare(c, strings.NewReader(want), names...); err != nil {
				t.Error(err)
			}
			// The same through a registry built by New.
			reg, _ := newTestRegistry(t, "test", fixedView(tc.view))
			if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestViewCalledOncePerScrapeNotAtNew(t *testing.T) {
	var calls atomic.Int64
	reg, _ := newTestRegistry(t, "test", func() View {
		calls.Add(1)
		return View{State: "starting"}
	})
	if n := calls.Load(); n != 0 {
		t.Fatalf("New called view %d times, want 0", n)
	}
	for i := 1; i <= 3; i++ {
		if _, err := reg.Gather(); err != nil {
			t.Fatal(err)
		}
		if n := calls.Load(); n != int64(i) {
			t.Fatalf("after %d scrapes view was called %d times", i, n)
		}
	}
}

func TestMessageTypesAreWireNames(t *testing.T) {
	// The label values are part of the interface. wire's enum is
	// append-only, so a new message type adds a value at the end: update
	// this list (and docs/monitoring.md) when it does.
	want := []string{"ELECTION", "ANSWER", "COORDINATOR", "HEARTBEAT", "HEARTBEAT_ACK",
		"RESIGN", "DISCOVER", "RING_ELECTION", "RING_COORDINATOR", "RING_ACK",
		"CR_ELECTION", "CR_ELECTED", "HS_PROBE", "HS_REPLY", "PROBE", "VOUCH", "NOTICE"}
	if !slices.Equal(MessageTypes, want) {
		t.Errorf("MessageTypes = %q\nwant %q", MessageTypes, want)
	}
}

func TestLabelValueListsAreUnique(t *testing.T) {
	for name, list := range map[string][]string{
		"States": States, "MemberStatuses": MemberStatuses, "DropReasons": DropReasons,
		"ElectionResults": ElectionResults, "MessageTypes": MessageTypes, "Roles": Roles,
	} {
		if len(list) == 0 {
			t.Errorf("%s is empty", name)
		}
		seen := map[string]bool{}
		for _, v := range list {
			if v == "" || seen[v] {
				t.Errorf("%s: empty or duplicate value %q", name, v)
			}
			seen[v] = true
		}
	}
	wantDrops := []string{"short", "magic", "version", "type", "length", "trailing",
		"cluster", "ttl", "self", "conflict", "addr", "auth", "replay", "outsider", "notice", "sndbuf"}
	if !slices.Equal(DropReasons, wantDrops) {
		t.Errorf("DropReasons = %q, want %q", DropReasons, wantDrops)
	}
}

// zeroSeries returns exposition text for a counter vector with every value
// at 0.
func zeroSeries(name, help, label string, values []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s counter\n", name, help, name)
	for _, v := range values {
		fmt.Fprintf(&b, "%s{%s=%q} 0\n", name, label, v)
	}
	return b.String()
}

// hookZeros is every series of lanleader_hook_runs_total at 0.
func hookZeros() string {
	var b strings.Builder
	for _, h := range Hooks {
		for _, o := range HookOutcomes {
			fmt.Fprintf(&b, "lanleader_hook_runs_total{hook=%q,outcome=%q} 0\n", h, o)
		}
	}
	return b.String()
}

func TestEventMetricsStartAtZero(t *testing.T) {
	reg, _ := newTestRegistry(t, "test", fixedView(View{State: "starting"}))
	want := `
# HELP lanleader_elections_total Elections this node finished, by result (won: it became leader; lost: it followed another node).
# TYPE lanleader_elections_total counter
lanleader_elections_total{result="lost"} 0
lanleader_elections_total{result="won"} 0
# HELP lanleader_leader_changes_total Times the leader known at this node changed.
# TYPE lanleader_leader_changes_total counter
lanleader_leader_changes_total 0
# HELP lanleader_packets_dropped_total Election datagrams dropped, by reason: received ones before reaching the election machine, and sent ones the kernel could not take at once (sndbuf).
# TYPE lanleader_packets_dropped_total counter
lanleader_packets_dropped_total{reason="addr"} 0
lanleader_packets_dropped_total{reason="auth"} 0
lanleader_packets_dropped_total{reason="cluster"} 0
lanleader_packets_dropped_total{reason="conflict"} 0
lanleader_packets_dropped_total{reason="length"} 0
lanleader_packets_dropped_total{reason="magic"} 0
lanleader_packets_dropped_total{reason="notice"} 0
lanleader_packets_dropped_total{reason="outsider"} 0
lanleader_packets_dropped_total{reason="replay"} 0
lanleader_packets_dropped_total{reason="self"} 0
lanleader_packets_dropped_total{reason="short"} 0
lanleader_packets_dropped_total{reason="sndbuf"} 0
lanleader_packets_dropped_total{reason="trailing"} 0
lanleader_packets_dropped_total{reason="ttl"} 0
lanleader_packets_dropped_total{reason="type"} 0
lanleader_packets_dropped_total{reason="version"} 0
# HELP lanleader_job_running Whether the leader-only job is running on this node (1) or not (0).
# TYPE lanleader_job_running gauge
lanleader_job_running 0
# HELP lanleader_job_restarts_total Times the leader-only job was restarted after it exited while this node led.
# TYPE lanleader_job_restarts_total counter
lanleader_job_restarts_total 0
# HELP lanleader_hook_runs_total Hook runs (on_leader, on_follower, on_change), by outcome.
# TYPE lanleader_hook_runs_total counter
` + hookZeros() + `# HELP lanleader_failover_seconds Time in seconds from the old leader's last word heard at this node (its last heartbeat, or its RESIGN) to a new leader known here; a preemption is not a failover.
# TYPE lanleader_failover_seconds histogram
lanleader_failover_seconds_bucket{le="0.01"} 0
lanleader_failover_seconds_bucket{le="0.025"} 0
lanleader_failover_seconds_bucket{le="0.05"} 0
lanleader_failover_seconds_bucket{le="0.1"} 0
lanleader_failover_seconds_bucket{le="0.2"} 0
lanleader_failover_seconds_bucket{le="0.3"} 0
lanleader_failover_seconds_bucket{le="0.5"} 0
lanleader_failover_seconds_bucket{le="0.75"} 0
lanleader_failover_seconds_bucket{le="1"} 0
lanleader_failover_seconds_bucket{le="1.5"} 0
lanleader_failover_seconds_bucket{le="2"} 0
lanleader_failover_seconds_bucket{le="3"} 0
lanleader_failover_seconds_bucket{le="5"} 0
lanleader_failover_seconds_bucket{le="10"} 0
lanleader_failover_seconds_bucket{le="30"} 0
lanleader_failover_seconds_bucket{le="+Inf"} 0
lanleader_failover_seconds_sum 0
lanleader_failover_seconds_count 0
` + zeroSeries("lanleader_messages_sent_total",
		"Election messages sent by this node, by protocol message type.", "type", MessageTypes) +
		zeroSeries("lanleader_messages_received_total",
			"Election messages received and accepted by this node, by protocol message type.", "type", MessageTypes)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"lanleader_elections_total", "lanleader_leader_changes_total",
		"lanleader_messages_sent_total", "lanleader_messages_received_total",
		"lanleader_packets_dropped_total", "lanleader_failover_seconds",
		"lanleader_job_running", "lanleader_job_restarts_total", "lanleader_hook_runs_total"); err != nil {
		t.Error(err)
	}
	// Every series exists: one per label value.
	for name, n := range map[string]int{
		"lanleader_elections_total":         len(ElectionResults),
		"lanleader_messages_sent_total":     len(MessageTypes),
		"lanleader_messages_received_total": len(MessageTypes),
		"lanleader_packets_dropped_total":   len(DropReasons),
		"lanleader_hook_runs_total":         len(Hooks) * len(HookOutcomes),
	} {
		if got := len(family(t, reg, name).GetMetric()); got != n {
			t.Errorf("%s has %d series, want %d", name, got, n)
		}
	}
}

func TestEventMetricsCount(t *testing.T) {
	reg, m := newTestRegistry(t, "test", fixedView(View{State: "leader"}))
	m.Elections.WithLabelValues("won").Inc()
	m.MessagesSent.WithLabelValues("HEARTBEAT").Add(3)
	m.MessagesReceived.WithLabelValues("HEARTBEAT_ACK").Add(2)
	m.PacketsDropped.WithLabelValues("ttl").Inc()
	m.LeaderChanges.Inc()
	m.JobRunning.Set(1)
	m.JobRestarts.Inc()
	m.Failover.Observe(0.15)
	m.Failover.Observe(40)

	for _, c := range []struct {
		coll prometheus.Collector
		want float64
	}{
		{m.Elections.WithLabelValues("won"), 1},
		{m.Elections.WithLabelValues("lost"), 0},
		{m.MessagesSent.WithLabelValues("HEARTBEAT"), 3},
		{m.MessagesSent.WithLabelValues("ELECTION"), 0},
		{m.MessagesReceived.WithLabelValues("HEARTBEAT_ACK"), 2},
		{m.PacketsDropped.WithLabelValues("ttl"), 1},
		{m.LeaderChanges, 1},
		{m.JobRunning, 1},
		{m.JobRestarts, 1},
	} {
		if got := testutil.ToFloat64(c.coll); got != c.want {
			t.Errorf("%v = %v, want %v", c.coll.(prometheus.Metric).Desc(), got, c.want)
		}
	}

	h := family(t, reg, "lanleader_failover_seconds").GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 2 || h.GetSampleSum() != 40.15 {
		t.Errorf("failover count %d sum %v, want 2 and 40.15", h.GetSampleCount(), h.GetSampleSum())
	}
	for _, b := range h.GetBucket() {
		want := uint64(0)
		if b.GetUpperBound() >= 0.2 {
			want = 1 // 0.15 lands in le=0.2; 40 only in +Inf
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("bucket le=%v has %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
}

func TestLint(t *testing.T) {
	reg, _ := newTestRegistry(t, "test", fixedView(View{State: "leader", Term: 1, LeaderID: 1, LeaderName: "a",
		Members: map[string]int{"alive": 1}}))
	var names []string
	for _, info := range Describe() {
		names = append(names, info.Name)
	}
	problems, err := testutil.GatherAndLint(reg, names...)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	problems, err = testutil.CollectAndLint(newStateCollector(fixedView(View{State: "follower"})))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint (state collector): %s: %s", p.Metric, p.Text)
	}
}

func TestDescribeMatchesRegistry(t *testing.T) {
	reg, m := newTestRegistry(t, "test", fixedView(View{State: "follower", LeaderID: 2, LeaderName: "b",
		VIPs: []VIP{{Address: "198.18.0.100/24"}}, Checks: []Check{{Name: "db"}}}))
	m.VIPInit("198.18.0.100/24")
	m.CheckInit("db")
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	gathered := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "lanleader_") {
			gathered[mf.GetName()] = mf
		}
	}
	described := map[string]bool{}
	for _, info := range Describe() {
		if described[info.Name] {
			t.Errorf("Describe lists %s twice", info.Name)
		}
		described[info.Name] = true
		mf, ok := gathered[info.Name]
		if !ok {
			t.Errorf("Describe lists %s, not gathered", info.Name)
			continue
		}
		if got := strings.ToLower(mf.GetType().String()); got != info.Type {
			t.Errorf("%s: type %s, Describe says %s", info.Name, got, info.Type)
		}
		if mf.GetHelp() != info.Help {
			t.Errorf("%s: help %q, Describe says %q", info.Name, mf.GetHelp(), info.Help)
		}
		if !strings.HasSuffix(info.Help, ".") || strings.Contains(info.Help, "\n") {
			t.Errorf("%s: help %q is not one sentence ending in a period", info.Name, info.Help)
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName())
			}
			if got := strings.Join(labels, ","); got != info.Labels {
				t.Errorf("%s: labels %q, Describe says %q", info.Name, got, info.Labels)
			}
		}
	}
	for name := range gathered {
		if !described[name] {
			t.Errorf("%s is gathered but not in Describe", name)
		}
	}
	// The order is fixed: the one of shared/DESIGN.md.
	wantOrder := []string{"lanleader_is_leader", "lanleader_term", "lanleader_leader_info",
		"lanleader_state", "lanleader_members", "lanleader_elections_total",
		"lanleader_leader_changes_total", "lanleader_messages_sent_total",
		"lanleader_messages_received_total", "lanleader_packets_dropped_total",
		"lanleader_failover_seconds", "lanleader_job_running",
		"lanleader_job_restarts_total", "lanleader_priority", "lanleader_checks_failing",
		"lanleader_check_up", "lanleader_check_runs_total", "lanleader_fault", "lanleader_hook_runs_total", "lanleader_vip_up", "lanleader_vip_announcements_total",
		"lanleader_vip_conflicts_total", "lanleader_config_reloads_total", "lanleader_role", "lanleader_member_roles", "lanleader_build_info"}
	var gotOrder []string
	for _, info := range Describe() {
		gotOrder = append(gotOrder, info.Name)
	}
	if !slices.Equal(gotOrder, wantOrder) {
		t.Errorf("Describe order %q\nwant %q", gotOrder, wantOrder)
	}
}

func TestBuildInfo(t *testing.T) {
	reg, _ := newTestRegistry(t, "v1.2.3", fixedView(View{}))
	want := `
# HELP lanleader_build_info Build information of this lanleader binary, with its version as a label; always 1.
# TYPE lanleader_build_info gauge
lanleader_build_info{version="v1.2.3"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "lanleader_build_info"); err != nil {
		t.Error(err)
	}
}

func TestGoAndProcessCollectors(t *testing.T) {
	reg, _ := newTestRegistry(t, "test", fixedView(View{}))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mf := range mfs {
		names = append(names, mf.GetName())
	}
	want := []string{"go_goroutines", "go_info"}
	if runtime.GOOS == "linux" {
		want = append(want, "process_cpu_seconds_total", "process_resident_memory_bytes", "process_start_time_seconds")
	}
	for _, n := range want {
		if !slices.Contains(names, n) {
			t.Errorf("%s not gathered; got %q", n, names)
		}
	}
}

func TestNewTwiceOnOneRegistryPanics(t *testing.T) {
	reg, _ := newTestRegistry(t, "test", fixedView(View{}))
	defer func() {
		r := recover()
		if r == nil {
			t.Fatal("second New on the same registry did not panic")
		}
		err, ok := r.(error)
		if !ok {
			t.Fatalf("panic value %T %v is not an error", r, r)
		}
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			t.Errorf("panic %v does not wrap a prometheus.AlreadyRegisteredError", err)
		}
		if !strings.HasPrefix(err.Error(), "metrics: ") {
			t.Errorf("panic %q does not name the package", err)
		}
	}()
	New(reg, "test", fixedView(View{}))
}

func TestNewOnSeparateRegistries(t *testing.T) {
	// Two agents in one process (tests, the demo) each own a registry.
	a, ma := newTestRegistry(t, "a", fixedView(View{State: "leader"}))
	b, _ := newTestRegistry(t, "b", fixedView(View{State: "follower"}))
	ma.LeaderChanges.Inc()
	if got := testutil.ToFloat64(ma.LeaderChanges); got != 1 {
		t.Errorf("a: leader changes %v, want 1", got)
	}
	if got := family(t, b, "lanleader_leader_changes_total").GetMetric()[0].GetCounter().GetValue(); got != 0 {
		t.Errorf("b: leader changes %v, want 0", got)
	}
	if got := family(t, a, "lanleader_is_leader").GetMetric()[0].GetGauge().GetValue(); got != 1 {
		t.Errorf("a: is_leader %v, want 1", got)
	}
	if got := family(t, b, "lanleader_is_leader").GetMetric()[0].GetGauge().GetValue(); got != 0 {
		t.Errorf("b: is_leader %v, want 0", got)
	}
}

func TestNewRejectsNil(t *testing.T) {
	for name, f := range map[string]func(){
		"nil registry": func() { New(nil, "x", fixedView(View{})) },
		"nil view":     func() { New(prometheus.NewRegistry(), "x", nil) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("New did not panic")
				}
			}()
			f()
		})
	}
}

// family gathers reg and returns the family called name.
func family(t *testing.T, reg prometheus.Gatherer, name string) *dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	t.Fatalf("%s not gathered", name)
	return nil
}

// The virtual addresses: lanleader_vip_up from the View at scrape time,
// one series per address; the counters exist at 0 for each address
// VIPInit was given, and for no other.
func TestVIPMetrics(t *testing.T) {
	reg, m := newTestRegistry(t, "test", fixedView(View{State: "leader",
		VIPs: []VIP{{Address: "198.18.0.100/24", Up: true}, {Address: "198.18.0.101/24"}}}))
	if err := testutil.GatherAndCompare(reg, strings.NewReader(""), "lanleader_vip_announcements_total",
		"lanleader_vip_conflicts_total"); err != nil {
		t.Errorf("before VIPInit: %v", err)
	}
	m.VIPInit("198.18.0.100/24")
	m.VIPInit("198.18.0.101/24")
	m.VIPAnnouncements.WithLabelValues("198.18.0.100/24").Add(5)
	m.VIPConflicts.WithLabelValues("198.18.0.101/24").Inc()
	want := `
# HELP lanleader_vip_up Whether the virtual address is on this host now (1) or not (0).
# TYPE lanleader_vip_up gauge
lanleader_vip_up{address="198.18.0.100/24"} 1
lanleader_vip_up{address="198.18.0.101/24"} 0
# HELP lanleader_vip_announcements_total Announcements (gratuitous ARP, unsolicited neighbour advertisements) of the virtual address sent by this node.
# TYPE lanleader_vip_announcements_total counter
lanleader_vip_announcements_total{address="198.18.0.100/24"} 5
lanleader_vip_announcements_total{address="198.18.0.101/24"} 0
# HELP lanleader_vip_conflicts_total Times another host was found holding the virtual address at this node's start while no other leader did.
# TYPE lanleader_vip_conflicts_total counter
lanleader_vip_conflicts_total{address="198.18.0.100/24"} 0
lanleader_vip_conflicts_total{address="198.18.0.101/24"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "lanleader_vip_up",
		"lanleader_vip_announcements_total", "lanleader_vip_conflicts_total"); err != nil {
		t.Error(err)
	}
}
