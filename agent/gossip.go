package agent

// memberlist, as the agent runs it: the delegate that queues membership
// events for the loop, memberlist's start, the joiner's, and the
// metadata this node gossips (agent/internal/gossip adapts memberlist,
// agent/internal/meta encodes the metadata).

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/lanleader/lanleader/agent/internal/gossip"
	"github.com/lanleader/lanleader/agent/internal/meta"
	"github.com/lanleader/lanleader/wire"
)

// memberEvent is a membership change, queued for the event loop.
type memberEvent struct {
	kind   memberEventKind
	name   string
	addr   string // memberlist address
	meta   []byte // copied: memberlist may reuse its buffer (a conflict: the other node's)
	state  memberlist.NodeStateType
	detail string // for conflicts
}

type memberEventKind uint8

const (
	memberJoin memberEventKind = iota
	memberUpdate
	memberLeave
	memberNameConflict
)

// eventQueue is an unbounded queue that memberlist's delegates push to
// without ever blocking, and the event loop drains. memberlist calls its
// delegates from its own goroutines and requires them not to block; a
// bounded channel would have to drop events, and a lost leave would leave
// a dead member in the election.
type eventQueue struct {
	mu     sync.Mutex
	q      []memberEvent
	signal chan struct{} // capacity 1: "the queue is not empty"
}

func newEventQueue() *eventQueue { return &eventQueue{signal: make(chan struct{}, 1)} }

func (e *eventQueue) push(ev memberEvent) {
	e.mu.Lock()
	e.q = append(e.q, ev)
	e.mu.Unlock()
	select {
	case e.signal <- struct{}{}:
	default:
	}
}

// drain returns the queued events in order and empties the queue.
func (e *eventQueue) drain(dst []memberEvent) []memberEvent {
	e.mu.Lock()
	dst = append(dst, e.q...)
	clear(e.q)
	e.q = e.q[:0]
	e.mu.Unlock()
	return dst
}

// delegate is memberlist's Delegate, EventDelegate and ConflictDelegate.
// memberlist calls them from its goroutines, possibly concurrently; they
// only read the atomic metadata or push to the queue, and never block.
type delegate struct {
	meta  atomic.Pointer[[]byte]
	queue *eventQueue
}

func (d *delegate) NodeMeta(limit int) []byte {
	b := *d.meta.Load()
	if len(b) > limit {
		return nil
	}
	return b
}
func (d *delegate) NotifyMsg([]byte)                           {}
func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte { return nil }
func (d *delegate) LocalState(join bool) []byte                { return nil }
func (d *delegate) MergeRemoteState(buf []byte, join bool)     {}

func (d *delegate) event(k memberEventKind, n *memberlist.Node) {
	d.queue.push(memberEvent{kind: k, name: n.Name, addr: n.Address(), meta: bytes.Clone(n.Meta), state: n.State})
}

func (d *delegate) NotifyJoin(n *memberlist.Node)   { d.event(memberJoin, n) }
func (d *delegate) NotifyLeave(n *memberlist.Node)  { d.event(memberLeave, n) }
func (d *delegate) NotifyUpdate(n *memberlist.Node) { d.event(memberUpdate, n) }

func (d *delegate) NotifyConflict(existing, other *memberlist.Node) {
	d.queue.push(memberEvent{kind: memberNameConflict, name: existing.Name, addr: existing.Address(),
		detail: other.Address(), meta: bytes.Clone(other.Meta)})
}

