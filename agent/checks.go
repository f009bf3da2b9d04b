package agent

import (
	"slices"

	"github.com/lanleader/lanleader/agent/part/checks"
)

// The health checks are a part (agent/part/checks); here is what the
// driver does with them: the first results before anything opens (the
// machine starts with the priority they give), a reload's replacement,
// and the priority and the standby after each result.

// CheckStatus is one check's part of /status.
type CheckStatus = checks.Status

// firstChecks runs the health checks once before anything opens (and
// stats the track files): the node starts with the priority and the
// standby they give it.
func (a *Agent) firstChecks() error {
	cfg := &a.cfg
	a.track.First()
	if len(cfg.Checks) == 0 {
		return nil
	}
	a.checks.First(cfg.ResolvedChecks())
	if p := a.effectivePriority(); p != cfg.Priority {
		m, err := newMachine(cfg, p, a.initialTerm)
		if err != nil {
			return err
		}
		a.machine = m
	}
	return nil
}

// onChecks: a check's result came; the priority and the standby follow.
func (a *Agent) onChecks() {
	a.applyPriority()
	a.applyStandby()
}

// replaceChecks replaces the running checks and track files with cfg's
// (checks.Checks.Replace keeps the state of those that did not change);
// the priority and the standby follow at once. On the loop (a reload).
func (a *Agent) replaceChecks(cfg *Config) {
	a.checks.Replace(cfg.ResolvedChecks())
	a.setConfig(func(c *Config) {
		c.Checks, c.CheckInterval, c.CheckTimeout = slices.Clone(cfg.Checks), cfg.CheckInterval, cfg.CheckTimeout
		c.CheckRise, c.CheckFall, c.CheckWeight = cfg.CheckRise, cfg.CheckFall, cfg.CheckWeight
	})
	if a.track.Replace(cfg.TrackFiles) {
		a.setConfig(func(c *Config) { c.TrackFiles = slices.Clone(cfg.TrackFiles) })
	}
	a.loop.dirty = true
	a.onChecks()
}

// closeChecks stops the checks for good, and any later swap of a runner
// (shutdown), while the loop still runs: a result under way reaches it.
func (a *Agent) closeChecks() {
	a.procs.mu.Lock()
	a.procs.closed = true
	a.procs.mu.Unlock()
	a.checks.Stop()
}
