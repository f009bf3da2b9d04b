package sim

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/ident"
	"github.com/lanleader/lanleader/wire"
)

// The simulated network: transmission with delay, loss and cuts, one
// multicast packet for every receiver, and delivery to a node (held while
// it is paused).

// dispatchMulticast delivers the next copy of a multicast, and queues the
// one after it.
func (s *Sim) dispatchMulticast(e *event) {
	mc := e.mc
	c := mc.copies[mc.next]
	mc.next++
	if mc.next < len(mc.copies) {
		nx := mc.copies[mc.next]
		s.q.push(qitem{at: nx.at, seq: nx.seq, e: e})
	}
	n := s.nodes[c.node]
	if !n.up || c.gen != n.gen {
		return
	}
	if n.linkDown {
		s.Stats.Dropped++
		return
	}
	if n.paused {
		pkt := slices.Clone(mc.pkt)
		binary.BigEndian.PutUint32(pkt[32:], c.pseq)
		s.hold(n, &event{at: c.at, kind: evDeliver, node: c.node, gen: c.gen, pkt: pkt, from: mc.from})
		return
	}
	s.deliver(n, mc.pkt, c.pseq, mc.from)
}

// hold keeps packet delivery e for paused node n: a stopped process's
// socket keeps what arrives, up to its buffer; it reads the backlog when
// it wakes.
func (s *Sim) hold(n *node, e *event) {
	if n.backlog < SocketBuffer {
		n.backlog++
		n.pending = append(n.pending, e)
	} else {
		s.Stats.Dropped++
	}
}

// deliver hands packet pkt, sent by node from, to node n, with sequence
// number pseq when not 0.
func (s *Sim) deliver(n *node, pkt []byte, pseq uint32, from int) {
	if err := wire.Decode(pkt, &s.msg); err != nil {
		panic(fmt.Sprintf("sim: a packet the machines built does not decode: %v", err))
	}
	if pseq != 0 {
		s.msg.Seq = pseq
	}
	// The agent's receive rule (internal/ident): a packet with our
	// node_id is our own only from our own address. The old rule
	// (SelfByIncarnation) did not look at the source: one with our
	// incarnation was taken for our own.
	src := NodeAddr(from)
	if s.cfg.SelfByIncarnation {
		src = netip.AddrPort{}
	}
	switch ident.Classify(ident.Self{NodeID: n.key.ID, Addr: NodeAddr(n.idx), Incarnation: uint32(n.gen)},
		ident.Packet{From: s.msg.From, Incarnation: s.msg.Incarnation, Src: src}) {
	case ident.Own:
		s.Stats.Dropped++
		return
	case ident.Conflict:
		if !n.conflict {
			n.conflict = true
			s.tracef("n%d hears its node_id from another node: conflict", n.key.ID)
			s.step(n, election.Event{Kind: election.EvConflict, On: true})
		}
		return
	}
	if s.cfg.Clones {
		if n.lastFrom == nil {
			n.lastFrom = make(map[election.NodeID]int)
		}
		n.lastFrom[s.msg.From] = from
	}
	s.Stats.Delivered++
	if s.cfg.Trace != nil {
		s.tracef("n%d recv %s from n%d term=%d%s", n.key.ID, s.msg.Type, s.msg.From, s.msg.Term, s.msg.AppendBody(nil, "n"))
	}
	if s.msg.Type == wire.TypeNotice {
		s.noticeHeard(n, &s.msg)
	}
	s.step(n, election.Event{Kind: election.EvMessage, Msg: s.msg})
}

