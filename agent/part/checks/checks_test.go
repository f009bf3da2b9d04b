package checks

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/agent/part/parttest"
	"github.com/lanleader/lanleader/internal/waitfor"
	"github.com/lanleader/lanleader/metrics"
)

// results is a scripted check runner: a check passes when its command is
// "true", and counts its runs.
type results struct {
	mu   sync.Mutex
	runs map[string]int
}

func (r *results) run(s proc.CheckSpec) (bool, string) {
	r.mu.Lock()
	r.runs[s.Name]++
	r.mu.Unlock()
	if s.Command == "true" {
		return true, ""
	}
	return false, "exit status 1"
}

func (r *results) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs[name]
}

type fixture struct {
	h       *parttest.FakeHost
	c       *Checks
	r       *results
	met     *metrics.Metrics
	changes int
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{h: parttest.NewFakeHost(), r: &results{runs: map[string]int{}}}
	f.met = metrics.New(prometheus.NewRegistry(), "test", func() metrics.View { return metrics.View{} })
	f.c = New(f.h, f.met, f.r.run, func() { f.changes++ })
	t.Cleanup(f.c.Stop)
	return f
}

func resolved(checks ...config.Check) []config.Check {
	c := config.DefaultConfig()
	c.CheckInterval = time.Millisecond
	c.Checks = checks
	return c.ResolvedChecks()
}

// First runs every check once: a failed one costs its weight, a failed
// fault check is named, and /status says so with the detail.
func TestFirst(t *testing.T) {
	f := newFixture(t)
	f.c.First(resolved(config.Check{Name: "db", Command: "false"}, config.Check{Name: "disk", Command: "false", Fault: true}, config.Check{Name: "ok", Command: "true"}))
	if w, n, faults := f.c.Weights(), f.c.Failing(), f.c.Faults(); w != config.DefaultCheckWeight || n != 2 || strings.Join(faults, ",") != "disk" {
		t.Fatalf("weights %d, failing %d, faults %q", w, n, faults)
	}
	st, view := f.c.Status()
	if len(st) != 3 || st[0].State != "failed" || st[0].Detail != "exit status 1" || st[0].Last == "" || st[2].State != "ok" || view[2] != (metrics.Check{Name: "ok", Up: true}) {
		t.Errorf("status %+v, view %+v", st, view)
	}
	if !strings.Contains(f.h.LogText(), `msg="check fails" check=db`) {
		t.Errorf("log %q", f.h.LogText())
	}
	if n := testutil.ToFloat64(f.met.CheckRuns.WithLabelValues("db", "fail")); n != 1 {
		t.Errorf("db's failures counted %v", n)
	}
}

// Started, each check runs on its own goroutine and its results come to
// the loop through the host: rise passes in a row make a failed check OK,
// and the driver hears of every result.
func TestRise(t *testing.T) {
	f := newFixture(t)
	f.c.First(resolved(config.Check{Name: "db", Command: "false", Rise: 3}))
	f.c.Start()
	f.c.Replace(resolved(config.Check{Name: "db", Command: "true", Rise: 3}))
	if f.c.Failing() != 1 {
		t.Fatal("a changed check lost its failed state")
	}
	waitfor.Until(t, "db passes again", 5*time.Second, time.Millisecond, func() (bool, string) {
		f.h.RunPosts()
		st, _ := f.c.Status()
		return f.c.Failing() == 0, st[0].State
	})
	if f.changes < 3 || !strings.Contains(f.h.LogText(), "check passes again") {
		t.Errorf("%d changes told, log %q", f.changes, f.h.LogText())
	}
}

// Replace keeps an unchanged check's run (its state and counts), starts a
// changed one (same name) anew from its old state with its counts at 0,
// makes a new one OK until its first result, and drops a removed one's
// metric series.
func TestReplace(t *testing.T) {
	f := newFixture(t)
	keep := config.Check{Name: "keep", Command: "false", Fall: 1, Rise: 5}
	f.c.First(resolved(keep, config.Check{Name: "change", Command: "false"}, config.Check{Name: "drop", Command: "true"}))
	before := append([]*run(nil), f.c.runs...)
	f.c.Replace(resolved(config.Check{Name: "new", Command: "true"}, keep, config.Check{Name: "change", Command: "false", Weight: 7}))
	after := f.c.runs
	if len(after) != 3 || after[1] != before[0] || after[1].state.OK {
		t.Fatalf("keep: before %+v, after %+v", before[0], after[1])
	}
	if c := after[2]; c == before[1] || c.state != (proc.CheckState{OK: false}) || !c.ran || c.def.Weight != 7 || c.detail != "exit status 1" {
		t.Errorf("changed check %+v", c)
	}
	if c := after[0]; c.def.Name != "new" || c.ran || !c.state.OK {
		t.Errorf("new check %+v", c)
	}
	if w := f.c.Weights(); w != config.DefaultCheckWeight+7 {
		t.Errorf("weights %d, want %d", w, config.DefaultCheckWeight+7)
	}
	if n := testutil.CollectAndCount(f.met.CheckRuns); n != 3*3 {
		t.Errorf("%d series after the replace, want 9 (keep, change, new; drop's gone)", n)
	}
	if !f.h.TakeDirty() {
		t.Error("the status was not marked out of date")
	}
}

// A result of a check replaced since is stale: it changes nothing.
func TestStaleResult(t *testing.T) {
	f := newFixture(t)
	f.c.First(resolved(config.Check{Name: "a", Command: "true"}))
	old := f.c.runs[0].id
	f.c.Replace(resolved(config.Check{Name: "a", Command: "false"}))
	f.c.report(proc.CheckResult{ID: old, OK: false, At: time.Now(), Detail: "late"})
	if f.changes != 0 || f.c.runs[0].detail == "late" {
		t.Errorf("a stale result counted: %d changes, %+v", f.changes, f.c.runs[0])
	}
}

// Reload replaces the checks when the configuration's differ, and names
// "check"; the same checks (their resolved definitions) are no reload of
// theirs, and keep their runs.
func TestReload(t *testing.T) {
	f := newFixture(t)
	old := config.DefaultConfig()
	old.Checks = []config.Check{{Name: "db", Command: "false"}}
	f.c.First(old.ResolvedChecks())
	before := f.c.runs[0]
	same := old
	if got := f.c.Reload(&old, &same); got != nil || f.c.runs[0] != before {
		t.Fatalf("the same checks: applied %q, run kept %v", got, f.c.runs[0] == before)
	}
	next := old
	next.Checks = []config.Check{{Name: "db", Command: "false"}, {Name: "web", Command: "true"}}
	if got := f.c.Reload(&old, &next); !slices.Equal(got, []string{"check"}) {
		t.Fatalf("a check added: applied %q", got)
	}
	if st, _ := f.c.Status(); len(st) != 2 || st[1].Name != "web" || f.c.runs[0] != before || f.c.Failing() != 1 {
		t.Errorf("after the reload: %+v", st)
	}
	longer := next
	longer.CheckInterval = 2 * next.CheckInterval
	if got := f.c.Reload(&next, &longer); !slices.Equal(got, []string{"check"}) {
		t.Errorf("the interval changed: applied %q", got)
	}
}
