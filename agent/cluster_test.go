package agent

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/waitfor"
	"github.com/lanleader/lanleader/wire"
)

// Generous liveness bounds: these tests fail only when something is really
// wrong, never on a slow machine. The figures come from bench/failover.
const (
	electBound    = 10 * time.Second
	failoverBound = 5 * time.Second
)

// logs collects every agent's log lines, for a failing test's report.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (lg *logs) Write(p []byte) (int, error) {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	return lg.buf.Write(p)
}

func (lg *logs) String() string {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	return lg.buf.String()
}

// startLocal starts a cluster whose agents log to a buffer that is printed
// when the test fails, and which is closed at the end of the test.
type testCluster struct {
	*Local
	logs *logs
}

func startLocal(t *testing.T, opt LocalOptions) *testCluster {
	t.Helper()
	lg := &logs{}
	opt.Logger = func(i int) *slog.Logger { return loggerTo(lg, i) }
	l, err := StartLocal(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.Close()
		if t.Failed() {
			t.Logf("agents' logs:\n%s", lg.String())
		}
	})
	return &testCluster{l, lg}
}

// agentSet starts single agents for a test: they log into one buffer,
// shown when the test fails, and are crashed at its end (Crash is
// idempotent, so a test may crash them earlier).
type agentSet struct {
	t    *testing.T
	logs *logs
}

func newAgentSet(t *testing.T) *agentSet {
	s := &agentSet{t: t, logs: &logs{}}
	t.Cleanup(func() { // runs after the agents' Crash, registered later
		if t.Failed() {
			t.Logf("agents' logs:\n%s", s.logs)
		}
	})
	return s
}

// start starts an agent for cfg, logging as node-<i+1>.
func (s *agentSet) start(i int, cfg Config) *Agent {
	s.t.Helper()
	return s.startWith(i, cfg, seams{})
}

// startWith is start with parts of the host replaced.
func (s *agentSet) startWith(i int, cfg Config, sm seams) *Agent {
	s.t.Helper()
	cfg.Logger = loggerTo(s.logs, i)
	a, err := newAgent(cfg, sm)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(a.Crash)
	return a
}

func loggerTo(lg *logs, i int) *slog.Logger {
	return slog.New(slog.NewTextHandler(lg, &slog.HandlerOptions{Level: slog.LevelInfo})).With("agent", fmt.Sprintf("node-%d", i+1))
}

func waitLeader(t *testing.T, l *testCluster, timeout time.Duration, want int) Agreement {
	t.Helper()
	ag, err := l.WaitAgreement(timeout, func(a Agreement) bool { return a.Index == want })
	if err != nil {
		t.Fatalf("want node-%d to lead: %v", want+1, err)
	}
	return ag
}

