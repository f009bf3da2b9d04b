package job

import (
	"fmt"
	"time"
)

// Params is how one node's job behaves, drawn per schedule.
type Params struct {
	// Start is the time from the driver's decision to start the job to
	// the process running (the addresses taken, the guard forked).
	Start time.Duration
	// Stop is the time from SIGTERM to the process's exit when it heeds
	// SIGTERM; a job that takes longer is killed at Grace.
	Stop time.Duration
	// IgnoreTerm: the job ignores SIGTERM and dies only at the SIGKILL
	// that follows it by Grace.
	IgnoreTerm bool
	// Grace is the job grace: from SIGTERM to SIGKILL.
	Grace time.Duration
}

// StopTime is how long the job lives after SIGTERM.
func (p Params) StopTime() time.Duration {
	if p.IgnoreTerm || p.Stop > p.Grace {
		return p.Grace
	}
	return p.Stop
}

func (p Params) String() string {
	s := fmt.Sprintf("start %v, stop %v, grace %v", p.Start, p.Stop, p.Grace)
	if p.IgnoreTerm {
		s += ", ignores SIGTERM"
	}
	return s
}

// Phase is where a job is in its life.
type Phase uint8

// The phases. A job is alive (its process exists) while Running or
// Stopping.
const (
	Idle     Phase = iota // no process
	Starting              // the driver decided to start it; the process runs at Due
	Running               // the process runs
	Stopping              // SIGTERM sent (or its agent died): the process dies at Due
)

var phaseNames = [...]string{"idle", "starting", "running", "stopping"}

func (p Phase) String() string { return phaseNames[p] }

// Job is one node's job on the global clock: the supervisor and the
// guard of agent/internal/proc as a timed automaton.
type Job struct {
	P     Params
	Phase Phase
	// Due: Starting: when the process runs; Stopping: when it dies.
	Due time.Duration
	// Since: Running, Stopping: when the process started.
	Since time.Duration
	// Kill (quorum mode): the guard kills the process at this global
	// time, the end of the lease it was last given (its node's clock,
	// turned into global time); 0: no lease (default mode).
	Kill time.Duration
	// Want: what the driver last wanted.
	Want bool
	// Orphan: its agent crashed and its guard stops it.
	Orphan bool
}

// Alive reports whether the job's process exists.
func (j *Job) Alive() bool { return j.Phase == Running || j.Phase == Stopping }

// Change is what an update did to the job's process: it died, or
// started, or (Set on a job that is due to die and is wanted, with no
// start latency) both, in that order.
type Change struct{ Died, Started bool }

// Set records what the driver wants now, and starts or stops the job
// (a job that died while wanted starts again).
func (j *Job) Set(now time.Duration, want bool) Change {
	j.Want = want
	switch {
	case want && j.Phase == Idle:
		j.Phase, j.Due = Starting, now+j.P.Start
	case !want && j.Phase == Starting:
		j.Phase = Idle
	case !want && j.Phase == Running:
		j.Phase, j.Due = Stopping, now+j.P.StopTime()
	}
	return j.Advance(now)
}

// SetLease gives the guard the lease's end (quorum mode): it kills the
// process then. Renewals only extend it.
func (j *Job) SetLease(end time.Duration) { j.Kill = max(j.Kill, end) }

// Orphaned is its agent's crash: the guard sends SIGTERM at once and
// kills the process after the grace, in quorum mode at the lease's end at
// the latest (agent/internal/proc/guard.go); a start under way is
// abandoned.
func (j *Job) Orphaned(now time.Duration) Change {
	j.Want, j.Orphan = false, true
	switch j.Phase {
	case Starting:
		j.Phase = Idle
	case Running:
		j.Phase, j.Due = Stopping, now+j.P.StopTime()
	}
	return j.Advance(now)
}

// Next is the time of the job's next timed change, if any.
func (j *Job) Next() (time.Duration, bool) {
	switch j.Phase {
	case Starting:
		return j.Due, true
	case Running:
		if j.Kill > 0 {
			return j.Kill, true
		}
	case Stopping:
		if j.Kill > 0 {
			return min(j.Due, j.Kill), true
		}
		return j.Due, true
	}
	return 0, false
}

// Advance carries out what is due at now: a death (SIGTERM's end, the
// SIGKILL after the grace, the guard's kill at the lease's end), and a
// start (not in quorum mode once the lease has run out: the guard
// refuses). A job that died is not started again here: that is the
// driver's decision (Set), taken when its agent runs.
func (j *Job) Advance(now time.Duration) Change {
	var ch Change
	if j.Alive() && (j.Kill > 0 && now >= j.Kill || j.Phase == Stopping && now >= j.Due) {
		j.Phase, ch.Died = Idle, true
	}
	if j.Phase == Starting && now >= j.Due {
		if j.Kill > 0 && now >= j.Kill {
			// The guard does not start a job whose lease is over.
			j.Phase = Idle
			return ch
		}
		j.Phase, j.Since, ch.Started = Running, now, true
	}
	return ch
}
