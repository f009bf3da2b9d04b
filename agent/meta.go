package agent

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"sync"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

// Node metadata, carried by memberlist for every member (at most 512
// bytes; this is at most 38). Big-endian:
//
//	offset size field
//	     0    1 meta version (1)
//	     1    1 election protocol version (wire.Version)
//	     2    1 algorithm (see algorithms)
//	     3    8 node_id
//	    11    2 priority
//	    13    1 election address length: 4 or 16
//	    14  4|16 election address
//	     -    2 election port
//	     -    1 flags (optional; bit 0: leaving, set just before a graceful leave;
//	                   bit 1: the job runs on this node)
//	     -    1 role (optional; election.Role: 0 candidate, 1 witness,
//	                  2 observer; absent: candidate)
//	     -    4 job grace in milliseconds, rounded up (optional; absent:
//	                  an older agent, taken to have the reader's own)
//
// Fields are only ever appended; a reader ignores bytes past those it
// knows, so a newer agent's metadata still reads.
const metaVersion = 1

// Algorithm numbers in the metadata. Append-only.
var algorithms = []string{0: "", 1: "bully", 2: "ring", 3: "chang-roberts", 4: "hirschberg-sinclair"}

// meta is the decoded metadata of one member.
type meta struct {
	Proto     uint8
	Algorithm string
	NodeID    uint64
	Priority  uint16
	Election  netip.AddrPort
	// Leaving is set by a node that is about to leave gracefully, so that
	// the others can tell its departure from a failure: memberlist's leave
	// event does not say which it was.
	Leaving bool
	// Job is set while this node's job runs (from its start until its
	// process group is gone), so that a node taking the leadership over
	// from a live leader starts its job only once the old one is stopped.
	Job bool
	// Role is what the member may do in the elections. An older agent
	// sends none: it is a candidate.
	Role election.Role
	// JobGrace is the member's --job-grace, when HasGrace (an older
	// agent sends none): how long its job may take to stop, which a node
	// taking the leadership over from it waits out (lead.go graceOf).
	JobGrace time.Duration
	HasGrace bool
}

const (
	metaLeaving = 1 << 0
	metaJob     = 1 << 1
)

var errMeta = errors.New("agent: bad node metadata")

func (m meta) append(b []byte) []byte {
	alg := byte(0)
	for i, a := range algorithms {
		if a == m.Algorithm && a != "" {
			alg = byte(i)
		}
	}
	b = append(b, metaVersion, m.Proto, alg)
	b = binary.BigEndian.AppendUint64(b, m.NodeID)
	b = binary.BigEndian.AppendUint16(b, m.Priority)
	a := m.Election.Addr().Unmap()
	if a.Is4() {
		b = append(b, 4)
	} else {
		b = append(b, 16)
	}
	b = append(b, a.AsSlice()...)
	b = binary.BigEndian.AppendUint16(b, m.Election.Port())
	flags := byte(0)
	if m.Leaving {
		flags |= metaLeaving
	}
	if m.Job {
		flags |= metaJob
	}
	b = append(b, flags, byte(m.Role))
	if !m.HasGrace {
		return b
	}
	ms := min((m.JobGrace+time.Millisecond-1)/time.Millisecond, math.MaxUint32)
	return binary.BigEndian.AppendUint32(b, uint32(max(ms, 0)))
}

func decodeMeta(b []byte) (meta, error) {
	var m meta
	if len(b) < 14 {
		return m, fmt.Errorf("%w: %d bytes", errMeta, len(b))
	}
	if b[0] != metaVersion {
		return m, fmt.Errorf("%w: version %d", errMeta, b[0])
	}
	m.Proto = b[1]
	if int(b[2]) < len(algorithms) {
		m.Algorithm = algorithms[b[2]]
	} else {
		m.Algorithm = fmt.Sprintf("algorithm(%d)", b[2])
	}
	m.NodeID = binary.BigEndian.Uint64(b[3:])
	m.Priority = binary.BigEndian.Uint16(b[11:])
	n := int(b[13])
	if n != 4 && n != 16 {
		return m, fmt.Errorf("%w: address length %d", errMeta, n)
	}
	if len(b) < 14+n+2 {
		return m, fmt.Errorf("%w: %d bytes", errMeta, len(b))
	}
	a, _ := netip.AddrFromSlice(b[14 : 14+n])
	m.Election = netip.AddrPortFrom(a.Unmap(), binary.BigEndian.Uint16(b[14+n:]))
	if len(b) > 14+n+2 {
		m.Leaving = b[14+n+2]&metaLeaving != 0
		m.Job = b[14+n+2]&metaJob != 0
	}
	if len(b) > 14+n+3 {
		m.Role = election.Role(b[14+n+3])
	}
	if len(b) >= 14+n+4+4 {
		m.JobGrace, m.HasGrace = time.Duration(binary.BigEndian.Uint32(b[14+n+4:]))*time.Millisecond, true
	}
	if m.NodeID == 0 {
		return m, fmt.Errorf("%w: node_id 0", errMeta)
	}
	if m.Proto != wire.Version {
		return m, fmt.Errorf("%w: election protocol version %d, this agent speaks %d", errMeta, m.Proto, wire.Version)
	}
	return m, nil
}

// setMeta publishes this node's metadata for memberlist. It runs on the
// loop (or before it starts).
func (a *Agent) setMeta() {
	b := meta{Proto: wire.Version, Algorithm: a.cfg.Algorithm, NodeID: a.cfg.NodeID,
		Priority: a.machine.Status().Self.Priority, Election: a.tr.Local, Leaving: a.loop.leaving,
		Job: a.loop.jobRunning, Role: a.cfg.ElectionRole(), JobGrace: a.cfg.JobGrace, HasGrace: true}.append(nil)
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
