package explore

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/ident"
	"github.com/lanleader/lanleader/sim"
	"github.com/lanleader/lanleader/wire"
)

// Messages between the nodes: sent, held, delivered, received.

func (e *explorer) describe(m *msg) string {
	return fmt.Sprintf("%v n%d→n%d term=%d (sent %v)", m.m.Type, e.shape.Nodes[m.from].ID, e.shape.Nodes[m.to].ID, m.m.Term, m.sent)
}

func (e *explorer) deliver(s *state, m msg) {
	n := &s.nodes[m.to]
	id := e.shape.Nodes[m.to].ID
	switch {
	case n.m == nil:
		e.linef("%v %v dropped: n%d is down", s.now, e.describe(&m), id)
		return
	case n.linkDown:
		e.linef("%v %v dropped: n%d's link is down", s.now, e.describe(&m), id)
		return
	case n.paused:
		// A stopped process's socket keeps what arrives, up to its
		// buffer.
		if len(n.held) >= sim.SocketBuffer {
			e.linef("%v %v dropped: n%d is paused, its socket full", s.now, e.describe(&m), id)
			return
		}
		e.linef("%v %v held: n%d is paused", s.now, e.describe(&m), id)
		n.held = append(n.held, held{at: s.now, seq: m.seq, m: m})
		return
	}
	e.linef("%v %v delivered", s.now, e.describe(&m))
	e.receive(s, m)
}

// receive hands packet m to its node's driver and machine.
func (e *explorer) receive(s *state, m msg) {
	n := &s.nodes[m.to]
	id := e.shape.Nodes[m.to].ID
	// The agent's receive rule (internal/ident); the old one
	// (SelfByIncarnation) did not look at the source address.
	src := sim.NodeAddr(m.from)
	if e.shape.SelfByIncarnation {
		src = netip.AddrPort{}
	}
	switch ident.Classify(ident.Self{NodeID: id, Addr: sim.NodeAddr(m.to), Incarnation: n.gen},
		ident.Packet{From: m.m.From, Incarnation: m.m.Incarnation, Src: src}) {
	case ident.Own:
		e.linef("taken for its own")
		return
	case ident.Conflict:
		if !n.conflict {
			n.conflict = true
			e.linef("n%d: our node_id from another node: conflict", id)
			e.step(s, m.to, election.Event{Kind: election.EvConflict, On: true})
		}
		return
	}
	if n.lastFrom == nil {
		n.lastFrom = make(map[election.NodeID]int)
	}
	n.lastFrom[m.m.From] = m.from
	if m.m.Type == wire.TypeNotice {
		e.noticeHeard(s, m.to, &m)
	}
	e.step(s, m.to, election.Event{Kind: election.EvMessage, Msg: m.m})
}

// route is the node a unicast to id reaches: with clones, the one last
// heard with that id.
func (e *explorer) route(n *nodeState, id election.NodeID) int {
	if j, ok := n.lastFrom[id]; ok {
		return j
	}
	for j, o := range e.shape.Nodes {
		if o.ID == id {
			return j
		}
	}
	return -1
}

func (e *explorer) send(s *state, from, to int, m wire.Message) {
	n := &s.nodes[from]
	n.seq++
	m.Seq, m.Incarnation = n.seq, n.gen
	m.List = slices.Clone(m.List)
	if n.linkDown || s.nodes[to].linkDown {
		return // it never reaches the wire, or the wire never reaches it
	}
	s.seq++
	s.msgs = append(s.msgs, msg{from: from, to: to, m: m, sent: s.now, due: s.now, seq: s.seq, cover: cover{node: -1}})
}
