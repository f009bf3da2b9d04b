package agent

import (
	"time"

	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/election"
)

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
// machine's time (the agent's monotonic clock) by reading CLOCK_MONOTONIC
// first, so that the conversion can only make the end earlier.

// toMono converts a time of the agent's clock to CLOCK_MONOTONIC.
func (a *Agent) toMono(d time.Duration) int64 {
	m := proc.MonoNow()
	return m + int64(d-a.now())
}

// updateLease gives the job's guard the lease of this node, when it leads
// in quorum mode and the lease has moved on. It runs after updateJob: the
// lease is for the generation of the job that updateJob asked for, and
// the supervisor starts no job of a generation without its lease.
func (a *Agent) updateLease(st election.Status) {
	l := &a.loop
	// Also while the job stops for a resign or a graceful stop: the node
	// still holds its lease, and the job its grace period.
	if a.procs.sup == nil || a.cfg.Quorum == 0 || st.State != election.StateLeader || st.LeaseUntil <= 0 {
		return
	}
	end := a.toMono(st.LeaseUntil)
	if end <= l.leaseMono && l.gen == l.leaseGen {
		return
	}
	l.leaseMono, l.leaseGen = max(end, l.leaseMono), l.gen
	a.procs.sup.SetLease(l.leaseMono, l.gen)
}
