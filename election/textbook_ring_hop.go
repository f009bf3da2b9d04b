package election

import (
	"slices"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// This file is the ring family's hops (textbook_ring.go has the overview): every
// message sent along the ring waits T for its RING_ACK, and goes on past
// a node that does not acknowledge it.

// hop is a message sent along the ring and not yet acknowledged.
type hop struct {
	msg   wire.Message // as sent; its List is owned by the hop
	to    NodeID
	dir   uint8 // the direction it travels (wire.DirRight or wire.DirLeft)
	token uint32
	until time.Duration // T after it was sent
	tries int           // how many times it was sent to this node
}

// homeTries is how many times a hop to the message's home (homeOf) is
// sent before the home is passed by: a home that is passed by never gets
// the message, and its round is lost (see onHopTimeout).
const homeTries = 3

// homeOf returns the node that message m travels the ring to reach, or 0
// when it travels to everyone: a list's initiator, which completes it
// (RING_ELECTION); the candidate a Chang–Roberts ELECTION or a
// Hirschberg–Sinclair probe or reply is for, which wins with it or goes
// on to its next phase. An announcement has none: passing a node by only
// leaves that node to learn the leader from its heartbeats.
func homeOf(m *wire.Message) NodeID {
	switch m.Type {
	case wire.TypeRingElection:
		return m.Origin
	case wire.TypeCRElection, wire.TypeHSProbe, wire.TypeHSReply:
		return m.CandID
	}
	return 0
}

// msg returns a message of type t from this node carrying term.
func (r *ringCore) msg(t wire.Type, term uint64) wire.Message {
	return wire.Message{Type: t, From: r.self.ID, Priority: r.self.Priority, Term: term}
}

// sendHop sends m to the nearest live node in direction dir and waits T
// for its acknowledgement. It reports false, sending nothing, when this
// node is alone.
func (r *ringCore) sendHop(m wire.Message, dir uint8) bool {
	to, ok := r.next(dir)
	if !ok {
		return false
	}
	r.sendHopTo(to, m, dir)
	return true
}

// sendHopTo sends m to node to, which is in direction dir, and waits T
// for its acknowledgement; if none comes, m goes on to the next live node
// in that direction.
func (r *ringCore) sendHopTo(to NodeID, m wire.Message, dir uint8) {
	r.sendTry(hop{msg: m, to: to, dir: dir, token: hopToken(&m)})
}

// sendTry sends hop h once more, and waits T for its acknowledgement.
func (r *ringCore) sendTry(h hop) {
	r.emit(Action{Kind: ActSend, To: h.to, Msg: h.msg, Count: 1})
	h.tries++
	h.until = r.now + r.cfg.AnswerTimeout
	r.hops = append(r.hops, h)
	r.armHops()
}

// armHops sets TimerAnswer to the first unacknowledged hop's deadline, or
// cancels it when every hop is acknowledged.
func (r *ringCore) armHops() {
	if len(r.hops) == 0 {
		r.cancelTimer(TimerAnswer)
		return
	}
	if at := r.hops[0].until; !r.armed[TimerAnswer] || r.deadline[TimerAnswer] != at {
		r.setTimer(TimerAnswer, at)
	}
}

// acked handles the acknowledgement of the hop to the sender of ack.
func (r *ringCore) onAck(ack *wire.Message) {
	i := slices.IndexFunc(r.hops, func(h hop) bool { return h.to == ack.From && h.token == ack.AckSeq })
	if i < 0 {
		return
	}
	r.hops = slices.Delete(r.hops, i, i+1)
	r.armHops()
}

// handler is the step of a ring algorithm for one type of its messages.
type handler struct {
	t    wire.Type
	step func(*wire.Message)
}

// route hands m to the hops' bookkeeping when it acknowledges one, and
// otherwise, once received (receive), to the handler of its type; a
// type no handler names is not the algorithm's and is ignored.
func (r *ringCore) route(m *wire.Message, from Key, hs ...handler) {
	if m.Type == wire.TypeRingAck {
		r.onAck(m)
		return
	}
	for _, h := range hs {
		if h.t == m.Type {
			if r.receive(m, from) {
				h.step(m)
			}
			return
		}
	}
}

// receive takes a hop of a message of the algorithm's own: its sender
// and the nodes it names (a candidate, the entries of a list) are alive,
// and it is acknowledged. It reports whether the algorithm handles it
// (not in conflict: see acknowledge).
func (r *ringCore) receive(m *wire.Message, from Key) bool {
	r.hear(from)
	switch m.Type {
	case wire.TypeRingElection, wire.TypeRingCoordinator:
		for _, e := range m.List {
			r.hear(keyOf(e))
		}
	default:
		r.hear(Key{Priority: m.CandPrio, ID: m.CandID})
	}
	return r.acknowledge(m)
}

// acknowledge tells the sender of a ring message that it arrived. A node
// in conflict or on standby does not: it takes no part, and is skipped.
// A witness or observer does: it passes messages on.
func (r *ringCore) acknowledge(m *wire.Message) bool {
	if r.absent() {
		return false
	}
	a := r.header(wire.TypeRingAck)
	a.AckSeq = hopToken(m)
	r.emit(Action{Kind: ActSend, To: m.From, Msg: a, Count: 1})
	return true
}

// onHopTimeout: every hop not acknowledged within T is skipped: its
// addressee is left out for a while, and the message goes to the next
// live node in the same direction. A hop to the message's home (homeOf)
// is sent to it again first, up to homeTries times in all: passed by,
// the message would go on round the ring without it (or be dropped as a
// duplicate) and the round would be lost, to be replaced only after its
// whole lapWait (1.8 s for Hirschberg–Sinclair on 7 nodes) by the next.
// A lost packet is the likely cause on a LAN: with loss p on each packet
// the message is lost with probability p, and all homeTries of them with
// p^homeTries (a lost acknowledgement alone costs a duplicate, which the
// home acknowledges and drops). The home is tried even when another
// hop's timeout has just left it out: that was one lost packet as well.
// The simulator's Hirschberg–Sinclair
// stability schedules with a deaf leader and 5–10 % loss lost two rounds
// in a row, and so elected after more than 3 s, in 237 of 20,000 (seeds
// 259, 283, ...) when the home was not tried again.
func (r *ringCore) onHopTimeout() {
	var due []hop
	for len(r.hops) > 0 && r.hops[0].until <= r.now {
		due = append(due, r.hops[0])
		r.hops = r.hops[1:]
	}
	if r.absent() {
		r.hops = r.hops[:0]
	}
	for _, h := range due {
		if r.absent() {
			break
		}
		if h.to == homeOf(&h.msg) && h.tries < homeTries && r.live(h.to) {
			r.sendTry(h)
			continue
		}
		r.exclude(h.to, exclusion{until: r.now + suspicionMemory*r.cfg.LossWindow(), unacked: true})
		r.resend(h)
	}
	r.armHops()
}

// resend sends the message of hop h on in its direction, past its
// addressee. When no one is left, an announcement is dropped, and an
// election this node still takes part in ends with it: it is the only
// live node it knows.
func (r *ringCore) resend(h hop) {
	if r.sendHop(h.msg, h.dir) {
		return
	}
	switch h.msg.Type {
	case wire.TypeRingCoordinator, wire.TypeCRElected:
		return
	}
	if r.state == StateCandidate && r.open {
		r.alone()
	}
}

// alone: no other node is live on the ring: this node leads, under a
// fresh term announced to all, unless it may still miss an election under
// way (it has just started or held off), when the round waits.
func (r *ringCore) alone() {
	if r.now < r.settleUntil {
		r.setState(StateCandidate)
		r.setTimer(TimerCoordinator, r.settleUntil)
		return
	}
	r.becomeLeader()
}

// hopToken identifies a message along the ring for its acknowledgement:
// a hash (FNV-1a) of its type, term and body (of a list, its length and
// last entry, which differ at every hop). The sender computes it from the
// message it built and the receiver from the message it decoded, so the
// driver's sequence numbers are not needed.
func hopToken(m *wire.Message) uint32 {
	h := uint32(2166136261)
	mix := func(v uint64) {
		for range 8 {
			h ^= uint32(v & 0xff)
			h *= 16777619
			v >>= 8
		}
	}
	mix(uint64(m.Type))
	mix(m.Term)
	mix(m.Origin)
	mix(m.CandID)
	mix(uint64(m.CandPrio)<<32 | uint64(m.Phase)<<24 | uint64(m.Hops)<<8 | uint64(m.Dir))
	mix(uint64(len(m.List)))
	if n := len(m.List); n > 0 {
		mix(m.List[n-1].ID)
	}
	return h
}
