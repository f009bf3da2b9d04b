package agent

import (
	"sync"
	"time"

	"github.com/lanleader/lanleader/agent/internal/meta"
	"github.com/lanleader/lanleader/wire"
)

// setMeta publishes this node's metadata for memberlist. It runs on the
// loop (or before it starts).
func (a *Agent) setMeta() {
	b := meta.Meta{Proto: wire.Version, Algorithm: a.cfg.Algorithm, NodeID: a.cfg.NodeID,
		Priority: a.machine.Status().Self.Priority, Election: a.tr.Local, Leaving: a.loop.leaving,
		Job: a.loop.jobRunning, Role: a.cfg.ElectionRole(), JobGrace: a.cfg.JobGrace, HasGrace: true}.Append(nil)
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
// (see jobWaitSyncEvery).
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
// (a takeover waiting for the previous leader's job: see
// jobWaitSyncEvery) and then tells the loop. memberlist's Join with a
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
