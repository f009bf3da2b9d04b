package election

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/internal/planted"
	"github.com/lanleader/lanleader/wire"
)

// One test per claim of quorum mode (quorum.go), with the defaults: lease
// 300ms, margin 30ms (a guard of 330ms), claims given up after 530ms.

func quorumOf(n int) func(*Config) { return func(c *Config) { c.Quorum = n } }

// qclaim is a numbered claim (COORDINATOR or HEARTBEAT) from leader with
// term, as its driver stamps it with sequence number seq.
func qclaim(typ wire.Type, from NodeID, term uint64, n uint32) Event {
	ev := claim(typ, key(from), term)
	ev.Msg.Seq = n
	ev.Msg.Claim = n
	return ev
}

// ack is an acknowledgement from a follower of the leader's claim number n.
func ack(from NodeID, term uint64, n uint32) Event {
	ev := claim(wire.TypeHeartbeatAck, key(from), term)
	ev.Msg.AckSeq = n
	return ev
}

func has(acts []Action, want string) bool {
	return slices.Contains(actStrings(acts), want)
}

func hasKind(acts []Action, k ActionKind) bool {
	return slices.ContainsFunc(acts, func(a Action) bool { return a.Kind == k })
}

// Claim 3: a claimant leads only once a majority of N, itself included,
// has acknowledged its term, and not before its own guard after a start
// is over. Until then it is a candidate, with no leader.
func TestQuorumLeadsOnlyWithAMajority(t *testing.T) {
	n := started(t, key(5), keys(1, 2, 3, 4), quorumOf(5))
	acts := n.step(tStartup, fire(TimerStartup))
	if !has(acts, "broadcast COORDINATOR to all (4) term=1") || hasKind(acts, ActBecomeLeader) {
		t.Fatalf("claim: %q", actStrings(acts))
	}
	n.is(StateCandidate, 1, noLeader)
	// Two acknowledgements make a majority (3 of 5), but 5 started 310ms
	// ago: it may have promised something before a restart.
	n.step(310*ms, ack(4, 1, 1))
	if acts := n.step(320*ms, ack(3, 1, 1)); hasKind(acts, ActBecomeLeader) {
		t.Fatalf("led within its own guard: %q", actStrings(acts))
	}
	// At its next heartbeat its guard is over: the majority confirms it,
	// with a lease of 300ms from the claim they acknowledged (300ms).
	acts = n.step(400*ms, fire(TimerHeartbeat))
	if !has(acts, "become-leader term=1") {
		t.Fatalf("no leadership with a majority: %q", actStrings(acts))
	}
	if st := n.b.Status(); st.State != StateLeader || st.LeaseUntil != 600*ms {
		t.Fatalf("status %+v, want leader with a lease until 600ms", st)
	}
	// Acknowledgements of a later claim renew the lease from that claim
	// (claim 3 was the HEARTBEAT at 400ms): one is not a majority, two are.
	n.step(401*ms, ack(4, 1, 3))
	if st := n.b.Status(); st.LeaseUntil != 600*ms {
		t.Fatalf("renewed by one of four: lease until %v", st.LeaseUntil)
	}
	n.step(402*ms, ack(3, 1, 3))
	if st := n.b.Status(); st.LeaseUntil != 700*ms {
		t.Fatalf("lease until %v, want 700ms", st.LeaseUntil)
	}
}

// Claims 1 and 6: an acknowledgement is a vote; a node votes for one
// leader per term, so two nodes never lead with one term.
func TestQuorumOneVotePerTerm(t *testing.T) {
	n := started(t, key(1), keys(2, 3, 4), quorumOf(4))
	acts := n.step(400*ms, qclaim(wire.TypeCoordinator, 3, 1, 1))
	if !has(acts, "send HEARTBEAT_ACK to 3 term=1") {
		t.Fatalf("no vote for 3: %q", actStrings(acts))
	}
	// 4, larger, claims the same term: 1 follows it (the textbook rule)
	// but does not vote a second time in term 1.
	acts = n.step(410*ms, qclaim(wire.TypeCoordinator, 4, 1, 1))
	if hasKind(acts, ActSend) {
		t.Fatalf("voted twice in term 1: %q", actStrings(acts))
	}
	if st := n.b.Status(); st.Leader != noLeader {
		t.Fatalf("shows leader %d, which holds no lease", st.Leader)
	}
}