// TestFailover: 3 and 5 agents elect the largest key; the leader is taken
// down (crash: no RESIGN, no leave; graceful: RESIGN and leave); the next
// largest leads with a higher term and every survivor follows it; the old
// leader returns and takes over again (preempt, the default).
func TestFailover(t *testing.T) {
	for _, n := range []int{3, 5} {
		for _, mode := range []string{"crash", "graceful"} {
			t.Run(fmt.Sprintf("%d/%s", n, mode), func(t *testing.T) {
				l := startLocal(t, LocalOptions{Nodes: n})
				top := n - 1
				first := waitLeader(t, l, electBound, top)
				if first.Leader != uint64(n) || first.Term == 0 {
					t.Fatalf("first leadership %+v, want node_id %d with a term", first, n)
				}
				// The survivors name their new leader from memberlist's view,
				// which can lag the first agreement: a node that joined beside
				// another through the same seed learns of it from gossip.
				waitFormed(t, l, electBound)
				if mode == "crash" {
					l.Crash(top)
				} else if err := l.Stop(top); err != nil {
					t.Fatalf("graceful stop: %v", err)
				}
				second := waitLeader(t, l, failoverBound, top-1)
				// A graceful stop is announced by RESIGN; a crash is not.
				resigns := testutil.ToFloat64(l.Agents[top-1].met.MessagesReceived.WithLabelValues("RESIGN"))
				if want := map[string]float64{"crash": 0, "graceful": 1}[mode]; resigns != want {
					t.Errorf("new leader received %v RESIGN, want %v", resigns, want)
				}
				if second.Term <= first.Term {
					t.Fatalf("new leadership %+v has no later term than %+v", second, first)
				}
				// Each survivor measured one failover, from the old leader's
				// last word heard: after a crash, its last heartbeat, which
				// came at most a heartbeat before it (so at least
				// suspect-after − heartbeat); after a stop, its RESIGN.
				for _, i := range l.Live() {
					cfg := l.Agents[i].cfg
					var m dto.Metric
					if err := l.Agents[i].met.Failover.Write(&m); err != nil {
						t.Fatal(err)
					}
					n, sum := m.GetHistogram().GetSampleCount(), time.Duration(m.GetHistogram().GetSampleSum()*float64(time.Second))
					lo, hi := cfg.SuspectAfter-cfg.Heartbeat, failoverBound
					if mode == "graceful" {
						lo, hi = 0, cfg.SuspectAfter
					}
					if n != 1 || sum < lo || sum > hi {
						t.Errorf("node-%d: lanleader_failover_seconds count %d sum %v, want 1 failover in [%v, %v]", i+1, n, sum, lo, hi)
					}
				}
				for _, i := range l.Live() {
					s := l.Agents[i].Status()
					if s.LeaderID != uint64(n-1) || s.LeaderName != fmt.Sprintf("node-%d", n-1) || s.Term != second.Term {
						t.Errorf("%s: leader %d %q term %d, want %d %q term %d", s.Name, s.LeaderID, s.LeaderName, s.Term, n-1, fmt.Sprintf("node-%d", n-1), second.Term)
					}
					want := "follower"
					if i == top-1 {
						want = "leader"
					}
					if s.State != want {
						t.Errorf("%s: state %s, want %s", s.Name, s.State, want)
					}
				}
				// The others tell a leave from a failure.
				wantStatus := map[string]string{"crash": "dead", "graceful": "left"}[mode]
				if mode == "graceful" || n == 3 { // memberlist takes seconds to declare a crash dead
					waitMemberStatus(t, l, fmt.Sprintf("node-%d", n), wantStatus, 20*time.Second)
				}
				if err := l.Start(top); err != nil {
					t.Fatal(err)
				}
				third := waitLeader(t, l, failoverBound, top)
				if third.Term <= second.Term {
					t.Fatalf("take-back %+v has no later term than %+v", third, second)
				}
			})
		}
	}
}

// waitFormed waits until every live node lists every other live node
// as an alive member (memberlist's view is whole).
func waitFormed(t *testing.T, l *testCluster, timeout time.Duration) {
	t.Helper()
	live := l.Live()
	waitFor(t, "every live node lists the others alive", timeout, func() (bool, string) {
		for _, i := range live {
			alive := 0
			for _, m := range l.Agents[i].Status().Members {
				if m.Alive {
					alive++
				}
			}
			if alive < len(live)-1 {
				return false, fmt.Sprintf("node-%d sees %d other members alive, want %d: %+v", i+1, alive, len(live)-1, l.Agents[i].Status().Members)
			}
		}
		return true, ""
	})
}

// waitMemberStatus waits until every live node shows member name with
// the given status in /status.
func waitMemberStatus(t *testing.T, l *testCluster, name, status string, timeout time.Duration) {
	t.Helper()
	waitFor(t, name+" "+status+" at every live node", timeout, func() (bool, string) {
		for _, i := range l.Live() {
			var seen Member
			for _, m := range l.Agents[i].Status().Members {
				if m.Name == name {
					seen = m
				}
			}
			if seen.Status != status || seen.Alive {
				return false, fmt.Sprintf("node-%d sees %s as %+v, want status %s", i+1, name, seen, status)
			}
		}
		return true, ""
	})
}

