package sim

import (
	"testing"

	"github.com/lanleader/lanleader/wire"
)

// The best case is the textbook's but for one message: no ELECTION, no
// ANSWER, and COORDINATOR to every member, the dead coordinator included
// (the membership layer still lists it: memberlist takes seconds to declare
// a node dead, the heartbeat detector a few hundred milliseconds), so n−1
// messages instead of n−2. It is one multicast packet.
func TestCountBestCaseIsTextbook(t *testing.T) {
	for _, n := range []int{3, 4, 8, 16, 32} {
		c, err := CountElection(n, CaseBest, 1)
		if err != nil {
			t.Fatal(err)
		}
		if c.Leader != uint64(n-1) {
			t.Errorf("n=%d: leader %d, want %d", n, c.Leader, n-1)
		}
		if got, want := c.TotalMessages(), TextbookBest(n)+1; got != want {
			t.Errorf("n=%d best: %d messages (%v), want the textbook's %d", n, got, c.Messages[:8], want)
		}
		if got := c.TotalPackets(); got != 1 {
			t.Errorf("n=%d best: %d multicast packets, want 1", n, got)
		}
	}
}

// The worst case departs from the textbook in two ways that cancel out: the
// node that noticed the failure does not send ELECTION to the coordinator
// it suspects (one fewer), and the winner's COORDINATOR also goes to the
// dead coordinator, still a member (one more).
func TestCountWorstCaseIsTextbook(t *testing.T) {
	for _, n := range []int{3, 4, 8, 16, 32} {
		c, err := CountElection(n, CaseWorst, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := c.TotalMessages(), TextbookWorst(n); got != want {
			t.Errorf("n=%d worst: %d messages (ELECTION %d ANSWER %d COORDINATOR %d), want %d",
				n, got, c.Messages[wire.TypeElection], c.Messages[wire.TypeAnswer], c.Messages[wire.TypeCoordinator], want)
		}
		// With multicast every election is one packet: n−1 ELECTION
		// packets, one per live node, plus the unicast ANSWERs.
		if got, want := c.Packets[wire.TypeElection], n-1; got != want {
			t.Errorf("n=%d worst: %d ELECTION packets, want %d", n, got, want)
		}
	}
}
