package agent

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

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/proc"
)

// unitFake is systemd with one job unit, in memory; it records the calls
// and, at each start, the term in the job's environment file.
type unitFake struct {
	envFile string
	load    string
	bound   []string
	own     string

	mu     sync.Mutex
	active bool
	calls  []string
}

func (f *unitFake) StartUnit(_ context.Context, name string) (string, error) {
	b, err := os.ReadFile(f.envFile)
	f.mu.Lock()
	defer f.mu.Unlock()
	term := "?"
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "LANLEADER_TERM="); ok {
			term = strings.Trim(v, `"`)
		}
	}
	f.calls = append(f.calls, fmt.Sprintf("start %s term %s %v", name, term, err))
	f.active = true
	return "done", nil
}

func (f *unitFake) StopUnit(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "stop "+name)
	f.active = false
	return nil
}

func (f *unitFake) KillUnit(_ context.Context, name string, sig syscall.Signal) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "kill "+name)
	f.active = false
	return nil
}

func (f *unitFake) UnitState(context.Context, string) (proc.UnitState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.active {
		return proc.UnitState{ActiveState: "active", Result: "success"}, nil
	}
	return proc.UnitState{ActiveState: "inactive", Result: "success", MainCode: 2, MainStatus: 15}, nil
}

func (f *unitFake) UnitInfo(context.Context, string) (string, []string, error) {
	return f.load, f.bound, nil
}

func (f *unitFake) OwnUnit(context.Context) (string, error) {
	if f.own == "" {
		return "", errors.New("no unit")
	}
	return f.own, nil
}

func (f *unitFake) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

const jobUnit = "lanleader-job-test.service"

func unitConfig(t *testing.T, f *unitFake) (Config, seams) {
	c := testConfig("node-1", 1)
	f.envFile = filepath.Join(t.TempDir(), "job.env")
	c.JobUnit, c.JobEnvFile = jobUnit, f.envFile
	return c, seams{jobSystemd: f}
}

// TestJobUnitFollowsLeadership: the leader starts the job unit with its
// term in the environment file; a resign (the leadership lost) stops it,
// the next leadership starts it again with the new term, and the agent's
// stop stops it.
func TestJobUnitFollowsLeadership(t *testing.T) {
	f := &unitFake{load: "loaded", bound: []string{"lanleader.service"}, own: "lanleader.service"}
	c, sm := unitConfig(t, f)
	c.PreemptDelay = 500 * time.Millisecond
	set := newAgentSet(t)
	a := set.startWith(0, c, sm)
	waitFor(t, "the unit started", 10*time.Second, func() (bool, string) {
		js := a.Job()
		return js.State == "running" && len(f.log()) == 1, fmt.Sprintf("%+v %q", js, f.log())
	})
	t1 := a.Status().Term
	if got := f.log(); got[0] != fmt.Sprintf("start %s term %d <nil>", jobUnit, t1) {
		t.Errorf("calls %q, want a start in term %d", got, t1)
	}
	if js := a.Status().Job; js.Unit != jobUnit {
		t.Errorf("/status job %+v, want the unit named", js)
	}
	if led, _, _ := a.resign(); !led {
		t.Fatal("did not resign")
	}
	waitFor(t, "stopped and started again", 10*time.Second, func() (bool, string) {
		return len(f.log()) >= 3 && a.Job().State == "running", fmt.Sprintf("%q", f.log())
	})
	t2 := a.Status().Term
	if got := f.log(); got[1] != "stop "+jobUnit || got[2] != fmt.Sprintf("start %s term %d <nil>", jobUnit, t2) || t2 <= t1 {
		t.Errorf("calls %q, want a stop, then a start in a term after %d", got, t1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a.Stop(ctx)
	if got := f.log(); len(got) != 4 || got[3] != "stop "+jobUnit {
		t.Errorf("calls %q, want the unit stopped by the agent's stop", got)
	}
}

// TestJobUnitRefused: Start refuses a unit systemd cannot load and one
// not bound to the agent's unit, naming the fix; a bound unit, or an
// agent not run as a service (no unit to bind to: a warning), starts.
func TestJobUnitRefused(t *testing.T) {
	cases := []struct {
		name string
		fake *unitFake
		want string
	}{
		{"not found", &unitFake{load: "not-found", own: "lanleader.service"}, `systemd cannot use this unit (its load state is "not-found")`},
		{"not bound", &unitFake{load: "loaded", bound: []string{"other.service"}, own: "lanleader.service"},
			"not bound to the agent's unit lanleader.service: give it BindsTo=lanleader.service and After=lanleader.service"},
		{"bound", &unitFake{load: "loaded", bound: []string{"lanleader.service"}, own: "lanleader.service"}, ""},
		{"from a shell", &unitFake{load: "loaded", own: "session-3.scope"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, sm := unitConfig(t, tc.fake)
			c.Logger = loggerTo(&logs{}, 0)
			a, err := newAgent(c, sm)
			if err != nil {
				t.Fatal(err)
			}
			err = a.Start()
			if err == nil {
				defer a.Crash()
			}
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Start: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestJobUnitConfig: a unit name that is not a service's, a unit beside
// a command line, a unit in quorum mode and an unknown job mode are
// refused by Validate, naming the setting.
func TestJobUnitConfig(t *testing.T) {
	cases := []struct {
		set  func(c *Config)
		want string
	}{
		{func(c *Config) { c.JobUnit = "lanleader-job" }, `job-unit: "lanleader-job" is not the name of a systemd service`},
		{func(c *Config) { c.JobUnit = "x@.service" }, `job-unit: "x@.service" is not the name`},
		{func(c *Config) { c.JobUnit = "../x.service" }, `job-unit: "../x.service" is not the name`},
		{func(c *Config) { c.JobUnit, c.Job = jobUnit, []string{"true"} }, "job-unit: the job is either a command line"},
		{func(c *Config) { c.JobUnit, c.Quorum = jobUnit, 2 }, "job-unit: not with quorum"},
		{func(c *Config) { c.JobMode = "twice" }, `job-mode: "twice" is not always or once`},
	}
	for _, tc := range cases {
		c := testConfig("node-1", 1)
		tc.set(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate: %v, want %q", err, tc.want)
		}
	}
	c := testConfig("node-1", 1)
	c.JobUnit, c.JobMode = "lanleader-job@db.service", config.JobModeOnce
	if err := c.Validate(); err != nil {
		t.Errorf("Validate of a good unit: %v", err)
	}
}
