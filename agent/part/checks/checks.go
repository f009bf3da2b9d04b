// Package checks is the part of the agent that runs the health checks
// (keepalived's vrrp_script): their states under rise and fall, what a
// failed one costs (its weight off the priority, or a fault), and
// replacing them with a reloaded configuration's without losing the state
// of those that did not change. Package proc runs each check's process on
// a goroutine of its own; a result comes back to the loop through the
// Host, and the driver hears of each one (the priority and the standby
// follow the checks).
package checks

import (
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/agent/part"
	"github.com/lanleader/lanleader/metrics"
)

// Status is one check's part of /status.
type Status struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	State   string `json:"state"` // "ok" or "failed", by its rise and fall
	OK      bool   `json:"ok"`    // State is "ok"
	// Fault: weight 0; failed, it takes the node out of the elections.
	Fault  bool `json:"fault"`
	Weight int  `json:"weight"` // what it takes off the priority when failed (0 with Fault)
	Rise   int  `json:"rise"`
	Fall   int  `json:"fall"`
	// Passes (while failed) and Failures (while OK) are the results in a
	// row toward a change: rise passes, fall failures.
	Passes   int `json:"passes"`
	Failures int `json:"failures"`
	// Last is when it last finished, RFC 3339 with milliseconds.
	Last string `json:"last,omitempty"`
	// Detail is how its last run failed: its exit status and the last
	// line of its output, or its timeout.
	Detail string `json:"detail,omitempty"`
}

// run is one check on the loop.
type run struct {
	id     uint64
	def    config.Check // resolved
	state  proc.CheckState
	ran    bool // a result came (until then it counts as OK)
	last   time.Time
	detail string
}

// Checks is the part. Its methods run on the event loop, but Stop.
type Checks struct {
	host     part.Host
	met      *metrics.Metrics
	runner   proc.CheckRunner
	checker  *proc.Checker
	onChange func() // a check's state may have changed: the priority and the standby follow
	runs     []*run
	lastID   uint64 // the last ID given
	started  bool   // Start ran: the checks' goroutines run
}

// New is the part, running each check with runner (the shell) and
// counting its runs in met; onChange runs on the loop after each result.
func New(h part.Host, met *metrics.Metrics, runner proc.CheckRunner, onChange func()) *Checks {
	c := &Checks{host: h, met: met, runner: runner, onChange: onChange}
	c.checker = proc.NewChecker(runner, func(r proc.CheckResult) { h.Post(func() { c.report(r) }) })
	return c
}

// add is def with the next ID, OK until its first result.
func (c *Checks) add(def config.Check) *run {
	c.lastID++
	c.met.CheckInit(def.Name)
	return &run{id: c.lastID, def: def, state: proc.Init(true)}
}

// First runs every check of defs (resolved) once, before anything opens:
// the node starts with the priority and the standby they give it.
func (c *Checks) First(defs []config.Check) {
	specs := make([]proc.CheckSpec, len(defs))
	for i, d := range defs {
		c.runs = append(c.runs, c.add(d))
		specs[i] = spec(d)
	}
	for _, r := range proc.RunAll(c.runner, specs) {
		c.record(c.runs[r.ID], r)
	}
}

// Start starts the checks' goroutines, once.
func (c *Checks) Start() {
	if c.started {
		return
	}
	c.started = true
	for _, r := range c.runs {
		c.checker.Add(r.id, spec(r.def))
	}
}

// report records one check's result; a check replaced since is stale.
func (c *Checks) report(res proc.CheckResult) {
	for _, r := range c.runs {
		if r.id == res.ID {
			c.record(r, res)
			c.host.MarkDirty()
			c.onChange()
			return
		}
	}
}

// record counts one result of r, and logs and counts a change.
func (c *Checks) record(r *run, res proc.CheckResult) {
	result := "pass"
	if !res.OK {
		result = "fail"
		if proc.TimedOut(res.Detail) {
			result = "timeout"
		}
	}
	c.met.CheckRuns.WithLabelValues(r.def.Name, result).Inc()
	r.last, r.detail = res.At, res.Detail
	var changed bool
	if !r.ran {
		r.ran, r.state, changed = true, proc.Init(res.OK), !res.OK
	} else {
		changed = r.state.Record(res.OK, r.def.Rise, r.def.Fall)
	}
	switch {
	case !changed:
	case r.state.OK:
		c.host.Log().Info("check passes again", "check", r.def.Name, "rise", r.def.Rise)
	default:
		c.host.Log().Warn("check fails", "check", r.def.Name, "detail", res.Detail, "fall", r.def.Fall,
			"weight", r.def.Weight, "fault", r.def.Fault)
	}
}

