package explore

import (
	"github.com/lanleader/lanleader/internal/cputime"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/planted"
	"github.com/lanleader/lanleader/sim/job"
)

// timing is the agent's quorum-mode timing: the leader steps down a
// heartbeat before the end of its lease, one heartbeat longer.
func timing() election.Config {
	c := election.DefaultConfig(1)
	c.ID, c.Quorum = 0, 1
	t := c.WithDefaults()
	c.StopBefore = t.HeartbeatInterval
	c.Lease = t.LossWindow() + t.HeartbeatInterval
	c.LeaseMargin, c.ClaimWait = 0, 0
	return c
}

// defaultTiming is the agent's default-mode timing: election's defaults,
// no quorum, preemption on.
func defaultTiming() election.Config {
	c := election.DefaultConfig(1)
	c.ID = 0
	return c
}

// slowJob has the agent's default job grace (10 s); by itself it ignores
// SIGTERM for all of it, a job that in quorum mode dies only when its
// guard kills it at the lease's end, the worst for the invariants.
var slowJob = job.Params{Stop: 10 * time.Second, Grace: 10 * time.Second}

// stops are the stop latencies every SIGTERM tries: at once, shorter than
// the lease (400 ms) and longer than a detector's suspicion (300 ms), and
// ignoring SIGTERM until the SIGKILL at the grace's end (or the guard's
// kill at the lease's end).
var stops = []time.Duration{0, 150 * time.Millisecond, slowJob.Grace}

// pauses are the lengths of a pause: shorter than a suspicion, and long
// enough for the others to elect (and for a lease to run out) meanwhile.
var pauses = []time.Duration{150 * time.Millisecond, 600 * time.Millisecond}

// outages are the lengths of a pulled cable: shorter than a suspicion
// (the others keep their leader, or elect one at once on a leader's
// silence confirmed), and long enough for the others to elect meanwhile.
var outages = []time.Duration{150 * time.Millisecond, 600 * time.Millisecond}

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

// shape is a quorum-mode shape.
func shape(name string) Shape {
	s := shapes()[name]
	s.Name, s.Timing, s.Job, s.DriftPPM = name, timing(), slowJob, 500
	return s
}

