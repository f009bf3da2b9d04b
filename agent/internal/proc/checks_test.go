package proc

import (
	"fmt"
	"testing"
	"time"
)

// TestCheckStateRiseFall: an OK check fails after fall failures in a row
// and a failed one is OK again after rise passes in a row; a result of
// the other kind starts the count again.
func TestCheckStateRiseFall(t *testing.T) {
	const rise, fall = 3, 2
	cases := []struct {
		first   bool
		results string // p pass, f fail
		want    string // the state after each: O ok, F failed
	}{
		{true, "ffpp", "OFFF"},
		{true, "fpfpff", "OOOOOF"},
		{false, "pppf", "FFOO"},
		{false, "ppfppp", "FFFFFO"},
		{true, "pppp", "OOOO"},
	}
	for _, c := range cases {
		s := Init(c.first)
		got := ""
		for i, r := range c.results {
			before := s.OK
			changed := s.Record(r == 'p', rise, fall)
			if changed != (before != s.OK) {
				t.Errorf("%s: result %d: changed %v, state %v → %v", c.results, i, changed, before, s.OK)
			}
			got += map[bool]string{true: "O", false: "F"}[s.OK]
		}
		if got != c.want {
			t.Errorf("first %v, results %s: states %s, want %s", c.first, c.results, got, c.want)
		}
	}
	// The progress toward a change.
	s := Init(true)
	s.Record(false, rise, 3)
	s.Record(false, rise, 3)
	if s != (CheckState{OK: true, Fails: 2}) {
		t.Errorf("after two of three failures: %+v", s)
	}
	s.Record(false, rise, 3)
	s.Record(true, rise, 3)
	if s != (CheckState{OK: false, Passes: 1}) {
		t.Errorf("after the fall and one pass: %+v", s)
	}
}

// fakeRuns is a CheckRunner whose every run waits for the test's answer.
type fakeRuns struct {
	asked  chan string // the name of the check that runs
	answer chan bool
}

func newFakeRuns() *fakeRuns { return &fakeRuns{asked: make(chan string), answer: make(chan bool)} }

func (f *fakeRuns) run(s CheckSpec) (bool, string) {
	f.asked <- s.Name
	if <-f.answer {
		return true, ""
	}
	return false, "exit status 1"
}

// TestCheckerAddRemove: each check reports its runs with its ID; a check
// removed while it runs reports nothing more, and the others run on.
func TestCheckerAddRemove(t *testing.T) {
	f := newFakeRuns()
	reports := make(chan CheckResult, 10)
	c := NewChecker(f.run, func(r CheckResult) { reports <- r })
	c.Add(7, CheckSpec{Name: "a", Interval: time.Millisecond})
	if got := <-f.asked; got != "a" {
		t.Fatalf("ran %q", got)
	}
	f.answer <- false
	if r := <-reports; r.ID != 7 || r.OK || r.Detail != "exit status 1" {
		t.Fatalf("report %+v", r)
	}
	<-f.asked // a runs again: removed during this run
	c.Remove(7)
	c.Add(8, CheckSpec{Name: "b", Interval: time.Millisecond})
	f.answer <- true // a's run ends after its Remove
	for range 3 {
		if got := <-f.asked; got != "b" {
			t.Fatalf("ran %q after a's Remove", got)
		}
		f.answer <- true
		if r := <-reports; r.ID != 8 || !r.OK {
			t.Fatalf("report %+v", r)
		}
	}
	go func() {
		for range f.asked { // b's run under way when Stop begins, if any
			f.answer <- true
		}
	}()
	c.Stop() // waits for every goroutine, a's too
	close(f.asked)
	for len(reports) > 0 {
		if r := <-reports; r.ID != 8 {
			t.Errorf("report of a removed check: %+v", r)
		}
	}
}

// TestRunAllTimeout: RunAll runs every check at once, bounded by each
// one's timeout (not its interval), and gives the results in order.
func TestRunAllTimeout(t *testing.T) {
	specs := []CheckSpec{
		{Command: "true", Interval: time.Minute, Timeout: time.Minute},
		{Command: "sleep 1000", Interval: time.Minute, Timeout: 200 * time.Millisecond},
		{Command: "echo sick; exit 2", Interval: time.Minute, Timeout: time.Minute},
	}
	start := time.Now()
	res := RunAll(ShellChecks(nil), specs)
	got := fmt.Sprintf("%v %s|%v %s|%v %s|%d", res[0].OK, res[0].Detail, res[1].OK, res[1].Detail, res[2].OK, res[2].Detail, res[2].ID)
	if want := "true |false timed out after 200ms|false exit status 2: sick|2"; got != want {
		t.Errorf("results %s, want %s", got, want)
	}
	if !TimedOut(res[1].Detail) || TimedOut(res[2].Detail) {
		t.Errorf("TimedOut(%q), TimedOut(%q)", res[1].Detail, res[2].Detail)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("RunAll took %v with a timeout of 200ms", d)
	}
}
