package election

import (
	"testing"
	"time"
)

// One test per claim of the O(n) election (bullyscale.go), as the agent
// runs it (hardened); textbook mode keeps the seeds' messages.

// Rank deferral: a candidate with r larger live keys sends its ELECTION
// r·T/16 after its election starts (here r = 2: 3.125ms each), not at once.
func TestScaleCandidateDefersByRank(t *testing.T) {
	n := started(t, key(3), keys(1, 2, 4, 5), hardened)
	n.expect(tStartup, fire(TimerStartup), "set-timer answer at 306.25ms")
	n.is(StateCandidate, 0, noLeader)
	n.expect(306250*time.Microsecond, fire(TimerAnswer),
		"broadcast ELECTION to larger (2) term=0",
		"set-timer answer at 356.25ms")
	// The textbook sends it at once.
	tb := started(t, key(3), keys(1, 2, 4, 5))
	tb.expect(tStartup, fire(TimerStartup), "broadcast ELECTION to larger (2) term=0", "set-timer answer at 350ms")
}

// The deferral is bounded: at most 8 ranks (T/2), whatever the number of
// larger keys.
func TestScaleDeferralBounded(t *testing.T) {
	var ids []NodeID
	for id := NodeID(2); id <= 40; id++ {
		ids = append(ids, id)
	}
	n := started(t, key(1), keys(ids...), hardened)
	n.expect(tStartup, fire(TimerStartup), "set-timer answer at 325ms")
	if got := rankDelay(&n.b.cfg, 1000); got != tAnswer/2 {
		t.Errorf("rank 1000: deferred %v, want T/2 = %v", got, tAnswer/2)
	}
}

// The largest survivor does not wait: it leads at once, as in the
// textbook's best case.
func TestScaleLargestSurvivorLeadsAtOnce(t *testing.T) {
	n := followerOf(t, key(4), keys(1, 2, 3, 5), key(5), 1, hardened)
	acts := n.step(400*ms, Event{Kind: EvSuspectLeader})
	for n.b.st.confirming {
		acts = n.step(n.b.deadline[TimerConfirm], fire(TimerConfirm))
	}
	if !has(acts, "broadcast COORDINATOR to all (4) term=2") {
		t.Fatalf("largest survivor: %q, want its claim at once", actStrings(acts))
	}
	n.is(StateLeader, 2, 4)
}

// While it defers, an ELECTION or an ANSWER of a larger key silences it:
// it waits for COORDINATOR, and sends no ELECTION.
func TestScaleLargerElectionOrAnswerSilences(t *testing.T) {
	for _, ev := range []Event{election(4, 0), answer(5, 0)} {
		n := started(t, key(3), keys(1, 2, 4, 5), hardened)
		n.step(tStartup, fire(TimerStartup))
		n.expect(302*ms, ev, "cancel-timer answer", "set-timer coordinator at 502ms")
		if acts := n.step(306250*time.Microsecond, fire(TimerAnswer)); len(acts) != 0 {
			t.Errorf("after %v: the cancelled turn still acts: %q", describe(ev), actStrings(acts))
		}
	}
	// A smaller key's ELECTION does not silence; it is answered.
	n := started(t, key(3), keys(1, 2, 4, 5), hardened)
	n.step(tStartup, fire(TimerStartup))
	n.expect(302*ms, election(1, 0), "broadcast ANSWER to all (4) term=0")
	n.is(StateCandidate, 0, noLeader)
}

// One ANSWER for all: a multicast, and at most one a rank step (T/16)
// however many smaller ELECTIONs arrive; the textbook answers each sender.
func TestScaleOneAnswerForAll(t *testing.T) {
	n := started(t, key(4), keys(1, 2, 3, 5), hardened)
	n.step(tStartup, fire(TimerStartup)) // defers its ELECTION to 303.125ms
	n.expect(301*ms, election(1, 0), "broadcast ANSWER to all (4) term=0")
	n.expect(302*ms, election(2, 0))
	n.expect(304*ms, election(3, 0))
	n.expect(305*ms, election(1, 0), "broadcast ANSWER to all (4) term=0")
	tb := started(t, key(4), keys(1, 2, 3, 5))
	tb.step(tStartup, fire(TimerStartup))
	tb.expect(301*ms, election(1, 0), "send ANSWER to 1 term=0")
	tb.expect(302*ms, election(2, 0), "send ANSWER to 2 term=0")
}

// A leader answers a late ELECTION with its ANSWER and its claim to all,
// so that the nodes that ELECTION silenced follow at once.
func TestScaleLeaderTellsAll(t *testing.T) {
	n := leaderOf(t, key(5), keys(1, 2, 3, 4), hardened)
	n.expect(320*ms, election(2, 0), "broadcast ANSWER to all (4) term=1", "broadcast COORDINATOR to all (4) term=1")
	// A silenced smaller candidate follows that claim.
	m := started(t, key(1), keys(2, 3, 4, 5), hardened)
	m.step(tStartup, fire(TimerStartup))
	m.step(301*ms, election(2, 0))
	m.step(302*ms, coord(5, 1))
	m.is(StateFollower, 1, 5)
}

// A node in its listen period that may not yet take over (nopreempt, or
// within its preempt delay) does not answer: the others elect among
// themselves and it follows.
func TestScaleStartingNodeWithinPreemptDelayStaysOut(t *testing.T) {
	for _, opt := range []func(*Config){preemptDelay(5 * time.Second), noPreempt} {
		n := newNode(t, key(5), keys(1, 2, 3, 4), hardened, opt)
		n.step(0, Event{Kind: EvStart})
		n.expect(100*ms, election(3, 1))
		n.is(StateStarting, 0, noLeader)
	}
	m := started(t, key(5), keys(1, 2, 3, 4), hardened)
	m.expect(100*ms, election(3, 1), "broadcast ANSWER to all (4) term=0", "cancel-timer startup", "set-timer answer at 300ms")
}

// Vouchers: outside quorum mode a PROBE is answered by the leader and the
// eight keys after the prober's, round the end (here 9 to 12, the leader 20
// and 1 to 3); not by the others.
func TestVouchersBounded(t *testing.T) {
	var ids []NodeID
	for id := NodeID(1); id <= 12; id++ {
		ids = append(ids, id)
	}
	others := func(self NodeID) []Key {
		var out []Key
		for _, id := range append(ids, 20) {
			if id != self {
				out = append(out, key(id))
			}
		}
		return out
	}
	vouched := map[NodeID]bool{}
	for _, self := range ids {
		if self == 8 {
			continue // the prober
		}
		n := followerOf(t, key(self), others(self), key(20), 1, hardened)
		acts := n.step(50*ms, probeMsg(8, 1, 20, 45*ms)) // it heard 20 at 10ms
		vouched[self] = has(acts, "send VOUCH to 8 term=1")
	}
	for _, self := range ids {
		want := self >= 9 && self <= 12 || self <= 3
		if self != 8 && vouched[self] != want {
			t.Errorf("node %d vouched %v to 8, want %v", self, vouched[self], want)
		}
	}
}
