package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/internal/waitfor"
)

// TestReload: a running follower reloaded with a lower priority, a hook
// and another log level shows them in /status and keeps following the
// same leader in the same term; settings that need a restart are named in
// the log and keep their value; a higher priority makes it take over (and
// its new hook runs); a broken configuration changes nothing.
func TestReload(t *testing.T) {
	level := new(slog.LevelVar)
	l := startLocal(t, LocalOptions{Nodes: 2, HTTP: true, Base: func(c *Config) { c.LogLevel = level }})
	ag := waitLeader(t, l, electBound, 1)
	a := l.Agents[0]
	mark := filepath.Join(t.TempDir(), "on-leader")

	next := a.Config()
	next.Priority, next.OnLeader = 90, "echo $LANLEADER_TERM > "+mark
	next.LogLevel = new(slog.LevelVar)
	next.LogLevel.Set(slog.LevelDebug)
	next.Bind, next.Cluster = "127.0.0.1:1", "other"
	if err := a.Reload(func() (Config, error) { return next, nil }); err != nil {
		t.Fatal(err)
	}
	s := a.Status()
	r := s.LastReload
	if s.BasePriority != 90 || s.Priority != 90 || s.LogLevel != "debug" || r == nil || r.Result != "ok" ||
		!slices.Equal(r.Applied, []string{"on-leader", "log-level", "priority"}) || !slices.Equal(r.NeedRestart, []string{"cluster", "bind"}) {
		t.Fatalf("after the reload: priority %d of %d, log level %q, last reload %+v", s.Priority, s.BasePriority, s.LogLevel, r)
	}
	if c := a.Config(); c.Bind == "127.0.0.1:1" || c.Cluster != config.DefaultCluster || c.Priority != 90 || c.OnLeader != next.OnLeader {
		t.Errorf("config after the reload: bind %s cluster %s priority %d on-leader %q", c.Bind, c.Cluster, c.Priority, c.OnLeader)
	}
	if !slices.ContainsFunc(strings.Split(l.logs.String(), "\n"), func(line string) bool {
		return strings.Contains(line, `msg="reload: these settings need a restart and keep their running value"`) &&
			strings.Contains(line, `settings="[cluster bind]"`)
	}) {
		t.Errorf("no log line names the settings that need a restart")
	}
	// The leader has heard of the lower priority: still the same leader,
	// same term, on both nodes.
	leader := l.Agents[1]
	waitfor.Until(t, "the leader sees priority 90", electBound, 5*time.Millisecond, func() (bool, string) {
		m := leader.Status().Members
		return len(m) == 1 && m[0].Priority == 90, fmt.Sprintf("%+v", m)
	})
	for i, x := range l.Agents {
		if st := x.Status(); st.LeaderID != 2 || st.Term != ag.Term {
			t.Errorf("node-%d after a lower priority: leader %d term %d, want 2 and %d", i+1, st.LeaderID, st.Term, ag.Term)
		}
	}

	next.Priority = 200
	if err := a.Reload(func() (Config, error) { return next, nil }); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, "node-1 takes over with priority 200", electBound, 5*time.Millisecond, func() (bool, string) {
		st := a.Status()
		return st.State == "leader" && readText(mark) == fmt.Sprintf("%d\n", st.Term), st.State + " " + readText(mark)
	})

	bad := errors.New(`line 3: unknown key "prioirty"`)
	if err := a.Reload(func() (Config, error) { return Config{}, bad }); err != bad {
		t.Errorf("a broken file: %v", err)
	}
	s = a.Status()
	if s.BasePriority != 200 || s.LastReload.Result != "error" || s.LastReload.Error != bad.Error() || s.State != "leader" {
		t.Errorf("after a broken file: priority %d, state %s, last reload %+v", s.BasePriority, s.State, s.LastReload)
	}
	invalid := next
	invalid.Priority = 0
	if err := a.Reload(func() (Config, error) { return invalid, nil }); err == nil || a.Config().Priority != 200 {
		t.Errorf("an invalid config: %v, priority %d", err, a.Config().Priority)
	}
	ok, failed := testutil.ToFloat64(a.met.ConfigReloads.WithLabelValues("ok")), testutil.ToFloat64(a.met.ConfigReloads.WithLabelValues("error"))
	if ok != 2 || failed != 2 {
		t.Errorf("lanleader_config_reloads_total ok %v error %v, want 2 and 2", ok, failed)
	}
}

// TestReloadChecks: a reload replaces the checks: a failing check added
// lowers the priority by its weight, and removing it restores it.
func TestReloadChecks(t *testing.T) {
	l := startLocal(t, LocalOptions{Nodes: 1})
	a := l.Agents[0]
	waitfor.Until(t, "leads", electBound, 5*time.Millisecond, func() (bool, string) {
		return a.Status().State == "leader", a.Status().State
	})
	next := a.Config()
	next.Checks, next.CheckInterval, next.CheckWeight = []Check{{Command: "exit 1"}, {Command: "true"}}, config.MinCheckInterval, 30
	if err := a.Reload(func() (Config, error) { return next, nil }); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, "the failing check counts", electBound, 5*time.Millisecond, func() (bool, string) {
		s := a.Status()
		return s.Priority == 70 && len(s.Checks) == 2 && !s.Checks[0].OK && s.Checks[1].OK, fmt.Sprintf("%d %+v", s.Priority, s.Checks)
	})
	next.Checks = nil
	if err := a.Reload(func() (Config, error) { return next, nil }); err != nil {
		t.Fatal(err)
	}
	if s := a.Status(); s.Priority != 100 || len(s.Checks) != 0 || s.State != "leader" {
		t.Errorf("checks removed: priority %d, checks %+v, state %s", s.Priority, s.Checks, s.State)
	}
}

// readText is the file's text, "" when it does not exist.
func readText(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
