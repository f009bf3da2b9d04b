package election

import "testing"

// One test per step of Chang–Roberts as the Czech text (shared/seeds 003)
// and the Spanish one (004, the participating flag) describe it; see
// textbook_changroberts.go. The ring is 1 -> 2 -> 3 -> 4 -> 5 -> 1; 5 leads with
// term 1 unless a test says otherwise. The round's wait is 200ms +
// 3·5·T/2 = 575ms.

// Step 1: "The process that starts the election sends its (left)
// neighbour ELECTION with its identifier", and marks itself participating.
func TestChangRobertsStep1InitiatorSendsItsIdentifier(t *testing.T) {
	n := followerIn(t, AlgorithmChangRoberts, key(2), keys(1, 3, 4, 5), key(5))
	n.expect(100*ms, evSuspect,
		"cancel-timer suspect",
		fmtFollow(noLeader, 1),
		"set-timer coordinator at 675ms",
		"send CR_ELECTION to 3 term=2 cand=2",
		"set-timer answer at 150ms")
	n.is(StateCandidate, 1, noLeader)
}

// Step 2: "A process that receives ELECTION sends its neighbour ELECTION
// with the maximum of the identifier received and its own"; it was not
// participating and now is.
func TestChangRobertsStep2NotParticipatingPassesTheMaximum(t *testing.T) {
	// A smaller identifier: it passes its own.
	n := followerIn(t, AlgorithmChangRoberts, key(3), keys(1, 2, 4, 5), key(5))
	n.expectAcked(100*ms, crElection(2, 2, 2), 1,
		"set-timer coordinator at 675ms",
		"send CR_ELECTION to 4 term=2 cand=3",
		"set-timer answer at 150ms")
	n.is(StateCandidate, 1, 5)
	// A larger one: it passes it.
	m := followerIn(t, AlgorithmChangRoberts, key(1), keys(2, 3, 4, 5), key(5))
	m.expectAcked(100*ms, crElection(5, 2, 4), 1,
		"set-timer coordinator at 675ms",
		"send CR_ELECTION to 2 term=2 cand=4",
		"set-timer answer at 150ms")
}

// Step 3: a participating process drops a smaller identifier and passes a
// larger one on.
func TestChangRobertsStep3ParticipatingDropsSmallerPassesLarger(t *testing.T) {
	n := followerIn(t, AlgorithmChangRoberts, key(3), keys(1, 2, 4, 5), key(5))
	n.stepAcked(100*ms, evSuspect, "send CR_ELECTION", 4) // participating, with 3
	n.expectAcked(102*ms, crElection(2, 2, 2), 1)
	n.expectAcked(103*ms, crElection(2, 2, 4), 1,
		"send CR_ELECTION to 4 term=2 cand=4",
		"set-timer answer at 153ms")
	// Passed once per round: a duplicate is dropped.
	n.expectAcked(104*ms, crElection(2, 2, 4), 1)
}

// Step 3: "If a process receives ELECTION with its own identifier, its
// identifier is the largest and it is elected." It leads with the round's
// term, and (step 4) sends ELECTED with its identifier.
func TestChangRobertsStep3OwnIdentifierElects(t *testing.T) {
	n := followerIn(t, AlgorithmChangRoberts, key(4), keys(1, 2, 3, 5), key(5))
	n.step(100*ms, evSuspect)
	n.expectAcked(120*ms, crElection(3, 2, 4), 1,
		"cancel-timer coordinator",
		"become-leader term=2",
		"set-timer heartbeat at 220ms",
		"send CR_ELECTED to 1 term=2 cand=4")
	n.is(StateLeader, 2, 4)
}

// Step 4: "Each process that receives ELECTED records the coordinator's
// identifier and passes the message on"; it is no longer participating.
func TestChangRobertsStep4ElectedIsRecordedAndPassedOn(t *testing.T) {
	n := followerIn(t, AlgorithmChangRoberts, key(2), keys(1, 3, 4, 5), key(5))
	n.step(100*ms, evSuspect)
	n.expectAcked(130*ms, crElected(1, 2, 4), 1,
		"cancel-timer coordinator",
		fmtFollow(4, 2),
		"set-timer suspect at 430ms",
		"send CR_ELECTED to 3 term=2 cand=4")
	n.is(StateFollower, 2, 4)
	// No longer participating: the next round's identifier is handled as
	// step 2 says.
	n.expectAcked(200*ms, crElection(1, 3, 1), 2,
		"set-timer coordinator at 775ms",
		"send CR_ELECTION to 3 term=3 cand=2")
}

// Step 5: "When ELECTED reaches the coordinator, the election is over":
// it is not passed on.
func TestChangRobertsStep5ElectedStopsAtTheCoordinator(t *testing.T) {
	n := followerIn(t, AlgorithmChangRoberts, key(4), keys(1, 2, 3, 5), key(5))
	n.step(100*ms, evSuspect)
	n.step(120*ms, crElection(3, 2, 4))
	n.expectAcked(130*ms, crElected(3, 2, 4), 2)
	n.is(StateLeader, 2, 4)
}

// --- for a LAN -------------------------------------------------------------------

// A round whose term is not above the recognised leadership is stale: a
// late ELECTION of an election that is over starts nothing.
func TestChangRobertsStaleElectionIsDropped(t *testing.T) {
	n := followerIn(t, AlgorithmChangRoberts, key(2), keys(1, 3, 4, 5), key(5))
	n.expectAcked(100*ms, crElection(1, 1, 1), 1)
	n.is(StateFollower, 1, 5)
}

// A leader that gets a smaller identifier (from a node that suspects it)
// ends the election under a fresh term; a larger one (a node that takes
// over) it passes on, leading until that node's claim arrives.
func TestChangRobertsLeaderAndElection(t *testing.T) {
	n := followerIn(t, AlgorithmChangRoberts, key(4), keys(1, 2, 3, 5), key(5), noPreempt)
	n.step(100*ms, evSuspect)
	n.step(120*ms, crElection(3, 2, 4))
	n.expectAcked(200*ms, crElection(3, 3, 2), 2,
		"broadcast COORDINATOR to all (4) term=4",
		"become-leader term=4",
		"set-timer heartbeat at 300ms")
	n.expectAcked(250*ms, crElection(3, 5, 5), 4,
		"send CR_ELECTION to 5 term=5 cand=5")
	n.is(StateLeader, 4, 4)
}

// The best candidate of the round crashes: its identifier will never
// come back to it; a new round starts at once.
func TestChangRobertsCrashOfBestCandidateStartsANewRound(t *testing.T) {
	n := followerIn(t, AlgorithmChangRoberts, key(2), keys(1, 3, 4, 5), key(5))
	n.stepAcked(100*ms, crElection(1, 2, 4), "send CR_ELECTION", 3)
	n.expect(200*ms, memberDown(4),
		"set-timer coordinator at 700ms", // 200ms + 3·4·T/2: the ring lost 4
		"send CR_ELECTION to 3 term=3 cand=2",
		"set-timer answer at 250ms")
}