// TestNoPreempt: with preempt off (keepalived's nopreempt) a returning node
// with the largest key follows the healthy leader and does not take over.
func TestNoPreempt(t *testing.T) {
	l := startLocal(t, LocalOptions{Nodes: 3, Base: func(c *Config) { c.Preempt = false }})
	first := waitLeader(t, l, electBound, 2)
	l.Crash(2)
	second := waitLeader(t, l, failoverBound, 1)
	if err := l.Start(2); err != nil {
		t.Fatal(err)
	}
	// The returning node hears the leader within its listen period and
	// follows it; it must then stay a follower.
	back := l.Agents[2]
	waitFor(t, fmt.Sprintf("the returning node-3 follows node-2, term %d", second.Term), failoverBound, func() (bool, string) {
		s := back.Status()
		return s.State == "follower" && s.LeaderID == 2 && s.Term == second.Term, fmt.Sprintf("%+v", s)
	})
	// Observe for ten heartbeats and three listen periods that nothing
	// moves: leadership, term and every node's view stay as they are; and
	// nothing is logged at the default level meanwhile (no line per
	// heartbeat).
	logged := len(l.logs.String())
	waitfor.Holds(t, "leadership stays with node-2 after node-3 returned with preempt off", time.Second, 5*time.Millisecond, func() (bool, string) {
		ag := l.Agreement()
		return ag.Index == 1 && ag.Term == second.Term, fmt.Sprintf("%+v (was %+v, first %+v)", ag, second, first)
	})
	if more := l.logs.String()[logged:]; more != "" {
		t.Errorf("logged while nothing changed:\n%s", more)
	}
}

// TestConflict: two live members with one node_id both go to state
// conflict, say so in /status, and neither leads; the others elect among
// themselves. When one of the two leaves, the other leads again.
func TestConflict(t *testing.T) {
	// node-2 and node-3 both have node_id 7, the largest key.
	l := startLocal(t, LocalOptions{Nodes: 3,
		NodeID: func(i int) uint64 { return []uint64{1, 7, 7}[i] }})
	var s2, s3 Status
	waitFor(t, "node-1 leading, node-2 and node-3 in conflict following it", electBound, func() (bool, string) {
		var s1 Status
		s1, s2, s3 = l.Agents[0].Status(), l.Agents[1].Status(), l.Agents[2].Status()
		return s1.State == "leader" && s2.State == "conflict" && s3.State == "conflict" && s2.LeaderID == 1 && s3.LeaderID == 1,
			fmt.Sprintf("\n%+v\n%+v\n%+v", s1, s2, s3)
	})
	// Each names the other member, and may name its election address too
	// (its packets are evidence as well).
	for _, c := range []struct {
		got   []string
		other int
	}{{s2.Conflict, 2}, {s3.Conflict, 1}} {
		member, packets := fmt.Sprintf("node-%d", c.other+1), "node_id 7 at "+l.Agents[c.other].ElectionAddr().String()
		if !slices.Contains(c.got, member) || slices.ContainsFunc(c.got, func(e string) bool { return e != member && e != packets }) {
			t.Fatalf("conflict lists: node-2 %v, node-3 %v", s2.Conflict, s3.Conflict)
		}
	}
	// While the conflict lasts, neither of the two leads: watch a second.
	waitfor.Holds(t, "node-2 and node-3 in conflict while it lasts", time.Second, 5*time.Millisecond, func() (bool, string) {
		for _, i := range []int{1, 2} {
			if s := l.Agents[i].Status(); s.State != "conflict" {
				return false, fmt.Sprintf("%s left state conflict: %+v", s.Name, s)
			}
		}
		return true, ""
	})
	// One of the two leaves: the other is alone with node_id 7, the
	// largest key, and takes over.
	if err := l.Stop(2); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, l, failoverBound, 1)
	if s := l.Agents[1].Status(); len(s.Conflict) != 0 {
		t.Fatalf("node-2 still reports a conflict: %v", s.Conflict)
	}
}

