package election

// Regression tests: each pins a problem found in review; the comment
// above each says what went wrong before the fix.

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// Regression (bug, fixed): a node that once resigned leaves an exclusion entry with
// resigned=true that is never deleted (messages and member-up skip resigned
// entries; only member-down removes it). suspectLeader only adds an entry if
// none exists, so every later suspicion of that node is NOT recorded: the
// crashed leader is awaited again (ELECTION + T) instead of being left out,
// contrary to README's first "Hardening" bullet.
func TestRegressionExpiredResignExclusionBlocksLaterSuspicion(t *testing.T) {
	n := followerOf(t, key(2), keys(1, 3), key(3), 1)
	n.step(290*ms, heartbeat(3, 1))
	// 3 resigns: 2 is the largest left and claims term 2 at once.
	n.step(500*ms, resignMsg(3, 1))
	n.is(StateLeader, 2, 2)
	// 3's hold-off is over: it takes back with term 3 and heartbeats.
	n.step(1600*ms, coord(3, 3))
	n.step(1700*ms, heartbeat(3, 3))
	n.is(StateFollower, 3, 3)
	// 3 crashes; the detector fires. 2 is the largest left, so (as in
	// TestStep6SuspicionBySecondLargestMakesItCoordinatorAtOnce) it should
	// lead at once, leaving the suspected 3 out.
	n.step(2000*ms, fire(TimerSuspect))
	if st := n.b.Status(); st.State != StateLeader {
		t.Errorf("after suspecting 3 (which resigned long ago): %v, want leader at once; excluded[3]=%+v (stale resigned entry, so the new suspicion was not recorded)",
			st.State, n.b.excluded[3])
	}
}

