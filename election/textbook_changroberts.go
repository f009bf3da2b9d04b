package election

import (
	"github.com/lanleader/lanleader/wire"
)

// changRoberts is Chang–Roberts on a unidirectional ring, as the Czech
// text (shared/seeds 003) describes it, with the participating flag of the
// Spanish one (seed 004) and the hardening of textbook_ring.go:
//
//  1. The process that starts the election marks itself participating and
//     sends its neighbour ELECTION with its identifier (CR_ELECTION; the
//     identifier is the key, priority first).
//  2. A process that receives ELECTION and is not participating becomes
//     participating and passes on the larger of the identifier received
//     and its own.
//  3. A participating process drops an identifier smaller than its own,
//     passes on a larger one, and when it receives its own it has the
//     largest: it is elected.
//  4. The elected process sends ELECTED with its identifier
//     (CR_ELECTED); each process that receives it records the coordinator,
//     is no longer participating, and passes it on.
//  5. When ELECTED is back at the coordinator, the election is over.
//
// The round's term is proposed by its initiator and carried by its
// messages; the elected process leads with it. An identifier is passed on
// at most once per round. Each message costs a RING_ACK. Wire types:
// CR_ELECTION, CR_ELECTED, RING_ACK, and the core's COORDINATOR,
// HEARTBEAT and RESIGN.
type changRoberts struct {
	ringCore
	// participating in round roundTerm (the textbook's flag).
	participating bool
	// passed: the identifiers this node has passed on in round roundTerm.
	passed map[NodeID]bool
}

func newChangRoberts(cfg Config) (*changRoberts, error) {
	r := &changRoberts{passed: make(map[NodeID]bool)}
	return newRingMachine(cfg, AlgorithmChangRoberts, r, &r.ringCore)
}

// lapFactor: the winner's identifier reaches it from anywhere within one
// circle, goes once round, and ELECTED once round.
func (r *changRoberts) lapFactor() int { return 3 }

// join makes round t this node's, not yet participating.
func (r *changRoberts) join(t uint64, origin Key) {
	r.newRound(t, origin)
	r.participating = false
	clear(r.passed)
}

// elect is step 1.
func (r *changRoberts) elect() {
	if _, ok := r.next(wire.DirRight); !ok {
		r.alone()
		return
	}
	r.join(r.propose(), r.self)
	r.participating = true
	r.participate()
	r.pass(r.self)
}

// pass sends ELECTION with candidate k on, once per round.
func (r *changRoberts) pass(k Key) {
	if r.passed[k.ID] {
		return
	}
	r.passed[k.ID] = true
	r.see(k)
	m := r.msg(wire.TypeCRElection, r.roundTerm)
	m.CandID, m.CandPrio = k.ID, k.Priority
	if !r.sendHop(m, wire.DirRight) && r.state == StateCandidate {
		r.alone()
	}
}

func (r *changRoberts) onMessage(m *wire.Message, from Key) {
	r.route(m, from, handler{wire.TypeCRElection, r.onElection}, handler{wire.TypeCRElected, r.onElected})
}

// onElection is steps 2 and 3.
func (r *changRoberts) onElection(m *wire.Message) {
	j, t := Key{Priority: m.CandPrio, ID: m.CandID}, m.Term
	if j.ID == 0 || r.stale(t) {
		return
	}
	if t > r.roundTerm {
		r.join(t, j)
	}
	switch {
	case j.ID == r.self.ID:
		// Step 3: its own identifier came round: it is the largest.
		r.participating = false
		r.lead(t, false)
		r.announce(t) // step 4
	case r.state == StateLeader && j.Less(r.self):
		// A smaller node suspects this leader: see textbook_ring.go.
		r.reassert()
	case r.passive():
		// In its resign hold-off, or as a witness or observer, a node
		// may not be elected: it only passes identifiers on.
		r.pass(j)
	case !r.participating:
		// Step 2.
		r.participating = true
		r.participate()
		if j.Less(r.self) {
			j = r.self
		}
		r.pass(j)
	case r.self.Less(j):
		// Step 3: a larger identifier is passed on; a smaller one is
		// dropped.
		r.pass(j)
	}
}

// stop: the textbook's "no longer participating" once the round is over
// for this node (step 4).
func (r *changRoberts) stop() {
	r.ringCore.stop()
	if !r.open {
		r.participating = false
	}
}
