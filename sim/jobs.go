package sim

import (
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/sim/job"
)

// This file is the driver's side of the job in the simulator
// (Config.Jobs): the policy of sim/job fed with what each machine
// reports, each job's timed changes as events, the delayed view of the
// others' jobs that a takeover waits on, and the links that go down.

// waitPoll is how often a takeover looks again at its view of the
// previous leader's job.
const waitPoll = 50 * time.Millisecond

// afterJobStep runs the driver's policy after a step of node n.
func (s *Sim) afterJobStep(n *node, ev election.Event, before, after election.Status, acts []election.Action) {
	wait := n.drv.Wait
	n.drv.AfterStep(s.now, before, after, acts)
	if x := job.Claimant(ev, n.key.ID); x != 0 && n.drv.HeardClaim(s.now, x) && n.drv.Wait == wait {
		s.tracef("n%d waits for n%d's job until %v: it claimed again", n.key.ID, x, n.drv.WaitUntil)
	}
	if after.State == election.StateLeader && before.State != election.StateLeader {
		n.job.term = after.Term
		if n.drv.From != 0 {
			s.tracef("n%d takes over from live leader n%d", n.key.ID, n.drv.From)
		}
	}
	if n.drv.Wait != 0 && n.drv.Wait != wait {
		s.tracef("n%d waits for n%d's job to stop", n.key.ID, n.drv.Wait)
		gen, i := n.gen, n.idx
		s.At(n.drv.WaitSince+s.cfg.JobSyncDelay, func() { s.pollWait(i, gen) })
	}
	s.updateJob(n)
}

// updateJob tells node n's job what the driver wants now, and gives its
// guard the lease.
func (s *Sim) updateJob(n *node) {
	if n.linkDown != n.drv.Standby {
		// The driver reads the link before it starts anything (a notice
		// of its change may still be queued behind this step): it takes
		// the node out of the elections first, which comes back here.
		s.step(n, election.Event{Kind: election.EvStandby, On: n.linkDown})
		return
	}
	sj := n.job
	if s.cfg.Timing.Quorum > 0 {
		if st := n.m.Status(); st.State == election.StateLeader && st.LeaseUntil > 0 {
			sj.j.SetLease(n.global(st.LeaseUntil))
		}
	}
	s.jobChanged(sj, sj.j.Set(s.now, n.drv.Run()))
}

// jobChanged records what happened to job sj's process, and schedules
// its next timed change.
func (s *Sim) jobChanged(sj *simJob, ch job.Change) {
	n := s.nodes[sj.node]
	if ch.Died && sj.life >= 0 {
		s.tracef("n%d job dies", n.key.ID)
		s.Check.jobDied(sj.life)
		sj.life = -1
		if p := sj.notice; p != nil && !sj.j.Alive() {
			sj.notice = nil
			s.sendNotice(p)
		}
		if n.job == sj && !n.paused && !ch.Started {
			// The driver starts it again if it is still wanted (a
			// paused agent does so at its next step).
			s.updateJob(n)
			return
		}
	}
	if ch.Started {
		s.tracef("n%d job starts (term %d)", n.key.ID, sj.term)
		sj.life = s.Check.jobStarted(n, sj.term)
	}
	sj.seq++
	if t, ok := sj.j.Next(); ok {
		s.push(&event{at: max(t, s.now), kind: evJob, node: sj.node, jb: sj, timerGen: sj.seq})
	}
	if n.job == sj && n.drv.Resigning && sj.j.Phase == job.Idle && !n.paused {
		n.drv.Resigning = false
		s.tracef("n%d's job has stopped: it resigns", n.key.ID)
		s.step(n, election.Event{Kind: election.EvResign})
	}
}

// pollWait: node i's takeover looks at its view of the previous
// leader's job: that member's metadata as of its first state exchange
// with it, or as gossip has brought it since (JobMetaDelay late).
func (s *Sim) pollWait(i int, gen uint64) {
	n := s.nodes[i]
	if !n.up || n.gen != gen || n.drv.Wait == 0 {
		return
	}
	if n.paused {
		s.At(s.now+waitPoll, func() { s.pollWait(i, gen) })
		return
	}
	seen := max(n.drv.WaitSince+s.cfg.JobSyncDelay, s.now-s.cfg.JobMetaDelay)
	n.drv.Resolve(s.now, !s.Check.Jobs.AliveAt(n.drv.Wait, seen))
	if n.drv.Wait == 0 {
		s.tracef("n%d's wait for the previous leader's job is over", n.key.ID)
		s.updateJob(n)
		return
	}
	s.At(min(s.now+waitPoll, n.drv.WaitUntil), func() { s.pollWait(i, gen) })
}

// LinkDown takes node i's link down: it sends and receives nothing, and
// its driver takes it out of the elections (EvStandby); a leader stops
// its job at once. LinkUp undoes it.
func (s *Sim) LinkDown(i int) { s.setLink(i, true) }

// LinkUp brings node i's link back.
func (s *Sim) LinkUp(i int) { s.setLink(i, false) }

func (s *Sim) setLink(i int, down bool) {
	n := s.nodes[i]
	if n.linkDown == down {
		return
	}
	n.linkDown = down
	s.version++
	if down {
		s.tracef("n%d link down", n.key.ID)
	} else {
		s.tracef("n%d link up", n.key.ID)
	}
	s.inject(i, election.Event{Kind: election.EvStandby, On: down})
	if down && n.up && !n.paused && n.job != nil {
		if v := job.CheckLinkDown(n.key.ID, &n.job.j); v != "" {
			s.Check.violate("%s", v)
		}
	}
}

// LinkIsDown reports whether node i's link is down.
func (s *Sim) LinkIsDown(i int) bool { return s.nodes[i].linkDown }