// oneLine is err's message on one line, for a log attribute.
func oneLine(err error) string {
	if err == nil {
		return ""
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

// memberStatus is memberlist's state of a node as shown in /status.
func memberStatus(s memberlist.NodeStateType) string {
	switch s {
	case memberlist.StateAlive:
		return "alive"
	case memberlist.StateSuspect:
		return "suspect"
	case memberlist.StateDead:
		return "dead"
	case memberlist.StateLeft:
		return "left"
	}
	return fmt.Sprintf("state(%d)", s)
}

// startMemberlist creates the memberlist on bind, announcing ip when bind
// is unspecified.
func (a *Agent) startMemberlist(bind netip.AddrPort, ip netip.Addr) (err error) {
	a.del = &delegate{queue: newEventQueue()}
	a.setMeta()
	mc, err := gossip.Config(&a.cfg, bind, a.del, a.auth.keys)
	if err != nil {
		return err
	}
	if bind.Addr().IsUnspecified() {
		mc.AdvertiseAddr = ip.String()
	}
	if a.ml, err = memberlist.Create(mc); err != nil {
		return memberlistError(bind, err)
	}
	if a.metaPush.update == nil {
		a.metaPush.update = a.ml.UpdateNode
	}
	ln := a.ml.LocalNode()
	gip, _ := netip.AddrFromSlice(ln.Addr)
	a.gossip = netip.AddrPortFrom(gip.Unmap(), ln.Port)
	return nil
}

// memberlistError names the problem of a failed memberlist start.
func memberlistError(bind netip.AddrPort, err error) error {
	s := err.Error()
	switch {
	case strings.Contains(s, "address already in use"):
		return notReady(fmt.Errorf("bind %v: gossip port already in use (another lanleader, consul or serf listens there)", bind))
	case strings.Contains(s, "cannot assign requested address"):
		return notReady(fmt.Errorf("bind %v: address not on this host", bind))
	}
	return fmt.Errorf("memberlist on %v: %s", bind, oneLine(err))
}

// startJoiner starts joining the seeds in the background.
func (a *Agent) startJoiner() {
	a.joiner = gossip.NewJoiner(a.ml, a.cfg.Join, a.log, a.beforeJoin)
	go a.joiner.Run()
}

// setMeta publishes this node's metadata for memberlist. It runs on the
// loop (or before it starts).
func (a *Agent) setMeta() {
	b := meta.Meta{Proto: wire.Version, Algorithm: a.cfg.Algorithm, NodeID: a.cfg.NodeID,
		Priority: a.machine.Status().Self.Priority, Election: a.tr.Local, Leaving: a.loop.leaving,
		Job: a.lead.JobRunning(), Role: a.cfg.ElectionRole(), JobGrace: a.cfg.JobGrace, HasGrace: true}.Append(nil)
	a.del.meta.Store(&b)
}

// pushMeta has the metadata sent to the members now rather than at the
// next push-pull; it never blocks.
func (a *Agent) pushMeta() {
	select {
	case a.metaPush.kick <- struct{}{}:
	default:
	}
}

// metaPusher broadcasts the metadata after each pushMeta, one broadcast
// at a time. memberlist's UpdateNode reads the metadata and then takes a
// new incarnation: two calls at once could give the older metadata the
// higher incarnation, and a stale "job running" would win everywhere. So
// the calls are serial, and each waits for its broadcast only
// metaPushWait (the alive message is queued for gossip either way, and a
// newer one replaces it in the queue): a change (a job that stopped) goes
// out at most metaPushWait after the one before it. A kick during a call
// is kept (the channel holds one), so the last change is always sent.
// Stop's own call (the leave) takes the same lock.
//
// Each change is broadcast again metaRepeats after it, with a new
// incarnation. memberlist's broadcast queue (v0.7.0) can drop a queued
// message: when a message replaces the only one in the queue, the queue
// restarts its ids while the new message keeps its own, and a later
// message of the same length that draws the same id takes its place
// (hashicorp/memberlist pull request 263, not merged). Alive messages of
// two members with names of one length are of one length, so the loss is
// real: a new leader waited 5 s for a "job stopped" that never came, in
// 6 of 34 runs of the job hand-over test. A repeat is a new message, lost
// only if it too draws a clashing id; a takeover does not rely on either
// (agent/part/lead syncs with the member it waits for).
func (a *Agent) metaPusher() {
	repeat := time.NewTimer(time.Hour)
	repeat.Stop()
	defer repeat.Stop()
	var changed time.Time // when the change being repeated was first pushed
	left := 0             // repeats of it still due
	for {
		select {
		case <-a.quit:
			return
		case <-a.metaPush.kick:
			changed, left = time.Now(), len(a.metaPush.repeats)
		case <-repeat.C:
			left--
		}
		a.metaPush.mu.Lock()
		a.metaPush.update(metaPushWait)
		a.metaPush.mu.Unlock()
		if left > 0 {
			repeat.Reset(time.Until(changed.Add(a.metaPush.repeats[len(a.metaPush.repeats)-left])))
		}
	}
}

// metaPush is the state of the metadata broadcasts (see metaPusher).
type metaPush struct {
	kick chan struct{} // capacity 1: push the metadata to the members
	mu   sync.Mutex    // serialises memberlist's UpdateNode (metaPusher, Stop)
	// repeats and update are metaPusher's schedule and call (metaRepeats
	// and ml.UpdateNode; tests replace them).
	repeats []time.Duration
	update  func(timeout time.Duration) error
}

// syncReq asks syncer for a state exchange with a member.
type syncReq struct{ name, addr string }

// syncer exchanges the membership state with a member when the loop asks
// (a takeover waiting for the previous leader's job:
// agent/part/lead) and then tells the loop. memberlist's Join with a
// member's address is that exchange: both sides merge the other's view,
// the member's own entry included, and a newer entry comes to the loop as
// a membership update, queued before Join returns. A failed exchange is
// not reported: what the loop knows then is only what gossip brought.
func (a *Agent) syncer() {
	for {
		var r syncReq
		select {
		case <-a.quit:
			return
		case r = <-a.syncKick:
		}
		if _, err := a.ml.Join([]string{r.addr}); err != nil {
			a.log.Debug("state exchange failed", "name", r.name, "addr", r.addr, "err", oneLine(err))
			continue
		}
		a.call(func() { a.onSynced(r.name) })
	}
}

// metaPushWait bounds the wait for a metadata broadcast to go out.
const metaPushWait = 50 * time.Millisecond

// metaRepeats are the delays, from a metadata change, of its repeated
// broadcasts (see metaPusher): the first is about two of memberlist's
// gossip rounds (200 ms on a LAN), by when the first broadcast has gone
// out or been lost; the second is for a loss of the first repeat.
var metaRepeats = []time.Duration{500 * time.Millisecond, 2 * time.Second}
