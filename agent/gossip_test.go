package agent

import (
	"testing"
	"time"
)

// TestMetaPusherRepeats: a metadata change is broadcast at once and again
// at each of metaRepeats after it (memberlist may drop a queued
// broadcast); a new change starts the schedule again from its own time.
func TestMetaPusherRepeats(t *testing.T) {
	const r0, r1 = 40 * time.Millisecond, 120 * time.Millisecond
	calls := make(chan time.Time, 64)
	a := &Agent{quit: make(chan struct{}), metaPush: metaPush{kick: make(chan struct{}, 1),
		repeats: []time.Duration{r0, r1},
		update:  func(time.Duration) error { calls <- time.Now(); return nil }}}
	done := make(chan struct{})
	go func() { a.metaPusher(); close(done) }()
	next := func() time.Time {
		t.Helper()
		select {
		case c := <-calls:
			return c
		case <-time.After(5 * time.Second):
			t.Fatal("no broadcast within 5 s")
			return time.Time{}
		}
	}

	// One change: three broadcasts, the repeats no earlier than due.
	kick := time.Now()
	a.pushMeta()
	first, second, third := next(), next(), next()
	if d := second.Sub(kick); d < r0 {
		t.Errorf("first repeat %v after the change, want at least %v", d, r0)
	}
	if d := third.Sub(kick); d < r1 {
		t.Errorf("second repeat %v after the change, want at least %v", d, r1)
	}
	if !first.Before(second) || !second.Before(third) {
		t.Errorf("broadcasts out of order: %v %v %v", first, second, third)
	}

	// A change during the repeats: its own broadcast, then its repeats,
	// counted from it rather than from the first change.
	a.pushMeta()
	next()
	kick2 := time.Now()
	a.pushMeta()
	next()
	if d := next().Sub(kick2); d < r0 {
		t.Errorf("repeat %v after the second change, want at least %v", d, r0)
	}
	if d := next().Sub(kick2); d < r1 {
		t.Errorf("repeat %v after the second change, want at least %v", d, r1)
	}

	close(a.quit)
	<-done
	// The first change of that pair was cut short: nothing more was due.
	if n := len(calls); n != 0 {
		t.Errorf("%d broadcasts more than the schedule's", n)
	}
}
