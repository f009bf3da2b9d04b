package explore

import (
	"cmp"
	"slices"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/sim/job"
	"github.com/lanleader/lanleader/wire"
)

// The choices at each state: which event comes next (a timer, a message,
// a fault, a job's change), each a branch of the search.

// item is something due.
type item struct {
	at   time.Duration
	seq  uint64
	kind uint8
	node int
	k    int
}

// agenda lists what is due, earliest first. A paused node's timers,
// takeover and job start wait for it to wake.
func (e *explorer) agenda(s *state) []item {
	var out []item
	for k, m := range s.msgs {
		out = append(out, item{at: m.due, seq: m.seq, kind: itPacket, k: k})
	}
	for i := range s.nodes {
		n := &s.nodes[i]
		if n.m != nil && !n.paused {
			for t, tm := range n.timers {
				if tm.armed {
					out = append(out, item{at: tm.at, seq: n.tseq[t], kind: itTimer, node: i, k: t})
				}
			}
			if n.drv.Wait != 0 {
				out = append(out, item{at: max(e.waitAt(s, n), s.now), kind: itWait, node: i})
			}
			if n.listen > 0 {
				out = append(out, item{at: max(n.listen, s.now), kind: itListen, node: i})
			}
		}
		if n.m != nil && n.paused {
			out = append(out, item{at: max(n.wake, s.now), kind: itWake, node: i})
		}
		if n.linkDown {
			out = append(out, item{at: max(n.linkUp, s.now), kind: itLinkUp, node: i})
		}
		if at, ok := n.job.Next(); ok && !(n.paused && n.job.Phase == job.Starting) {
			out = append(out, item{at: max(at, s.now), kind: itJob, node: i, k: 0})
		}
		for k := range n.orphans {
			if at, ok := n.orphans[k].Next(); ok {
				out = append(out, item{at: max(at, s.now), kind: itJob, node: i, k: k + 1})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b item) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		if a.kind != b.kind {
			return rank[a.kind] - rank[b.kind]
		}
		return cmp.Compare(a.seq, b.seq)
	})
	return out
}

// choices lists the successors of s: the default first (the earliest
// item), then every change that the bounds left allow. A stop latency
// still to be chosen is chosen first, before anything else happens.
func (e *explorer) choices(s *state) []func(*state) {
	var out []func(*state)
	if len(s.decide) > 0 {
		for _, d := range e.shape.Stops {
			out = append(out, func(n *state) { e.decideStop(n, d) })
		}
		return out
	}
	ag := e.agenda(s)
	if len(ag) > 0 {
		first := ag[0]
		out = append(out, func(n *state) { e.do(n, first) })
		// Another item due at the same instant first (a timer, or a
		// packet, at once).
		if s.left.Reorder > 0 {
			for _, it := range ag[1:] {
				if it.kind == itPacket || it.at == first.at {
					out = append(out, func(n *state) {
						n.left.Reorder--
						if it.kind == itPacket {
							it.at = n.now
						}
						e.do(n, it)
					})
				}
			}
		}
	}
	for k, m := range s.msgs {
		if s.left.Delay > 0 && m.due < m.sent+e.b.MaxDelay {
			out = append(out, func(n *state) {
				n.left.Delay--
				n.msgs[k].due = n.msgs[k].sent + e.b.MaxDelay
				e.linef("%v held until %v", e.describe(&n.msgs[k]), n.msgs[k].due)
			})
		}
		if s.left.NoticeDup > 0 && m.m.Type == wire.TypeNotice && m.due < m.sent+e.b.NoticeLate {
			out = append(out, func(n *state) { e.dupNotice(n, k) })
		}
		if s.left.Loss > 0 {
			out = append(out, func(n *state) {
				n.left.Loss--
				e.linef("%v lost", e.describe(&n.msgs[k]))
				n.msgs = slices.Delete(n.msgs, k, k+1)
			})
		}
	}
	// Faults happen between instants: only where the default item is
	// later than now, so that each fault is tried once at each instant
	// rather than between every two events of it.
	if len(ag) == 0 || ag[0].at > s.now {
		for i := range s.nodes {
			n := &s.nodes[i]
			if n.m != nil && s.left.Crash > 0 && (!e.b.CrashLeader || n.m.Status().State == election.StateLeader) {
				out = append(out, func(n *state) { n.left.Crash--; e.crash(n, i, false) })
			}
			if n.m != nil && s.left.Crash > 0 && s.left.Notice > 0 && n.m.Status().State == election.StateLeader {
				out = append(out, func(n *state) { n.left.Crash--; n.left.Notice--; e.crash(n, i, true) })
			}
			if n.m == nil && s.left.Restart > 0 {
				out = append(out, func(n *state) { n.left.Restart--; e.boot(n, i) })
			}
			if n.m != nil && !n.linkDown && s.left.LinkDown > 0 {
				for _, d := range e.b.LinkFor {
					out = append(out, func(n *state) { n.left.LinkDown--; e.setLink(n, i, true, d) })
				}
			}
			if n.m != nil && !n.paused && s.left.Pause > 0 {
				for _, d := range e.b.PauseFor {
					out = append(out, func(n *state) { n.left.Pause--; e.pause(n, i, d) })
				}
			}
		}
	}
	return out
}
