package election

import (
	"testing"

	"github.com/lanleader/lanleader/wire"
)

// One test per step of the ring algorithm of the Russian texts
// (shared/seeds 000 and 001; see textbook_ring_list.go), then one per addition that
// a LAN needs (textbook_ring.go). The ring is 1 -> 2 -> 3 -> 4 -> 5 -> 1 (the
// members sorted by key); 5 leads with term 1 unless a test says
// otherwise. The round's wait is 200ms + 2·5·T/2 = 450ms.

const ringRoundWait = 450 * ms

// Step 1: "When a process notices that the coordinator is gone, it sends
// its successor ELECTION with its number." The number goes in a list; the
// round proposes the term one above any seen.
func TestRingStep1SuspicionSendsListToSuccessor(t *testing.T) {
	n := followerIn(t, AlgorithmRing, key(2), keys(1, 3, 4, 5), key(5))
	n.expect(100*ms, evSuspect,
		"cancel-timer suspect",
		fmtFollow(noLeader, 1),
		"set-timer coordinator at 550ms",
		"send RING_ELECTION to 3 term=2 origin=2 list=[2]",
		"set-timer answer at 150ms")
	n.is(StateCandidate, 1, noLeader)
}

// Step 1, with the successor being the suspected leader: it is not
// waited for; the list goes to the one after it.
func TestRingStep1SuspectedLeaderIsLeftOut(t *testing.T) {
	n := followerIn(t, AlgorithmRing, key(4), keys(1, 2, 3, 5), key(5))
	n.expect(100*ms, evSuspect,
		"cancel-timer suspect",
		fmtFollow(noLeader, 1),
		"set-timer coordinator at 550ms",
		"send RING_ELECTION to 1 term=2 origin=4 list=[4]",
		"set-timer answer at 150ms")
}

// Step 2: "If the next process does not answer, the message is sent to
// the one after it, and so on, until a working process is found." Not
// answering is not acknowledging within T.
func TestRingStep2SilentSuccessorIsSkipped(t *testing.T) {
	n := followerIn(t, AlgorithmRing, key(2), keys(1, 3, 4, 5), key(5))
	n.step(100*ms, evSuspect)
	n.expect(149*ms, fire(TimerAnswer)) // not due
	n.expect(150*ms, fire(TimerAnswer),
		"send RING_ELECTION to 4 term=2 origin=2 list=[2]",
		"set-timer answer at 200ms")
	// 4 does not answer either: on to 1 (5 is suspected).
	n.expect(200*ms, fire(TimerAnswer),
		"send RING_ELECTION to 1 term=2 origin=2 list=[2]",
		"set-timer answer at 250ms")
}

// Step 2: an acknowledged hop is done: the wait ends.
func TestRingStep2AcknowledgedHopIsDone(t *testing.T) {
	n := followerIn(t, AlgorithmRing, key(2), keys(1, 3, 4, 5), key(5))
	acts := n.step(100*ms, evSuspect)
	hop := find(t, acts, "send RING_ELECTION")
	n.expect(101*ms, ackOf(4, hop)) // from the wrong node: still waiting
	n.expect(102*ms, ackOf(3, hop), "cancel-timer answer")
	n.expect(150*ms, fire(TimerAnswer))
}

// Step 2: a successor that membership declares dead is skipped at once.
func TestRingStep2DeadSuccessorIsSkippedAtOnce(t *testing.T) {
	n := followerIn(t, AlgorithmRing, key(2), keys(1, 3, 4, 5), key(5))
	n.step(100*ms, evSuspect)
	n.expect(110*ms, memberDown(3),
		"send RING_ELECTION to 4 term=2 origin=2 list=[2]",
		"set-timer answer at 160ms")
}