// TestConflictSameName: a second agent with the name, node_id and
// incarnation of a running one (a host cloned from node-2's image,
// started in the same second): memberlist refuses it a member under that
// name, and only the source address tells its packets from node-2's own.
// Both go to state conflict and stay there while both run, well past the
// conflict's memory (each renews the other's evidence although neither
// claims nor heartbeats), and node-1 leads. When the twin stops (a crash:
// no leave), node-2 leaves conflict within that memory and takes over.
func TestConflictSameName(t *testing.T) {
	const memory = 3 * time.Second
	l := startLocal(t, LocalOptions{Nodes: 2, seams: seams{conflictMemory: memory}})
	waitLeader(t, l, electBound, 1)
	first := l.Agents[1]
	twin := l.cfgs[1]
	twin.Bind, twin.ElectionPort = "127.0.0.1:0", 0
	twin.Join = []string{l.Agents[0].GossipAddr().String()}
	set := newAgentSet(t)
	twin.Logger = loggerTo(set.logs, 9)
	b, err := New(twin)
	if err != nil {
		t.Fatal(err)
	}
	b.inc.Store(first.inc.Load()) // started in the same second
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Crash)
	inConflict := func() (bool, string) {
		s1, s2, sb := l.Agents[0].Status(), first.Status(), b.Status()
		// (The twin may name no leader: node-1's memberlist lists node-2
		// under that name, so node-1 heartbeats to node-2 alone.)
		ok := s1.State == "leader" && s2.State == "conflict" && sb.State == "conflict" && s2.LeaderID == 1
		return ok, fmt.Sprintf("node-1 %s (leader %d), node-2 %s (leader %d, %v), the twin %s (leader %d, %v)",
			s1.State, s1.LeaderID, s2.State, s2.LeaderID, s2.Conflict, sb.State, sb.LeaderID, sb.Conflict)
	}
	waitFor(t, "node-2 and its twin in conflict, node-1 leading", electBound, inConflict)
	if s := b.Status(); !slices.ContainsFunc(s.Conflict, func(e string) bool { return strings.HasPrefix(e, "name node-2 at ") }) {
		t.Errorf("the twin does not name node-2's gossip address: %v", s.Conflict)
	}
	if s := first.Status(); !slices.Contains(s.Conflict, "node_id 2 at "+b.ElectionAddr().String()) {
		t.Errorf("node-2 does not name the twin's election address: %v", s.Conflict)
	}
	if !strings.Contains(set.logs.String(), `msg="another node uses this node's name; names must be unique"`) {
		t.Errorf("the twin does not log the conflict:\n%s", set.logs)
	}
	if lg := l.logs.String(); !strings.Contains(lg, "level=ERROR msg=\"another node sends election packets with this node's node_id (a cloned host?); node_ids must be unique\" agent=node-2 node=node-2 node_id=2 other_addr="+b.ElectionAddr().String()) {
		t.Errorf("node-2 does not log the twin's address at error level:\n%s", lg)
	}
	if n := testutil.ToFloat64(first.met.PacketsDropped.WithLabelValues("conflict")); n < 1 {
		t.Errorf("node-2 counted %v packets dropped for a conflict, want some", n)
	}
	// Neither leaves conflict while both run: watch three memories long.
	waitfor.Holds(t, "the conflict lasts while both run", 3*memory, 5*time.Millisecond, inConflict)
	// The twin crashes: node-2 is alone with its node_id again, leaves
	// conflict once its evidence is older than the memory, and takes over
	// (node_id 2 is the largest key).
	t0 := time.Now()
	b.Crash()
	waitLeader(t, l, memory+failoverBound, 1)
	if s := first.Status(); len(s.Conflict) != 0 {
		t.Fatalf("node-2 still reports a conflict: %v", s.Conflict)
	}
	d := time.Since(t0)
	if d < memory {
		t.Errorf("node-2 took over %v after the twin's crash, before its evidence (%v) had aged out", d, memory)
	}
	t.Logf("node-2 took over %v after the twin's crash", d.Round(time.Millisecond))
}

