package proc

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The job as a systemd unit (--job-unit): instead of forking the job, the
// supervisor asks systemd to start the unit, watches its state, and asks
// systemd to stop it. The unit runs with its own user, sandbox and logs;
// it is bound to the agent's unit (BindsTo=), so systemd stops it when
// the agent dies. The restart policy, the failure count and job mode once
// are the supervisor's, as for a forked job: a unit that enters inactive
// or failed on its own is a job that exited.

// Systemd is what the supervisor needs of systemd's manager; the agent's
// talks D-Bus (agent/internal/sdbus), the tests' is a fake.
type Systemd interface {
	// StartUnit starts the unit and returns once systemd's start job
	// ended, with its result ("done", "failed", "dependency", ...).
	StartUnit(ctx context.Context, name string) (string, error)
	// StopUnit stops the unit and returns once the stop job ended.
	StopUnit(ctx context.Context, name string) error
	// KillUnit sends sig to every process of the unit.
	KillUnit(ctx context.Context, name string, sig syscall.Signal) error
	// UnitState is the unit's state now.
	UnitState(ctx context.Context, name string) (UnitState, error)
}

// UnitState is what the supervisor reads of a unit.
type UnitState struct {
	ActiveState string // active, activating, reloading, deactivating, inactive, failed
	Result      string // the service's Result: success, exit-code, signal, timeout...
	// MainCode and MainStatus are the service's ExecMainCode (CLD_EXITED
	// 1, CLD_KILLED 2, CLD_DUMPED 3; 0 when its main process never
	// exited) and ExecMainStatus (the exit status or the signal).
	MainCode, MainStatus int32
}

// ended says whether the unit is down.
func (u UnitState) ended() bool { return u.ActiveState == "inactive" || u.ActiveState == "failed" }

// unitPoll is how often a running unit's state is read. A unit's exit
// is thus seen within unitPoll; the job's stop by the agent does not
// wait for it (StopUnit returns when the unit is down).
const unitPoll = 250 * time.Millisecond

// unitCallTimeout bounds one D-Bus call that does not wait for a job.
const unitCallTimeout = 10 * time.Second

// unitGiveUp: how long after its SIGKILL a unit whose state cannot be
// read is taken for gone (the tests shorten it).
var unitGiveUp = unitCallTimeout

// unitRun is one run of the job's unit.
type unitRun struct {
	sd   Systemd
	name string
	log  *slog.Logger

	mu       sync.Mutex
	stopping bool
	killed   time.Time // when kill was called
	desc     string
	code     int

	wake chan struct{} // a stop was asked: look now
}

// startUnit writes the job's environment for the unit and starts it; a
// goroutine watches it until it is down.
func (s *Supervisor) startUnit(w Want) (*jobProc, error) {
	if s.cfg.Systemd == nil {
		return nil, fmt.Errorf("job unit %s: no connection to systemd", s.cfg.Unit)
	}
	if err := writeEnvFile(s.cfg.EnvFile, s.jobVars(w)); err != nil {
		return nil, fmt.Errorf("job unit %s: %w", s.cfg.Unit, err)
	}
	u := &unitRun{sd: s.cfg.Systemd, name: s.cfg.Unit, log: s.log, wake: make(chan struct{}, 1)}
	p := &jobProc{term: w.Term, gen: w.Gen, started: time.Now(), exited: make(chan struct{}), unit: u}
	s.mu.Lock()
	s.cur = p
	s.mu.Unlock()
	s.log.Info("starting the job's unit", "unit", s.cfg.Unit, "term", w.Term, "env_file", s.cfg.EnvFile)
	go func() {
		u.watch()
		close(p.exited)
	}()
	return p, nil
}