// broadcast carries out a's one-to-all send: one multicast packet that
// every node receives, or with the unicast transport one packet to each
// member of the scope in the sender's view.
func (s *Sim) broadcast(n *node, a *election.Action) {
	s.Stats.Messages[a.Msg.Type] += a.Count
	s.Stats.Unicast[a.Msg.Type] += a.Count
	if !s.cfg.Unicast {
		s.Stats.Packets[a.Msg.Type]++
		if a.Msg.Type != wire.TypeHeartbeat {
			s.tracef("n%d multicast %s to %v(%d) term=%d", n.key.ID, a.Msg.Type, a.Scope, a.Count, a.Msg.Term)
		}
		// One multicast packet reaches every node; receivers
		// filter by key.
		mc := &multicast{from: n.idx}
		for j := range s.nodes {
			if j != n.idx {
				s.transmit(n, j, &a.Msg, mc)
			}
		}
		if len(mc.copies) > 0 {
			sortCopies(mc.copies)
			c := mc.copies[0]
			s.q.push(qitem{at: c.at, seq: c.seq, e: &event{kind: evMulticast, mc: mc}})
		}
		return
	}
	// Unicast fan-out: one packet to each member of the scope in
	// the sender's view, as the agent's --transport unicast does.
	s.view = n.m.Members(s.view[:0])
	slices.SortFunc(s.view, func(x, y election.Key) int { return cmp.Compare(x.ID, y.ID) })
	self, sent := n.m.Status().Self, 0
	for _, k := range s.view {
		if a.Scope == election.ScopeLarger && !self.Less(k) {
			continue
		}
		if j := s.route(n, k.ID); j >= 0 {
			s.transmit(n, j, &a.Msg, nil)
			sent++
		}
	}
	s.Stats.Packets[a.Msg.Type] += sent
	if a.Msg.Type != wire.TypeHeartbeat {
		s.tracef("n%d unicast %s to %v(%d packets) term=%d", n.key.ID, a.Msg.Type, a.Scope, sent, a.Msg.Term)
	}
}

// transmit sends one copy of m from n to node j through the network: as
// an event of its own, or as one of the copies of multicast mc.
func (s *Sim) transmit(n *node, j int, m *wire.Message, mc *multicast) {
	n.seq++
	m.Seq, m.Incarnation = n.seq, uint32(n.gen)
	if mc == nil || mc.pkt == nil {
		var err error
		s.buf, err = m.Append(s.buf[:0])
		if err != nil {
			panic(fmt.Sprintf("sim: machine built a message that does not encode: %v", err))
		}
		if mc != nil {
			mc.pkt = slices.Clone(s.buf)
		}
	}
	s.carry(n, j, n.seq, mc)
}

// carry puts the copies of the packet that n sends to node j on the
// network (none if it is lost or cut, two if duplicated): in s.buf, or
// as multicast mc's copies with sequence number pseq.
func (s *Sim) carry(n *node, j int, pseq uint32, mc *multicast) {
	if s.cut[[2]int{n.idx, j}] || n.linkDown || s.nodes[j].linkDown {
		s.Stats.Dropped++
		return
	}
	copies := 1
	if s.net.Loss > 0 && s.rng.Float64() < s.net.Loss {
		copies = 0
	} else if s.net.Dup > 0 && s.rng.Float64() < s.net.Dup {
		copies = 2
	}
	if copies == 0 {
		s.Stats.Dropped++
	}
	to := s.nodes[j]
	for range copies {
		d := s.net.DelayMin
		if s.net.DelayMax > s.net.DelayMin {
			d += time.Duration(s.rng.Int64N(int64(s.net.DelayMax - s.net.DelayMin + 1)))
		}
		if mc != nil {
			s.seq++
			mc.copies = append(mc.copies, mcopy{at: s.now + d, seq: s.seq, node: j, gen: to.gen, pseq: pseq})
			continue
		}
		s.push(&event{at: s.now + d, kind: evDeliver, node: j, gen: to.gen, pkt: slices.Clone(s.buf), from: n.idx})
	}
}

// route is the node a unicast of n to id reaches: with clones, the one n
// last heard with that id (as the agent sends to the address it last
// heard a node_id from).
func (s *Sim) route(n *node, id election.NodeID) int {
	if j, ok := n.lastFrom[id]; ok {
		return j
	}
	return s.index(id)
}

// sortCopies puts a multicast's copies in the order of their delivery.
func sortCopies(cs []mcopy) {
	slices.SortFunc(cs, func(x, y mcopy) int {
		if x.at != y.at {
			return cmp.Compare(x.at, y.at)
		}
		return cmp.Compare(x.seq, y.seq)
	})
}