// Claim 2: an acknowledgement is a promise: no support for another leader
// before Lease+LeaseMargin (330ms) after it.
func TestQuorumGuardKeepsSupportFromOthers(t *testing.T) {
	n := started(t, key(1), keys(2, 3, 4), quorumOf(4))
	n.step(400*ms, qclaim(wire.TypeHeartbeat, 3, 1, 1))
	// 4 claims a later term at 500ms: followed, not supported.
	if acts := n.step(500*ms, qclaim(wire.TypeCoordinator, 4, 2, 1)); hasKind(acts, ActSend) {
		t.Fatalf("supported 4 within the guard given to 3: %q", actStrings(acts))
	}
	if acts := n.step(729*ms, qclaim(wire.TypeCoordinator, 4, 2, 2)); hasKind(acts, ActSend) {
		t.Fatalf("supported 4 at 729ms, the guard ends at 730ms: %q", actStrings(acts))
	}
	if acts := n.step(730*ms, qclaim(wire.TypeCoordinator, 4, 2, 3)); !has(acts, "send HEARTBEAT_ACK to 4 term=2") {
		t.Fatalf("no support for 4 once the guard is over: %q", actStrings(acts))
	}
}

// Claim 2: a follower that suspects its leader elects only once the lease
// it supported has surely run out.
func TestQuorumFollowerPutsOffItsElection(t *testing.T) {
	n := started(t, key(1), keys(2, 3), quorumOf(3))
	n.step(400*ms, qclaim(wire.TypeHeartbeat, 3, 1, 1)) // acknowledged: guard until 730ms
	acts := n.step(700*ms, fire(TimerSuspect))
	if has(acts, "broadcast ELECTION to larger (2) term=1") || !has(acts, "set-timer lease at 730ms") {
		t.Fatalf("suspicion at 700ms: %q", actStrings(acts))
	}
	if acts := n.step(730*ms, fire(TimerLease)); !has(acts, "broadcast ELECTION to larger (1) term=1") {
		t.Fatalf("no election once the guard is over: %q", actStrings(acts))
	}
}

// leaseHolder drives 3 of 3 to a confirmed leadership with a lease until
// 700ms (its claim at 400ms acknowledged by 1).
func leaseHolder(t *testing.T, opts ...func(*Config)) tnode {
	t.Helper()
	n := started(t, key(3), keys(1, 2), append([]func(*Config){quorumOf(3)}, opts...)...)
	n.step(tStartup, fire(TimerStartup))
	n.step(400*ms, fire(TimerHeartbeat))
	if acts := n.step(401*ms, ack(1, 1, 2)); !has(acts, "become-leader term=1") {
		t.Fatalf("not confirmed: %q", actStrings(acts))
	}
	if st := n.b.Status(); st.LeaseUntil != 700*ms {
		t.Fatalf("lease until %v, want 700ms", st.LeaseUntil)
	}
	return n
}

// Claim 4: a leader that cannot renew steps down at the end of its lease
// (the driver stops the job), then elects again under a fresh term.
func TestQuorumLeaderStepsDownWhenTheLeaseRunsOut(t *testing.T) {
	n := leaseHolder(t)
	for _, at := range []time.Duration{500 * ms, 600 * ms} {
		n.step(at, fire(TimerHeartbeat))
	}
	acts := n.step(700*ms, fire(TimerLease))
	got := actStrings(acts)
	if len(got) < 3 || got[0] != "cancel-timer heartbeat" || got[2] != fmtFollow(noLeader, 1) || !has(acts, "broadcast COORDINATOR to all (2) term=2") {
		t.Fatalf("at the end of the lease: %q", got)
	}
	n.is(StateCandidate, 2, noLeader)
}

// Claim 4: a leader that wakes up after a pause checks its lease before
// it does anything: the first action of its first step is the step-down.
// With planted.Election.SkipWakeCheck it acts on the stale lease first.
func TestQuorumLeaderChecksItsLeaseOnWake(t *testing.T) {
	n := leaseHolder(t)
	acts := n.step(1500*ms, ack(1, 1, 2)) // a packet that waited in its socket
	if len(acts) == 0 || acts[0].Kind != ActCancelTimer || !has(acts, fmtFollow(noLeader, 1)) {
		t.Fatalf("on wake: %q", actStrings(acts))
	}
	broken := leaseHolder(t, func(c *Config) { c.Planted = &planted.Election{SkipWakeCheck: true} })
	acts = broken.step(1500*ms, fire(TimerHeartbeat))
	if hasKind(acts, ActFollow) || len(acts) == 0 || acts[0].Kind != ActBroadcast || acts[0].Msg.Type != wire.TypeHeartbeat {
		t.Fatalf("broken variant on wake: %q", actStrings(acts))
	}
}

