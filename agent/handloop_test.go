package agent

import (
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/internal/meta"
	"github.com/lanleader/lanleader/agent/internal/udp"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

// sinkConn is an election socket that takes every packet and sends
// none; it counts them by type.
type sinkConn struct {
	udp.Conn
	sent  map[wire.Type]int
	claim uint32 // the number of the latest claim sent
}

func (c *sinkConn) WriteTo(b []byte, _ netip.AddrPort) error {
	var m wire.Message
	if err := wire.Decode(b, &m); err == nil {
		c.sent[m.Type]++
		if m.Type == wire.TypeCoordinator || m.Type == wire.TypeHeartbeat {
			c.claim = max(c.claim, m.Claim)
		}
	}
	return nil
}

// handLoop drives an agent's loop by hand, without its goroutine and
// sockets: its election socket is a sink, its members are given.
type handLoop struct {
	t    *testing.T
	a    *Agent
	sink *sinkConn
	now  time.Duration
}

// newHandLoop makes an agent of cfg whose members are nodes ids (priority
// 100, node_id k named node-k), the job of node k reported running when
// running(k).
func newHandLoop(t *testing.T, cfg Config, ids []uint64, running func(uint64) bool) *handLoop {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &handLoop{t: t, a: a, sink: &sinkConn{sent: make(map[wire.Type]int)}}
	a.tr = &udp.Transport{Uni: h.sink, Group: netip.MustParseAddrPort("239.255.0.1:7947")}
	a.loop.timer = time.NewTimer(time.Hour)
	t.Cleanup(func() { a.loop.timer.Stop() })
	for _, id := range ids {
		name := "node-" + strconv.FormatUint(id, 10)
		a.loop.members[name] = &member{name: name, status: "alive", metaOK: true,
			meta: meta.Meta{NodeID: id, Priority: 100, Election: netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 18, 0, byte(id)}), 7947), Job: running(id)}}
		a.step(0, election.Event{Kind: election.EvMemberUp, Member: election.Key{Priority: 100, ID: id}})
	}
	return h
}

// claim steps a COORDINATOR of node id, 10 ms later.
func (h *handLoop) claim(id, term uint64) {
	h.now += 10 * time.Millisecond
	h.a.step(h.now, election.Event{Kind: election.EvMessage, Msg: wire.Message{Type: wire.TypeCoordinator, From: id, Priority: 100, Term: term}})
}

// receive hands the loop a COORDINATOR of node id as a packet, 10 ms
// later.
func (h *handLoop) receive(id, term uint64) {
	h.now += 10 * time.Millisecond
	h.a.onPacket(packet{msg: wire.Message{Type: wire.TypeCoordinator, From: id, Priority: 100, Term: term}, at: h.now})
}

// next fires the earliest armed timer, when it is due before t (any,
// for t < 0), and reports whether it did.
func (h *handLoop) next(t time.Duration) bool {
	a := h.a
	k := -1
	for i := range a.loop.armed {
		if a.loop.armed[i] && (t < 0 || a.loop.deadline[i] < t) && (k < 0 || a.loop.deadline[i] < a.loop.deadline[k]) {
			k = i
		}
	}
	if k < 0 {
		return false
	}
	a.loop.armed[k] = false
	h.now = max(h.now, a.loop.deadline[k])
	a.step(h.now, election.Event{Kind: election.EvTimer, Timer: election.TimerKind(k)})
	return true
}

// fireBefore fires the armed timers due before t, earliest first (at
// most 100).
func (h *handLoop) fireBefore(t time.Duration) {
	h.t.Helper()
	for range 100 {
		if !h.next(t) {
			return
		}
	}
	h.t.Fatalf("more than 100 timers before %v", t)
}

// fire fires the armed timers, earliest first, while cond holds (at most
// 100).
func (h *handLoop) fire(cond func(election.Status) bool) {
	h.t.Helper()
	for range 100 {
		if !cond(h.a.machine.Status()) {
			return
		}
		if !h.next(-1) {
			break
		}
	}
	h.t.Fatalf("timers ran out: status %+v", h.a.machine.Status())
}
