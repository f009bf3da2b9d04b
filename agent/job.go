package agent

import (
	"sync"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/agent/internal/sdbus"
)

// The agent's side of its child processes (package proc runs them): the
// supervisor, hooks and checks built from the config and wired to the
// event loop. When the job runs and what the hooks mean is the policy's
// (agent/part/lead).

// procs are the agent's runners of child processes. The loop alone
// replaces the hook runner (a reload), under mu, which shutdown takes to
// end the runners while the loop still runs.
type procs struct {
	sup   *proc.Supervisor // nil without a job
	hooks *proc.HookRunner // nil without hooks
	dirty chan struct{}    // capacity 1: the job's status changed

	// systemd runs the job unit (below), nil without one.
	systemd jobSystemd
	// ran and ended: the first start and the first end of the job in
	// job mode once (below).
	ran, ended latch

	mu     sync.Mutex
	closed bool // shutdown ended the runners: no new one starts
}

// swap runs f, which replaces a runner, unless the agent is shutting
// down; it reports whether f ran.
func (p *procs) swap(f func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	f()
	return true
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
		Report: func(ev proc.Event) { a.call(func() { a.onJobEvent(ev) }) },
		// The loop republishes /status.
		Changed: func() {
			select {
			case a.procs.dirty <- struct{}{}:
			default:
			}
		},
	})
}

// newHookRunner runs the hooks, counted in lanleader_hook_runs_total.
func newHookRunner(a *Agent) *proc.HookRunner {
	return proc.NewHookRunner(a.cfg.HookTimeout, a.log, func(hook, outcome string) {
		a.met.HookRuns.WithLabelValues(hook, outcome).Inc()
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

// latch is a channel closed once, by the first fire.
type latch struct {
	ch   chan struct{}
	once *sync.Once
}

func newLatch() latch { return latch{ch: make(chan struct{}), once: new(sync.Once)} }

func (s latch) fire() { s.once.Do(func() { close(s.ch) }) }

// JobRan is closed when the job has first started; never without a job.
func (a *Agent) JobRan() <-chan struct{} { return a.procs.ran.ch }

// JobEnded is closed when, in job mode once, the job has first finished:
// it exited on its own, with the status JobExitStatus gives.
func (a *Agent) JobEnded() <-chan struct{} { return a.procs.ended.ch }

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
