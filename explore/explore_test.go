package explore

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/sim/job"
)

// timing is the agent's quorum-mode timing: the leader steps down a
// heartbeat before the end of its lease, one heartbeat longer.
func timing() election.Config {
	c := election.DefaultConfig(1)
	c.ID, c.Quorum = 0, 1
	t := c.WithDefaults()
	c.StopBefore = t.HeartbeatInterval
	c.Lease = t.SuspectAfter + t.HeartbeatInterval
	c.LeaseMargin, c.ClaimWait = 0, 0
	return c
}

// slowJob ignores SIGTERM for longer than any lease: a job that dies only
// when its guard kills it at the lease's end, the worst for the
// invariants.
var slowJob = job.Params{Stop: 10 * time.Second, Grace: 10 * time.Second}

func shapes() map[string]Shape {
	cand := func(ids ...election.NodeID) []Node {
		var out []Node
		for _, id := range ids {
			out = append(out, Node{ID: id})
		}
		return out
	}
	return map[string]Shape{
		"3 candidates":           {Nodes: cand(1, 2, 3)},
		"2 candidates + witness": {Nodes: []Node{{ID: 1, Role: election.RoleWitness}, {ID: 2}, {ID: 3}}},
		"4 candidates":           {Nodes: cand(1, 2, 3, 4)},
		"clones":                 {Nodes: cand(1, 7, 7)},
	}
}

func shape(name string) Shape {
	s := shapes()[name]
	s.Name, s.Timing, s.Job, s.DriftPPM = name, timing(), slowJob, 500
	return s
}

// depth is the extra budget LANLEADER_EXPLORE_DEPTH asks for (0 in CI).
func depth(t *testing.T) int {
	v := os.Getenv("LANLEADER_EXPLORE_DEPTH")
	if v == "" {
		return 0
	}
	d, err := strconv.Atoi(v)
	if err != nil || d < 0 {
		t.Fatalf("LANLEADER_EXPLORE_DEPTH=%q: want a number of extra choice points", v)
	}
	return d
}

func report(t *testing.T, name string, b Bounds, r Result) {
	t.Helper()
	t.Logf("%s: bounds reorder %d, delay %d (max %v), loss %d, crash %d, restart %d, horizon %v: %d states, %d distinct, deepest schedule %d events, complete %v, %v",
		name, b.Reorder, b.Delay, b.MaxDelay, b.Loss, b.Crash, b.Restart, b.Horizon, r.States, r.Distinct, r.MaxDepth, r.Complete, r.Elapsed.Round(time.Millisecond))
}

// A clone of a state steps exactly as the state itself, and stepping the
// clone leaves the original as it was: the reflective copy misses
// nothing the machines keep.
func TestCloneStepsAsOriginal(t *testing.T) {
	sh := shape("2 candidates + witness")
	e := &explorer{shape: sh, b: Bounds{Horizon: time.Hour}, seen: map[uint64]struct{}{}}
	e.quorum = true
	for _, n := range sh.Nodes {
		c := sh.Timing
		c.ID, c.Role, c.Priority, c.Quorum = n.ID, n.Role, 100, 3
		e.cfgs = append(e.cfgs, c)
		e.offsets = append(e.offsets, time.Duration(n.ID)*time.Second)
	}
	s := &state{nodes: make([]nodeState, 3)}
	for i := range s.nodes {
		e.boot(s, i)
	}
	led := false
	for k := 0; k < 400; k++ {
		if k == 150 {
			e.crash(s, 2)
		}
		if k == 250 {
			e.boot(s, 2)
		}
		c := e.clone(s)
		before := e.hash(s)
		if e.hash(c) != before {
			t.Fatalf("step %d: the clone hashes differently", k)
		}
		ag := e.agenda(s)
		if len(ag) == 0 {
			t.Fatalf("step %d: nothing to do", k)
		}
		e.lines = nil
		e.do(c, e.agenda(c)[0])
		cl := e.lines
		if e.hash(s) != before {
			t.Fatalf("step %d: stepping the clone changed the original", k)
		}
		e.lines = nil
		e.do(s, ag[0])
		if e.hash(s) != e.hash(c) || len(cl) != len(e.lines) || len(cl) > 0 && cl[0] != e.lines[0] {
			t.Fatalf("step %d: the clone and the original differ after the same step: %q vs %q", k, cl, e.lines)
		}
		for i := range s.nodes {
			if s.nodes[i].m != nil && s.nodes[i].m.Status() != c.nodes[i].m.Status() {
				t.Fatalf("step %d: n%d: %+v vs %+v", k, sh.Nodes[i].ID, s.nodes[i].m.Status(), c.nodes[i].m.Status())
			}
			if s.nodes[i].m != nil && s.nodes[i].m.Status().State == election.StateLeader {
				led = true
			}
		}
	}
	if !led {
		t.Fatal("no node led in 400 steps: the test did not exercise a leadership")
	}
}

