package agent

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/lanleader/lanleader/metrics"
)

// Hooks (keepalived's notify scripts): shell commands run on a change of
// leadership, one at a time and in order, by one goroutine, so that an
// on_leader that adds an address and the on_follower that removes it
// never run out of order. The event loop only queues them.

// hookRun is one hook to run.
type hookRun struct {
	name    string // metrics.Hooks: on_leader, on_follower, on_change
	command string
	env     []string
}

// hookQueueMax bounds the queue: with hooks that hang for their whole
// timeout, changes may come faster than they run; the oldest are dropped
// (and counted) rather than the newest, which describe the present.
const hookQueueMax = 64

type hookRunner struct {
	timeout time.Duration
	log     *slog.Logger
	met     *metrics.Metrics

	mu    sync.Mutex
	queue []hookRun
	kick  chan struct{}
	quit  chan struct{}
	done  chan struct{}
}

func newHookRunner(timeout time.Duration, log *slog.Logger, met *metrics.Metrics) *hookRunner {
	return &hookRunner{timeout: timeout, log: log.With("component", "hook"), met: met,
		kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

// add queues a hook; it never blocks.
func (h *hookRunner) add(r hookRun) {
	h.mu.Lock()
	if len(h.queue) >= hookQueueMax {
		dropped := h.queue[0]
		h.queue = h.queue[1:]
		h.met.HookRuns.WithLabelValues(dropped.name, "dropped").Inc()
		h.log.Warn("hook queue full: dropped the oldest", "hook", dropped.name)
	}
	h.queue = append(h.queue, r)
	h.mu.Unlock()
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

func (h *hookRunner) next() (hookRun, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.queue) == 0 {
		return hookRun{}, false
	}
	r := h.queue[0]
	h.queue = h.queue[1:]
	return r, true
}

// run runs the queued hooks until quit; after quit it runs what is
// queued, then returns (a stopping agent's last on_follower still runs).
func (h *hookRunner) run() {
	defer close(h.done)
	for {
		for {
			r, ok := h.next()
			if !ok {
				break
			}
			h.runOne(r)
		}
		select {
		case <-h.kick:
		case <-h.quit:
			for {
				r, ok := h.next()
				if !ok {
					return
				}
				h.runOne(r)
			}
		}
	}
}

// runOne runs one hook with sh -c in its own process group, bounded by
// the timeout, and counts its outcome.
func (h *hookRunner) runOne(r hookRun) {
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", r.command)
	cmd.Env = r.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// On timeout the whole group is killed, not only the shell.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	outR, outW, err := os.Pipe()
	if err != nil {
		h.log.Error("hook", "hook", r.name, "err", err)
		h.met.HookRuns.WithLabelValues(r.name, "failed").Inc()
		return
	}
	cmd.Stdout, cmd.Stderr = outW, outW
	start := time.Now()
	err = cmd.Start()
	outW.Close()
	if err != nil {
		outR.Close()
		h.log.Error("hook did not start", "hook", r.name, "err", err)
		h.met.HookRuns.WithLabelValues(r.name, "failed").Inc()
		return
	}
	log := h.log.With("hook", r.name, "pid", cmd.Process.Pid)
	var out sync.WaitGroup
	out.Add(1)
	go func() { defer out.Done(); logLines(log, "hook", "output", outR) }()
	err = cmd.Wait()
	// Whatever the hook left in its group goes with it.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	waitOutput(&out, outR)
	took := time.Since(start).Round(time.Millisecond)
	switch {
	case ctx.Err() != nil:
		log.Warn("hook timed out: killed", "timeout", h.timeout)
		h.met.HookRuns.WithLabelValues(r.name, "timeout").Inc()
	case err != nil:
		log.Warn("hook failed", "status", describeExit(cmd.ProcessState, err), "took", took)
		h.met.HookRuns.WithLabelValues(r.name, "failed").Inc()
	default:
		log.Info("hook ran", "took", took)
		h.met.HookRuns.WithLabelValues(r.name, "ok").Inc()
	}
}

// hookEnv is the environment of a hook or the job.
func hookEnv(cfg *Config, state string, term, leader uint64) []string {
	return environ("LANLEADER_STATE="+state,
		"LANLEADER_TERM="+strconv.FormatUint(term, 10),
		"LANLEADER_NODE_ID="+strconv.FormatUint(cfg.NodeID, 10),
		"LANLEADER_LEADER_ID="+strconv.FormatUint(leader, 10),
		"LANLEADER_NAME="+cfg.Name)
}

// waitOutput waits for the goroutines that log a process's output, at
// most outputDrain: a process that left its group (setsid) may hold the
// pipe open for ever; then the reading end is closed under them.
func waitOutput(wg *sync.WaitGroup, readers ...*os.File) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(outputDrain)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		for _, r := range readers {
			r.Close()
		}
		<-done
	}
}

// outputDrain bounds the wait for the rest of a finished process's output.
const outputDrain = time.Second
