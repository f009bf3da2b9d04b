package agent

import (
	"fmt"
	"slices"
	"time"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/election"
)

// A reload (SIGHUP, `systemctl reload`) applies a new Config to the
// running agent: the settings that can change live take effect at once,
// on the event loop, without a restart and without a change of
// leadership unless the new priority demands one; the others keep their
// running value and are named in one log line.

// needRestart are the settings that differ between the running
// configuration and cfg but keep their running value until a restart
// (config.Restart). The log's format is told by its handler: a reload
// cannot change where and how the agent logs.
func needRestart(running, cfg *Config) []string {
	var kept []string
	for i := range config.Settings {
		s := &config.Settings[i]
		differs := s.Reload == config.Restart && s.Differs(running, cfg)
		if s.Flag == "log-format" {
			differs = handlerKind(running) != "" && handlerKind(cfg) != "" && handlerKind(running) != handlerKind(cfg)
		}
		if differs {
			kept = append(kept, s.Flag)
		}
	}
	return kept
}

// handlerKind is the type of the log's handler (text or JSON), "" without
// a Logger: a reload cannot change where and how the agent logs.
func handlerKind(c *Config) string {
	if c.Logger == nil {
		return ""
	}
	return fmt.Sprintf("%T", c.Logger.Handler())
}

// Reload loads a new configuration (load: the same flags and file the
// agent started with, read again) and applies it on the event loop. A
// configuration that load or Validate refuses changes nothing: the error
// is logged, counted and returned. systemd hears RELOADING=1 before and
// READY=1 after. Any goroutine may call it; it returns once applied and
// published in /status.
func (a *Agent) Reload(load func() (Config, error)) error {
	a.notify.Send(fmt.Sprintf("RELOADING=1\nMONOTONIC_USEC=%d", proc.MonoNow()/1000))
	cfg, err := load()
	if err == nil {
		err = cfg.Validate()
	}
	a.call(func() {
		if err != nil {
			a.reloadFailed(err)
		} else {
			a.applyReload(&cfg)
		}
		if a.notify.Ready() {
			a.notify.Send("READY=1")
		}
		a.publish() // /status shows the reload when Reload returns
	})
	return err
}

// reloadFailed records a refused reload; the running config stays.
func (a *Agent) reloadFailed(err error) {
	a.log.Error("reload failed: the running configuration is kept", "err", oneLine(err))
	a.met.ConfigReloads.WithLabelValues("error").Inc()
	a.loop.reload = &ReloadStatus{At: time.Now().UTC().Format(timeFormat), Result: "error", Error: oneLine(err)}
	a.loop.dirty = true
}

// applyReload applies cfg, a valid configuration, on the loop.
func (a *Agent) applyReload(cfg *Config) {
	kept := needRestart(&a.cfg, cfg)
	applied := a.reloadParts(cfg)
	if a.cfg.LogLevel != nil && cfg.LogLevel != nil && a.cfg.LogLevel.Level() != cfg.LogLevel.Level() {
		a.cfg.LogLevel.Set(cfg.LogLevel.Level())
		applied = append(applied, "log-level")
	}
	if cfg.Preempt != a.cfg.Preempt {
		a.setConfig(func(c *Config) { c.Preempt = cfg.Preempt })
		a.step(a.now(), election.Event{Kind: election.EvSetPreempt, On: cfg.Preempt})
		applied = append(applied, "preempt")
	}
	if cfg.Priority != a.cfg.Priority {
		a.setConfig(func(c *Config) { c.Priority = cfg.Priority })
		applied = append(applied, "priority")
		a.applyPriority()
	}
	if len(kept) > 0 {
		a.log.Warn("reload: these settings need a restart and keep their running value", "settings", kept)
	}
	a.log.Info("config reloaded", "applied", applied)
	a.met.ConfigReloads.WithLabelValues("ok").Inc()
	a.loop.reload = &ReloadStatus{At: time.Now().UTC().Format(timeFormat), Result: "ok", Applied: applied, NeedRestart: kept}
	a.loop.dirty = true
}

// reloadParts hands cfg to every part, which applies the settings that
// are its own, and then does what follows in the driver: its copy of
// those settings, the priority and the standby after the checks or the
// track files changed, and the links' watch after the addresses did (a
// watch of the same interfaces is kept). It returns the settings the
// parts applied, each named once, in the parts' order.
func (a *Agent) reloadParts(cfg *Config) (applied []string) {
	old := a.cfg
	for _, p := range a.parts {
		for _, name := range p.Reload(&old, cfg) {
			if !slices.Contains(applied, name) {
				applied = append(applied, name)
			}
		}
	}
	// The job's and the hooks' settings are the policy's (part lead); the
	// driver's copy follows for Config's readers.
	a.setConfig(func(c *Config) {
		c.OnLeader, c.OnFollower, c.OnChange, c.HookTimeout = cfg.OnLeader, cfg.OnFollower, cfg.OnChange, cfg.HookTimeout
		c.JobGrace, c.JobMaxFailures, c.JobFailureWindow = cfg.JobGrace, cfg.JobMaxFailures, cfg.JobFailureWindow
	})
	if slices.Contains(applied, "check") {
		a.setConfig(func(c *Config) {
			c.Checks, c.CheckInterval, c.CheckTimeout = slices.Clone(cfg.Checks), cfg.CheckInterval, cfg.CheckTimeout
			c.CheckRise, c.CheckFall, c.CheckWeight = cfg.CheckRise, cfg.CheckFall, cfg.CheckWeight
			c.TrackFiles = slices.Clone(cfg.TrackFiles)
		})
		a.loop.dirty = true
		a.onChecks()
	}
	if slices.Contains(applied, "vip") {
		a.setConfig(func(c *Config) { c.VIPs = slices.Clone(cfg.VIPs) })
		if err := a.watchLinks(a.links.ElectionDev()); err != nil {
			a.log.Error("reload: links not watched", "err", err)
		}
		a.updateVIPs() // a leader that had none takes them now
		a.onLinks()
	}
	return applied
}

// setConfig changes a.cfg on the loop, under cfgMu for Config's readers.
func (a *Agent) setConfig(f func(*Config)) {
	a.cfgMu.Lock()
	f(&a.cfg)
	a.cfgMu.Unlock()
}
