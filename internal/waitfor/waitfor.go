// Package waitfor is the tests' one way to wait on a condition: poll it
// with a deadline and fail with its last reason, instead of sleeping a
// fixed time and hoping.
package waitfor

import (
	"testing"
	"time"
)

// Until polls cond every `every` until it holds, at most timeout, and
// returns the time it took; it fails the test with cond's last reason
// when it does not hold in time. The loop is bounded in count as well as
// time.
func Until(t testing.TB, what string, timeout, every time.Duration, cond func() (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	why := ""
	for try := 0; try <= int(timeout/every)+1; try++ {
		var ok bool
		if ok, why = cond(); ok {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(every)
	}
	t.Fatalf("%s: not within %v: %s", what, timeout, why)
	return 0
}

// Holds polls cond every `every` for the whole of window and fails the
// test with cond's reason the first time it does not hold: what a test
// asserts of a steady state (nothing moves for a second). The loop is
// bounded in count as well as time.
func Holds(t testing.TB, what string, window, every time.Duration, cond func() (bool, string)) {
	t.Helper()
	start := time.Now()
	end := start.Add(window)
	for try := 0; try <= int(window/every)+1; try++ {
		if ok, why := cond(); !ok {
			t.Fatalf("%s: broken %v into %v: %s", what, time.Since(start).Round(time.Millisecond), window, why)
			return
		}
		if !time.Now().Before(end) {
			return
		}
		time.Sleep(every)
	}
}
