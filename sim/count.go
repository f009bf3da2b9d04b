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
	Messages [wire.NumTypes]int // the algorithm's view: a broadcast to k members counts k
	Packets  [wire.NumTypes]int // multicast: a broadcast is one packet
	Unicast  [wire.NumTypes]int // unicast fan-out: a broadcast is one packet per member
	Leader   election.NodeID
	Took     time.Duration // from the suspicion to the last node following the new leader
}

// electionTypes are the types of an election's messages: heartbeats are
// not part of an election, and the ring family's acknowledgements are
// counted apart (Acks).
var electionTypes = []wire.Type{wire.TypeElection, wire.TypeAnswer, wire.TypeCoordinator,
	wire.TypeRingElection, wire.TypeRingCoordinator, wire.TypeCRElection, wire.TypeCRElected,
	wire.TypeHSProbe, wire.TypeHSReply}

// countedTypes are electionTypes, the acknowledgements and the
// confirmations of a suspicion.
var countedTypes = append([]wire.Type{wire.TypeRingAck, wire.TypeProbe, wire.TypeVouch}, electionTypes...)

// Total sums counts over the election's message types.
func total(c *[wire.NumTypes]int) int {
	n := 0
	for _, t := range electionTypes {
		n += c[t]
	}
	return n
}

// TotalMessages, TotalPackets and TotalUnicast sum over the election's
// message types (ELECTION, ANSWER and COORDINATOR for bully; the ring
// family's own types), acknowledgements left out.
func (e ElectionCount) TotalMessages() int { return total(&e.Messages) }

// TotalPackets: see TotalMessages.
func (e ElectionCount) TotalPackets() int { return total(&e.Packets) }

// TotalUnicast: see TotalMessages.
func (e ElectionCount) TotalUnicast() int { return total(&e.Unicast) }

// Acks is the number of RING_ACK the election cost (one per hop of the
// ring family; a packet each).
func (e ElectionCount) Acks() int { return e.Messages[wire.TypeRingAck] }

// Confirm is the number of packets (multicast) of the confirmations of
// the suspicion (PROBE, VOUCH; the agent's machines only, harden_confirm.go).
func (e ElectionCount) Confirm() int {
	return e.Packets[wire.TypeProbe] + e.Packets[wire.TypeVouch]
}

// CountElection measures one bully election on n nodes (ids 1..n, equal
// priority, so the key order is the id order) after the coordinator n
// crashes: the nodes of c suspect it (no other detector fires, and the
// membership layer never reports the crash), and the run ends when every
// live node follows the new leader and no packet of the election is in
// flight.
func CountElection(n int, c Case, seed uint64) (ElectionCount, error) {
	return countElection(Election{N: n, Seed: seed}, c)
}

// CountAgentElection is CountElection with the machines the agent runs
// (Election.Hardened): the O(n) election, and the confirmations (PROBE,
// VOUCH) that a suspicion costs before it, counted apart (Confirm).
func CountAgentElection(n int, c Case, seed uint64) (ElectionCount, error) {
	return countElection(Election{N: n, Seed: seed, Hardened: true}, c)
}

func countElection(e Election, c Case) (ElectionCount, error) {
	n := e.N
	switch c {
	case CaseBest:
		e.Noticer = n - 2
	case CaseWorst:
		e.Noticer = 0
	case CaseAll:
		e.All = true
	default:
		return ElectionCount{}, fmt.Errorf("sim: unknown case %d", c)
	}
	out, err := Measure(e)
	out.Case = c
	return out, err
}

// Election describes an election to measure: n nodes with ids 1..n at
// equal priority (so the key order is the id order) run Algorithm; the
// coordinator, node n, crashes; Noticer (an index, 0 for the node of id
// 1), or every live node when All, suspects it. No detector fires on its
// own, and the membership layer never reports the crash.
type Election struct {
	Algorithm string
	N         int
	// Order places the nodes on the ring family's logical ring.
	Order   election.RingOrder
	All     bool
	Noticer int
	Seed    uint64
	// Hardened runs the machines as the agent does (election's stability
	// hardening); without it they follow the seeds (the zero election.Hardening), whose
	// message counts the textbook states.
	Hardened bool
}

// Measure runs the election e describes and counts what it cost, from the
// suspicion until every live node follows the new leader and no packet of
// the election is in flight.
func Measure(e Election) (ElectionCount, error) {
	s, err := Prepare(e)
	if err != nil {
		return ElectionCount{}, err
	}
	return s.Elect(e)
}