// watch starts the unit and returns once it is down.
func (u *unitRun) watch() {
	res, err := u.sd.StartUnit(context.Background(), u.name)
	if err != nil || res != "done" {
		if err == nil {
			err = fmt.Errorf("systemd's start job ended with %q", res)
		}
		u.setResult(fmt.Sprintf("unit %s did not start: %v", u.name, err), 126)
		// A start that failed half-way may leave processes: stop it.
		if st, e := u.state(); e != nil || !st.ended() {
			u.sd.StopUnit(context.Background(), u.name)
		}
		return
	}
	failing := false
	for {
		st, err := u.state()
		switch {
		case err != nil && u.killedFor() > unitGiveUp:
			// systemd does not answer, and the job was killed: give up
			// on it, so that the agent can exit (the unit is bound to
			// the agent's: systemd stops it with the agent).
			u.setResult(fmt.Sprintf("unit %s: its state is unknown after SIGKILL: %v", u.name, err), 128+int(syscall.SIGKILL))
			return
		case err != nil && !failing:
			u.log.Warn("cannot read the job unit's state", "unit", u.name, "err", err)
			failing = true
		case err == nil && st.ended():
			u.setResult(describeUnit(st))
			return
		case err == nil:
			failing = false
		}
		select {
		case <-time.After(unitPoll):
		case <-u.wake:
		}
	}
}

func (u *unitRun) state() (UnitState, error) {
	ctx, cancel := context.WithTimeout(context.Background(), unitCallTimeout)
	defer cancel()
	return u.sd.UnitState(ctx, u.name)
}

// stop asks systemd to stop the unit (the unit's own ExecStop= and
// TimeoutStopSec= apply) without waiting; the watch sees it down.
func (u *unitRun) stop() {
	u.mu.Lock()
	first := !u.stopping
	u.stopping = true
	u.mu.Unlock()
	if !first {
		return
	}
	go func() {
		if err := u.sd.StopUnit(context.Background(), u.name); err != nil {
			u.log.Warn("cannot stop the job's unit", "unit", u.name, "err", err)
		}
		select {
		case u.wake <- struct{}{}:
		default:
		}
	}()
}

// kill SIGKILLs the unit's processes (its grace is over).
func (u *unitRun) kill() {
	u.mu.Lock()
	if u.killed.IsZero() {
		u.killed = time.Now()
	}
	u.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), unitCallTimeout)
	defer cancel()
	if err := u.sd.KillUnit(ctx, u.name, syscall.SIGKILL); err != nil {
		u.log.Warn("cannot kill the job's unit", "unit", u.name, "err", err)
	}
}

// killedFor is how long ago kill was first called, 0 if never.
func (u *unitRun) killedFor() time.Duration {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.killed.IsZero() {
		return 0
	}
	return time.Since(u.killed)
}

func (u *unitRun) setResult(desc string, code int) {
	u.mu.Lock()
	u.desc, u.code = desc, code
	u.mu.Unlock()
}

// result is how the run ended, once watch returned.
func (u *unitRun) result() (string, int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.desc, u.code
}

// describeUnit says how a unit that is down ended, as DescribeExit does
// for a process, and its shell exit status.
func describeUnit(st UnitState) (string, int) {
	const cldExited, cldKilled, cldDumped = 1, 2, 3
	switch st.MainCode {
	case cldExited:
		return fmt.Sprintf("unit %s, exit status %d", st.ActiveState, st.MainStatus), int(st.MainStatus)
	case cldKilled, cldDumped:
		name := unix.SignalName(syscall.Signal(st.MainStatus))
		if name == "" {
			name = fmt.Sprintf("signal %d", st.MainStatus)
		}
		return fmt.Sprintf("unit %s, killed by %s", st.ActiveState, name), 128 + int(st.MainStatus)
	}
	code := 0
	if st.Result != "success" {
		code = 1
	}
	return fmt.Sprintf("unit %s, result %s", st.ActiveState, st.Result), code
}

// writeEnvFile writes vars (KEY=VALUE) to path as systemd's
// EnvironmentFile= reads it, replacing the file at once (a rename), so
// that a unit starting never reads half of it.
func writeEnvFile(path string, vars []string) error {
	if path == "" {
		return fmt.Errorf("no file for the job's environment")
	}
	var b strings.Builder
	b.WriteString("# Written by lanleader before each start of the job's unit.\n")
	for _, v := range vars {
		k, val, _ := strings.Cut(v, "=")
		r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
		fmt.Fprintf(&b, "%s=\"%s\"\n", k, r.Replace(val))
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".job.env.*")
	if err != nil {
		return fmt.Errorf("cannot write the job's environment: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing
	if _, err := tmp.WriteString(b.String()); err != nil {
		tmp.Close()
		return fmt.Errorf("cannot write the job's environment: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("cannot write the job's environment: %w", err)
	}
	return nil
}
