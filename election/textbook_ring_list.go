package election

import (
	"slices"

	"github.com/lanleader/lanleader/wire"
)

// ringList is the ring algorithm of the Russian texts (shared/seeds 000
// and 001), with the hardening of textbook_ring.go:
//
//  1. A process that notices the coordinator is gone sends its successor
//     ELECTION with its number (RING_ELECTION: the initiator, and a list
//     holding its key).
//  2. If the successor does not answer (acknowledge within T), the
//     message goes to the one after it, and so on, until a working
//     process is found.
//  3. Each working process adds its number to the list and passes the
//     message on round the ring.
//  4. When a process finds its own number in the list (the circle is
//     complete), it turns the message into COORDINATOR
//     (RING_COORDINATOR), which goes round telling everyone the list of
//     working processes and the coordinator: the largest key in the list.
//  5. After one circle the message is removed (by the process that turned
//     it).
//
// Added from the Spanish text (seed 004), the participating flag: a
// process taking part in the round of one initiator does not pass on the
// round of a smaller one (of the same term), so that when every node
// notices at once only the largest initiator's list goes round.
//
// The round's term is proposed by its initiator and carried by its
// messages; COORDINATOR claims that term for the largest key of the list.
// Each message costs a RING_ACK. Wire types: RING_ELECTION,
// RING_COORDINATOR, RING_ACK, and the core's COORDINATOR, HEARTBEAT and
// RESIGN.
type ringList struct {
	ringCore
}

func newRingList(cfg Config) (*ringList, error) {
	r := &ringList{}
	return newRingMachine(cfg, AlgorithmRing, r, &r.ringCore)
}

// lapFactor: ELECTION once round, then COORDINATOR once round.
func (r *ringList) lapFactor() int { return 2 }

func member(k Key) wire.Member { return wire.Member{ID: k.ID, Priority: k.Priority} }

func keyOf(m wire.Member) Key { return Key{Priority: m.Priority, ID: m.ID} }

// elect is step 1: ELECTION with this node's number to its successor.
func (r *ringList) elect() {
	if _, ok := r.next(wire.DirRight); !ok {
		r.alone()
		return
	}
	t := r.propose()
	r.participate()
	m := r.msg(wire.TypeRingElection, t)
	m.Origin = r.self.ID
	m.List = []wire.Member{member(r.self)}
	r.sendHop(m, wire.DirRight)
}

func (r *ringList) onMessage(m *wire.Message, from Key) {
	r.route(m, from, handler{wire.TypeRingElection, r.onElection}, handler{wire.TypeRingCoordinator, r.onCoordinator})
}

// onElection is steps 3 and 4.
func (r *ringList) onElection(m *wire.Message) {
	if len(m.List) == 0 || m.List[0].ID != m.Origin {
		return // not a list this algorithm builds: the initiator comes first
	}
	origin, t := keyOf(m.List[0]), m.Term
	if slices.ContainsFunc(m.List, func(e wire.Member) bool { return e.ID == r.self.ID }) {
		r.complete(m)
		return
	}
	if r.stale(t) {
		return
	}
	if r.state == StateLeader && origin.Less(r.self) {
		r.reassert()
		return
	}
	if t == r.roundTerm && !r.origin.Less(origin) {
		return // the participating flag: a larger initiator's round (or this one) passed here
	}
	r.newRound(t, origin)
	fwd := r.relay(m)
	if !r.passive() {
		// Step 3. A node in its resign hold-off, or a witness or
		// observer, passes the list on without its number: it may not
		// be elected.
		fwd.List = append(fwd.List, member(r.self))
		r.participate()
	}
	for _, e := range fwd.List {
		r.see(keyOf(e))
	}
	if !r.sendHop(fwd, wire.DirRight) && r.state == StateCandidate {
		r.alone()
	}
}

// complete is step 4: the list has gone round. The coordinator is the
// largest key of the list, less the nodes membership has declared dead
// since they added themselves.
func (r *ringList) complete(m *wire.Message) {
	origin, t := keyOf(m.List[0]), m.Term
	if r.stale(t) || t == r.roundTerm && origin.Less(r.origin) {
		return // a later round, or a larger initiator's, replaced this one
	}
	coord := r.msg(wire.TypeRingCoordinator, t)
	coord.Origin = r.self.ID
	var w Key
	for _, e := range m.List {
		if r.live(e.ID) {
			coord.List = append(coord.List, e)
			if k := keyOf(e); w.Less(k) {
				w = k
			}
		}
	}
	r.lastAnnounce.term, r.lastAnnounce.id = t, r.self.ID
	if w.ID == r.self.ID {
		r.lead(t, false)
	} else {
		r.claimOfList(w, t)
	}
	if r.leader == w.ID && r.term == t {
		r.sendHop(coord, wire.DirRight)
	}
}

// onCoordinator: each node learns the coordinator and passes COORDINATOR
// on; step 5: it is removed when it is back where it was made. It is a
// claim of the largest key in the list, judged as any other; a node that
// does not recognise it does not pass it on.
func (r *ringList) onCoordinator(m *wire.Message) {
	if len(m.List) == 0 || m.Origin == r.self.ID || r.lastAnnounce.term == m.Term && r.lastAnnounce.id == m.Origin {
		return
	}
	r.lastAnnounce.term, r.lastAnnounce.id = m.Term, m.Origin
	var w Key
	for _, e := range m.List {
		if k := keyOf(e); w.Less(k) {
			w = k
		}
	}
	if w.ID == r.self.ID {
		if m.Term <= r.term {
			return // this node recognises a later leadership
		}
		r.lead(m.Term, false)
	} else {
		r.claimOfList(w, m.Term)
	}
	if r.leader == w.ID && r.term == m.Term {
		r.sendHop(r.relay(m), wire.DirRight)
	}
}

// claimOfList judges COORDINATOR's claim for w, the largest key of a list
// that went round, as any other claim, except that w is not asked first
// whether it leads (askClaimant): it does not know yet. Its hardening
// would otherwise hold COORDINATOR at the first node on the way to w that
// hears another leader, and w would never learn that it won; the
// initiator, which follows w, would suspect it for want of heartbeats and
// start the next round, and the next, for ever (the simulator's random
// ring schedules 9665, 11855, 11947, 13416 and 17246).
func (r *ringList) claimOfList(w Key, term uint64) {
	r.st.listClaim = true
	r.onClaim(w, term)
	r.st.listClaim = false
}