// Claim 4: an acknowledgement echoes the highest claim number received,
// so a duplicate or a claim overtaken by a later one counts for nothing,
// a lost one costs nothing, and an acknowledgement is never read as more
// recent than it is.
func TestQuorumAcknowledgementEchoesTheHighestClaim(t *testing.T) {
	n := started(t, key(1), keys(2, 3), quorumOf(3))
	for _, c := range []struct {
		seq  uint32
		want string
	}{{5, "ack=5"}, {5, "ack=5"}, {4, "ack=5"}, {7, "ack=7"}} {
		acts := n.step(400*ms, qclaim(wire.TypeHeartbeat, 3, 1, c.seq))
		if len(acts) == 0 || acts[len(acts)-1].Msg.Type != wire.TypeHeartbeatAck || "ack="+itoa(uint64(acts[len(acts)-1].Msg.AckSeq)) != c.want {
			t.Fatalf("claim seq %d: %q, want %s", c.seq, actStrings(acts), c.want)
		}
	}
}

// Followers show a leader only once it holds a lease (it sends HEARTBEAT):
// on the minority side of a partition, the claimant is a candidate and its
// followers have leader 0.
func TestQuorumFollowersShowOnlyALeaseHolder(t *testing.T) {
	n := started(t, key(1), keys(2, 3), quorumOf(3))
	acts := n.step(400*ms, qclaim(wire.TypeCoordinator, 3, 1, 1))
	if !has(acts, fmtFollow(noLeader, 1)) {
		t.Fatalf("claim: %q", actStrings(acts))
	}
	n.is(StateFollower, 1, noLeader)
	if acts := n.step(500*ms, qclaim(wire.TypeHeartbeat, 3, 1, 2)); !has(acts, fmtFollow(3, 1)) {
		t.Fatalf("heartbeat: %q", actStrings(acts))
	}
	n.is(StateFollower, 1, 3)
}

func TestQuorumConfig(t *testing.T) {
	c := DefaultConfig(1)
	c.Quorum = 5
	c = c.WithDefaults()
	if c.Lease != 300*ms || c.LeaseMargin != 30*ms || c.ClaimWait != 530*ms {
		t.Fatalf("defaults: lease %v margin %v claim wait %v", c.Lease, c.LeaseMargin, c.ClaimWait)
	}
	if got := MinLeaseMargin(300 * ms); got != 301*time.Microsecond {
		t.Fatalf("MinLeaseMargin(300ms) = %v, want 301µs (2·500ppm/(1-500ppm))", got)
	}
	for _, bad := range []struct {
		f    func(*Config)
		want string
	}{
		{func(c *Config) { c.LeaseMargin = 300 * time.Microsecond }, "lease margin"},
		{func(c *Config) { c.Lease = c.HeartbeatInterval }, "lease (100ms): must be longer"},
		{func(c *Config) { c.ClaimWait = c.Lease }, "claim wait"},
		{func(c *Config) { c.Quorum = -1 }, "quorum"},
	} {
		b := c
		bad.f(&b)
		if err := b.Validate(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("want an error about %q, got %v", bad.want, err)
		}
	}
	if c.Validate() != nil {
		t.Fatal(c.Validate())
	}
}

// A deposed leader's vote never completes a majority while its lease,
// and so its job, may still run. Two candidates and a witness: 5 leads
// with the witness's acknowledgement; 9, larger, returns and claims. 5
// follows it at once, but acknowledges only once its own lease (and the
// margin) is over: with its vote 9 would have had its majority (9 and 5)
// while 5's job still ran. With planted.Election.DeposedAck (the old behaviour) it
// acknowledges at once.
func TestQuorumDeposedLeaderVotesAfterItsLease(t *testing.T) {
	for _, unsafe := range []bool{false, true} {
		deposedVotesAfterLease(t, unsafe, func(tnode) {}) // 9's claim deposes it
	}
}

// A leader whose election interface goes down (the agent's standby)
// steps down as a deposed leader does: its job stops only now, and may
// run until its guard kills it at the lease's end, so it acknowledges no
// claim before the lease and the margin are over, in standby or out of
// it. The explorer found its vote completing a majority of three 65 ms
// before the old job died.
func TestQuorumStandbyLeaderVotesAfterItsLease(t *testing.T) {
	for _, unsafe := range []bool{false, true} {
		deposedVotesAfterLease(t, unsafe, func(n tnode) {
			n.step(420*ms, Event{Kind: EvStandby, On: true})
			if st := n.b.Status(); st.State != StateFollower {
				t.Fatalf("unsafe=%v: status %+v after the standby, want a follower", unsafe, st)
			}
			n.step(430*ms, Event{Kind: EvStandby, On: false})
		})
	}
}

