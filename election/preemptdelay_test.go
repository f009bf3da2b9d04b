package election

// Preemption under nopreempt and the preempt delay: the timers that
// hold a takeover off and the elections a holding node answers.

import (
	"testing"
	"time"
)

// with PreemptDelay > 0, maybePreempt re-arms
// TimerPreempt at started+PreemptDelay and so overwrites the hold-off's
// TimerPreempt at holdUntil that resign() set. If the node then loses its
// leader during the hold-off, suspectLeader -> startElection returns
// (holding) and no timer is left to end the hold-off: the node stays
// leaderless forever unless another node elects. In a 2-node pair it never
// leads again (see TestRegressionPreemptDelayResignerNeverLeadsAgain in sim/).
func TestPreemptDelayOverwritesHoldoffTimer(t *testing.T) {
	cfg := DefaultConfig(2)
	cfg.PreemptDelay = 500 * ms
	b, err := NewBully(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.Step(0, memberUp(key(1)))
	b.Step(0, evStart)
	b.Step(300*ms, fire(TimerStartup)) // no larger node: leads with term 1
	b.Step(400*ms, evResign)           // hold-off until 1.4s
	b.Step(401*ms, coord(1, 2))        // 1 takes over; 2 follows it
	b.Step(500*ms, fire(TimerPreempt)) // the moved timer: holding, nothing
	b.Step(501*ms, heartbeat(1, 2))
	b.Step(801*ms, fire(TimerSuspect)) // 1 has crashed
	armed := false
	for k := range numTimers {
		armed = armed || b.armed[k]
	}
	if st := b.Status(); st.Leader == 0 && !armed {
		t.Errorf("leaderless %v with hold-off until %v and no timer armed: it never elects again", st.State, b.holdUntil)
	}
	// Even firing every timer kind after the hold-off changes nothing.
	for k := range numTimers {
		b.Step(2*time.Second, fire(k))
	}
	if st := b.Status(); st.State != StateLeader {
		t.Errorf("at 2s, alone, hold-off over: %v leader=%d, want leader", st.State, st.Leader)
	}
}

// textbook step 4: a node that answers an
// ELECTION "takes the election over". A non-preempting node that answered
// drops its own election as soon as the current (smaller) leader's
// heartbeat arrives, so the smaller preempting candidate that asked got an
// ANSWER and will never get a COORDINATOR: it times out and asks again.
// (The preempting case is protected, "a takeover election is not cancelled
// by the old leader's heartbeats"; the non-preempting one is not.)
func TestNoPreemptNodeAbandonsElectionItAnswered(t *testing.T) {
	n := followerOf(t, key(3), keys(1, 2, 4), key(1), 2, noPreempt)
	n.step(300*ms, heartbeat(1, 2))
	// 2 (preempting, larger than leader 1) runs a takeover election; 3 is
	// larger, answers, and runs its own (4 is listed but has crashed).
	n.expect(400*ms, election(2, 2),
		"send ANSWER to 2 term=2",
		"broadcast ELECTION to larger (1) term=2",
		"set-timer answer at 450ms")
	n.is(StateCandidate, 2, 1)
	// Leader 1's next heartbeat arrives before T runs out.
	n.step(420*ms, heartbeat(1, 2))
	if st := n.b.Status(); st.State != StateCandidate {
		t.Errorf("3 answered 2's ELECTION, then dropped its own election on 1's heartbeat (now %v): 2 waits CoordinatorTimeout for a COORDINATOR that never comes", st.State)
	}
}

// the re-assert branch of onClaim requires mayPreempt, which is
// false during PreemptDelay after start. A leader that came up alone and
// leads within its PreemptDelay steps down on a smaller node's later-term
// claim (ActFollow: the job stops) and takes over again when the delay
// ends (ActBecomeLeader: the job starts again). docs/design/election.md:
// "a preempting leader that hears a smaller node claim a later term
// re-asserts under a fresh term without stepping down". Fix: in the
// leader branch test Preempt && from.Less(self) && !conflict, not
// mayPreempt (the delay is about taking over, not about keeping).
func TestLeaderWithinPreemptDelayStepsDown(t *testing.T) {
	n := newNode(t, key(3), keys(1, 2), preemptDelay(2*time.Second))
	n.step(0, evStart)
	n.step(tStartup, fire(TimerStartup)) // nobody heard: 3 leads with term 1
	n.is(StateLeader, 1, 3)
	acts := n.step(500*ms, coord(2, 5))
	for _, a := range acts {
		if a.Kind == ActFollow {
			t.Errorf("leader 3 (largest, preempting, delay 2s) stepped down to follow the smaller 2: %q", actStrings(acts))
		}
	}
	if st := n.b.Status(); st.State != StateLeader {
		t.Errorf("3 is %v of %d term %d; it takes over again only at 2s", st.State, st.Leader, st.Term)
	}
}
