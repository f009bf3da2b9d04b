package lead

import (
	"sync"
	"time"

	"github.com/lanleader/lanleader/agent/internal/proc"
)

// The part's runners and what the agent's public API reads of the job:
// the hook runner (on_leader, on_follower, on_change), which a reload
// may replace, and the latches of job mode once.

// hookRunner is the hook runner and its guard against a replacement
// while the agent stops.
type hookRunner struct {
	// run is the runner, nil without hooks. The loop alone replaces it
	// (a reload), under mu, which CloseHooks takes to end the
	// replacements while the loop still runs.
	run    *proc.HookRunner
	mu     sync.Mutex
	closed bool // the agent stops: no new runner starts
}

// latch is a channel closed once, by the first fire.
type latch struct {
	ch   chan struct{}
	once *sync.Once
}

func newLatch() latch { return latch{ch: make(chan struct{}), once: new(sync.Once)} }

func (s latch) fire() { s.once.Do(func() { close(s.ch) }) }

// newHookRunner is a runner of the hooks, counted through the driver.
func (p *Lead) newHookRunner() *proc.HookRunner {
	return proc.NewHookRunner(p.cfg.HookTimeout, p.host.Log(), p.d.CountHook)
}

// Start starts the hook runner's goroutine, and says how long a takeover
// without a hand-over waits: the agent starts.
func (p *Lead) Start() {
	c := &p.cfg
	if c.TakeoverWait > 0 && len(c.Job) > 0 {
		log := p.host.Log()
		log.Info("takeover wait: after a failover without a hand-over, the job starts this long after this node leads",
			"takeover_wait", c.TakeoverWait, "job_grace", c.JobGrace)
		if c.TakeoverWait < c.JobGrace {
			log.Warn("--takeover-wait is shorter than --job-grace: a crashed leader's job, which its guard stops within --job-grace, may still run when this node's starts",
				"takeover_wait", c.TakeoverWait, "job_grace", c.JobGrace)
		}
	}
	if p.hooks.run != nil {
		go p.hooks.run.Run()
	}
}

// Hook queues h, when the node has hooks.
func (p *Lead) Hook(h proc.Hook) {
	if p.hooks.run != nil {
		p.hooks.run.Add(h)
	}
}

// replaceHooks starts a hook runner when hooks came with a reload, and
// replaces the runner when its timeout changed (the old one runs what it
// has queued, then ends).
func (p *Lead) replaceHooks(timeoutChanged bool) {
	want := p.cfg.OnLeader != "" || p.cfg.OnFollower != "" || p.cfg.OnChange != ""
	old := p.hooks.run
	if old != nil && !timeoutChanged || old == nil && !want {
		return
	}
	h := p.newHookRunner()
	p.hooks.mu.Lock()
	closed := p.hooks.closed
	if !closed {
		p.hooks.run = h
	}
	p.hooks.mu.Unlock()
	if closed {
		return
	}
	if old != nil {
		old.Stop()
	}
	go h.Run()
}

// CloseHooks ends any later replacement of the hook runner: the agent
// stops. Any goroutine may call it.
func (p *Lead) CloseHooks() {
	p.hooks.mu.Lock()
	p.hooks.closed = true
	p.hooks.mu.Unlock()
}

// StopHooks ends the hook runner once the loop has ended: the hooks
// queued by the last changes (a leader's on_follower) still run, each
// within its timeout.
func (p *Lead) StopHooks() {
	h := p.hooks.run
	if h == nil {
		return
	}
	h.Stop()
	t := time.NewTimer(p.cfg.HookTimeout + time.Second)
	defer t.Stop()
	select {
	case <-h.Done():
	case <-t.C:
		p.host.Log().Warn("hooks still queued at exit are not run")
	}
}

// Ran is closed when the job has first started; never without a job.
func (p *Lead) Ran() <-chan struct{} { return p.ran.ch }

// Ended is closed when, in job mode once, the job has first finished.
func (p *Lead) Ended() <-chan struct{} { return p.ended.ch }

// BeginAwaitJoin keeps the node out of the elections until a member has
// joined, with Config.JoinBeforeLead and a Join list (run --once).
func (p *Lead) BeginAwaitJoin() {
	if !p.cfg.JoinBeforeLead || len(p.cfg.Join) == 0 {
		return
	}
	p.awaitJoin = true
	p.host.Log().Info("taking no part in elections until this node has joined a member", "join", p.cfg.Join)
	p.d.ApplyStandby()
}

// Joined: a member (name) has joined; the node takes part in the
// elections from now on.
func (p *Lead) Joined(name string) {
	if !p.awaitJoin {
		return
	}
	p.awaitJoin = false
	p.host.Log().Info("joined: taking part in elections", "member", name)
	p.d.ApplyStandby()
}

// AwaitingJoin says whether the node waits for a member to join before
// it takes part in the elections.
func (p *Lead) AwaitingJoin() bool { return p.awaitJoin }
