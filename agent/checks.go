package agent

import (
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/metrics"
)

// The health checks on the event loop: their states under rise and fall,
// what a failed one costs (its weight off the priority, or a fault), and
// replacing them with a new config's (a reload) without losing the state
// of those that did not change. Package proc runs them.

// CheckStatus is one check's part of /status.
type CheckStatus struct {
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

// checkRun is one check on the loop.
type checkRun struct {
	id     uint64
	def    Check // resolved
	state  proc.CheckState
	ran    bool // a result came (until then it counts as OK)
	last   time.Time
	detail string
}

// checksState is the part of loopState the checks own.
type checksState struct {
	checks  []*checkRun
	checkID uint64 // the last ID given
}

// newCheckRun is def with the next ID, OK until its first result.
func (a *Agent) newCheckRun(def Check) *checkRun {
	a.loop.checkID++
	a.met.CheckInit(def.Name)
	return &checkRun{id: a.loop.checkID, def: def, state: proc.Init(true)}
}

// firstChecks runs the health checks once before anything opens (and
// stats the track files): the node starts with the priority and the
// standby they give it.
func (a *Agent) firstChecks() error {
	cfg := &a.cfg
	a.track.First()
	if len(cfg.Checks) == 0 {
		return nil
	}
	defs := cfg.ResolvedChecks()
	specs := make([]proc.CheckSpec, len(defs))
	for i, d := range defs {
		a.loop.checks = append(a.loop.checks, a.newCheckRun(d))
		specs[i] = checkSpec(d)
	}
	for _, r := range proc.RunAll(a.procs.checkRunner, specs) {
		a.record(a.loop.checks[r.ID], r)
	}
	if p := a.effectivePriority(); p != cfg.Priority {
		m, err := newMachine(cfg, p, a.initialTerm)
		if err != nil {
			return err
		}
		a.machine = m
	}
	return nil
}

// startChecks starts the checks' goroutines (Start, after firstChecks).
func (a *Agent) startChecks() {
	for _, c := range a.loop.checks {
		a.procs.checks.Add(c.id, checkSpec(c.def))
	}
}

// onCheck records one check's result, on the loop.
func (a *Agent) onCheck(r proc.CheckResult) {
	for _, c := range a.loop.checks {
		if c.id == r.ID {
			a.record(c, r)
			a.loop.dirty = true
			a.applyPriority()
			a.applyStandby()
			return
		}
	}
	// A check replaced since: its result is stale.
}

// record counts one result of c, and logs and counts a change.
func (a *Agent) record(c *checkRun, r proc.CheckResult) {
	result := "pass"
	if !r.OK {
		result = "fail"
		if proc.TimedOut(r.Detail) {
			result = "timeout"
		}
	}
	a.met.CheckRuns.WithLabelValues(c.def.Name, result).Inc()
	c.last, c.detail = r.At, r.Detail
	var changed bool
	if !c.ran {
		c.ran, c.state, changed = true, proc.Init(r.OK), !r.OK
	} else {
		changed = c.state.Record(r.OK, c.def.Rise, c.def.Fall)
	}
	switch {
	case !changed:
	case c.state.OK:
		a.log.Info("check passes again", "check", c.def.Name, "rise", c.def.Rise)
	default:
		a.log.Warn("check fails", "check", c.def.Name, "detail", r.Detail, "fall", c.def.Fall,
			"weight", c.def.Weight, "fault", c.def.Fault)
	}
}

// replaceChecks replaces the running checks and track files with cfg's:
// a check whose definition (resolved) is unchanged keeps running with its
// state and its rise and fall counts; a changed one (the same name) starts
// anew from its old state, OK or failed, with its counts at 0, so that a
// reload neither puts a node in fault nor takes it out before the check
// has run; a new one is OK until its first result, which decides its
// state at once. The priority and the standby follow at once. Call it on
// the event loop (a reload does).
func (a *Agent) replaceChecks(cfg *Config) {
	l := &a.loop
	old := l.checks
	defs := cfg.ResolvedChecks()
	next := make([]*checkRun, len(defs))
	for i, def := range defs {
		if j := slices.IndexFunc(old, func(c *checkRun) bool { return c.def == def }); j >= 0 {
			next[i] = old[j]
			old = slices.Delete(old, j, j+1)
		}
	}
	for i, def := range defs {
		if next[i] != nil {
			continue
		}
		c := a.newCheckRun(def)
		if j := slices.IndexFunc(old, func(o *checkRun) bool { return o.def.Name == def.Name }); j >= 0 {
			c.state, c.ran, c.last, c.detail = proc.Init(old[j].state.OK), old[j].ran, old[j].last, old[j].detail
		}
		next[i] = c
		a.procs.checks.Add(c.id, checkSpec(def))
	}
	l.checks = next
	for _, c := range old {
		a.procs.checks.Remove(c.id)
		if !slices.ContainsFunc(next, func(n *checkRun) bool { return n.def.Name == c.def.Name }) {
			a.met.CheckRuns.DeletePartialMatch(prometheus.Labels{"check": c.def.Name})
		}
	}
	a.setConfig(func(c *Config) {
		c.Checks, c.CheckInterval, c.CheckTimeout = slices.Clone(cfg.Checks), cfg.CheckInterval, cfg.CheckTimeout
		c.CheckRise, c.CheckFall, c.CheckWeight = cfg.CheckRise, cfg.CheckFall, cfg.CheckWeight
	})
	if a.track.Replace(cfg.TrackFiles) {
		a.setConfig(func(c *Config) { c.TrackFiles = slices.Clone(cfg.TrackFiles) })
	}
	l.dirty = true
	a.applyPriority()
	a.applyStandby()
}

// checkWeights is what the failed checks take off the priority.
func (a *Agent) checkWeights() int {
	w := 0
	for _, c := range a.loop.checks {
		if !c.state.OK {
			w += c.def.Weight
		}
	}
	return w
}

// checksFailing counts the failed checks.
func (a *Agent) checksFailing() int {
	n := 0
	for _, c := range a.loop.checks {
		if !c.state.OK {
			n++
		}
	}
	return n
}

// faultChecks names the failed checks of weight 0.
func (a *Agent) faultChecks() []string {
	var names []string
	for _, c := range a.loop.checks {
		if c.def.Fault && !c.state.OK {
			names = append(names, c.def.Name)
		}
	}
	return names
}

// checkStatus is the checks' part of /status and of the metrics' view.
func (a *Agent) checkStatus() ([]CheckStatus, []metrics.Check) {
	var out []CheckStatus
	var view []metrics.Check
	for _, c := range a.loop.checks {
		s := CheckStatus{Name: c.def.Name, Command: c.def.Command, State: "failed", OK: c.state.OK, Fault: c.def.Fault,
			Weight: c.def.Weight, Rise: c.def.Rise, Fall: c.def.Fall, Passes: c.state.Passes, Failures: c.state.Fails, Detail: c.detail}
		if s.OK {
			s.State = "ok"
		}
		if c.ran {
			s.Last = c.last.UTC().Format(timeFormat)
		}
		out = append(out, s)
		view = append(view, metrics.Check{Name: s.Name, Up: s.OK})
	}
	return out, view
}

// checkSpec is the part of a resolved check that package proc runs.
func checkSpec(c Check) proc.CheckSpec {
	return proc.CheckSpec{Name: c.Name, Command: c.Command, Interval: c.Interval, Timeout: c.Timeout, Rise: c.Rise, Fall: c.Fall}
}