// Regression (bug, liveness, fixed): with PreemptDelay > 0, maybePreempt re-arms
// TimerPreempt at started+PreemptDelay and so overwrites the hold-off's
// TimerPreempt at holdUntil that resign() set. If the node then loses its
// leader during the hold-off, suspectLeader -> startElection returns
// (holding) and no timer is left to end the hold-off: the node stays
// leaderless forever unless another node elects. In a 2-node pair it never
// leads again (see TestRegressionPreemptDelayResignerNeverLeadsAgain in sim/).
func TestRegressionPreemptDelayOverwritesHoldoffTimer(t *testing.T) {
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

// Regression (bug, operational, fixed): a preempting leader that hears a smaller
// node's claim with a higher term emits ActFollow (the agent stops the job
// and runs on_follower) and, in the same Step, ActBecomeLeader (starts it
// again). It should re-assert under a fresh term directly, as it already
// does for ANSWER/RESIGN with a higher term.
func TestRegressionLeaderFlapsOnSmallerHigherTermClaim(t *testing.T) {
	n := leaderOf(t, key(3), keys(1, 2))
	acts := n.step(350*ms, coord(2, 5))
	for _, a := range acts {
		if a.Kind == ActFollow {
			t.Errorf("leader 3 (largest, preempting) emitted %v before re-asserting: the job is stopped and restarted; actions %q", a, actStrings(acts))
		}
	}
	n.is(StateLeader, 6, 3)
}

// Regression (deviation, liveness, fixed): textbook step 4: a node that answers an
// ELECTION "takes the election over". A non-preempting node that answered
// drops its own election as soon as the current (smaller) leader's
// heartbeat arrives, so the smaller preempting candidate that asked got an
// ANSWER and will never get a COORDINATOR: it times out and asks again.
// (The preempting case is protected, "a takeover election is not cancelled
// by the old leader's heartbeats"; the non-preempting one is not.)
func TestRegressionNoPreemptNodeAbandonsElectionItAnswered(t *testing.T) {
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

// Regression (nit; fails at HEAD 9ef20f7, passes with the uncommitted edit to
// onMemberUp that appeared in the working tree during the review, which
// also updates termLeaderKey; that edit moves the mismatch instead: while
// leaderless, a member-up now lowers termLeaderKey but not the checker's
// view, so the reverse case is accepted by the machine and flagged by sim's
// Checker).
// Status().LeaderKey and the key used for the per-term rule
// (termLeaderKey) diverge: EvMemberUp updates leaderKey only. Here the
// follower shows leader 5 with key 150/5 for term 7, then accepts a claim
// for the same term 7 from the smaller key 120/3, which README's
// "never recognises two leaders of one term unless the second has the larger
// key" (and sim's Checker, which reads Status().LeaderKey) forbids.
func TestRegressionMemberUpKeyNotUsedForTermRule(t *testing.T) {
	l := Key{Priority: 100, ID: 5}
	m := Key{Priority: 120, ID: 3}
	n := followerOf(t, key(2), []Key{l, m}, l, 7)
	n.step(50*ms, memberUp(Key{Priority: 150, ID: 5}))
	if got := n.b.Status().LeaderKey; got != (Key{Priority: 150, ID: 5}) {
		t.Fatalf("LeaderKey %v after member-up", got)
	}
	n.step(60*ms, claim(wire.TypeCoordinator, m, 7))
	if st := n.b.Status(); st.Leader != 5 {
		t.Errorf("term 7: recognised 5 (key 150/5), then %d (key %v) for the same term", st.Leader, st.LeaderKey)
	}
}

// Regression (nit, fixed): a takeover candidate keeps the TimerSuspect armed by its
// last follow() and, since the candidate branch of onClaim does not feed
// the detector, the timer fires mid-election: a spurious "no leader"
// ActFollow and a restarted election (the ANSWER it had is forgotten).
func TestRegressionCandidateStaleSuspectTimer(t *testing.T) {
	b, _ := NewBully(DefaultConfig(2))
	b.Step(0, memberUp(key(1)))
	b.Step(0, memberUp(key(3)))
	b.Step(0, evStart)
	b.Step(10*ms, coord(1, 1))   // follows 1, preempts: ELECTION to 3
	b.Step(300*ms, answer(3, 1)) // 3 answers: wait for its COORDINATOR
	b.Step(305*ms, heartbeat(1, 1))
	acts := b.Step(310*ms, fire(TimerSuspect))
	if len(acts) != 0 {
		t.Errorf("candidate awaiting 3's COORDINATOR reacted to a stale suspect timer: %q", actStrings(acts))
	}
}

// Regression (nit, robustness, fixed): terms are taken from the wire unchecked. One
// message with term 2^64-1 (a corrupt or rogue packet; HMAC is optional)
// sets maxSeen, and the next becomeLeader computes maxSeen+1 = 0: the
// node's term goes DOWN (invariant 3) and every other node refuses its
// claims. Such a claim, if accepted as a HEARTBEAT, also pins every
// follower to a term nobody can exceed.
func TestRegressionTermOverflow(t *testing.T) {
	n := followerOf(t, key(2), keys(1, 3), key(3), 5)
	n.step(100*ms, election(1, ^uint64(0)))
	n.step(400*ms, fire(TimerSuspect))
	if st := n.b.Status(); st.Term < 5 {
		t.Errorf("term went from 5 to %d (%v)", st.Term, st.State)
	}
}

// Regression (nit, leak, fixed): RESIGN from any sender id adds an exclusion entry;
// resigned entries are removed only by EvMemberDown, which never comes for
// an id that was never a member. The map grows with every distinct id.
func TestRegressionExcludedGrowsWithUnknownResigners(t *testing.T) {
	n := followerOf(t, key(2), keys(1, 3), key(3), 1)
	for id := NodeID(1000); id < 2000; id++ {
		n.step(20*ms, resignMsg(id, 0))
	}
	n.step(60*time.Second, heartbeat(3, 1))
	if len(n.b.excluded) > 2 {
		t.Errorf("excluded holds %d entries a minute later, for ids that were never members", len(n.b.excluded))
	}
}
