package sim

import (
	"time"

	"github.com/lanleader/lanleader/election"
)

// The simulator's event queue: what comes due, in global time order.

// event kinds of the simulator's queue.
type evKind uint8

const (
	evDeliver   evKind = iota // a packet reaches node
	evTimer                   // a node's timer comes due
	evMember                  // a membership notice reaches node
	evFunc                    // a scheduled fault or probe
	evInject                  // an event from outside the protocol (resign, priority) for node
	evMulticast               // the next copy of a multicast packet reaches its node
	evJob                     // a job's timed change (start, death, the guard's kill) may be due
)

type event struct {
	at   time.Duration
	seq  uint64
	kind evKind
	node int
	gen  uint64 // the node's incarnation the event belongs to
	// evDeliver
	pkt []byte
	// evTimer
	timer    election.TimerKind
	timerGen uint64
	// evMember
	up       bool
	about    int    // the node the notice is about
	aboutGen uint64 // its incarnation when the notice was sent
	// evFunc
	fn func()
	// evInject
	ev *election.Event
	// evMulticast
	mc *multicast
	// evDeliver: the sending node
	from int
	// evJob
	jb *simJob
}

// multicast is one multicast packet on its way to every other node. Its
// copies, in the order of delivery, share one entry of the queue (keyed
// by the next copy's time and reserved sequence), so that a 1,024-node
// cluster's multicasts do not fill the heap with a million events; the
// order of deliveries is the same as with one event a copy.
type multicast struct {
	pkt    []byte // encoded once; each copy has its own sequence number
	from   int    // the sending node
	copies []mcopy
	next   int
}

type mcopy struct {
	at   time.Duration
	seq  uint64 // the queue's order, taken when the copy was sent
	node int
	gen  uint64
	pseq uint32 // the packet's sequence number
}

// queue is the simulator's event queue, a 4-ary min-heap by (at, seq).
// The sort key is kept beside the pointer, so that comparisons do not
// chase pointers (a 1,024-node multicast run holds hundreds of thousands
// of events), and the heap is written out rather than behind
// container/heap's interface.
type queue []qitem

type qitem struct {
	at  time.Duration
	seq uint64
	e   *event
}

func (a qitem) before(b qitem) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// push adds it.
func (q *queue) push(it qitem) {
	h := append(*q, it)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !it.before(h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = it
	*q = h
}

// pop removes and returns the first item; the queue must not be empty.
func (q *queue) pop() qitem {
	h := *q
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h[n] = qitem{}
	h = h[:n]
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < c+4 && k < n; k++ {
			if h[k].before(h[m]) {
				m = k
			}
		}
		if !h[m].before(last) {
			break
		}
		h[i] = h[m]
		i = m
	}
	if n > 0 {
		h[i] = last
	}
	*q = h
	return top
}
