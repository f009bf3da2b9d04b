package agent

import (
	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/agent/internal/sdbus"
)

// The agent's side of the job (package proc runs it): the supervisor
// built from the config and wired to the event loop, the job unit's
// checks, and the public API's view of the job. When the job runs, and
// the hooks, are the policy's (agent/part/lead).

// procs are the job's supervisor and what it reports to the loop through
// (the policy's part runs the hooks).
type procs struct {
	sup   *proc.Supervisor // nil without a job
	dirty chan struct{}    // capacity 1: the job's status changed

	// systemd runs the job unit (below), nil without one.
	systemd jobSystemd
}

// JobStatus is the job's part of /status.
type JobStatus = proc.JobStatus

// timeFormat is RFC 3339 with milliseconds, as in /status.
const timeFormat = proc.TimeFormat

// Guard is the entry of the job's guard: the agent runs a job through its
// own executable, started again as the guard of the job's process group.
// A program that runs agents with a job must call Guard first thing in
// main, and a test binary whose tests do, first thing in TestMain: in a
// process started as a guard it runs the job and exits; elsewhere it
// returns at once. Without it the agent does not start the job (its
// /status says why) rather than run the program's main again.
func Guard() { proc.Guard() }

// newSupervisor is the supervisor of the configured job, reporting to
// the event loop.
func newSupervisor(a *Agent) *proc.Supervisor {
	cfg := &a.cfg
	return proc.New(proc.Config{
		Argv: cfg.Job, Grace: cfg.JobGrace, MaxFailures: cfg.JobMaxFailures, FailureWindow: cfg.JobFailureWindow,
		Quorum: cfg.Quorum > 0, NodeID: cfg.NodeID, Name: cfg.Name, Once: cfg.JobMode == config.JobModeOnce,
		Unit: cfg.JobUnit, Systemd: a.procs.systemd, EnvFile: jobEnvFile(cfg),
		Log: a.log, Running: a.met.JobRunning, Restarts: a.met.JobRestarts,
		// After the loop ended, a.call does nothing.
		Report: func(ev proc.Event) { a.call(func() { a.lead.JobEvent(ev) }) },
		// The loop republishes /status.
		Changed: func() {
			select {
			case a.procs.dirty <- struct{}{}:
			default:
			}
		},
	})
}

// The job as a systemd unit (Config.JobUnit): the supervisor starts and
// stops it through systemd (proc/unit.go), after the start's checks of
// the unit (proc.CheckUnit).

// jobSystemd is what the agent needs of systemd for a job unit.
type jobSystemd = proc.UnitSystemd

// newJobSystemd is the connection to systemd for cfg's job unit, nil
// without one.
func newJobSystemd(cfg *Config, fake jobSystemd) jobSystemd {
	switch {
	case cfg.JobUnit == "":
		return nil
	case fake != nil:
		return fake
	}
	return &sdbus.Conn{}
}

// jobEnvFile is where the job unit's environment is written.
func jobEnvFile(cfg *Config) string { return proc.EnvFile(cfg.JobEnvFile, config.DefaultJobEnvFile) }

// checkJobUnit refuses a job unit that systemd does not know or that is
// not bound to the agent's own unit, or whose environment file cannot be
// written (proc.CheckUnit).
func (a *Agent) checkJobUnit() error {
	if a.procs.systemd == nil {
		return nil
	}
	return proc.CheckUnit(a.procs.systemd, a.cfg.JobUnit, jobEnvFile(&a.cfg), a.log)
}

// Job mode once (Config.JobMode): the supervisor runs the job once per
// leadership; `lanleader run --once` waits on JobRan and JobEnded to run
// a command once and exit with its status.

// JobRan is closed when the job has first started; never without a job.
func (a *Agent) JobRan() <-chan struct{} { return a.lead.Ran() }

// JobEnded is closed when, in job mode once, the job has first finished:
// it exited on its own, with the status JobExitStatus gives.
func (a *Agent) JobEnded() <-chan struct{} { return a.lead.Ended() }

// JobExitStatus is the status of the job's last exit, as a shell gives
// it (128+N for a signal N), and false when it never exited.
func (a *Agent) JobExitStatus() (int, bool) {
	if a.procs.sup == nil {
		return 0, false
	}
	st := a.procs.sup.Status()
	if st.ExitCode == nil {
		return 0, false
	}
	return *st.ExitCode, true
}