// Step 3: "Each working process adds its number to the list of working
// processes and passes the message on round the ring." It acknowledges
// the hop, and takes part in the round (it is a candidate until the
// result comes).
func TestRingStep3EachAddsItsNumberAndPasses(t *testing.T) {
	n := followerIn(t, AlgorithmRing, key(3), keys(1, 2, 4, 5), key(5))
	n.expectAcked(100*ms, ringElection(2, 2, 2), 1,
		"set-timer coordinator at 550ms",
		"send RING_ELECTION to 4 term=2 origin=2 list=[2 3]",
		"set-timer answer at 150ms")
	n.is(StateCandidate, 1, 5)
}

// Step 4: "When a process finds its own number in the list, it turns the
// message into COORDINATOR, which goes round telling everyone the list of
// working processes and the coordinator: the largest number in the list."
func TestRingStep4OwnNumberTurnsTheListIntoCoordinator(t *testing.T) {
	n := followerIn(t, AlgorithmRing, key(2), keys(1, 3, 4, 5), key(5))
	n.step(100*ms, evSuspect)
	n.expectAcked(120*ms, ringElection(1, 2, 2, 3, 4, 1), 1,
		"cancel-timer coordinator",
		fmtFollow(4, 2),
		"set-timer suspect at 420ms",
		"send RING_COORDINATOR to 3 term=2 origin=2 list=[2 3 4 1]")
	n.is(StateFollower, 2, 4)
}

// Step 4: each process learns the coordinator from COORDINATOR and passes
// it on; the coordinator itself leads with the round's term.
func TestRingStep4CoordinatorIsLearntAndPassedOn(t *testing.T) {
	f := followerIn(t, AlgorithmRing, key(3), keys(1, 2, 4, 5), key(5))
	f.step(100*ms, ringElection(2, 2, 2))
	f.expectAcked(120*ms, ringCoordinator(2, 2, 2, 2, 3, 4, 1), 1,
		"cancel-timer coordinator",
		fmtFollow(4, 2),
		"set-timer suspect at 420ms",
		"send RING_COORDINATOR to 4 term=2 origin=2 list=[2 3 4 1]")

	// (4 has not suspected 5: COORDINATOR goes on to it.)
	c := followerIn(t, AlgorithmRing, key(4), keys(1, 2, 3, 5), key(5))
	c.step(100*ms, ringElection(3, 2, 2, 3))
	c.expectAcked(120*ms, ringCoordinator(3, 2, 2, 2, 3, 4, 1), 1,
		"cancel-timer coordinator",
		"cancel-timer suspect",
		"become-leader term=2",
		"set-timer heartbeat at 220ms",
		"send RING_COORDINATOR to 5 term=2 origin=2 list=[2 3 4 1]")
	c.is(StateLeader, 2, 4)
}

// Step 5: "After one circle the message is removed": the process that
// made COORDINATOR only acknowledges it.
func TestRingStep5CoordinatorIsRemovedAfterOneCircle(t *testing.T) {
	n := followerIn(t, AlgorithmRing, key(2), keys(1, 3, 4, 5), key(5))
	n.step(100*ms, evSuspect)
	n.step(120*ms, ringElection(1, 2, 2, 3, 4, 1))
	n.expectAcked(130*ms, ringCoordinator(1, 2, 2, 2, 3, 4, 1), 2)
	n.is(StateFollower, 2, 4)
}

// --- for a LAN -----------------------------------------------------------------

// The participating flag (seed 004), applied to the lists: a node taking
// part in the round of one initiator drops the list of a smaller one of
// the same term, and passes on a larger one's.
func TestRingParticipatingDropsSmallerInitiator(t *testing.T) {
	n := followerIn(t, AlgorithmRing, key(3), keys(1, 2, 4, 5), key(5))
	n.step(100*ms, evSuspect) // 3's own round, term 2
	n.expectAcked(101*ms, ringElection(2, 2, 2), 1)
	n.expectAcked(102*ms, ringElection(2, 2, 4, 1, 2), 1,
		"set-timer coordinator at 552ms",
		"send RING_ELECTION to 4 term=2 origin=4 list=[4 1 2 3]")
	// The same round again (a duplicate): dropped.
	n.expectAcked(103*ms, ringElection(2, 2, 4, 1, 2), 1)
	// 3's own list comes back: 4's round replaced it.
	n.expectAcked(104*ms, ringElection(2, 2, 3, 4, 1, 2), 1)
	n.is(StateCandidate, 1, noLeader)
}

