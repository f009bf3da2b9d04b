package lead

import (
	"time"

	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/election"
)

// The job's side of the policy: what the supervisor is asked, what its
// reports mean, the resign that waits for the job, and the lease of
// quorum mode.

// updateJob tells the supervisor what the job should be doing now.
func (p *Lead) updateJob() {
	if p.sup == nil {
		return
	}
	st := p.d.Status()
	// The addresses first: the job starts only once they are held.
	run := st.State == election.StateLeader && !p.d.Leaving() && !p.haltJob && !p.resigning && p.jobWait == "" && p.takeoverUntil == 0 && p.d.VIPsReady()
	if run && !p.wantRun && p.d.LinksGone() {
		return // it stepped down: the links' news updated the job
	}
	if run && (!p.wantRun || p.steppedDown) {
		p.gen++
	}
	p.wantRun = run
	p.sup.Set(proc.Want{Run: run, Gen: p.gen, Term: st.Term, Leader: st.Leader})
}

// Halt: a graceful stop; the job stops for good.
func (p *Lead) Halt() {
	p.haltJob = true
	p.updateJob()
}

// JobEvent is the supervisor's report.
func (p *Lead) JobEvent(ev proc.Event) {
	p.host.MarkDirty()
	log := p.host.Log()
	switch ev.Kind {
	case proc.Started:
		p.ran.fire()
		p.jobRunning = true
		p.d.PushMeta()
	case proc.Stopped:
		p.jobRunning = false
		if p.cfg.Quorum > 0 && p.d.VIPHeld() && !p.resigning && !p.haltJob {
			// The guard of an earlier leadership's job, whose lease ran
			// out, may have removed the addresses as it killed that
			// job; this leadership holds them (Acquire keeps those still
			// there, and announces).
			p.d.AcquireVIPs()
		}
		p.d.PushMeta()
		p.finishResign()
	case proc.Finished:
		log.Info("the job has finished: job mode once, it runs again when this node next leads", "exit_status", ev.Code)
		p.ended.fire()
	case proc.CrashLoop:
		p.penaltyUntil, p.penalised = p.host.Now()+p.cfg.JobFailureWindow, true
		log.Error("the job failed too often: priority 1 and resign, so that another node runs it",
			"for", p.cfg.JobFailureWindow, "max_failures", p.cfg.JobMaxFailures)
		p.d.ApplyPriority()
		p.Resign("the job failed too often")
		p.host.Rearm()
	}
}

// Resign starts a hand-over: the job stops first, then the virtual
// addresses go, then RESIGN, so that the next leader's job never runs
// beside ours and the next leader can take the addresses at once. It
// reports whether this node was leading.
func (p *Lead) Resign(why string) bool {
	if p.d.Status().State != election.StateLeader || p.d.Leaving() {
		return false
	}
	if !p.resigning {
		p.host.Log().Info("resigning", "why", why)
	}
	p.resigning, p.resignWhy = true, why
	p.updateJob()
	p.finishResign()
	return true
}

// finishResign sends RESIGN once the job has stopped.
func (p *Lead) finishResign() {
	if !p.resigning || p.sup != nil && !p.sup.Idle() {
		return
	}
	p.resigning = false
	if p.d.Status().State == election.StateLeader {
		p.d.ReleaseVIPs("resigning: " + p.resignWhy)
		p.d.Resign()
	}
	p.updateJob()
	// A resign for a standby: now out of the elections.
	p.d.ApplyStandby()
}

// The lease in the job's guard (quorum mode). The election machine steps
// down when its lease runs out, and the agent then stops the job; but an
// agent that is paused (SIGSTOP, a frozen VM, a long swap storm) does
// neither, while its job would run on beside the next leader's. So the
// guard, a process of its own, holds the lease too: the agent gives it the
// end of the lease on CLOCK_MONOTONIC when it starts the job and each time
// a majority renews it, and the guard SIGKILLs the job's process group
// when that time comes, whatever the agent is doing. A guard that hears
// nothing more keeps the last end it was given; an end is never moved
// back by a leader that steps down, which stops the job with SIGTERM and
// leaves the guard's deadline as the last word: the job has until the end
// of the lease, JobGrace at most.
//
// CLOCK_MONOTONIC, not Go's time: two processes must read one clock, and
// it is the one a time namespace gives both. The end is computed from the
// machine's time (the Host's clock) by reading CLOCK_MONOTONIC first, so
// that the conversion can only make the end earlier.

// toMono converts a time of the Host's clock to CLOCK_MONOTONIC.
func (p *Lead) toMono(d time.Duration) int64 {
	m := proc.MonoNow()
	return m + int64(d-p.host.Now())
}

// UpdateLease gives the job's guard the lease of this node, when it leads
// in quorum mode and the lease has moved on. It runs after the step's
// changes are handled: the lease is for the generation of the job that
// updateJob asked for, and the supervisor starts no job of a generation
// without its lease.
func (p *Lead) UpdateLease(st election.Status) {
	// Also while the job stops for a resign or a graceful stop: the node
	// still holds its lease, and the job its grace period.
	if p.sup == nil || p.cfg.Quorum == 0 || st.State != election.StateLeader || st.LeaseUntil <= 0 {
		return
	}
	end := p.toMono(st.LeaseUntil)
	if end <= p.leaseMono && p.gen == p.leaseGen {
		return
	}
	p.leaseMono, p.leaseGen = max(end, p.leaseMono), p.gen
	p.sup.SetLease(p.leaseMono, p.gen)
}
