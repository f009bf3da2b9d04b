package agent

import (
	"strconv"
	"sync"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/proc"
)

// The agent's side of its child processes (package proc runs them): the
// supervisor, hooks and checks built from the config and wired to the
// event loop. When the job runs and what the hooks and checks mean is
// decided in lead.go and lease.go.

// procs are the agent's runners of child processes. The loop alone
// replaces the hook runner (a reload), under mu, which shutdown takes to
// end the runners while the loop still runs.
type procs struct {
	sup   *proc.Supervisor // nil without a job
	hooks *proc.HookRunner // nil without hooks
	dirty chan struct{}    // capacity 1: the job's status changed

	// systemd runs the job unit (jobunit.go), nil without one.
	systemd jobSystemd
	// ran and ended: the first start and the first end of the job in
	// job mode once (jobonce.go).
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

// hookEnv is the environment of a hook or a check.
func hookEnv(cfg *Config, state string, term, leader uint64) []string {
	return proc.Environ("LANLEADER_STATE="+state,
		"LANLEADER_TERM="+strconv.FormatUint(term, 10),
		"LANLEADER_NODE_ID="+strconv.FormatUint(cfg.NodeID, 10),
		"LANLEADER_LEADER_ID="+strconv.FormatUint(leader, 10),
		"LANLEADER_NAME="+cfg.Name)
}
