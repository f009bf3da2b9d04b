package job

import (
	"slices"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

const ms = time.Millisecond

// A job's life, step by step: the start latency, SIGTERM heeded, SIGTERM
// ignored until the SIGKILL after the grace, the guard's kill at the
// lease's end, its refusal to start a job whose lease is over, and an
// orphan stopped by its guard.
func TestJobLife(t *testing.T) {
	type step struct {
		at    time.Duration
		do    string // "want", "stop", "lease", "orphan", "advance"
		arg   time.Duration
		phase Phase
		ch    Change
	}
	for _, c := range []struct {
		name  string
		p     Params
		steps []step
	}{
		{"heeds SIGTERM", Params{Start: 50 * ms, Stop: 30 * ms, Grace: time.Second}, []step{
			{0, "want", 0, Starting, Change{}},
			{49 * ms, "advance", 0, Starting, Change{}},
			{50 * ms, "advance", 0, Running, Change{Started: true}},
			{100 * ms, "stop", 0, Stopping, Change{}},
			{129 * ms, "advance", 0, Stopping, Change{}},
			{130 * ms, "advance", 0, Idle, Change{Died: true}},
		}},
		{"ignores SIGTERM", Params{Stop: 5 * time.Second, IgnoreTerm: true, Grace: 300 * ms}, []step{
			{0, "want", 0, Running, Change{Started: true}},
			{10 * ms, "stop", 0, Stopping, Change{}},
			{310 * ms, "advance", 0, Idle, Change{Died: true}},
		}},
		{"the guard kills at the lease's end", Params{Stop: 5 * time.Second, Grace: 10 * time.Second}, []step{
			{0, "lease", 400 * ms, Idle, Change{}},
			{0, "want", 0, Running, Change{Started: true}},
			{100 * ms, "stop", 0, Stopping, Change{}},
			{399 * ms, "advance", 0, Stopping, Change{}},
			{400 * ms, "advance", 0, Idle, Change{Died: true}},
		}},
		{"no start after the lease", Params{Start: 500 * ms, Grace: time.Second}, []step{
			{0, "lease", 400 * ms, Idle, Change{}},
			{0, "want", 0, Starting, Change{}},
			{500 * ms, "advance", 0, Idle, Change{}},
		}},
		{"a start called off", Params{Start: 500 * ms, Grace: time.Second}, []step{
			{0, "want", 0, Starting, Change{}},
			{100 * ms, "stop", 0, Idle, Change{}},
			{500 * ms, "advance", 0, Idle, Change{}},
		}},
		{"orphaned", Params{Stop: 200 * ms, Grace: time.Second}, []step{
			{0, "want", 0, Running, Change{Started: true}},
			{100 * ms, "orphan", 0, Stopping, Change{}},
			{300 * ms, "advance", 0, Idle, Change{Died: true}},
			{300 * ms, "advance", 0, Idle, Change{}},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := Job{P: c.p}
			for k, s := range c.steps {
				var ch Change
				switch s.do {
				case "want":
					ch = j.Set(s.at, true)
				case "stop":
					ch = j.Set(s.at, false)
				case "lease":
					j.SetLease(s.arg)
				case "orphan":
					ch = j.Orphaned(s.at)
				case "advance":
					ch = j.Advance(s.at)
				}
				if j.Phase != s.phase || ch != s.ch {
					t.Fatalf("step %d (%s at %v): phase %v change %+v, want %v %+v", k, s.do, s.at, j.Phase, ch, s.phase, s.ch)
				}
			}
		})
	}
}

// Overlaps are counted once a pair, when the first of the two dies or at
// the end, and only when they last.
func TestLivesOverlap(t *testing.T) {
	var ls Lives
	a := ls.Start(0, 1, 1, 0)
	b := ls.Start(1, 2, 2, 100*ms)
	ls.Start(2, 3, 3, 250*ms)
	if got := ls.End(a, 250*ms); len(got) != 1 || got[0].D != 150*ms {
		t.Fatalf("a's death: %v, want one overlap of 150ms with b (c starts as a dies)", got)
	}
	if got := ls.Finish(400 * ms); len(got) != 1 || got[0].D != 150*ms {
		t.Fatalf("at the end: %v, want b and c, 150ms", got)
	}
	if got := ls.End(b, 500*ms); len(got) != 1 || got[0].D != 250*ms {
		t.Fatalf("b's death: %v, want c, 250ms", got)
	}
	if ls.Overlaps != 3 || ls.Max != 250*ms || !ls.AliveAt(3, 600*ms) || ls.AliveAt(1, 250*ms) || !ls.AliveAt(1, 249*ms) {
		t.Fatalf("overlaps %d max %v; alive: %v %v %v", ls.Overlaps, ls.Max, ls.AliveAt(3, 600*ms), ls.AliveAt(1, 250*ms), ls.AliveAt(1, 249*ms))
	}
}

// The driver's takeover rule: a leadership that takes over from a leader
// this node followed waits for that leader's job, even when the step that
// followed it also began the takeover (a node listening after a standby
// hears the smaller leader and preempts it at once), after a leader lost
// earlier (the RESIGN of the standby's own step down). A leader lost and
// none named since (the status names none: no leader followed, no claim
// noted) is no live leader: no wait.
func TestDriverTakeoverAfterFollowInOneStep(t *testing.T) {
	self := election.Key{Priority: 100, ID: 3}
	st := func(s election.State, leader election.NodeID) election.Status {
		return election.Status{Self: self, State: s, Leader: leader}
	}
	follow := func(id election.NodeID) []election.Action {
		return []election.Action{{Kind: election.ActFollow, Leader: id}}
	}
	for _, followed := range []bool{true, false} {
		d := Driver{WaitMax: 3 * time.Second}
		d.AfterStep(0, st(election.StateLeader, 0), st(election.StateLeader, 3), nil)
		d.AfterStep(time.Second, st(election.StateLeader, 3), st(election.StateFollower, 0), follow(0))
		var acts []election.Action
		named := election.NodeID(0)
		if followed {
			acts, named = follow(2), 2
		}
		d.AfterStep(3*time.Second, st(election.StateStarting, 0), st(election.StateCandidate, named), acts)
		d.AfterStep(3300*time.Millisecond, st(election.StateCandidate, named), st(election.StateLeader, 3), nil)
		want := election.NodeID(0)
		if followed {
			want = 2
		}
		if d.Wait != want || d.From != want || d.Run() != (want == 0) {
			t.Errorf("followed n2 in the step that began the takeover %v: wait %d, from %d, run %v; want wait and from %d",
				followed, d.Wait, d.From, d.Run(), want)
		}
	}
}

// The driver's takeover rule, with the election machine that feeds it: a
// candidate that lost its leader (n5, suspected: "follow leader=0") and
// hears a smaller node (n2) claim while its own election goes on notes
// that claim and elects on, with no ActFollow for n2; its status names
// n2. When it wins, that is a takeover from a live leader whose job may
// run: the driver waits for it. (It did not: the loss of n5 stood, and
// the new leader's job started at once beside n2's.) If n2 is lost in
// turn before the candidate wins, there is no live leader to wait for.
func TestDriverTakeoverFromNotedLeader(t *testing.T) {
	for _, lostAgain := range []bool{false, true} {
		cfg := election.DefaultConfig(3)
		cfg.Hardening = election.Hardening{}
		m, err := election.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		d := Driver{WaitMax: 3 * time.Second}
		step := func(at time.Duration, ev election.Event) []election.Action {
			before := m.Status()
			acts := m.Step(at, ev)
			d.AfterStep(at, before, m.Status(), acts)
			return acts
		}
		claim := func(id election.NodeID, term uint64) election.Event {
			return election.Event{Kind: election.EvMessage, Msg: wire.Message{Type: wire.TypeCoordinator, From: id, Priority: 100, Term: term}}
		}
		for _, id := range []election.NodeID{1, 2, 4, 5} {
			step(0, election.Event{Kind: election.EvMemberUp, Member: election.Key{Priority: 100, ID: id}})
		}
		step(0, election.Event{Kind: election.EvStart})
		step(10*ms, claim(5, 1))
		step(400*ms, election.Event{Kind: election.EvSuspectLeader})
		acts := step(420*ms, claim(2, 2))
		if st := m.Status(); st.State != election.StateCandidate || st.Leader != 2 || slices.ContainsFunc(acts, func(a election.Action) bool { return a.Kind == election.ActFollow }) {
			t.Fatalf("n2's claim during n3's election: status %+v, actions %v; want a candidate naming n2, no ActFollow", st, acts)
		}
		want := election.NodeID(2)
		if lostAgain {
			step(430*ms, election.Event{Kind: election.EvSuspectLeader})
			want = 0
		}
		step(450*ms, election.Event{Kind: election.EvTimer, Timer: election.TimerAnswer})
		if st := m.Status(); st.State != election.StateLeader {
			t.Fatalf("n3 at the end of T: %+v, want leader", st)
		}
		if d.Wait != want || d.From != want || d.Run() != (want == 0) {
			t.Errorf("n2 lost again before n3 leads %v: wait %d, from %d, run %v; want wait and from %d", lostAgain, d.Wait, d.From, d.Run(), want)
		}
	}
}