// bounds is the CI's bound for each shape, deepened by
// LANLEADER_EXPLORE_DEPTH: that many more reorderings, held packets and
// losses, and 200 ms more of horizon each.
func bounds(t *testing.T, b Bounds) Bounds {
	d := depth(t)
	b.Reorder += d
	b.Delay += d
	b.Loss += d
	b.Horizon += time.Duration(d) * 200 * time.Millisecond
	if b.MaxDelay == 0 {
		b.MaxDelay = 5 * time.Millisecond
	}
	return b
}

// The leader crashes and comes back: the schedules that bug 1 needs
// (issue 26), every crash of a leader and every restart of the crashed
// node at every instant up to the horizon.
var crashReturn = Bounds{Crash: 1, Restart: 1, CrashLeader: true, Horizon: 2 * time.Second}

// Bug 1 (issue 26), planted: a deposed leader that acknowledges a new
// claim at once (UnsafeDeposedAck) completes, with two candidates and a
// witness, the majority of the preferred node that crashed and came back
// while its own job still runs. The explorer finds the overlap and prints
// the schedule.
func TestExploreFindsDeposedAck(t *testing.T) {
	sh := shape("2 candidates + witness")
	sh.Timing.UnsafeDeposedAck = true
	b := bounds(t, crashReturn)
	r := Explore(sh, b)
	report(t, "UnsafeDeposedAck, "+sh.Name, b, r)
	if !strings.Contains(r.Violation, "invariant 6: jobs overlap: n2") || !strings.Contains(r.Trace, "n3 crashes") || !strings.Contains(r.Trace, "n3 starts (incarnation 2") {
		t.Fatalf("want the overlap of n2's job with the returning n3's, after n3's crash and restart; got %q\n%s", r.Violation, tail(r.Trace, 40))
	}
	t.Logf("found: %s\nthe schedule's last steps:\n%s", r.Violation, tail(r.Trace, 25))
}

// Bug 2 (issue 26), planted: two clones started alike share the
// incarnation, and with the old receive rule each takes the other's
// packets for its own; the witnesses of their claims cannot tell them
// apart, and both lead. The explorer finds it on the default schedule.
func TestExploreFindsCloneSelfRule(t *testing.T) {
	sh := shape("clones")
	sh.SelfByIncarnation = true
	b := bounds(t, Bounds{Horizon: 1200 * time.Millisecond})
	r := Explore(sh, b)
	report(t, "SelfByIncarnation, clones", b, r)
	if !strings.Contains(r.Violation, "invariant 6: jobs overlap: n7") {
		t.Fatalf("want two jobs of n7 at once; got %q\n%s", r.Violation, tail(r.Trace, 40))
	}
	t.Logf("found: %s", r.Violation)
}

// The code as it is: within the same bounds, no schedule runs two jobs
// at once, for each cluster shape.
func TestExploreFixed(t *testing.T) {
	for _, c := range []struct {
		name string
		b    Bounds
	}{
		{"2 candidates + witness", crashReturn},
		{"3 candidates", Bounds{Reorder: 1, Loss: 1, Horizon: 600 * time.Millisecond}},
		{"4 candidates", Bounds{Reorder: 1, Horizon: 700 * time.Millisecond}},
		{"clones", Bounds{Reorder: 1, Horizon: 1200 * time.Millisecond}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := bounds(t, c.b)
			r := Explore(shape(c.name), b)
			report(t, c.name, b, r)
			if r.Violation != "" {
				t.Fatalf("%s\n%s", r.Violation, tail(r.Trace, 60))
			}
			if !r.Complete || r.States < 100 {
				t.Fatalf("the search stopped after %d states", r.States)
			}
		})
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// BenchmarkExplore measures the search's speed on a quorum-mode shape
// whose search does not depend on the bound's environment variable: in
// states a second of wall time, and a second of this process's CPU time
// (which a busy machine does not change as much).
func BenchmarkExplore(b *testing.B) {
	bd := Bounds{Reorder: 1, Loss: 1, MaxDelay: 5 * time.Millisecond, Horizon: 600 * time.Millisecond}
	var states int
	var elapsed time.Duration
	cpu := cpuTime()
	for b.Loop() {
		r := Explore(shape("3 candidates"), bd)
		states += r.States
		elapsed += r.Elapsed
	}
	cpu = cpuTime() - cpu
	b.ReportMetric(float64(states)/elapsed.Seconds(), "states/s")
	if cpu > 0 {
		b.ReportMetric(float64(states)/cpu.Seconds(), "states/cpu-s")
	}
}
