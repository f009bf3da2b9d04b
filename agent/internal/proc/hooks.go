package proc

import (
	"log/slog"
	"sync"
	"time"
)

// Hooks (keepalived's notify scripts): shell commands run on a change of
// leadership, one at a time and in order, by one goroutine, so that an
// on_leader that adds an address and the on_follower that removes it
// never run out of order. The caller only queues them.

// Hook is one hook to run.
type Hook struct {
	Name    string // on_leader, on_follower, on_change: the log's and the metrics' label
	Command string
	Env     []string
}

// HookOutcome is how a hook ended, the metrics' label: "ok", "failed",
// "timeout", or "dropped" (never run: the queue was full).
type HookOutcome = string

// hookQueueMax bounds the queue: with hooks that hang for their whole
// timeout, changes may come faster than they run; the oldest are dropped
// (and counted) rather than the newest, which describe the present.
const hookQueueMax = 64

// HookRunner runs queued hooks in order on its own goroutine (Run).
//
// Concurrency: Add and Stop may be called from any goroutine and never
// block; hooks run one at a time on Run's goroutine, which alone calls
// the outcome callback but for a hook dropped by Add. Done's channel is
// closed by Run when it returns.
type HookRunner struct {
	timeout time.Duration
	log     *slog.Logger
	counted func(hook string, outcome HookOutcome)

	mu    sync.Mutex
	queue []Hook
	kick  chan struct{}
	quit  chan struct{}
	stop  sync.Once
	done  chan struct{}
}

// NewHookRunner returns a runner that gives each hook at most timeout.
// counted is told each hook's outcome: from Run's goroutine, or from
// Add's caller for a hook dropped from a full queue; it must not block
// nor call the runner.
func NewHookRunner(timeout time.Duration, log *slog.Logger, counted func(hook string, outcome HookOutcome)) *HookRunner {
	return &HookRunner{timeout: timeout, log: log.With("component", "hook"), counted: counted,
		kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

// Add queues a hook; it never blocks and may be called from any
// goroutine. A full queue drops its oldest hook.
func (h *HookRunner) Add(r Hook) {
	h.mu.Lock()
	if len(h.queue) >= hookQueueMax {
		dropped := h.queue[0]
		h.queue = h.queue[1:]
		h.counted(dropped.Name, "dropped")
		h.log.Warn("hook queue full: dropped the oldest", "hook", dropped.Name)
	}
	h.queue = append(h.queue, r)
	h.mu.Unlock()
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

func (h *HookRunner) next() (Hook, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.queue) == 0 {
		return Hook{}, false
	}
	r := h.queue[0]
	h.queue = h.queue[1:]
	return r, true
}

// Run runs the queued hooks until Stop; after Stop it runs what is
// queued, then returns and closes Done (a stopping agent's last
// on_follower still runs). Call it once, on a goroutine of its own.
func (h *HookRunner) Run() {
	defer close(h.done)
	for {
		h.drain()
		select {
		case <-h.kick:
		case <-h.quit:
			h.drain()
			return
		}
	}
}

func (h *HookRunner) drain() {
	for r, ok := h.next(); ok; r, ok = h.next() {
		h.runOne(r)
	}
}

// Stop asks Run to return once the queue is empty; it does not wait
// (see Done) and may be called more than once.
func (h *HookRunner) Stop() { h.stop.Do(func() { close(h.quit) }) }

// Done is closed when Run has returned.
func (h *HookRunner) Done() <-chan struct{} { return h.done }

// runOne runs one hook through the shell runner and counts its outcome.
func (h *HookRunner) runOne(r Hook) {
	res := Shell{Command: r.Command, Env: r.Env, Timeout: h.timeout, Line: func(pid int, line string) {
		h.log.Info("hook", "hook", r.Name, "pid", pid, "stream", "output", "line", line)
	}}.Run()
	if res.Pid == 0 {
		h.log.Error("hook did not start", "hook", r.Name, "err", res.Err)
		h.counted(r.Name, "failed")
		return
	}
	log := h.log.With("hook", r.Name, "pid", res.Pid)
	took := res.Took.Round(time.Millisecond)
	switch {
	case res.TimedOut:
		log.Warn("hook timed out: killed", "timeout", h.timeout)
		h.counted(r.Name, "timeout")
	case res.Err != nil:
		log.Warn("hook failed", "status", DescribeExit(res.State, res.Err), "took", took)
		h.counted(r.Name, "failed")
	default:
		log.Info("hook ran", "took", took)
		h.counted(r.Name, "ok")
	}
}
