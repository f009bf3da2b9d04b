package sim

import (
	"fmt"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

// Case says which nodes notice that the coordinator died.
type Case uint8

// The cases of the message-count report.
const (
	// CaseBest: the largest live node (the second largest of all) notices.
	CaseBest Case = iota
	// CaseWorst: the smallest node notices.
	CaseWorst
	// CaseAll: every node notices at once, as happens on a real LAN where
	// every follower's detector was fed the same last heartbeat.
	CaseAll
)

func (c Case) String() string { return [...]string{"best", "worst", "all"}[c] }

// ElectionCount is what one election cost, by message type.
type ElectionCount struct {
	N        int
	Case     Case
	Messages [16]int // the algorithm's view: a broadcast to k members counts k
	Packets  [16]int // multicast: a broadcast is one packet
	Unicast  [16]int // unicast fan-out: a broadcast is one packet per member
	Leader   election.NodeID
	Took     time.Duration // from the suspicion to the last node following the new leader
}

// electionTypes are the types one election uses (heartbeats are not part of
// an election).
var electionTypes = []wire.Type{wire.TypeElection, wire.TypeAnswer, wire.TypeCoordinator}

// Total sums counts over the election's message types.
func total(c *[16]int) int {
	n := 0
	for _, t := range electionTypes {
		n += c[t]
	}
	return n
}

// TotalMessages, TotalPackets and TotalUnicast sum over ELECTION, ANSWER
// and COORDINATOR.
func (e ElectionCount) TotalMessages() int { return total(&e.Messages) }

// TotalPackets: see TotalMessages.
func (e ElectionCount) TotalPackets() int { return total(&e.Packets) }

// TotalUnicast: see TotalMessages.
func (e ElectionCount) TotalUnicast() int { return total(&e.Unicast) }

// CountElection measures one election on n nodes (ids 1..n, equal
// priority, so the key order is the id order) after the coordinator n
// crashes: the nodes of c suspect it (no other detector fires, and the
// membership layer never reports the crash), and the run ends when every
// live node follows the new leader and no packet is in flight.
func CountElection(n int, c Case, seed uint64) (ElectionCount, error) {
	if n < 3 {
		return ElectionCount{}, fmt.Errorf("sim: counting needs at least 3 nodes, got %d", n)
	}
	timing := DefaultTiming()
	timing.SuspectAfter = time.Hour // only the injected suspicion counts
	cfg := Config{
		Seed:            seed,
		Timing:          timing,
		Net:             Net{DelayMin: 100 * time.Microsecond, DelayMax: time.Millisecond},
		MembershipDelay: time.Hour,
	}
	for id := 1; id <= n; id++ {
		cfg.Nodes = append(cfg.Nodes, Node{Key: election.Key{Priority: 100, ID: uint64(id)}, Preempt: true})
	}
	s, err := New(cfg)
	if err != nil {
		return ElectionCount{}, err
	}
	s.Start()
	limit := 10 * time.Second
	if !s.RunWhile(limit, func() bool { return !s.converged(true) }) {
		return ElectionCount{}, fmt.Errorf("sim: %d nodes did not elect within %v: %s", n, limit, s.Describe())
	}
	// Let every packet of the first election land.
	s.RunUntil(s.Now() + time.Second)

	s.Crash(n - 1)
	s.RunUntil(s.Now() + 10*time.Millisecond)
	before := s.Stats
	t0 := s.Now()
	switch c {
	case CaseBest:
		s.Suspect(n - 2)
	case CaseWorst:
		s.Suspect(0)
	case CaseAll:
		for i := range n - 1 {
			s.Suspect(i)
		}
	}
	if !s.RunWhile(t0+limit, func() bool { return !s.converged(true) }) {
		return ElectionCount{}, fmt.Errorf("sim: %d nodes did not re-elect within %v: %s", n, limit, s.Describe())
	}
	out := ElectionCount{N: n, Case: c, Took: s.Now() - t0, Leader: s.LiveLeaders()[0]}
	// Drain: the late ANSWERs and COORDINATORs of the election still count.
	tm := s.Config().Timing
	s.RunUntil(s.Now() + 2*(tm.AnswerTimeout+tm.CoordinatorTimeout))
	for _, t := range electionTypes {
		out.Messages[t] = s.Stats.Messages[t] - before.Messages[t]
		out.Packets[t] = s.Stats.Packets[t] - before.Packets[t]
		out.Unicast[t] = s.Stats.Unicast[t] - before.Unicast[t]
	}
	return out, nil
}

// TextbookBest is the textbook's best case after the coordinator dies: the
// second-highest process notices, elects itself at once and sends n−2
// COORDINATOR messages.
func TextbookBest(n int) int { return n - 2 }

// TextbookWorst is the textbook's worst case: the lowest process notices;
// every live process i sends ELECTION to all n−i processes above it (the
// dead coordinator included), each live one above answers, and the winner
// sends n−2 COORDINATOR: n(n−1)/2 + (n−1)(n−2)/2 + (n−2) = n² − n − 1.
func TextbookWorst(n int) int { return n*n - n - 1 }
