package election

import (
	"strings"
	"testing"
)

// A leader that the detector suspects stays on the ring (as the agent
// runs, PassByAcked): the node that suspected it sends its round's
// first hop to it when it is the successor, and passes it by only once
// that hop goes unacknowledged for T. Passed by at once, a live former
// leader missed the round of the node that suspected it while running a
// round of its own of the same term, and Chang–Roberts elected two
// leaders of one term (the simulator's seed 8951, a reliable schedule).
func TestRingSuspectedLeaderStaysOnTheRing(t *testing.T) {
	for _, tc := range []struct{ alg, send string }{
		{AlgorithmRing, "send RING_ELECTION to "},
		{AlgorithmChangRoberts, "send CR_ELECTION to "},
		{AlgorithmHirschbergSinclair, "send HS_PROBE to "},
	} {
		t.Run(tc.alg, func(t *testing.T) {
			// The ring 1 -> 2 -> 3 -> 4 -> 5 -> 1; node 4 follows 5.
			n := followerIn(t, tc.alg, key(4), keys(1, 2, 3, 5), key(5), hardened)
			// The detector fires; the confirmation hears no vouch, and
			// the election starts at its end.
			now := 310 * ms
			acts := n.step(now, fire(TimerSuspect))
			for i := 0; i < 100 && !sends(acts, tc.send); i++ {
				now += ms
				acts = n.step(now, fire(TimerConfirm))
			}
			if !sends(acts, tc.send) {
				t.Fatalf("no %q by %v: the suspicion was not confirmed", tc.send, now)
			}
			if !sends(acts, tc.send+"5 ") {
				t.Fatalf("at %v the round's first hop passes the suspected leader by: %q", now, actLines(acts))
			}
			n.is(StateCandidate, 1, noLeader)
			// It does not acknowledge within T: it is passed by now.
			acts = n.step(now+tAnswer, fire(TimerAnswer))
			if !sends(acts, tc.send+"1 ") {
				t.Fatalf("at %v, the hop to 5 unacknowledged: %q, want the message sent on to 1", now+tAnswer, actLines(acts))
			}
		})
	}
}

// The textbook (the zero Hardening) keeps the texts' perfect detector: the coordinator
// noticed gone has crashed, and the ring passes it by at once (the
// textbooks' message counts, sim's TestCount*).
func TestRingTextbookPassesTheSuspectedLeaderBy(t *testing.T) {
	n := followerIn(t, AlgorithmChangRoberts, key(4), keys(1, 2, 3, 5), key(5))
	acts := n.step(100*ms, evSuspect)
	if !sends(acts, "send CR_ELECTION to 1 ") {
		t.Fatalf("Textbook: %q, want CR_ELECTION to 1 at once", actLines(acts))
	}
}

// sends reports whether one of acts is a line that starts with prefix.
func sends(acts []Action, prefix string) bool {
	for _, l := range actLines(acts) {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
