package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeSystemd is a systemd manager with one unit, in memory: it records
// the calls and the job's environment file as it was at each start.
type fakeSystemd struct {
	envFile string

	mu       sync.Mutex
	state    UnitState
	calls    []string
	envs     []string // the env file at each start
	startErr error
	stubborn bool // a stop leaves the unit running (until a kill)
	gone     bool // systemd does not answer any more (UnitState fails)
}

func (f *fakeSystemd) StartUnit(_ context.Context, name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "start "+name)
	b, _ := os.ReadFile(f.envFile)
	f.envs = append(f.envs, string(b))
	if f.startErr != nil {
		return "", f.startErr
	}
	f.state = UnitState{ActiveState: "active", Result: "success"}
	return "done", nil
}

func (f *fakeSystemd) StopUnit(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "stop "+name)
	if !f.stubborn && !f.state.ended() {
		f.state = UnitState{ActiveState: "inactive", Result: "success", MainCode: 2, MainStatus: int32(syscall.SIGTERM)}
	}
	return nil
}

func (f *fakeSystemd) KillUnit(_ context.Context, name string, sig syscall.Signal) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("kill %s %d", name, sig))
	f.state = UnitState{ActiveState: "failed", Result: "signal", MainCode: 2, MainStatus: int32(sig)}
	return nil
}

func (f *fakeSystemd) UnitState(context.Context, string) (UnitState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gone {
		return UnitState{}, errors.New("The connection is closed")
	}
	return f.state, nil
}

// exit makes the unit's main process exit on its own with code.
func (f *fakeSystemd) exit(code int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := UnitState{ActiveState: "inactive", Result: "success", MainCode: 1, MainStatus: code}
	if code != 0 {
		st.ActiveState, st.Result = "failed", "exit-code"
	}
	f.state = st
}

// started waits until the unit has been started n times: the Started
// event comes as the start is asked, before systemd's answer.
func (f *fakeSystemd) started(t *testing.T, n int) {
	t.Helper()
	waitFor(t, "the unit's start", 5*time.Second, func() (bool, string) {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.envs) >= n && f.state.ActiveState == "active", fmt.Sprint(f.calls)
	})
}

func (f *fakeSystemd) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

const testUnit = "lanleader-job-test.service"

func newUnitHarness(t *testing.T, cfg Config) (*harness, *fakeSystemd) {
	t.Helper()
	f := &fakeSystemd{envFile: filepath.Join(t.TempDir(), "job.env")}
	cfg.Unit, cfg.Systemd, cfg.EnvFile = testUnit, f, f.envFile
	cfg.FailureWindow = time.Minute
	return newHarness(t, cfg), f
}

// TestUnitStartStop: the supervisor of a job unit writes the job's
// environment (its term) to the env file before it starts the unit, and
// stops the unit when the job is no longer wanted (lost leadership); its
// status names the unit and says how it ended.
func TestUnitStartStop(t *testing.T) {
	h, f := newUnitHarness(t, Config{Grace: time.Second})
	h.sup.Set(Want{Run: true, Gen: 1, Term: 3, Leader: 7})
	h.next(t, Started, 5*time.Second)
	f.started(t, 1)
	if st := h.sup.Status(); st.State != "running" || st.Unit != testUnit || st.Term != 3 {
		t.Errorf("status %+v, want the unit running in term 3", *st)
	}
	h.sup.Set(Want{Run: false, Gen: 1})
	if ev := h.next(t, Stopped, 5*time.Second); ev.Code != 143 {
		t.Errorf("Stopped %+v, want code 143", ev.Event)
	}
	if got := f.log(); !slices.Equal(got, []string{"start " + testUnit, "stop " + testUnit}) {
		t.Errorf("calls %q, want a start and a stop", got)
	}
	want := "LANLEADER_TERM=\"3\"\nLANLEADER_NODE_ID=\"7\"\nLANLEADER_LEADER_ID=\"7\"\nLANLEADER_NAME=\"node-7\"\n"
	if len(f.envs) != 1 || !strings.HasSuffix(f.envs[0], want) {
		t.Errorf("env file at the start %q, want it to end in %q", f.envs, want)
	}
	if st := h.sup.Status(); st.State != "stopped" || st.LastExit != "unit inactive, killed by SIGTERM" {
		t.Errorf("status %+v, want stopped, the unit killed by SIGTERM", *st)
	}
}

// TestUnitFailureRestarts: a unit that fails on its own is a job that
// exited: restarted after the backoff with the env file written again,
// and at MaxFailures a crash loop.
func TestUnitFailureRestarts(t *testing.T) {
	h, f := newUnitHarness(t, Config{Grace: time.Second, MaxFailures: 2})
	h.sup.Set(Want{Run: true, Gen: 1, Term: 3})
	h.next(t, Started, 5*time.Second)
	f.started(t, 1)
	f.exit(3)
	if ev := h.next(t, Stopped, 5*time.Second); ev.Code != 3 {
		t.Errorf("Stopped %+v, want code 3", ev.Event)
	}
	h.next(t, Started, 5*time.Second)
	f.started(t, 2)
	if st := h.sup.Status(); st.Failures != 1 || st.Restarts != 1 || st.LastExit != "unit failed, exit status 3" {
		t.Errorf("status %+v, want one failure, one restart, exit status 3", *st)
	}
	f.exit(0)
	h.next(t, CrashLoop, 5*time.Second)
	if st := h.sup.Status(); st.State != "failed" {
		t.Errorf("status %+v, want failed", *st)
	}
	if got := f.log(); len(got) != 2 || len(f.envs) != 2 {
		t.Errorf("calls %q, want two starts and nothing else", got)
	}
}

