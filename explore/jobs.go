package explore

import (
	"fmt"
	"slices"
	"time"

	"github.com/lanleader/lanleader/sim/job"
)

// The nodes' jobs and what the invariants check of them.

// setJob tells node i's job what its driver wants now. The driver reads
// the link before it starts anything, as the simulator's does: a change
// it has not acted on (it was paused) takes the node out of the
// elections first, which comes back here.
func (e *explorer) setJob(s *state, i int) {
	n := &s.nodes[i]
	if n.linkDown && !n.drv.Standby && !e.shape.UnsafeLinkIgnored {
		e.standby(s, i)
		return
	}
	since, running := n.job.Since, n.job.Phase == job.Running
	e.jobChanged(s, i, since, n.job.Set(s.now, n.drv.Run()))
	if running && n.job.Phase == job.Stopping {
		e.sigterm(s, i, -1)
	}
}

// sigterm: node i's job (orphan -1) or its orphan has just been sent
// SIGTERM: its stop latency is the next choice, when the shape lists
// some.
func (e *explorer) sigterm(s *state, i, orphan int) {
	if len(e.shape.Stops) > 0 {
		s.decide = append(s.decide, stop{i, orphan})
	}
}

// decideStop gives the first job of s.decide stop latency d.
func (e *explorer) decideStop(s *state, d time.Duration) {
	r := s.decide[0]
	s.decide = slices.Delete(slices.Clone(s.decide), 0, 1)
	j := &s.nodes[r.node].job
	if r.orphan >= 0 {
		j = &s.nodes[r.node].orphans[r.orphan]
	}
	id := e.shape.Nodes[r.node].ID
	if d >= j.P.Grace {
		j.Due = s.now + j.P.Grace
		e.linef("n%d's job ignores SIGTERM: SIGKILL at %v", id, j.Due)
	} else {
		j.Due = s.now + d
		e.linef("n%d's job stops in %v", id, d)
	}
}

// waitAt is when node n's takeover next looks at the previous leader's
// job: its first state exchange with that leader (JobSyncDelay after the
// wait began), or when gossip says that job has stopped (JobMetaDelay
// after its death), or the wait's end, whichever is later than the
// exchange and comes first.
func (e *explorer) waitAt(s *state, n *nodeState) time.Duration {
	d := &n.drv
	first := d.WaitSince + e.sync
	known := d.WaitUntil
	open, last := false, time.Duration(-1)
	for _, l := range s.lives.All {
		if l.ID == d.Wait {
			if l.Open {
				open = true
			} else {
				last = max(last, l.End)
			}
		}
	}
	if !open {
		if last >= 0 {
			known = min(known, last+e.meta)
		} else {
			known = min(known, first)
		}
	}
	return max(first, known)
}

// resolve: node i's takeover looks at its view of the previous leader's
// job (as of its first state exchange, or as gossip has brought it since,
// as the simulator's pollWait does), and starts its own job once that
// one has stopped.
func (e *explorer) resolve(s *state, i int) {
	n := &s.nodes[i]
	seen := max(n.drv.WaitSince+e.sync, s.now-e.meta)
	n.drv.Resolve(s.now, !s.lives.AliveAt(n.drv.Wait, seen))
	id := e.shape.Nodes[i].ID
	if n.drv.Wait != 0 {
		if e.waitAt(s, n) <= s.now {
			panic(fmt.Sprintf("explore: n%d's wait for n%d neither ends nor has a later look", id, n.drv.Wait))
		}
		return
	}
	e.linef("%v n%d's wait for the previous leader's job is over", s.now, id)
	e.setJob(s, i)
}

// jobChanged records a job's start or death and checks the
// invariants: at a start the link's and the takeover's (sim/job's
// CheckStart), in quorum mode no two jobs alive at once.
func (e *explorer) jobChanged(s *state, i int, since time.Duration, ch job.Change) {
	id := e.shape.Nodes[i].ID
	if ch.Died {
		for k, l := range s.lives.All {
			if l.Node == i && l.Start == since && l.Open {
				e.linef("%v n%d job dies", s.now, id)
				for _, o := range s.lives.End(k, s.now) {
					e.overlap(s, o)
				}
				break
			}
		}
	}
	if ch.Started {
		n := &s.nodes[i]
		for _, v := range s.lives.CheckStart(cluster{s}, i, id, &n.drv, e.quorum) {
			e.violate(s, v)
		}
		e.checkNoticed(s, i)
		st := n.m.Status()
		e.linef("%v n%d job starts (term %d)", s.now, id, st.Term)
		s.lives.Start(i, id, st.Term, s.now)
	}
}

func (e *explorer) overlap(s *state, o job.Overlap) {
	if e.quorum {
		e.violate(s, "invariant 6: jobs overlap: "+o.String())
	}
}

func (e *explorer) violate(s *state, v string) {
	if s.bad == "" {
		s.bad = v
		e.linef("VIOLATION %s", v)
	}
}