// TestPhiDetector: with the phi-accrual detector the followers learn the
// heartbeats' rhythm and still replace a crashed leader.
func TestPhiDetector(t *testing.T) {
	l := startLocal(t, LocalOptions{Nodes: 3, Base: func(c *Config) { c.Detector = config.DetectorPhi }})
	first := waitLeader(t, l, electBound, 2)
	// Let the followers' windows fill with a few heartbeats' worth of
	// arrivals (five: more than the two samples the window starts with)
	// before the crash.
	const arrivals = 5
	heartbeats := func(i int) float64 {
		return testutil.ToFloat64(l.Agents[i].met.MessagesReceived.WithLabelValues(wire.TypeHeartbeat.String()))
	}
	base := []float64{heartbeats(0), heartbeats(1)}
	waitfor.Until(t, "the followers hear a few heartbeats", electBound, 5*time.Millisecond, func() (bool, string) {
		n0, n1 := heartbeats(0)-base[0], heartbeats(1)-base[1]
		return n0 >= arrivals && n1 >= arrivals, fmt.Sprintf("node-1 heard %v, node-2 %v", n0, n1)
	})
	l.Crash(2)
	second := waitLeader(t, l, failoverBound, 1)
	if second.Term <= first.Term {
		t.Fatalf("no later term: %+v after %+v", second, first)
	}
	// The failover is recorded where it was seen: at the nodes that
	// suspected the leader (the first to suspect at least; a node that
	// hears the new claim before it suspects has no failover of its own).
	var samples uint64
	for _, i := range l.Live() {
		var h dto.Metric
		if err := l.Agents[i].met.Failover.(prometheus.Metric).Write(&h); err != nil {
			t.Fatal(err)
		}
		samples += h.GetHistogram().GetSampleCount()
		if n := h.GetHistogram().GetSampleCount(); n > 1 {
			t.Errorf("node-%d recorded %d failovers, want at most 1", i+1, n)
		}
		if s := h.GetHistogram().GetSampleSum(); s < 0 || s > failoverBound.Seconds() {
			t.Errorf("node-%d's failover took %vs", i+1, s)
		}
	}
	if samples == 0 {
		t.Errorf("no survivor recorded the failover")
	}
}

// TestLeavingNodeStaysOut: a follower and the leader stopped at the same
// moment (a rolling restart gone wrong, a fleet-wide stop): the follower,
// already leaving, must not claim the leadership the leader gives up.
func TestLeavingNodeStaysOut(t *testing.T) {
	for round := range 3 {
		l := startLocal(t, LocalOptions{Nodes: 3})
		waitLeader(t, l, electBound, 2)
		follower, leader := l.StopAsync(1), l.StopAsync(2)
		<-follower
		<-leader
		waitLeader(t, l, failoverBound, 0)
		log := l.logs.String()
		i := strings.Index(log, `msg=leaving agent=node-2 `)
		if i < 0 {
			t.Fatalf("round %d: node-2 did not log its leave:\n%s", round, log)
		}
		if strings.Contains(log[i:], `msg="became leader" agent=node-2 `) {
			t.Fatalf("round %d: node-2 became leader while leaving:\n%s", round, log)
		}
		l.Close()
	}
}