// TestUnitOnce: job mode once with a unit: the unit's exit ends the
// generation (Finished with its status), no restart.
func TestUnitOnce(t *testing.T) {
	h, f := newUnitHarness(t, Config{Grace: time.Second, Once: true})
	h.sup.Set(Want{Run: true, Gen: 1, Term: 3})
	h.next(t, Started, 5*time.Second)
	f.started(t, 1)
	f.exit(7)
	if ev := h.next(t, Finished, 5*time.Second); ev.Code != 7 {
		t.Errorf("Finished %+v, want code 7", ev.Event)
	}
	h.none(t, Started, time.Second)
	if st := h.sup.Status(); st.State != "finished" || *st.ExitCode != 7 {
		t.Errorf("status %+v, want finished with 7", *st)
	}
}

// TestUnitStartFails: a start systemd refuses (no such unit, polkit says
// no) is a failed start, with systemd's reason in the status.
func TestUnitStartFails(t *testing.T) {
	h, f := newUnitHarness(t, Config{Grace: time.Second, MaxFailures: 1})
	f.startErr = errors.New("Interactive authentication required.")
	h.sup.Set(Want{Run: true, Gen: 1, Term: 3})
	h.next(t, CrashLoop, 5*time.Second)
	st := h.sup.Status()
	if st.State != "failed" || !strings.Contains(st.LastExit, "did not start: Interactive authentication required.") || *st.ExitCode != 126 {
		t.Errorf("status %+v, want failed, saying why the unit did not start", *st)
	}
}

// TestUnitAgentStop: the agent's stop stops the unit, and the supervisor
// is done once the unit is down.
func TestUnitAgentStop(t *testing.T) {
	h, f := newUnitHarness(t, Config{Grace: time.Second})
	h.sup.Set(Want{Run: true, Gen: 1, Term: 3})
	h.next(t, Started, 5*time.Second)
	f.started(t, 1)
	h.sup.Stop()
	select {
	case <-h.sup.Done():
	case <-time.After(5 * time.Second):
		t.Fatalf("not done; log:\n%s", h.log)
	}
	if got := f.log(); !slices.Equal(got, []string{"start " + testUnit, "stop " + testUnit}) {
		t.Errorf("calls %q, want a start and a stop", got)
	}
}

// TestUnitGraceKill: a unit still up at the end of the grace period is
// killed (SIGKILL to its processes).
func TestUnitGraceKill(t *testing.T) {
	h, f := newUnitHarness(t, Config{Grace: 300 * time.Millisecond})
	f.stubborn = true
	h.sup.Set(Want{Run: true, Gen: 1, Term: 3})
	h.next(t, Started, 5*time.Second)
	f.started(t, 1)
	h.sup.Set(Want{Run: false, Gen: 1})
	if ev := h.next(t, Stopped, 5*time.Second); ev.Code != 137 {
		t.Errorf("Stopped %+v, want 137", ev.Event)
	}
	if got := f.log(); !slices.Equal(got, []string{"start " + testUnit, "stop " + testUnit, "kill " + testUnit + " 9"}) {
		t.Errorf("calls %q, want a start, a stop and a kill", got)
	}
}

// TestUnitSystemdGone: when systemd stops answering, the agent's stop
// still ends: the unit is killed at the end of the grace and, its state
// still unknown a while later, given up for gone (the unit is bound to
// the agent's, so systemd stops it with the agent).
func TestUnitSystemdGone(t *testing.T) {
	unitGiveUp = 300 * time.Millisecond
	t.Cleanup(func() { unitGiveUp = unitCallTimeout })
	h, f := newUnitHarness(t, Config{Grace: 300 * time.Millisecond})
	h.sup.Set(Want{Run: true, Gen: 1, Term: 3})
	h.next(t, Started, 5*time.Second)
	f.started(t, 1)
	f.mu.Lock()
	f.gone, f.stubborn = true, true
	f.mu.Unlock()
	h.sup.Stop()
	select {
	case <-h.sup.Done():
	case <-time.After(5 * time.Second):
		t.Fatalf("not done; log:\n%s", h.log)
	}
	if st := h.sup.Status(); !strings.Contains(st.LastExit, "its state is unknown after SIGKILL: The connection is closed") {
		t.Errorf("status %+v, want the unit given up", *st)
	}
	if got := f.log(); len(got) != 3 || got[2] != "kill "+testUnit+" 9" {
		t.Errorf("calls %q, want a start, a stop, a kill", got)
	}
}
