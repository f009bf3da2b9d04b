package election

// Terms: which claims a node accepts, the key a term is judged by,
// rogue and overflowing terms, and the timers a term change leaves.

import (
	"testing"

	"github.com/lanleader/lanleader/wire"
)

// a preempting leader that hears a smaller
// node's claim with a higher term emits ActFollow (the agent stops the job
// and runs on_follower) and, in the same Step, ActBecomeLeader (starts it
// again). It should re-assert under a fresh term directly, as it already
// does for ANSWER/RESIGN with a higher term.
func TestLeaderFlapsOnSmallerHigherTermClaim(t *testing.T) {
	n := leaderOf(t, key(3), keys(1, 2))
	acts := n.step(350*ms, coord(2, 5))
	for _, a := range acts {
		if a.Kind == ActFollow {
			t.Errorf("leader 3 (largest, preempting) emitted %v before re-asserting: the job is stopped and restarted; actions %q", a, actStrings(acts))
		}
	}
	n.is(StateLeader, 6, 3)
}

// Status().LeaderKey and the key used for the per-term rule
// (termLeaderKey) must not diverge when EvMemberUp changes the leader's
// key. Here the follower shows leader 5 with key 150/5 for term 7, then
// accepts a claim for the same term 7 from the smaller key 120/3, which
// docs/design/election.md's "never recognises two leaders of one term
// unless the second has the larger key" (and sim's Checker, which reads
// Status().LeaderKey) forbids.
func TestMemberUpKeyNotUsedForTermRule(t *testing.T) {
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

// a takeover candidate keeps the TimerSuspect armed by its
// last follow() and, since the candidate branch of onClaim does not feed
// the detector, the timer fires mid-election: a spurious "no leader"
// ActFollow and a restarted election (the ANSWER it had is forgotten).
func TestCandidateStaleSuspectTimer(t *testing.T) {
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

// terms are taken from the wire unchecked. One
// message with term 2^64-1 (a corrupt or rogue packet; HMAC is optional)
// sets maxSeen, and the next becomeLeader computes maxSeen+1 = 0: the
// node's term goes DOWN (invariant 3) and every other node refuses its
// claims. Such a claim, if accepted as a HEARTBEAT, also pins every
// follower to a term nobody can exceed.
func TestTermOverflow(t *testing.T) {
	n := followerOf(t, key(2), keys(1, 3), key(3), 5)
	n.step(100*ms, election(1, ^uint64(0)))
	n.step(400*ms, fire(TimerSuspect))
	if st := n.b.Status(); st.Term < 5 {
		t.Errorf("term went from 5 to %d (%v)", st.Term, st.State)
	}
}

// One corrupt packet with a huge term must not push the node's next term
// beyond what peers accept (or wrap it around), or its claims would be
// ignored by everyone for ever. A term above MaxTerm, or more than
// MaxTermJump above all this node has seen, is ignored, and the node's
// next term is one more than the real ones.
func TestRogueTermIgnored(t *testing.T) {
	for _, rogue := range []uint64{MaxTerm - 1, MaxTerm, MaxTerm + 1, 1<<64 - 1, 5 + MaxTermJump + 1} {
		n := followerOf(t, key(2), keys(1, 3), key(3), 5)
		n.step(100*ms, election(1, rogue))
		n.step(400*ms, memberDown(3))
		if st := n.b.Status(); st.State != StateLeader || st.Term != 6 {
			t.Errorf("rogue term %d: 2 is %v with term %d, want leader with term 6", rogue, st.State, st.Term)
		}
	}
	// A jump within the bound is a real, if surprising, term.
	n := followerOf(t, key(2), keys(1, 3), key(3), 5)
	n.step(100*ms, election(1, 5+MaxTermJump))
	n.step(400*ms, memberDown(3))
	if st := n.b.Status(); st.Term != 5+MaxTermJump+1 {
		t.Errorf("term %d after a jump of MaxTermJump, want %d", st.Term, 5+MaxTermJump+1)
	}
}

// the committed branch of
// onClaim makes a smaller claimant the candidate's leader without ActFollow.
// If the candidate then follows that leader for the same term (here its
// priority drops below it, a failing health check), follow() sees no change
// and emits nothing: Status says follower of 2 while the driver was never
// told (its last word was "starting", no leader), so on_follower never runs
// and the detector is not reset for it. Fix: count a move from candidate
// as a change in follow() (changed ||= state == StateCandidate && leader
// was only noted), or emit ActFollow in the committed branch.
func TestCommittedNotedLeaderNeverReported(t *testing.T) {
	n := started(t, key(3), keys(1, 2, 4))
	var all []Action
	all = append(all, n.step(10*ms, election(1, 0))...) // 3 answers, elects (to 4), committed
	all = append(all, n.step(20*ms, coord(2, 1))...)    // 2 won elsewhere: noted, keep electing
	all = append(all, n.step(30*ms, setPriority(50))...)
	all = append(all, n.step(120*ms, heartbeat(2, 1))...) // 2 is larger now: follow it
	st := n.b.Status()
	if st.State != StateFollower || st.Leader != 2 {
		t.Fatalf("status %v leader=%d", st.State, st.Leader)
	}
	for _, a := range all {
		if a.Kind == ActFollow && a.Leader == 2 {
			return
		}
	}
	t.Errorf("3 follows 2 (term %d) but never emitted ActFollow for it; actions: %q", st.Term, actStrings(all))
}