// TestAlgorithms: every election algorithm elects the largest key, fails
// over to the next when the leader crashes or stops, and takes the leader
// back when it returns; /status names the algorithm.
func TestAlgorithms(t *testing.T) {
	for _, alg := range election.Algorithms[1:] {
		t.Run(alg, func(t *testing.T) {
			l := startLocal(t, LocalOptions{Nodes: 4, Base: func(c *Config) { c.Algorithm = alg }})
			first := waitLeader(t, l, electBound, 3)
			if got := l.Agents[0].Status().Algorithm; got != alg {
				t.Errorf("/status algorithm %q, want %q", got, alg)
			}
			l.Crash(3)
			second := waitLeader(t, l, failoverBound, 2)
			if err := l.Start(3); err != nil {
				t.Fatal(err)
			}
			third := waitLeader(t, l, failoverBound, 3)
			if err := l.Stop(3); err != nil {
				t.Fatalf("graceful stop: %v", err)
			}
			fourth := waitLeader(t, l, failoverBound, 2)
			if !(first.Term < second.Term && second.Term < third.Term && third.Term < fourth.Term) {
				t.Errorf("terms %d, %d, %d, %d: want them increasing", first.Term, second.Term, third.Term, fourth.Term)
			}
			// The ring family's own messages carried the elections.
			sent := 0.0
			for _, a := range l.Agents[:3] {
				for _, typ := range []string{"RING_ELECTION", "CR_ELECTION", "HS_PROBE"} {
					sent += testutil.ToFloat64(a.met.MessagesSent.WithLabelValues(typ))
				}
				sent -= testutil.ToFloat64(a.met.MessagesSent.WithLabelValues("ELECTION"))
			}
			if sent <= 0 {
				t.Errorf("%s: the survivors sent %v more ring election messages than bully ELECTIONs, want some", alg, sent)
			}
		})
	}
}

// TestAlgorithmMismatch: a member that runs another algorithm takes no
// part in elections (the others elect among themselves) and both sides
// log why.
func TestAlgorithmMismatch(t *testing.T) {
	l := startLocal(t, LocalOptions{Nodes: 3})
	waitLeader(t, l, electBound, 2)
	l.cfgs[2].Algorithm = election.AlgorithmRing
	l.Crash(2)
	if err := l.Start(2); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node-1 and node-2 on node-2, the mismatch logged", failoverBound, func() (bool, string) {
		s0, s1 := l.Agents[0].Status(), l.Agents[1].Status()
		return s0.LeaderID == 2 && s1.LeaderID == 2 && s1.State == "leader" && strings.Contains(l.logs.String(), "every member must run the same"),
			fmt.Sprintf("node-1 %s leader %d, node-2 %s leader %d", s0.State, s0.LeaderID, s1.State, s1.LeaderID)
	})
	// The ring node is a member, alive, but not a candidate.
	alive := false
	for _, m := range l.Agents[0].Status().Members {
		alive = alive || m.Name == "node-3" && m.Alive
	}
	if !alive {
		t.Errorf("node-1's members %+v: want node-3 alive", l.Agents[0].Status().Members)
	}
}

// An election packet from a node that memberlist has not listed makes
// the receiver exchange its member list with a member at once (gossip
// may have missed a join: TestFailover once had a node unaware of three
// others for more than 10 s), at most every syncEvery; a listed sender
// does not.
func TestUnlistedSenderSyncsMembers(t *testing.T) {
	l := startLocal(t, LocalOptions{Nodes: 2})
	waitLeader(t, l, electBound, 1)
	waitFormed(t, l, electBound)
	a := l.Agents[0]
	before := a.joiner.Attempts()
	probe := func(from uint64) {
		m := wire.Message{Type: wire.TypeProbe, From: from, Priority: config.DefaultPriority, Term: 1}
		a.call(func() { a.onPacket(packet{msg: m, at: a.now()}) })
	}
	probe(2)
	var listed bool
	a.call(func() { listed = a.loop.listed[2] && !a.loop.synced })
	if !listed {
		t.Fatalf("a packet from node 2, a member: not noted as listed, or a sync was started")
	}
	probe(9)
	waitFor(t, "a join after a packet from unlisted node 9", electBound, func() (bool, string) {
		n := a.joiner.Attempts()
		return n == before+1, fmt.Sprintf("%d joins since, want 1", n-before)
	})
	probe(9)
	probe(10)
	var synced bool
	a.call(func() { synced = a.loop.synced && a.now()-a.loop.syncedAt < syncEvery })
	if n := a.joiner.Attempts(); n != before+1 || !synced {
		t.Errorf("%d joins after three packets from unlisted nodes within %v, want 1 (synced %v)", n-before, syncEvery, synced)
	}
}