// Replace runs defs (resolved) instead: a check whose definition is
// unchanged keeps running with its state and its rise and fall counts; a
// changed one (the same name) starts anew from its old state, OK or
// failed, with its counts at 0, so that a reload neither puts a node in
// fault nor takes it out before the check has run; a new one is OK until
// its first result, which decides its state at once. The caller applies
// the priority and the standby after it.
func (c *Checks) Replace(defs []config.Check) {
	old := c.runs
	next := make([]*run, len(defs))
	for i, def := range defs {
		if j := slices.IndexFunc(old, func(r *run) bool { return r.def == def }); j >= 0 {
			next[i] = old[j]
			old = slices.Delete(old, j, j+1)
		}
	}
	for i, def := range defs {
		if next[i] != nil {
			continue
		}
		r := c.add(def)
		if j := slices.IndexFunc(old, func(o *run) bool { return o.def.Name == def.Name }); j >= 0 {
			r.state, r.ran, r.last, r.detail = proc.Init(old[j].state.OK), old[j].ran, old[j].last, old[j].detail
		}
		next[i] = r
		if c.started {
			c.checker.Add(r.id, spec(def))
		}
	}
	c.runs = next
	for _, r := range old {
		c.checker.Remove(r.id)
		if !slices.ContainsFunc(next, func(n *run) bool { return n.def.Name == r.def.Name }) {
			c.met.CheckRuns.DeletePartialMatch(prometheus.Labels{"check": r.def.Name})
		}
	}
	c.host.MarkDirty()
}

// Weights is what the failed checks take off the priority.
func (c *Checks) Weights() int {
	w := 0
	for _, r := range c.runs {
		if !r.state.OK {
			w += r.def.Weight
		}
	}
	return w
}

// Failing counts the failed checks.
func (c *Checks) Failing() int {
	n := 0
	for _, r := range c.runs {
		if !r.state.OK {
			n++
		}
	}
	return n
}

// Faults names the failed checks of weight 0.
func (c *Checks) Faults() []string {
	var names []string
	for _, r := range c.runs {
		if r.def.Fault && !r.state.OK {
			names = append(names, r.def.Name)
		}
	}
	return names
}

// Status is the checks' part of /status and of the metrics' view.
func (c *Checks) Status() ([]Status, []metrics.Check) {
	var out []Status
	var view []metrics.Check
	for _, r := range c.runs {
		s := Status{Name: r.def.Name, Command: r.def.Command, State: "failed", OK: r.state.OK, Fault: r.def.Fault,
			Weight: r.def.Weight, Rise: r.def.Rise, Fall: r.def.Fall, Passes: r.state.Passes, Failures: r.state.Fails, Detail: r.detail}
		if s.OK {
			s.State = "ok"
		}
		if r.ran {
			s.Last = r.last.UTC().Format(proc.TimeFormat)
		}
		out = append(out, s)
		view = append(view, metrics.Check{Name: s.Name, Up: s.OK})
	}
	return out, view
}

// spec is the part of a resolved check that package proc runs.
func spec(c config.Check) proc.CheckSpec {
	return proc.CheckSpec{Name: c.Name, Command: c.Command, Interval: c.Interval, Timeout: c.Timeout, Rise: c.Rise, Fall: c.Fall}
}

// Stop ends every check and waits for their goroutines (a run under way,
// at most its timeout); none starts after it. Any goroutine may call it,
// and the agent's stop does while its loop still runs, so that a report
// under way reaches the loop.
func (c *Checks) Stop() { c.checker.Stop() }

// Reload runs cfg's checks instead when they changed (Replace), named
// "check" (with their interval, timeout, rise, fall and weight, which
// their resolved definitions carry). The driver applies the priority and
// the standby after it.
func (c *Checks) Reload(old, cfg *config.Config) []string {
	defs := cfg.ResolvedChecks()
	if slices.Equal(old.ResolvedChecks(), defs) {
		return nil
	}
	c.Replace(defs)
	return []string{"check"}
}

// Changed does nothing: the checks do not depend on the node's state.
func (c *Checks) Changed(*part.View) {}

// Next: the checks keep no deadline of the loop's.
func (c *Checks) Next() (time.Duration, bool) { return 0, false }

// Due is never called (Next has none).
func (c *Checks) Due(time.Duration) {}

// Close stops the checks, if the agent's stop has not.
func (c *Checks) Close() { c.checker.Stop() }

var _ part.Part = (*Checks)(nil)
