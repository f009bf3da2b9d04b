package auth

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// Replay protection. Every packet carries its sender's incarnation (the
// Unix time in seconds of the sender's start: it grows from one start to
// the next) and a sequence number that grows by one each packet (it
// starts at the microsecond of that second × 64, so that a restart within
// the same second still continues above what the previous run sent). A
// receiver keeps, per sender node_id, the incarnation it last accepted,
// the highest sequence and a 64-packet window below it (RFC 4303's
// anti-replay window): a packet of an older incarnation, a sequence seen
// before, or one more than 64 below the highest is a replay. A packet of
// a newer incarnation (a restart) starts a new window: a restarted agent
// is never locked out. Only authenticated packets reach the guard, so
// only key holders can make it hold state.
//
// A window that has taken no packet for ReplayForget is forgotten: the
// next packet of that sender starts a new one, whatever its incarnation.
// This bounds how long an agent restarted after its wall clock was set
// back (an older incarnation) is kept out; the price is that a packet of
// a sender silent for that long can be replayed once, and old packets
// carry old terms, which the election machine does not follow.

// replayWindow is the width of the per-sender window, in packets.
const replayWindow = 64

// ReplayForget is how long a sender's window outlives its last packet.
// Every agent sends a beacon at least every 256 s on a multicast LAN at
// the default --discover-interval (agent/internal/gossip.BeaconEvery).
const ReplayForget = 10 * time.Minute

// maxSenders bounds the windows kept: more than any cluster has nodes.
const maxSenders = 4 * wire.MaxMembers

type window struct {
	inc  uint32
	top  uint32 // the highest sequence accepted
	bits uint64 // bit i: top-i was accepted
	seen time.Duration
	// notice is the newest NOTICE taken, as (incarnation, term); zero
	// before the first (CheckNotice).
	notice noticeMark
}

type noticeMark struct {
	inc  uint32
	term uint64
}

func (a noticeMark) after(b noticeMark) bool {
	return a.inc > b.inc || a.inc == b.inc && a.term > b.term
}

// ReplayGuard holds the windows of every sender. Both election sockets'
// readers use it, so it has a lock.
type ReplayGuard struct {
	mu sync.Mutex
	w  map[uint64]*window
}

// NewReplayGuard returns a guard that has seen no packet.
func NewReplayGuard() *ReplayGuard { return &ReplayGuard{w: make(map[uint64]*window)} }

// Check records (inc, seq) of sender from, seen at now, and reports
// whether the packet is fresh; a packet that is not changes nothing.
func (g *ReplayGuard) Check(from uint64, inc, seq uint32, now time.Duration) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.w[from]
	if w == nil {
		if len(g.w) >= maxSenders {
			g.evict()
		}
		g.w[from] = &window{inc: inc, top: seq, bits: 1, seen: now}
		return true
	}
	switch {
	case now-w.seen > ReplayForget:
		*w = window{inc: inc, top: seq, bits: 1, seen: now}
		return true
	case inc < w.inc:
		return false // an older run of the sender
	case inc > w.inc:
		*w = window{inc: inc, top: seq, bits: 1, seen: now}
		return true
	case seq > w.top:
		if d := seq - w.top; d >= replayWindow {
			w.bits = 1
		} else {
			w.bits = w.bits<<d | 1
		}
		w.top, w.seen = seq, now
		return true
	}
	d := w.top - seq
	if d >= replayWindow || w.bits&(1<<d) != 0 {
		return false
	}
	w.bits |= 1 << d
	w.seen = now
	return true
}

// CheckNotice is Check for a NOTICE (wire.TypeNotice), whose replay rule
// is its own: a crashed agent's guard sends it, a packet the agent built
// and signed beforehand, when its leadership began (agent/notice.go), so
// its sequence number is long behind the window by then. It is taken once
// per sender, incarnation and term, each newer than the last taken of
// that sender, and never from a run older than the sender's window: a
// replay of it is dropped. A replay would be harmless all the same: the
// machine acts on a NOTICE only when its sender is the leader it follows
// in exactly that term, which a leader dead by construction, or a later
// term, is not. Sequence windows are not touched.
func (g *ReplayGuard) CheckNotice(from uint64, inc uint32, term uint64, now time.Duration) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	mark := noticeMark{inc: inc, term: term}
	w := g.w[from]
	switch {
	case w == nil:
		if len(g.w) >= maxSenders {
			g.evict()
		}
		g.w[from] = &window{inc: inc, seen: now, notice: mark}
		return true
	case now-w.seen > ReplayForget:
		*w = window{inc: inc, seen: now, notice: mark}
		return true
	case inc < w.inc, !mark.after(w.notice):
		return false
	}
	w.notice, w.seen = mark, now
	return true
}

// evict forgets the sender heard from least recently.
func (g *ReplayGuard) evict() {
	var oldest uint64
	first := true
	for id, w := range g.w {
		if first || w.seen < g.w[oldest].seen {
			oldest, first = id, false
		}
	}
	delete(g.w, oldest)
}

// StartSeq is the first sequence number of a run started at t.
func StartSeq(t time.Time) uint32 { return uint32(t.Nanosecond()/1000) * 64 }

// Log says, at most once per LogEvery, why packets are dropped for
// authentication: enough for an operator to see a host without the key
// (or with another), never a line per packet of a flood. The zero Log is
// ready and safe for concurrent use.
type Log struct {
	last atomic.Int64 // unix nanoseconds of the last line
}

// LogEvery is the least gap between two lines a Log lets through.
const LogEvery = 10 * time.Second

// Due reports whether a line may be logged now, and if so counts it as
// logged.
func (l *Log) Due() bool {
	now := time.Now().UnixNano()
	last := l.last.Load()
	return now-last >= int64(LogEvery) && l.last.CompareAndSwap(last, now)
}
