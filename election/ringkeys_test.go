package election

import (
	"testing"

	"github.com/lanleader/lanleader/wire"
)

// In the ring family a header teaches its sender's key only when it is
// the newest message heard from the sender (by incarnation, then
// sequence): a late packet sent before a change of priority does not undo
// the change, which would put the sender back where it no longer is on
// the ring (the simulator's Chang–Roberts seed 15007: a node whose rounds
// went past it for good).
func TestRingKeyFromTheNewestHeaderOnly(t *testing.T) {
	// The ring 1 -> 2 -> 3 -> 4 -> 5 -> 1; node 2 follows 5.
	n := followerIn(t, AlgorithmChangRoberts, key(2), keys(1, 3, 4, 5), key(5))
	from3 := func(prio uint16, inc, seq uint32) Event {
		// A RING_ACK of no hop: only its header matters here.
		m := wire.Message{Type: wire.TypeRingAck, From: 3, Priority: prio, Incarnation: inc, Seq: seq, AckSeq: 1}
		return Event{Kind: EvMessage, Msg: m}
	}
	// Node 3's priority drops to 99: it moves to the ring's start,
	// 3 -> 1 -> 2 -> 4 -> 5, and 2's successor is 4.
	n.expect(20*ms, from3(99, 1, 10))
	// A packet it sent before, delayed: its key is not taken.
	n.expect(21*ms, from3(100, 1, 9))
	if k := memberKey(n, 3); k.Priority != 99 {
		t.Fatalf("after a late header: node 3 is %v, want 99/3", k)
	}
	n.expect(100*ms, evSuspect,
		"cancel-timer suspect",
		fmtFollow(noLeader, 1),
		"set-timer coordinator at 675ms",
		"send CR_ELECTION to 4 term=2 cand=2",
		"set-timer answer at 150ms")
	// A newer header, of the same run or of a later one, is taken.
	n.expect(110*ms, from3(100, 1, 11))
	if k := memberKey(n, 3); k.Priority != 100 {
		t.Fatalf("after a newer header: node 3 is %v, want 100/3", k)
	}
	n.expect(120*ms, from3(101, 2, 1))
	if k := memberKey(n, 3); k.Priority != 101 {
		t.Fatalf("after the header of a later incarnation: node 3 is %v, want 101/3", k)
	}
}

func memberKey(n tnode, id NodeID) Key {
	for _, k := range n.m.Members(nil) {
		if k.ID == id {
			return k
		}
	}
	return Key{}
}
