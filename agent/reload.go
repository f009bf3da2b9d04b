package agent

import (
	"bytes"
	"fmt"
	"slices"
	"time"

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

// fixedSettings are the settings a reload cannot change, by flag name:
// each says whether two configs differ in it.
var fixedSettings = []struct {
	name    string
	differs func(a, b *Config) bool
}{
	{"name", func(a, b *Config) bool { return a.Name != b.Name }},
	{"node-id", func(a, b *Config) bool { return a.NodeID != b.NodeID }},
	{"cluster", func(a, b *Config) bool { return a.Cluster != b.Cluster }},
	{"bind", func(a, b *Config) bool { return a.Bind != b.Bind }},
	{"election-port", func(a, b *Config) bool { return a.ElectionPort != b.ElectionPort }},
	{"join", func(a, b *Config) bool { return !slices.Equal(a.Join, b.Join) }},
	{"http", func(a, b *Config) bool { return a.HTTP != b.HTTP }},
	{"heartbeat", func(a, b *Config) bool { return a.Heartbeat != b.Heartbeat }},
	{"suspect-after", func(a, b *Config) bool { return a.SuspectAfter != b.SuspectAfter }},
	{"detector", func(a, b *Config) bool { return a.Detector != b.Detector }},
	{"algorithm", func(a, b *Config) bool { return a.Algorithm != b.Algorithm }},
	{"transport", func(a, b *Config) bool { return a.Transport != b.Transport }},
	{"multicast-group", func(a, b *Config) bool { return a.Group != b.Group }},
	{"preempt-delay", func(a, b *Config) bool { return a.PreemptDelay != b.PreemptDelay }},
	{"quorum", func(a, b *Config) bool { return a.Quorum != b.Quorum }},
	{"lease", func(a, b *Config) bool { return a.Lease != b.Lease }},
	{"lease-margin", func(a, b *Config) bool { return a.LeaseMargin != b.LeaseMargin }},
	{"state-file", func(a, b *Config) bool { return a.StateFile != b.StateFile }},
	{"discover-interval", func(a, b *Config) bool { return a.DiscoverInterval != b.DiscoverInterval }},
	{"key-file", func(a, b *Config) bool { return !bytes.Equal(a.Key, b.Key) }},
	{"accept-key-file", func(a, b *Config) bool { return !slices.EqualFunc(a.AcceptKeys, b.AcceptKeys, bytes.Equal) }},
	{"job", func(a, b *Config) bool { return !slices.Equal(a.Job, b.Job) }},
	{"job-mode", func(a, b *Config) bool { return a.JobMode != b.JobMode }},
	{"job-unit", func(a, b *Config) bool { return a.JobUnit != b.JobUnit }},
	{"role", func(a, b *Config) bool { return a.Role != b.Role }},
	{"realtime", func(a, b *Config) bool { return a.Realtime != b.Realtime }},
	{"start-timeout", func(a, b *Config) bool { return a.StartTimeout != b.StartTimeout }},
	{"log-format", func(a, b *Config) bool {
		return handlerKind(a) != "" && handlerKind(b) != "" && handlerKind(a) != handlerKind(b)
	}},
	{"vip-announce-repeat", func(a, b *Config) bool { return a.VIPAnnounceRepeat != b.VIPAnnounceRepeat }},
	{"vip-announce-interval", func(a, b *Config) bool { return a.VIPAnnounceInterval != b.VIPAnnounceInterval }},
	{"vip-announce-delay", func(a, b *Config) bool { return a.VIPAnnounceDelay != b.VIPAnnounceDelay }},
	{"vip-announce-refresh", func(a, b *Config) bool { return a.VIPAnnounceRefresh != b.VIPAnnounceRefresh }},
	{"vip-track-link", func(a, b *Config) bool { return a.VIPTrackLink != b.VIPTrackLink }},
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
	var kept []string
	for _, f := range fixedSettings {
		if f.differs(&a.cfg, cfg) {
			kept = append(kept, f.name)
		}
	}
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

// reloadProcs applies the settings of the child processes: the hooks,
// the checks and the job's limits. It returns the names of those that
// changed.
func (a *Agent) reloadProcs(cfg *Config) (applied []string) {
	old := a.cfg
	a.setConfig(func(c *Config) {
		c.OnLeader, c.OnFollower, c.OnChange, c.HookTimeout = cfg.OnLeader, cfg.OnFollower, cfg.OnChange, cfg.HookTimeout
		c.JobGrace, c.JobMaxFailures, c.JobFailureWindow = cfg.JobGrace, cfg.JobMaxFailures, cfg.JobFailureWindow
	})
	for _, s := range []struct {
		name    string
		changed bool
	}{
		{"on-leader", old.OnLeader != cfg.OnLeader}, {"on-follower", old.OnFollower != cfg.OnFollower},
		{"on-change", old.OnChange != cfg.OnChange}, {"hook-timeout", old.HookTimeout != cfg.HookTimeout},
		{"job-grace", old.JobGrace != cfg.JobGrace}, {"job-max-failures", old.JobMaxFailures != cfg.JobMaxFailures},
		{"job-failure-window", old.JobFailureWindow != cfg.JobFailureWindow},
	} {
		if s.changed {
			applied = append(applied, s.name)
		}
	}
	a.replaceHooks(old.HookTimeout != cfg.HookTimeout)
	if a.procs.sup != nil {
		a.procs.sup.SetLimits(proc.Limits{Grace: cfg.JobGrace, MaxFailures: cfg.JobMaxFailures, FailureWindow: cfg.JobFailureWindow})
	}
	if old.JobGrace != cfg.JobGrace {
		// The members' takeovers wait out the grace the metadata says.
		a.setMeta()
		a.pushMeta()
	}
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

// replaceHooks starts a hook runner when hooks came with the reload, and
// replaces the runner when its timeout changed (the old one runs what it
// has queued, then ends).
func (a *Agent) replaceHooks(timeoutChanged bool) {
	want := a.cfg.OnLeader != "" || a.cfg.OnFollower != "" || a.cfg.OnChange != ""
	old := a.procs.hooks
	if old != nil && !timeoutChanged || old == nil && !want {
		return
	}
	h := newHookRunner(a)
	if !a.procs.swap(func() { a.procs.hooks = h }) {
		return
	}
	if old != nil {
		old.Stop()
	}
	go h.Run()
}
