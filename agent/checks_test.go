package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestFaultCheck: a check of weight 0 that fails on the leader makes it
// resign although preemption is off, and the other node leads; the node
// stays out of the elections (its /status says why) until the check has
// passed rise times, and then it is a candidate again that does not take
// the leadership back.
func TestFaultCheck(t *testing.T) {
	dir := t.TempDir()
	l := startLocal(t, LocalOptions{Nodes: 2, Base: func(c *Config) {
		c.Preempt = false
		c.Checks = []Check{{Name: "app", Command: "test ! -e " + dir + "/fault-$LANLEADER_NODE_ID", Interval: 100 * time.Millisecond, Rise: 3, Fault: true}}
	}})
	waitLeader(t, l, electBound, 1)
	if err := os.WriteFile(filepath.Join(dir, "fault-2"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, l, failoverBound, 0)
	st := l.Agents[1].Status()
	if len(st.Checks) != 1 || st.Checks[0].State != "failed" || !st.Checks[0].Fault || st.Checks[0].Weight != 0 ||
		st.Checks[0].Rise != 3 || st.Priority != 100 {
		t.Errorf("node-2's status: priority %d checks %+v", st.Priority, st.Checks)
	}
	if len(st.Fault) != 1 || !strings.Contains(st.Fault[0], "check of weight 0 fails (app)") {
		t.Errorf("node-2's fault %q", st.Fault)
	}
	if !strings.Contains(l.logs.String(), "resigning") {
		t.Errorf("node-2 did not resign")
	}
	os.Remove(filepath.Join(dir, "fault-2"))
	waitFor(t, "node-2 out of fault", failoverBound, func() (bool, string) {
		st := l.Agents[1].Status()
		return len(st.Fault) == 0 && st.Checks[0].OK, fmt.Sprintf("%q %+v", st.Fault, st.Checks)
	})
	if !strings.Contains(l.logs.String(), "out of fault") {
		t.Errorf("the log does not say node-2 is out of fault")
	}
	// A candidate again, without preemption: node-1 stays the leader.
	waitLeader(t, l, electBound, 0)
	if st := l.Agents[1].Status(); st.LeaderID != 1 || st.State != "follower" {
		t.Errorf("node-2 %s, leader %d; want a follower of node-1", st.State, st.LeaderID)
	}
}

// TestTrackFile: a track file given by reloadParts (a reload's way)
// puts the leader in fault when it appears, and the other node leads;
// the metrics and /status say so; when it goes the node leads again
// (preemption, the default). A file in a missing directory is absent.
func TestTrackFile(t *testing.T) {
	dir := t.TempDir()
	maint := filepath.Join(dir, "maintenance")
	l := startLocal(t, LocalOptions{Nodes: 2})
	waitLeader(t, l, electBound, 1)
	a := l.Agents[1]
	cfg := a.Config()
	cfg.TrackFiles = []string{filepath.Join(dir, "missing", "x"), maint}
	a.call(func() { a.reloadParts(&cfg) })
	if err := os.WriteFile(maint, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, l, failoverBound+2*TrackFileEvery, 0)
	st := a.Status()
	if fmt.Sprint(st.TrackFiles) != fmt.Sprintf("[{%s/missing/x false} {%s true}]", dir, maint) || len(st.Fault) != 1 {
		t.Errorf("node-2's track files %v, fault %q", st.TrackFiles, st.Fault)
	}
	if body := gather(t, a); !strings.Contains(body, "lanleader_fault 1\n") {
		t.Errorf("metrics lack lanleader_fault 1:\n%s", body)
	}
	os.Remove(maint)
	waitLeader(t, l, failoverBound+2*TrackFileEvery, 1)
	if st := a.Status(); len(st.Fault) != 0 {
		t.Errorf("node-2's fault %q after the file went", st.Fault)
	}
}

// TestFaultHook: entering and leaving fault (a track file) runs
// on_change with LANLEADER_STATE fault and LANLEADER_FAULT the reason,
// then the state it returns to with LANLEADER_FAULT empty.
func TestFaultHook(t *testing.T) {
	dir := t.TempDir()
	maint, out := filepath.Join(dir, "maintenance"), filepath.Join(dir, "changes")
	l := startLocal(t, LocalOptions{Nodes: 2, Base: func(c *Config) {
		c.OnChange = `echo "$LANLEADER_NAME|$LANLEADER_STATE|$LANLEADER_FAULT" >> ` + out
	}})
	waitLeader(t, l, electBound, 1)
	a := l.Agents[0]
	cfg := a.Config()
	cfg.TrackFiles = []string{maint}
	a.call(func() { a.reloadParts(&cfg) })
	name := cfg.Name + "|"
	changes := func() []string {
		b, _ := os.ReadFile(out)
		var mine []string
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, name); ok {
				mine = append(mine, rest)
			}
		}
		return mine
	}
	if err := os.WriteFile(maint, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	want := "fault|a track file is present (" + maint + ")"
	waitFor(t, "on_change in fault", 2*TrackFileEvery+5*time.Second, func() (bool, string) {
		return slices.Contains(changes(), want), fmt.Sprint(changes())
	})
	os.Remove(maint)
	waitFor(t, "on_change out of fault", 2*TrackFileEvery+5*time.Second, func() (bool, string) {
		c := changes()
		i := slices.Index(c, want)
		return i >= 0 && slices.Contains(c[i+1:], "follower|"), fmt.Sprint(c)
	})
}

// TestReplaceChecks: a reload's checks replace the running ones (the
// part's own test, agent/part/checks, holds what each keeps): a kept
// failed check stays failed at once, a changed one fails again with its
// new weight, a new one passes, a removed one is gone from /status and
// its series from the metrics, and the priority follows.
func TestReplaceChecks(t *testing.T) {
	l := startLocal(t, LocalOptions{Nodes: 1, Base: func(c *Config) {
		c.Checks = []Check{{Name: "keep", Command: "exit 1", Fall: 1, Rise: 5}, {Name: "change", Command: "exit 1"}, {Name: "drop", Command: "true"}}
	}})
	a := l.Agents[0]
	waitLeader(t, l, electBound, 0)
	cfg := a.Config()
	cfg.Checks = []Check{{Name: "new", Command: "true"}, cfg.Checks[0], {Name: "change", Command: "exit 1", Weight: 7}}
	var atOnce []CheckStatus
	a.call(func() {
		a.reloadParts(&cfg)
		atOnce, _ = a.checks.Status()
	})
	if len(atOnce) != 3 || atOnce[0].Name != "new" || !atOnce[0].OK || atOnce[1].Name != "keep" || atOnce[1].OK || atOnce[2].OK || atOnce[2].Weight != 7 {
		t.Fatalf("right after the replace: %+v", atOnce)
	}
	waitFor(t, "the changed check fails again, the new one passes", 5*time.Second, func() (bool, string) {
		st := a.Status()
		return len(st.Checks) == 3 && st.Checks[2].State == "failed" && st.Checks[0].Last != "", fmt.Sprintf("%+v", st.Checks)
	})
	if p := a.Status().Priority; p != 100-50-7 {
		t.Errorf("priority %d, want 43 (keep: 50, change: 7)", p)
	}
	if n := testutil.ToFloat64(a.met.CheckRuns.WithLabelValues("new", "pass")); n < 1 {
		t.Errorf("lanleader_check_runs_total{check=new,check_result=pass} %v", n)
	}
	// The removed check's series are gone; the others' stay.
	if n := testutil.CollectAndCount(a.met.CheckRuns); n != 3*3 {
		t.Errorf("%d series of lanleader_check_runs_total after the replace, want 9 (keep, change, new)", n)
	}
}
