package election

import (
	"cmp"
	"slices"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// This file is what the ring family shares: the logical ring, the hops
// with their acknowledgements, the rounds, and the ELECTED lap of
// Chang–Roberts and Hirschberg–Sinclair.
//
// The textbooks assume reliable channels and no failure during an
// election. On a LAN the ring family adds:
//
//   - Acknowledged hops. Every message sent along the ring (an election
//     message or an announcement) is acknowledged with RING_ACK by the
//     node that gets it. A hop not acknowledged within T (AnswerTimeout,
//     2·t_max + t_process) is skipped: the node left out for a while,
//     and the message sent to the next live successor — the texts' "if
//     the next process does not answer, send to the one after it". A
//     member that membership reports dead is skipped at once; a leader
//     that the detector suspects is not (skipped, below). A hop to the
//     node the message is for (its home: a list's initiator, an election
//     message's candidate) is tried homeTries times before it is skipped
//     (textbook_ring_hop.go).
//   - Rounds with terms. An election is a round: its initiator proposes
//     the term max(term, maxSeen)+1, which the round's messages carry and
//     its result claims. A round with a higher term replaces a lower one
//     everywhere; a round whose term is not above the leadership a node
//     recognises is stale and dropped. So a node never recognises two
//     leaders of one term, and stale messages that are still travelling
//     after an election cannot start another.
//   - Duplicates suppressed. A message forwarded once in a round is not
//     forwarded again (duplication and skipped hops would otherwise
//     multiply the messages on the ring).
//   - An end to every election. A node that takes part in a round and
//     sees no result within a bound proportional to the ring (lapWait)
//     starts a new round; so does one whose round loses its initiator or
//     its best candidate to a crash.
//   - The ring is the membership view, and what the ring shows. A node
//     named by a ring message (its sender, a list entry, a candidate) is
//     alive: it is no longer left out, and a node that membership does not
//     list yet (it has just started) is on the ring for a while. A node in
//     its resign hold-off is not left out of the ring: it passes messages
//     on without taking part as a candidate, so that announcements reach
//     it (it would otherwise miss the terms of the elections it sat out).
//   - The shared core. Heartbeats, the detector, preemption, resign and
//     conflicts are bully's (core.go). A leader that receives a round
//     started by a smaller node (which suspects it) answers with a fresh
//     term and one COORDINATOR to all, as a bully leader does.

// ringCore is the core plus the ring family's shared machinery. Each
// ring algorithm embeds it and implements the rest of elector.
type ringCore struct {
	core
	alg ringElector

	// order is the logical ring: this node and its live members in ring
	// order (by key, ascending, unless Config.RingOrder says otherwise);
	// pos is this node's place in it. It is rebuilt lazily after a change
	// of membership or of a key.
	order []Key
	pos   int
	dirty bool
	// heard: nodes that membership does not list (yet) but that ring
	// messages show alive — their sender, a candidate, an entry of a list
	// — until a time. A node that has just started is heard of on the ring
	// before membership's gossip reaches everyone; without this the
	// predecessors that do not know it would pass it by.
	heard map[NodeID]heardOf

	hops []hop

	// The round this node last took part in: its term (0: none yet),
	// initiator and the largest candidate key it has seen in it. open:
	// the round has not ended for this node (no result recognised).
	roundTerm uint64
	origin    Key
	best      Key
	open      bool

	// The last announcement relayed, so that a duplicate is not.
	lastAnnounce struct {
		term uint64
		id   NodeID
	}
}

// heardOf is a node heard of on the ring, and until when it counts as
// live.
type heardOf struct {
	key   Key
	until time.Duration
}

// ringElector is what an algorithm of the ring family adds to the shared
// machinery.
type ringElector interface {
	elector
	// lapFactor: an election of the algorithm takes at most about
	// lapFactor·n hops one after the other on a ring of n nodes.
	lapFactor() int
}

// newRingMachine returns alg, a machine of the ring algorithm name whose
// ring core is r, set up for cfg; cfg.Algorithm must be name.
func newRingMachine[M ringElector](cfg Config, name string, alg M, r *ringCore) (M, error) {
	var none M
	if cfg.Algorithm != name {
		return none, errNotAlgorithm(cfg.Algorithm, name)
	}
	if err := r.core.init(cfg, alg); err != nil {
		return none, err
	}
	r.alg = alg
	r.dirty = true
	r.heard = make(map[NodeID]heardOf)
	return alg, nil
}

// Algorithm returns the configured name of the ring algorithm.
func (r *ringCore) Algorithm() string { return r.cfg.Algorithm }

// --- the logical ring ---------------------------------------------------------

// membersChanged: the ring is sorted again before its next use.
func (r *ringCore) membersChanged() { r.dirty = true }

// hear notes that node k is alive, from a ring message that names it: it
// sent the message, added itself to its list, or is the candidate it
// carries. A suspicion of it (not a resign hold-off) ends, as when it
// speaks. A node membership does not list is on the ring for a while.
func (r *ringCore) hear(k Key) {
	if k.ID == 0 || k.ID == r.self.ID {
		return
	}
	r.unsuspect(k.ID)
	if _, ok := r.members[k.ID]; ok {
		return
	}
	h, ok := r.heard[k.ID]
	if !ok || h.key != k {
		r.dirty = true
	}
	r.heard[k.ID] = heardOf{key: k, until: r.now + suspicionMemory*r.cfg.LossWindow()}
}

// live reports whether id is on the ring now: this node, a member, or a
// node heard of lately.
func (r *ringCore) live(id NodeID) bool {
	if id == r.self.ID {
		return true
	}
	if _, ok := r.members[id]; ok {
		return true
	}
	h, ok := r.heard[id]
	return ok && r.now < h.until
}

// rebuild sorts the ring again if membership or a key changed.
func (r *ringCore) rebuild() {
	if !r.dirty {
		return
	}
	r.dirty = false
	r.order = append(r.order[:0], r.self)
	for _, k := range r.members {
		r.order = append(r.order, k)
	}
	for id, h := range r.heard {
		if _, member := r.members[id]; member || h.until <= r.now {
			delete(r.heard, id)
			continue
		}
		r.order = append(r.order, h.key)
	}
	o := r.cfg.RingOrder
	slices.SortFunc(r.order, func(a, b Key) int {
		if o.Shuffle != 0 {
			if c := cmp.Compare(shuffleRank(o.Shuffle, a.ID), shuffleRank(o.Shuffle, b.ID)); c != 0 {
				return c
			}
			return cmp.Compare(a.ID, b.ID)
		}
		c := 0
		switch {
		case a.Less(b):
			c = -1
		case b.Less(a):
			c = 1
		}
		if o.Descending {
			c = -c
		}
		return c
	})
	r.pos = slices.Index(r.order, r.self)
}

// shuffleRank places id on a shuffled ring: a 64-bit mix (splitmix64's
// finaliser) of id keyed with seed.
func shuffleRank(seed, id uint64) uint64 {
	z := id ^ seed*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// next returns the nearest member in direction dir (wire.DirRight: the
// successor) that is neither gone nor left out, or false when there is
// none: this node is alone on the ring.
func (r *ringCore) next(dir uint8) (NodeID, bool) {
	r.rebuild()
	n := len(r.order)
	step := 1
	if dir == wire.DirLeft {
		step = n - 1
	}
	for i, p := 1, r.pos; i < n; i++ {
		p = (p + step) % n
		if id := r.order[p].ID; r.live(id) && !r.skipped(id) {
			return id, true
		}
	}
	return 0, false
}

// skipped reports whether the ring passes member id by for now: it did
// not acknowledge a hop. A node in its resign hold-off is not passed by:
// it is alive, and passes messages on (it takes no part as a candidate),
// so that announcements reach it.
//
// Nor is a leader that this node suspected: a suspicion is the
// detector's guess, and the node may be alive, a leader no longer that
// follows another in silence. Passed by, it would miss the round of the
// node that suspected it while taking part in a round of its own of the
// same term, and a Chang–Roberts identifier that went round without it
// would come home as the largest when it is not: two leaders of one term
// (the simulator's Chang–Roberts seed 8951, a reliable schedule). A hop
// to it costs T when it is dead, and it is then passed by, as the texts
// say: "if the successor does not answer, send to the one after it".
// Without PassByAcked the detector is the texts' perfect one (the
// coordinator noticed gone has crashed), and a suspected leader is
// passed by at once, as they count it.
func (r *ringCore) skipped(id NodeID) bool {
	x, ok := r.excluded[id]
	return ok && r.now < x.until && !x.resigned && (x.unacked || !r.cfg.PassByAcked)
}

// ringSize is the number of nodes on the ring, this one included (as
// last rebuilt).
func (r *ringCore) ringSize() int {
	r.rebuild()
	return len(r.order)
}

// lapWait bounds how long a round may take on this ring: lapFactor·n hops
// of at most T/2 each (a one-way delay and the processing), plus the
// COORDINATOR wait.
func (r *ringCore) lapWait() time.Duration {
	return lapWait(r.cfg, r.alg.lapFactor(), r.ringSize())
}

func lapWait(cfg Config, factor, n int) time.Duration {
	return cfg.CoordinatorTimeout + time.Duration(factor*n)*cfg.AnswerTimeout/2
}

// reverse returns the opposite direction.
func reverse(dir uint8) uint8 {
	if dir == wire.DirRight {
		return wire.DirLeft
	}
	return wire.DirRight
}

// --- rounds -------------------------------------------------------------------

// propose starts a round of this node's own: its term is one more than
// any term seen.
func (r *ringCore) propose() uint64 {
	t := max(r.term, r.maxSeen) + 1
	r.maxSeen = t
	r.newRound(t, r.self)
	return t
}

// newRound records that this node now takes part in the round of term t
// started by origin.
func (r *ringCore) newRound(t uint64, origin Key) {
	r.roundTerm, r.origin, r.best, r.open = t, origin, origin, true
}

// stale reports whether a round message of term t is to be dropped: its
// round was replaced by a later one, or it is not later than the
// leadership this node recognises (it was started before that leadership,
// or it is that leadership's own election).
func (r *ringCore) stale(t uint64) bool {
	return t < r.roundTerm || t <= r.term
}

// participate makes this node a candidate of its open round, waiting at
// most lapWait for its result. A leader that relays a larger node's round
// stays leader until that node's claim arrives.
func (r *ringCore) participate() {
	if r.state == StateLeader {
		return
	}
	r.setState(StateCandidate)
	r.setTimer(TimerCoordinator, r.now+r.lapWait())
}

// see notes a candidate key of the current round.
func (r *ringCore) see(k Key) {
	if r.best.Less(k) {
		r.best = k
	}
}

// reassert: a leader got the round of a smaller node, which suspects it
// (or is behind): the election ends at once, under a fresh term, with one
// COORDINATOR to all.
func (r *ringCore) reassert() {
	r.open = false
	r.becomeLeader()
}

// onTimer: TimerAnswer is the wait for the acknowledgement of a hop,
// TimerCoordinator the wait for the round's result.
func (r *ringCore) onTimer(t TimerKind) {
	switch t {
	case TimerAnswer:
		r.onHopTimeout()
	case TimerCoordinator:
		if r.state == StateCandidate {
			// No result in time: the round is lost (a message died with a
			// node, or the ring was cut). A new one, with a later term.
			r.startElection()
		}
	}
}

// stop: this node leads, follows, or is in conflict. A round it took part
// in is over for it if the leadership it now recognises is at least as
// late. Hops already sent stay until acknowledged or skipped.
func (r *ringCore) stop() {
	r.cancelTimer(TimerCoordinator)
	if r.term >= r.roundTerm {
		r.open = false
	}
}

// overrules: a candidate whose round is later than a smaller node's claim
// goes on with the round, whose result will replace that claim.
func (r *ringCore) overrules(_ Key, term uint64) bool {
	return r.open && term < r.roundTerm
}

// memberDown: the ring loses a node. Hops sent to it go on past it at
// once. A round that loses its initiator or its best candidate cannot end
// well (the best candidate's message is gone, or the node holding the
// message may be): a new one starts.
func (r *ringCore) memberDown(id NodeID, _ bool) {
	r.dirty = true
	delete(r.heard, id)
	var lost []hop
	r.hops = slices.DeleteFunc(r.hops, func(h hop) bool {
		if h.to == id {
			lost = append(lost, h)
			return true
		}
		return false
	})
	for _, h := range lost {
		r.resend(h)
	}
	r.armHops()
	if r.state == StateCandidate && r.open && (id == r.origin.ID || id == r.best.ID) {
		r.startElection()
	}
}

// --- the ELECTED lap (Chang–Roberts, Hirschberg–Sinclair) ---------------------

// announce sends ELECTED, this node's claim of term, once round the ring.
func (r *ringCore) announce(term uint64) {
	m := r.msg(wire.TypeCRElected, term)
	m.CandID, m.CandPrio = r.self.ID, r.self.Priority
	r.sendHop(m, wire.DirRight)
}

// onElected: each node records the coordinator and passes ELECTED on; it
// stops at the coordinator. It is a claim, judged as any other: a node
// that does not recognise it does not pass it on.
func (r *ringCore) onElected(m *wire.Message) {
	k := Key{Priority: m.CandPrio, ID: m.CandID}
	if k.ID == r.self.ID || k.ID == 0 || r.lastAnnounce.term == m.Term && r.lastAnnounce.id == k.ID {
		return
	}
	r.lastAnnounce.term, r.lastAnnounce.id = m.Term, k.ID
	r.onClaim(k, m.Term)
	if r.leader == k.ID && r.term == m.Term {
		r.sendHop(r.relay(m), wire.DirRight)
	}
}

// relay returns a copy of m as this node passes it on: its header names
// this node, its body is m's (a list is copied, since the driver reuses
// the decoded one).
func (r *ringCore) relay(m *wire.Message) wire.Message {
	out := r.msg(m.Type, m.Term)
	out.Origin, out.CandID, out.CandPrio = m.Origin, m.CandID, m.CandPrio
	out.Phase, out.Hops, out.Dir = m.Phase, m.Hops, m.Dir
	if len(m.List) > 0 {
		out.List = slices.Clone(m.List)
	}
	return out
}