// deposedVotesAfterLease: 5 leads a quorum of three with 1's
// acknowledgement while 9 is down; stepDown may take it out of the lead;
// then 9 returns and claims a later term. 5 follows it, but acknowledges
// only once its own lease and the margin are over, or at once with
// planted.Election.DeposedAck.
func deposedVotesAfterLease(t *testing.T, unsafe bool, stepDown func(tnode)) {
	t.Helper()
	n := started(t, key(5), keys(1, 9), quorumOf(3), func(c *Config) { c.Planted = &planted.Election{DeposedAck: unsafe} })
	// 9 is not there yet (it crashed): 5 leads with 1's vote.
	n.step(0, Event{Kind: EvMemberDown, Member: key(9)})
	n.step(tStartup, fire(TimerStartup))
	n.step(tStartup+tAnswer, fire(TimerAnswer))
	n.step(400*ms, fire(TimerHeartbeat))
	st := n.b.Status()
	if st.State != StateCandidate {
		t.Fatalf("unsafe=%v: status %+v, want a claim waiting for its majority", unsafe, st)
	}
	n.step(401*ms, ack(1, st.Term, 1))
	st = n.b.Status()
	if st.State != StateLeader || st.LeaseUntil == 0 {
		t.Fatalf("unsafe=%v: status %+v, want a leader with a lease", unsafe, st)
	}
	lease := st.LeaseUntil
	stepDown(n)
	// 9 is back and claims a later term.
	n.step(450*ms, Event{Kind: EvMemberUp, Member: key(9)})
	acts := n.step(451*ms, qclaim(wire.TypeCoordinator, 9, st.Term+1, 1))
	if st := n.b.Status(); st.State != StateFollower {
		t.Fatalf("unsafe=%v: status %+v, want a follower of 9", unsafe, st)
	}
	ackNow := has(acts, fmt.Sprintf("send HEARTBEAT_ACK to 9 term=%d", st.Term+1))
	if unsafe != ackNow {
		t.Fatalf("unsafe=%v: acknowledged at once: %v (%q), lease until %v", unsafe, ackNow, actStrings(acts), lease)
	}
	if unsafe {
		return
	}
	end := lease + n.b.Config().LeaseMargin
	if acts := n.step(end-1, qclaim(wire.TypeCoordinator, 9, st.Term+1, 2)); hasKind(acts, ActSend) {
		t.Fatalf("acknowledged at %v, before its lease and margin end at %v: %q", end-1, end, actStrings(acts))
	}
	if acts := n.step(end, qclaim(wire.TypeCoordinator, 9, st.Term+1, 3)); !has(acts, fmt.Sprintf("send HEARTBEAT_ACK to 9 term=%d", st.Term+1)) {
		t.Fatalf("no acknowledgement once its lease is over (%v): %q", end, actStrings(acts))
	}
}

// Claims 2 and 3 after a node_id conflict: a node that leaves state
// conflict is back in the elections as one that has just started is. It
// takes over from a smaller leader (preemption), but leads only once its
// own guard (330ms) is over, however fast a majority acknowledges:
// meanwhile the other node with its node_id may have given votes under
// it, and the lease of the leader it displaces may still run.
func TestQuorumLeavingConflictGuards(t *testing.T) {
	n := started(t, key(5), keys(3, 4), quorumOf(3))
	n.step(10*ms, Event{Kind: EvConflict, On: true})
	n.step(500*ms, qclaim(wire.TypeHeartbeat, 4, 1, 1))
	n.is(StateConflict, 1, 4)
	acts := n.step(2*time.Second, Event{Kind: EvConflict, On: false})
	if !has(acts, "broadcast COORDINATOR to all (2) term=2") {
		t.Fatalf("no takeover from 4 when the conflict ends: %q", actStrings(acts))
	}
	if acts := n.step(2*time.Second+10*ms, ack(3, 2, 1)); hasKind(acts, ActBecomeLeader) {
		t.Fatalf("led 10ms after the conflict ended, within its guard: %q", actStrings(acts))
	}
	n.is(StateCandidate, 2, noLeader)
	// After the guard (2.33s) its claim goes out again, and one
	// acknowledgement of it makes the majority.
	if acts := n.step(2*time.Second+400*ms, fire(TimerHeartbeat)); !has(acts, "broadcast COORDINATOR to all (2) term=2") {
		t.Fatalf("the claim is not repeated: %q", actStrings(acts))
	}
	if acts := n.step(2*time.Second+410*ms, ack(3, 2, 2)); !has(acts, "become-leader term=2") {
		t.Fatalf("no leadership once the guard is over: %q", actStrings(acts))
	}
}
