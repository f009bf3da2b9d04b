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

// ReloadStatus is the last reload in /status.
type ReloadStatus struct {
	At     string `json:"at"`     // RFC 3339 with milliseconds
	Result string `json:"result"` // ok or error, as lanleader_config_reloads_total's label
	// Applied are the settings that changed and took effect.
	Applied []string `json:"applied,omitempty"`
	// NeedRestart are the settings that changed but keep their running
	// value until the agent restarts.
	NeedRestart []string `json:"need_restart,omitempty"`
	// Error says why the new configuration was refused (result error).
	Error string `json:"error,omitempty"`
}

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
	applied := a.reloadProcs(cfg)
	if a.cfg.LogLevel != nil && cfg.LogLevel != nil && a.cfg.LogLevel.Level() != cfg.LogLevel.Level() {
		a.cfg.LogLevel.Set(cfg.LogLevel.Level())
		applied = append(applied, "log-level")
	}
	if !slices.Equal(cfg.VIPs, a.cfg.VIPs) && a.reloadVIPs(cfg.VIPs) {
		a.setConfig(func(c *Config) { c.VIPs = slices.Clone(cfg.VIPs) })
		applied = append(applied, "vip")
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

// reloadProcs applies the settings of the child processes: the hooks
// and the job's limits (the policy's Reload) and the checks. It returns the names of those that
// changed.
func (a *Agent) reloadProcs(cfg *Config) (applied []string) {
	old := a.cfg
	a.setConfig(func(c *Config) {
		c.OnLeader, c.OnFollower, c.OnChange, c.HookTimeout = cfg.OnLeader, cfg.OnFollower, cfg.OnChange, cfg.HookTimeout
		c.JobGrace, c.JobMaxFailures, c.JobFailureWindow = cfg.JobGrace, cfg.JobMaxFailures, cfg.JobFailureWindow
	})
	applied = a.lead.Reload(&old, cfg)
	if !slices.Equal(old.ResolvedChecks(), cfg.ResolvedChecks()) || !slices.Equal(old.TrackFiles, cfg.TrackFiles) {
		applied = append(applied, "check")
		a.replaceChecks(cfg)
	}
	return applied
}

// setConfig changes a.cfg on the loop, under cfgMu for Config's readers.
func (a *Agent) setConfig(f func(*Config)) {
	a.cfgMu.Lock()
	f(&a.cfg)
	a.cfgMu.Unlock()
}