// A round whose term is not above the leadership a node recognises was
// started before that leadership (or elected it): stale, dropped.
func TestRingStaleRoundIsDropped(t *testing.T) {
	n := followerIn(t, AlgorithmRing, key(3), keys(1, 2, 4, 5), key(5))
	n.expectAcked(100*ms, ringElection(2, 1, 2), 1)
	n.is(StateFollower, 1, 5)
}

// A later round replaces an earlier one, whatever its initiator.
func TestRingLaterRoundReplacesEarlier(t *testing.T) {
	n := followerIn(t, AlgorithmRing, key(3), keys(1, 2, 4, 5), key(5))
	n.step(100*ms, ringElection(2, 2, 4, 1, 2))
	n.expectAcked(101*ms, ringElection(2, 3, 1, 2), 1,
		"set-timer coordinator at 551ms",
		"send RING_ELECTION to 4 term=3 origin=1 list=[1 2 3]")
	// and the earlier one's list is dropped when it comes back.
	n.expectAcked(102*ms, ringElection(2, 2, 3, 4, 1, 2), 1)
}

// A leader that gets the round of a smaller initiator (which suspects it)
// ends the election as a bully leader does: under a fresh term, with one
// COORDINATOR to all.
func TestRingLeaderReassertsAgainstSmallerInitiator(t *testing.T) {
	n := followerIn(t, AlgorithmRing, key(5), keys(1, 2, 3, 4), key(4), noPreempt)
	n.step(100*ms, evSuspect)
	n.step(101*ms, ringElection(4, 2, 5, 1, 2, 3, 4))
	n.is(StateLeader, 2, 5)
	n.expectAcked(200*ms, ringElection(4, 3, 2, 3, 4), 2,
		"broadcast COORDINATOR to all (4) term=4",
		"become-leader term=4",
		"set-timer heartbeat at 300ms")
}

// No result within the round's wait: the round was lost; a new one with a
// later term.
func TestRingLostRoundStartsANewOne(t *testing.T) {
	n := followerIn(t, AlgorithmRing, key(2), keys(1, 3, 4, 5), key(5))
	n.stepAcked(100*ms, evSuspect, "send RING_ELECTION", 3)
	n.expect(100*ms+ringRoundWait, fire(TimerCoordinator),
		"set-timer coordinator at 1s",
		"send RING_ELECTION to 3 term=3 origin=2 list=[2]",
		"set-timer answer at 600ms")
}

// A round that loses its initiator to a crash ends, and a new one starts.
func TestRingCrashOfInitiatorStartsANewRound(t *testing.T) {
	n := followerIn(t, AlgorithmRing, key(3), keys(1, 2, 4, 5), key(5))
	n.stepAcked(100*ms, ringElection(2, 2, 2), "send RING_ELECTION", 4)
	n.expect(200*ms, memberDown(2),
		"set-timer coordinator at 600ms", // 200ms + 2·4·T/2: the ring lost 2
		"send RING_ELECTION to 4 term=3 origin=3 list=[3]",
		"set-timer answer at 250ms")
}

// A node in its resign hold-off passes lists on without its number: it may
// not be elected. It is not passed by: announcements reach it.
func TestRingHoldingNodePassesWithoutItsNumber(t *testing.T) {
	n := followerIn(t, AlgorithmRing, key(5), keys(1, 2, 3, 4), key(4), noPreempt)
	n.step(100*ms, evSuspect)
	n.step(101*ms, ringElection(4, 2, 5, 1, 2, 3, 4))
	n.step(150*ms, evResign)
	n.expectAcked(200*ms, ringElection(4, 3, 1, 2, 3, 4), 2,
		"send RING_ELECTION to 1 term=3 origin=1 list=[1 2 3 4]")
	n.is(StateFollower, 2, noLeader)
	// and 4, which got the RESIGN, still sends to 5.
	p := followerIn(t, AlgorithmRing, key(4), keys(1, 2, 3, 5), key(5))
	find(t, p.step(100*ms, resignMsg(5, 1)), "send RING_ELECTION to 5 term=2 origin=4 list=[4]")
}

