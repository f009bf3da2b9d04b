package proc

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// What the agent checks of a job unit (--job-unit) before it starts, and
// where the job's environment goes.

// UnitSystemd is what the agent needs of systemd for a job unit: the
// supervisor's calls, and what CheckUnit reads. sdbus.Conn is the real
// one.
type UnitSystemd interface {
	Systemd
	UnitInfo(ctx context.Context, name string) (load string, boundTo []string, err error)
	OwnUnit(ctx context.Context) (string, error)
}

// unitCheckTimeout bounds CheckUnit's calls.
const unitCheckTimeout = 10 * time.Second

// EnvFile is where the job unit's environment is written: set (the
// configured file) when it is, else in systemd's RuntimeDirectory= (the
// first, if there are several), else def.
func EnvFile(set, def string) string {
	if set != "" {
		return set
	}
	if d, _, _ := strings.Cut(os.Getenv("RUNTIME_DIRECTORY"), ":"); d != "" {
		return filepath.Join(d, "job.env")
	}
	return def
}

// CheckUnit refuses a job unit name that systemd does not know, or that
// is not bound to the agent's own unit (BindsTo= or PartOf=): systemd
// would not stop it when the agent dies, and the job would run on beside
// the next leader's. An agent that does not run as a service (started
// from a shell) cannot be bound to: it warns and goes on. It also checks
// that the environment file env can be written.
func CheckUnit(sd UnitSystemd, name, env string, log *slog.Logger) error {
	if fi, err := os.Stat(filepath.Dir(env)); err != nil || !fi.IsDir() {
		return fmt.Errorf("job-unit %s: no directory %s for the job's environment file (the agent's unit needs RuntimeDirectory=lanleader)", name, filepath.Dir(env))
	}
	if !strings.HasPrefix(name, "lanleader-job") {
		log.Warn("the packaged polkit rule lets the agent's user start and stop only units named lanleader-job*.service: this one needs a rule of its own, or the agent run as root",
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
		log.Warn("not running as a systemd service: cannot check that the job unit is bound to the agent's unit; the job unit outlives an agent that dies",
			"job_unit", name, "own_unit", own, "err", err)
		return nil
	}
	if !slices.Contains(bound, own) {
		return fmt.Errorf("job-unit %s: not bound to the agent's unit %s: give it BindsTo=%s and After=%s, so that systemd stops the job when the agent stops or dies",
			name, own, own, own)
	}
	return nil
}
