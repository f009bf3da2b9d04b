package election

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// The claims of the bully description (shared/DESIGN.md, section "Bully
// (default algorithm)", and the textbook texts in shared/seeds: 002 for
// the estimates and the bounded waits, 004 for T = 2·t_max + t_process)
// are checked step by step by the traces testdata/bully_*.txt, one machine
// fed one event at a time (machine= scenarios, see trace_test.go), in the
// manner of etcd-io/raft's raft_paper_test.go. What stays here is what a
// trace cannot express.

// The timing the traces' deadlines (and the helpers' constants) are
// written with must be the defaults.
// It stays in Go: it checks a configuration, not a step of the machine.
func TestDefaultTiming(t *testing.T) {
	c := DefaultConfig(7)
	got := []any{c.ID, c.Priority, c.Preempt, c.PreemptDelay, c.HeartbeatInterval, c.SuspectAfter,
		c.AnswerTimeout, c.CoordinatorTimeout, c.StartupWait, c.ResignHoldoff, c.Detector == nil}
	want := []any{NodeID(7), defPrio, true, 0 * ms, tHB, tAlarm, tAnswer, tCoord, tStartup, tHoldoff, true}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("DefaultConfig(7):\n got %v\nwant %v", got, want)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("DefaultConfig(7).Validate() = %v", err)
	}
}

// The key orders by priority (the seeds' estimate) first, then by id.
// It stays in Go: it checks a comparison, not a step of the machine.
func TestKeyOrder(t *testing.T) {
	for _, tc := range []struct {
		a, b Key
		less bool
	}{
		{Key{100, 1}, Key{100, 2}, true},
		{Key{100, 2}, Key{100, 1}, false},
		{Key{100, 9}, Key{150, 1}, true}, // priority before id
		{Key{150, 1}, Key{100, 9}, false},
		{Key{100, 3}, Key{100, 3}, false}, // irreflexive
	} {
		if got := tc.a.Less(tc.b); got != tc.less {
			t.Errorf("%v.Less(%v) = %v, want %v", tc.a, tc.b, got, tc.less)
		}
	}
}

// The state names are part of the /status contract.
// It stays in Go: it checks names, not a step of the machine.
func TestStateStrings(t *testing.T) {
	got := fmt.Sprint(StateStarting, StateFollower, StateCandidate, StateLeader, StateConflict, State(9))
	if want := "starting follower candidate leader conflict state(9)"; got != want {
		t.Errorf("state names: got %q, want %q", got, want)
	}
}

// A machine starts once: a node that restarts has lost its memory and gets
// a new machine. EvStart given again to a running leader changes nothing,
// and it goes on sending heartbeats.
// It stays in Go: a trace's "start" gives a node a fresh machine, as a
// driver does, so it cannot give EvStart twice to one.
func TestStep5SecondStartIgnored(t *testing.T) {
	n := leaderOf(t, key(5), nil)
	n.expect(1000*ms, evStart)
	n.is(StateLeader, 1, 5)
	hb := n.step(1100*ms, fire(TimerHeartbeat))
	if !slices.ContainsFunc(hb, func(a Action) bool { return a.Msg.Type == wire.TypeHeartbeat }) {
		t.Errorf("after a second EvStart the leader sent no HEARTBEAT: %v", hb)
	}
}

// EvMemberDown's id 0 means "none", as for EvMemberUp: it is ignored.
// It stays in Go: a trace's network declares only the nodes it has.
func TestMemberDownOfIDZeroIgnored(t *testing.T) {
	n := started(t, key(3), keys(1, 2, 4, 5))
	n.expect(100*ms, memberDown(0))
	n.is(StateStarting, 0, noLeader)
}

// The term never decreases, whatever arrives (a deterministic mix of
// claims, elections, answers, resigns, timers and membership events).
// It stays in Go: it is a property over random mixes of events, not a
// scenario.
func TestTermNeverDecreases(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for run := range 50 {
		self := NodeID(1 + run%5)
		var others []Key
		for id := NodeID(1); id <= 5; id++ {
			if id != self {
				others = append(others, key(id))
			}
		}
		n := started(t, key(self), others)
		now := time.Duration(0)
		last := uint64(0)
		var seen []string
		for range 300 {
			now += time.Duration(r.IntN(120)) * ms
			from := NodeID(1 + r.IntN(5))
			term := uint64(r.IntN(8))
			var ev Event
			switch r.IntN(9) {
			case 0:
				ev = election(from, term)
			case 1:
				ev = answer(from, term)
			case 2:
				ev = coord(from, term)
			case 3:
				ev = heartbeat(from, term)
			case 4:
				ev = resignMsg(from, term)
			case 5:
				ev = fire(TimerKind(r.IntN(int(numTimers))))
			case 6:
				ev = memberDown(from)
			case 7:
				ev = memberUp(Key{Priority: uint16(90 + r.IntN(20)), ID: from})
			case 8:
				ev = []Event{evSuspect, evResign, setPriority(uint16(90 + r.IntN(20)))}[r.IntN(3)]
			}
			n.step(now, ev)
			seen = append(seen, describe(ev))
			if st := n.b.Status(); st.Term < last {
				t.Fatalf("run %d: term went from %d to %d after %s", run, last, st.Term, describe(ev))
			} else {
				last = st.Term
			}
		}
		if last == 0 {
			t.Fatalf("run %d: the term never moved; the mix exercises nothing (%v)", run, seen[:10])
		}
	}
}