// Prepare builds the cluster of e, starts it and runs it until it has
// elected its first leader (node n) and that election is over: what
// Measure does before it counts.
func Prepare(e Election) (*Sim, error) {
	n := e.N
	if n < 3 {
		return nil, fmt.Errorf("sim: counting needs at least 3 nodes, got %d", n)
	}
	if !e.All && (e.Noticer < 0 || e.Noticer >= n-1) {
		return nil, fmt.Errorf("sim: noticer %d is not a live node of %d", e.Noticer, n)
	}
	timing := DefaultTiming()
	timing.SuspectAfter = time.Hour // only the injected suspicion counts
	timing.RingOrder = e.Order
	if !e.Hardened {
		timing.Hardening = election.Hardening{}
	}
	cfg := Config{
		Seed:            e.Seed,
		Algorithm:       e.Algorithm,
		Timing:          timing,
		Net:             Net{DelayMin: 100 * time.Microsecond, DelayMax: time.Millisecond},
		MembershipDelay: time.Hour,
	}
	for id := 1; id <= n; id++ {
		cfg.Nodes = append(cfg.Nodes, Node{Key: election.Key{Priority: 100, ID: uint64(id)}, Preempt: true})
	}
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	s.Start()
	limit := s.electionLimit()
	if !s.RunWhile(limit, func() bool { return !s.converged(true) }) {
		return nil, fmt.Errorf("sim: %d nodes did not elect within %v: %s", n, limit, s.Describe())
	}
	// Let every packet of the first election land.
	s.drain(s.Now() + time.Second)
	return s, nil
}

// electionLimit bounds one measured election.
func (s *Sim) electionLimit() time.Duration {
	return 10*time.Second + election.RoundWait(s.Config().Timing, s.N())
}

// Elect crashes the coordinator of a cluster Prepare made for e (node n),
// has the nodes of e notice it, and counts what the election costs.
func (s *Sim) Elect(e Election) (ElectionCount, error) {
	n := s.N()
	s.Crash(n - 1)
	s.RunUntil(s.Now() + 10*time.Millisecond)
	before := s.Stats
	t0 := s.Now()
	if e.All {
		for i := range n - 1 {
			s.Suspect(i)
		}
	} else {
		s.Suspect(e.Noticer)
	}
	limit := s.electionLimit()
	if !s.RunWhile(t0+limit, func() bool { return !s.converged(true) }) {
		return ElectionCount{}, fmt.Errorf("sim: %d nodes did not re-elect within %v: %s", n, limit, s.Describe())
	}
	out := ElectionCount{N: n, Took: s.Now() - t0, Leader: s.LiveLeaders()[0]}
	// Drain: the late messages of the election still count.
	s.drain(s.Now() + limit)
	for _, t := range countedTypes {
		out.Messages[t] = s.Stats.Messages[t] - before.Messages[t]
		out.Packets[t] = s.Stats.Packets[t] - before.Packets[t]
		out.Unicast[t] = s.Stats.Unicast[t] - before.Unicast[t]
	}
	return out, nil
}

// Recover restarts the coordinator that Elect crashed and runs until it
// leads again (it is the largest, and preempts) and that election is
// over: the cluster is ready for another Elect.
func (s *Sim) Recover() error {
	n := s.N()
	s.Restart(n - 1)
	limit := s.Now() + s.electionLimit()
	lead := func() bool {
		st, up := s.Status(n - 1)
		return up && st.State == election.StateLeader && s.converged(true)
	}
	if !s.RunWhile(limit, func() bool { return !lead() }) {
		return fmt.Errorf("sim: node %d did not lead again after its restart: %s", n, s.Describe())
	}
	s.drain(s.Now() + time.Second)
	return nil
}

// drain runs until no packet but heartbeats is in flight, or until limit,
// and a little longer: the bully's late ANSWERs and COORDINATORs, the ring
// family's last hop and its acknowledgement.
func (s *Sim) drain(limit time.Duration) {
	tm := s.Config().Timing
	for s.Now() < limit && s.electionInFlight() {
		s.RunUntil(s.Now() + tm.AnswerTimeout)
	}
	s.RunUntil(s.Now() + 2*(tm.AnswerTimeout+tm.CoordinatorTimeout))
}

// electionInFlight reports whether a packet other than a heartbeat is on
// its way, or a node still waits for a hop's acknowledgement.
func (s *Sim) electionInFlight() bool {
	for _, it := range s.q {
		switch e := it.e; e.kind {
		case evDeliver:
			if len(e.pkt) > 3 && wire.Type(e.pkt[3]) != wire.TypeHeartbeat {
				return true
			}
		case evTimer:
			if e.timer == election.TimerAnswer && e.timerGen == s.nodes[e.node].timers[e.timer] && e.gen == s.nodes[e.node].gen {
				return true
			}
		}
	}
	return false
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