// defaultShape is a default-mode shape, every stop latency tried.
func defaultShape(name string) Shape {
	s := shapes()[name]
	s.Name, s.Timing, s.Job, s.DriftPPM, s.Stops = "default, "+name, defaultTiming(), slowJob, 500, stops
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

func report(t *testing.T, sh Shape, b Bounds, r Result) {
	t.Helper()
	crash := "any node"
	if b.CrashLeader {
		crash = "a leader"
	}
	t.Logf("%s: bounds reorder %d, delay %d (max %v), loss %d, crash %d (%s; %d with notice, %d late notice), restart %d, link down %d %v, pause %d %v, stops %v, horizon %v: %d states, %d distinct, deepest schedule %d events, complete %v, %v; %d NOTICE deliveries acted on",
		sh.Name, b.Reorder, b.Delay, b.MaxDelay, b.Loss, b.Crash, crash, b.Notice, b.NoticeDup, b.Restart, b.LinkDown, b.LinkFor, b.Pause, b.PauseFor, sh.Stops, b.Horizon,
		r.States, r.Distinct, r.MaxDepth, r.Complete, r.Elapsed.Round(time.Millisecond), r.NoticesActed)
}

// A clone of a state steps exactly as the state itself, and stepping the
// clone leaves the original as it was: the copy misses nothing the
// machines, the drivers and the jobs keep, and shares no memory with the
// original (compare, which walks both by reflection apart from the
// plans). Both modes, through a pause, a pulled cable, a crash and a
// restart, with stop latencies chosen.
func TestCloneStepsAsOriginal(t *testing.T) {
	for _, sh := range []Shape{shape("2 candidates + witness"), defaultShape("3 candidates")} {
		t.Run(sh.Name, func(t *testing.T) {
			sh.Stops = stops
			e := newExplorer(sh, Bounds{Horizon: time.Hour})
			s := e.start()
			led := false
			var saw map[string]bool
			see := func(lines []string) {
				for _, l := range lines {
					for w := range saw {
						if strings.Contains(l, w) {
							saw[w] = true
						}
					}
				}
			}
			saw = map[string]bool{"held: n": false, "wakes": false, "job stops in": false, "n2 link down": false, "n2 link up": false, "job dies": false,
				"n3's notice guard sends NOTICE": false, "acts on the NOTICE": false}
			for k := 0; k < 500; k++ {
				e.lines = nil
				switch k {
				case 100:
					e.pause(s, 0, 600*time.Millisecond)
				case 150:
					e.crash(s, 2, true)
				case 200:
					e.boot(s, 2)
				case 250:
					e.setLink(s, 1, true, time.Hour)
				case 350:
					e.setLink(s, 1, false, 0)
				}
				see(e.lines)
				c := e.clone(s)
				if d := compare(s.nodes, c.nodes, true); d != "" {
					t.Fatalf("step %d: the clone differs: %s", k, d)
				}
				before := e.hash(s)
				if e.hash(c) != before {
					t.Fatalf("step %d: the clone hashes differently", k)
				}
				next := func(s *state) {
					if len(s.decide) > 0 {
						e.decideStop(s, stops[k%len(stops)])
						return
					}
					ag := e.agenda(s)
					if len(ag) == 0 {
						t.Fatalf("step %d: nothing to do", k)
					}
					e.do(s, ag[0])
				}
				e.lines = nil
				next(c)
				cl := e.lines
				if e.hash(s) != before {
					t.Fatalf("step %d: stepping the clone changed the original", k)
				}
				e.lines = nil
				next(s)
				if e.hash(s) != e.hash(c) || strings.Join(cl, "\n") != strings.Join(e.lines, "\n") {
					t.Fatalf("step %d: the clone and the original differ after the same step: %q vs %q", k, cl, e.lines)
				}
				see(e.lines)
				if s.bad != "" {
					t.Fatalf("step %d: %s", k, s.bad)
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
				t.Fatal("no node led in 500 steps: the test did not exercise a leadership")
			}
			for w, ok := range saw {
				if !ok {
					t.Errorf("no step said %q: the test did not exercise it", w)
				}
			}
		})
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
// claim at once (planted DeposedAck) completes, with two candidates and a
// witness, the majority of the preferred node that crashed and came back
// while its own job still runs. The explorer finds the overlap and prints
// the schedule.
func TestExploreFindsDeposedAck(t *testing.T) {
	sh := shape("2 candidates + witness")
	sh.Timing.Planted = &planted.Election{DeposedAck: true}
	b := bounds(t, crashReturn)
	r := Explore(sh, b)
	sh.Name = "DeposedAck, " + sh.Name
	report(t, sh, b, r)
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
	sh.Name = "SelfByIncarnation, clones"
	report(t, sh, b, r)
	if !strings.Contains(r.Violation, "invariant 6: jobs overlap: n7") {
		t.Fatalf("want two jobs of n7 at once; got %q\n%s", r.Violation, tail(r.Trace, 40))
	}
	t.Logf("found: %s", r.Violation)
}

// The planted default-mode bug: a preempting node that does not wait for
// the displaced leader's job to stop (UnsafeJobNoWait) starts its own
// while that job still stops: the preferred node crashes, the next one
// leads and runs the job, the preferred node comes back, follows it,
// takes over, and starts its job at its first state exchange. The
// explorer finds it (invariant 8) with a stop latency longer than that
// exchange.
func TestExploreFindsJobNoWait(t *testing.T) {
	sh := defaultShape("3 candidates")
	sh.UnsafeJobNoWait = true
	b := bounds(t, crashReturn)
	r := Explore(sh, b)
	sh.Name = "UnsafeJobNoWait, " + sh.Name
	report(t, sh, b, r)
	if !strings.Contains(r.Violation, "invariant 8: n3 took over from n2 and started its job while n2's job") ||
		!strings.Contains(r.Trace, "n3 crashes") || !strings.Contains(r.Trace, "n3 starts (incarnation 2") || !strings.Contains(r.Trace, "n2's job stops in 150ms") {
		t.Fatalf("want n3's job started beside n2's stopping one, after n3's crash and restart; got %q\n%s", r.Violation, tail(r.Trace, 40))
	}
	t.Logf("found: %s\nthe schedule's last steps:\n%s", r.Violation, tail(r.Trace, 12))
}

// The planted link bug: a driver that does not act on its link's loss
// (UnsafeLinkIgnored) leaves its job running; the explorer finds it
// (invariant 7) on the leader's first pulled cable.
func TestExploreFindsLinkIgnored(t *testing.T) {
	sh := defaultShape("3 candidates")
	sh.UnsafeLinkIgnored = true
	b := bounds(t, Bounds{LinkDown: 1, Horizon: 2 * time.Second})
	r := Explore(sh, b)
	sh.Name = "UnsafeLinkIgnored, " + sh.Name
	report(t, sh, b, r)
	if !strings.Contains(r.Violation, "invariant 7: n3's job is running (wanted: true) after its link went down") || !strings.Contains(r.Trace, "n3 link down") {
		t.Fatalf("want n3's job running with its link down; got %q\n%s", r.Violation, tail(r.Trace, 40))
	}
	t.Logf("found: %s", r.Violation)
}

// Planted bug 1 on the standby path (quorum mode): with planted DeposedAck
// a leader whose link goes down steps down without the guard a deposed
// leader keeps until its lease has ended. Its job, which ignores SIGTERM,
// runs until its guard kills it at the lease's end; the link comes back
// 150 ms later, and the node acknowledges the claim of a node that
// started late (so that its own guard is over): their two votes are a
// majority of three, and the new leader's job starts 65 ms before the old
// one dies. The explorer found this on the code as it was, whose standby
// path did not depose; TestExploreFixed runs the same bounds fixed.
func TestExploreFindsStandbyVote(t *testing.T) {
	sh := standbyVoteShape()
	sh.Timing.Planted = &planted.Election{DeposedAck: true}
	b := bounds(t, standbyVote)
	r := Explore(sh, b)
	report(t, sh, b, r)
	for _, want := range []string{"n2 starts", "n3 link down; n3 follower", "n3's job ignores SIGTERM", "n3 link up", "HEARTBEAT_ACK n3→n2 term=2"} {
		if !strings.Contains(r.Trace, want) {
			t.Fatalf("want the schedule to say %q; got %q\n%s", want, r.Violation, tail(r.Trace, 40))
		}
	}
	if !strings.Contains(r.Violation, "invariant 6: jobs overlap: n3 term 1") {
		t.Fatalf("want n3's job of term 1 to overlap the next leader's; got %q", r.Violation)
	}
	t.Logf("found: %s", r.Violation)
}

// The code as it is: within the CI's bounds, no schedule breaks an
// invariant, for each cluster shape, in quorum mode (invariant 6: one job
// at a time; 7: none runs on a node whose link is down) and in default
// mode (7, and 8: a preemption waits for the displaced job).
// standbyVote and standbyVoteShape: the standby path's bug. n2 starts
// late (as after a crash, whose guard it keeps: a restart brings it up
// at every instant), which is the part of "crash any node" the bug
// needs; with the crash among the choices the fixed code's search takes
// 32 million states.
var standbyVote = Bounds{Restart: 1, LinkDown: 1, LinkFor: outages, Horizon: 1500 * time.Millisecond}

func standbyVoteShape() Shape {
	sh := shape("3 candidates")
	sh.Nodes = slices.Clone(sh.Nodes)
	sh.Nodes[1].Down = true
	sh.Stops = stops
	return sh
}

// noticeCrash: a leader's agent crashes (its host alive, so its NOTICE
// follows its job's death) or its host does, at every instant; the
// node comes back at every instant after; the NOTICE may arrive a second
// time, after a new term (NoticeLate: twice the LossWindow), at nodes
// that follow another leader or the node come back. noticeLoss: the
// NOTICE's packets, or the others', lost.
var (
	noticeCrash = Bounds{Crash: 1, Notice: 1, NoticeDup: 1, Restart: 1, CrashLeader: true, Horizon: 1500 * time.Millisecond}
	noticeLoss  = Bounds{Crash: 1, Notice: 1, Loss: 1, CrashLeader: true, Horizon: time.Second}
)

// quickJob gives sh a job that exits at SIGTERM, whose NOTICE goes out
// at the crash: before the others' detector, so that a NOTICE held or
// lost, and the others', decide the failover.
func quickJob(sh Shape) Shape {
	sh.Job = job.Params{Grace: slowJob.Grace}
	sh.Name += ", a job that exits at SIGTERM"
	return sh
}

// The planted notice bug: a notice guard that sends at the agent's
// crash, without waiting for the job's guard (UnsafeNoticeEarly). The
// explorer finds invariant 9 broken, in quorum mode where the NOTICE
// releases the others' promises too.
func TestExploreFindsEarlyNotice(t *testing.T) {
	sh := shape("3 candidates")
	sh.Stops = stops
	sh.UnsafeNoticeEarly = true
	b := bounds(t, Bounds{Crash: 1, Notice: 1, CrashLeader: true, Horizon: 1500 * time.Millisecond})
	r := Explore(sh, b)
	sh.Name = "UnsafeNoticeEarly, " + sh.Name
	report(t, sh, b, r)
	if !strings.Contains(r.Violation, "invariant 9: n3's NOTICE of term 1 went out while its job") || !strings.Contains(r.Trace, "n3's agent crashes, its host lives") {
		t.Fatalf("want n3's NOTICE sent while its job runs, after its agent's crash; got %q\n%s", r.Violation, tail(r.Trace, 40))
	}
	t.Logf("found: %s", r.Violation)
}

func TestExploreFixed(t *testing.T) {
	anyCrash := Bounds{Crash: 1, Restart: 1, Horizon: 1500 * time.Millisecond}
	withStops := func(s Shape) Shape { s.Stops = stops; return s }
	for _, c := range []struct {
		sh Shape
		b  Bounds
	}{
		{withStops(shape("2 candidates + witness")), crashReturn},
		{withStops(shape("3 candidates")), anyCrash},
		{standbyVoteShape(), standbyVote},
		{withStops(shape("3 candidates")), Bounds{LinkDown: 1, LinkFor: outages, Horizon: 1500 * time.Millisecond}},
		{withStops(shape("3 candidates")), Bounds{Pause: 1, PauseFor: pauses, Horizon: 1500 * time.Millisecond}},
		{shape("3 candidates"), Bounds{Reorder: 1, Loss: 1, Horizon: 600 * time.Millisecond}},
		{shape("4 candidates"), Bounds{Reorder: 1, Horizon: 700 * time.Millisecond}},
		{shape("clones"), Bounds{Reorder: 1, Horizon: 1200 * time.Millisecond}},
		{defaultShape("3 candidates"), Bounds{Crash: 1, Restart: 1, Horizon: 2 * time.Second}},
		{defaultShape("3 candidates"), Bounds{LinkDown: 1, LinkFor: outages, Horizon: 2 * time.Second}},
		{defaultShape("3 candidates"), Bounds{Pause: 1, PauseFor: pauses, Horizon: 2 * time.Second}},
		{defaultShape("3 candidates"), Bounds{Reorder: 1, Delay: 1, Loss: 1, Horizon: time.Second}},
		{defaultShape("4 candidates"), Bounds{Crash: 1, Restart: 1, Horizon: 2 * time.Second}},
		{defaultShape("4 candidates"), Bounds{LinkDown: 1, LinkFor: outages, Horizon: 1500 * time.Millisecond}},
		{withStops(shape("3 candidates")), noticeCrash},
		{withStops(shape("2 candidates + witness")), noticeCrash},
		{quickJob(shape("3 candidates")), noticeLoss},
		{defaultShape("3 candidates"), noticeCrash},
	} {
		name := c.sh.Name + ", " + strings.Join(kinds(c.b), "+")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := bounds(t, c.b)
			r := Explore(c.sh, b)
			report(t, c.sh, b, r)
			if r.Violation != "" {
				t.Fatalf("%s\n%s", r.Violation, tail(r.Trace, 60))
			}
			if !r.Complete || r.States < 100 {
				t.Fatalf("the search stopped after %d states", r.States)
			}
			if c.b.Notice > 0 && r.NoticesActed == 0 {
				t.Fatalf("no NOTICE was acted on in %d states: the search did not exercise the notice", r.States)
			}
		})
	}
}

// kinds names the choice points b allows.
func kinds(b Bounds) []string {
	var out []string
	for _, k := range []struct {
		n    int
		name string
	}{{b.Reorder, "reorder"}, {b.Delay, "delay"}, {b.Loss, "loss"}, {b.Crash, "crash"}, {b.Notice, "notice"}, {b.NoticeDup, "late notice"}, {b.Restart, "restart"}, {b.LinkDown, "link"}, {b.Pause, "pause"}} {
		if k.n > 0 {
			out = append(out, k.name)
		}
	}
	return out
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
// distinct states a second of wall time, and a second of this process's CPU time
// (which a busy machine does not change as much).
func BenchmarkExplore(b *testing.B) {
	bd := Bounds{Reorder: 1, Loss: 1, MaxDelay: 5 * time.Millisecond, Horizon: 600 * time.Millisecond}
	var states int
	var elapsed time.Duration
	cpu := cputime.Self()
	for b.Loop() {
		r := Explore(shape("3 candidates"), bd)
		states += r.Distinct
		elapsed += r.Elapsed
	}
	cpu = cputime.Self() - cpu
	b.ReportMetric(float64(states)/elapsed.Seconds(), "states/s")
	if cpu > 0 {
		b.ReportMetric(float64(states)/cpu.Seconds(), "states/cpu-s")
	}
}
