package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/agent/internal/sdbus"
)

// The job as a systemd unit (Config.JobUnit): the supervisor starts and
// stops it through systemd (proc/unit.go); here, what the agent checks of
// the unit at start, and where the job's environment goes.

// jobSystemd is what the agent needs of systemd for a job unit: the
// supervisor's calls, and what Start checks. sdbus.Conn is the real one.
type jobSystemd interface {
	proc.Systemd
	UnitInfo(ctx context.Context, name string) (load string, boundTo []string, err error)
	OwnUnit(ctx context.Context) (string, error)
}

// unitCheckTimeout bounds the start's checks of the job unit.
const unitCheckTimeout = 10 * time.Second

// newJobSystemd is the connection to systemd for cfg's job unit, nil
// without one.
func newJobSystemd(cfg *Config, fake jobSystemd) jobSystemd {
	switch {
	case cfg.JobUnit == "":
		return nil
	case fake != nil:
		return fake
	}
	return &sdbus.Conn{}
}

// jobEnvFile is where the job unit's environment is written.
func jobEnvFile(cfg *Config) string {
	if cfg.JobEnvFile != "" {
		return cfg.JobEnvFile
	}
	// systemd's RuntimeDirectory=: the first, if there are several.
	if d, _, _ := strings.Cut(os.Getenv("RUNTIME_DIRECTORY"), ":"); d != "" {
		return filepath.Join(d, "job.env")
	}
	return config.DefaultJobEnvFile
}

// checkJobUnit refuses a job unit that systemd does not know, or that is
// not bound to the agent's own unit (BindsTo= or PartOf=): systemd would
// not stop it when the agent dies, and the job would run on beside the
// next leader's. An agent that does not run as a service (started from a
// shell) cannot be bound to: it warns and goes on. It also checks that
// the environment file can be written.
func (a *Agent) checkJobUnit() error {
	sd := a.procs.systemd
	if sd == nil {
		return nil
	}
	name := a.cfg.JobUnit
	env := jobEnvFile(&a.cfg)
	if fi, err := os.Stat(filepath.Dir(env)); err != nil || !fi.IsDir() {
		return fmt.Errorf("job-unit %s: no directory %s for the job's environment file (the agent's unit needs RuntimeDirectory=lanleader)", name, filepath.Dir(env))
	}
	if !strings.HasPrefix(name, "lanleader-job") {
		a.log.Warn("the packaged polkit rule lets the agent's user start and stop only units named lanleader-job*.service: this one needs a rule of its own, or the agent run as root",
			"job_unit", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), unitCheckTimeout)
	defer cancel()
	load, bound, err := sd.UnitInfo(ctx, name)
	if err != nil {
		return fmt.Errorf("job-unit %s: %w", name, err)
	}
	if load != "loaded" {
		return fmt.Errorf("job-unit %s: systemd cannot use this unit (its load state is %q)", name, load)
	}
	own, err := sd.OwnUnit(ctx)
	if err != nil || !strings.HasSuffix(own, ".service") {
		a.log.Warn("not running as a systemd service: cannot check that the job unit is bound to the agent's unit; the job unit outlives an agent that dies",
			"job_unit", name, "own_unit", own, "err", err)
		return nil
	}
	if !slices.Contains(bound, own) {
		return fmt.Errorf("job-unit %s: not bound to the agent's unit %s: give it BindsTo=%s and After=%s, so that systemd stops the job when the agent stops or dies",
			name, own, own, own)
	}
	return nil
}