// A node whose node_id is in conflict takes no part: it does not even
// acknowledge, so that the ring skips it.
func TestRingConflictDoesNotAcknowledge(t *testing.T) {
	n := followerIn(t, AlgorithmRing, key(3), keys(1, 2, 4, 5), key(5))
	n.step(50*ms, conflict(true))
	n.expect(100*ms, ringElection(2, 2, 2))
}

// A node alone on the ring has no one to send to: it leads at once.
func TestRingAloneLeads(t *testing.T) {
	n := newMachine(t, AlgorithmRing, key(3), nil)
	n.step(0, evStart)
	n.expect(tStartup, fire(TimerStartup),
		"broadcast COORDINATOR to all (0) term=1",
		"become-leader term=1",
		"set-timer heartbeat at 400ms")
}

// The acknowledgement names the hop by a hash of the message (its type,
// term and body), which both ends compute: another hop's token does not
// acknowledge this one.
func TestRingAckTokenNamesTheHop(t *testing.T) {
	a := wire.Message{Type: wire.TypeRingElection, Term: 2, Origin: 2, List: mlist(2)}
	b := a
	b.List = mlist(2, 3)
	c := a
	c.Term = 3
	if hopToken(&a) == hopToken(&b) || hopToken(&a) == hopToken(&c) {
		t.Errorf("tokens %x %x %x: two hops share one", hopToken(&a), hopToken(&b), hopToken(&c))
	}
	d := a
	d.From, d.Seq, d.Incarnation = 9, 77, 5
	if hopToken(&a) != hopToken(&d) {
		t.Error("the token depends on the header's sender or sequence: the receiver could not recompute it")
	}
}

// The stability hardening's claimant check (askClaimant) does not hold a
// COORDINATOR back. Its winner (the largest key of the list) learns that
// it won only when COORDINATOR reaches it; until then it does not lead and
// does not vouch for itself. Here 3 follows 4 and hears it; the round of
// 2 went round with 5 on the list, and COORDINATOR names 5. 3 must take
// it and pass it on towards 5. It used to ask 5 first and wait, and so
// kept COORDINATOR from ever reaching 5: the initiator then suspected 5,
// which never sent a heartbeat, started another round, and so on for
// ever (the simulator's random ring schedules 9665, 11855, 11947, 13416
// and 17246). The list is the proof the check asks for: every node on it,
// the winner included, received the round and passed it on.
func TestRingCoordinatorOfACompletedListIsNotHeldForItsWinner(t *testing.T) {
	n := followerIn(t, AlgorithmRing, key(3), keys(1, 2, 4, 5), key(4), hardened)
	n.stepAcked(100*ms, ringElection(2, 2, 2), "send RING_ELECTION", 4)
	n.expectAcked(120*ms, ringCoordinator(2, 2, 2, 2, 3, 4, 5, 1), 1,
		"cancel-timer coordinator",
		fmtFollow(5, 2),
		"set-timer suspect at 420ms",
		"send RING_COORDINATOR to 4 term=2 origin=2 list=[2 3 4 5 1]",
		"set-timer answer at 170ms")
	n.is(StateFollower, 2, 5)
	// A COORDINATOR from the claimant itself is still checked: a node
	// that cannot hear claims in vain.
	m := followerIn(t, AlgorithmRing, key(3), keys(1, 2, 4, 5), key(4), hardened)
	m.expect(100*ms, coord(5, 2), "send PROBE to 5 term=1")
	m.is(StateFollower, 1, 4)
}
