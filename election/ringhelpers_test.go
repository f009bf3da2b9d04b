package election

import (
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// The helpers of the ring family's single-step tests (the machine under
// test is helpers_test.go's tnode, built by newMachine): the ring
// messages written the way the textbooks say them, and the acks that
// answer them.

// followerIn drives self to follow leader with term 1 (its COORDINATOR
// arrives at 10ms, during the listen period; the suspect timer is then
// armed at 310ms).
func followerIn(t *testing.T, alg string, self Key, members []Key, leader Key, opts ...func(*Config)) tnode {
	t.Helper()
	n := newMachine(t, alg, self, members, opts...)
	n.expect(0, evStart, "set-timer startup at 300ms")
	n.expect(10*ms, coord(leader.ID, 1), "cancel-timer startup", fmtFollow(leader.ID, 1), "set-timer suspect at 310ms")
	return n
}

// Ring messages from the node of key from (default priority when made
// from an id).

func ringMsg(typ wire.Type, from NodeID, term uint64) wire.Message {
	return wire.Message{Type: typ, From: from, Priority: defPrio, Term: term}
}

func mlist(ids ...NodeID) []wire.Member {
	out := make([]wire.Member, len(ids))
	for i, id := range ids {
		out[i] = wire.Member{ID: id, Priority: defPrio}
	}
	return out
}

// ringElection is RING_ELECTION from a node: the round of origin (whose
// number is first in the list) with term, and the list so far.
func ringElection(from NodeID, term uint64, list ...NodeID) Event {
	m := ringMsg(wire.TypeRingElection, from, term)
	m.Origin, m.List = list[0], mlist(list...)
	return Event{Kind: EvMessage, Msg: m}
}

// ringCoordinator is RING_COORDINATOR from a node, made by origin.
func ringCoordinator(from NodeID, term uint64, origin NodeID, list ...NodeID) Event {
	m := ringMsg(wire.TypeRingCoordinator, from, term)
	m.Origin, m.List = origin, mlist(list...)
	return Event{Kind: EvMessage, Msg: m}
}

func crElection(from NodeID, term uint64, cand NodeID) Event {
	m := ringMsg(wire.TypeCRElection, from, term)
	m.CandID, m.CandPrio = cand, defPrio
	return Event{Kind: EvMessage, Msg: m}
}

func crElected(from NodeID, term uint64, cand NodeID) Event {
	m := ringMsg(wire.TypeCRElected, from, term)
	m.CandID, m.CandPrio = cand, defPrio
	return Event{Kind: EvMessage, Msg: m}
}

func hsProbe(from NodeID, term uint64, cand NodeID, phase uint8, hops uint16, dir uint8) Event {
	m := ringMsg(wire.TypeHSProbe, from, term)
	m.CandID, m.CandPrio, m.Phase, m.Hops, m.Dir = cand, defPrio, phase, hops, dir
	return Event{Kind: EvMessage, Msg: m}
}

func hsReply(from NodeID, term uint64, cand NodeID, phase uint8, hops uint16, dir uint8) Event {
	ev := hsProbe(from, term, cand, phase, hops, dir)
	ev.Msg.Type = wire.TypeHSReply
	return ev
}

// ackOf is the RING_ACK that node from sends for the message sent in act.
func ackOf(from NodeID, act Action) Event {
	m := ringMsg(wire.TypeRingAck, from, 0)
	m.AckSeq = hopToken(&act.Msg)
	return Event{Kind: EvMessage, Msg: m}
}

// stepAcked feeds ev at now and, a millisecond later, the RING_ACK from
// node by of the hop ev made this node send: the first action whose line
// starts with sent.
func (n tnode) stepAcked(now time.Duration, ev Event, sent string, by NodeID) {
	n.t.Helper()
	acts := n.step(now, ev)
	n.step(now+ms, ackOf(by, find(n.t, acts, sent)))
}

// sentAck is the line of this node's RING_ACK of ev.
func sentAck(ev Event, term uint64) string {
	return "send RING_ACK to " + itoa(ev.Msg.From) + " term=" + itoa(term)
}

// expectAcked feeds ring message ev at now, and expects this node's
// RING_ACK of it (sent with ackTerm, the term it recognises then) followed
// by the actions want, in order.
func (n tnode) expectAcked(now time.Duration, ev Event, ackTerm uint64, want ...string) []Action {
	n.t.Helper()
	return n.expect(now, ev, append([]string{sentAck(ev, ackTerm)}, want...)...)
}

// find returns the first action of acts whose line starts with prefix.
func find(t *testing.T, acts []Action, prefix string) Action {
	t.Helper()
	for i, l := range actLines(acts) {
		if strings.HasPrefix(l, prefix) {
			return acts[i]
		}
	}
	t.Fatalf("no action %q in %q", prefix, actLines(acts))
	return Action{}
}
