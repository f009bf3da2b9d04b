package waitfor

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a testing.TB that records Fatalf instead of ending the test.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = fmt.Sprintf(format, args...)
}

func TestUntilHolds(t *testing.T) {
	n := 0
	r := &recorder{TB: t}
	Until(r, "third poll", time.Second, time.Millisecond, func() (bool, string) { n++; return n == 3, "not yet" })
	if n != 3 || r.failed != "" {
		t.Fatalf("polls %d, failed %q; want 3 polls and no failure", n, r.failed)
	}
}

func TestUntilFailsWithLastReason(t *testing.T) {
	n := 0
	r := &recorder{TB: t}
	Until(r, "never", 20*time.Millisecond, 5*time.Millisecond, func() (bool, string) { n++; return false, "reason " + string(rune('0'+n)) })
	if !strings.HasSuffix(r.failed, "reason "+string(rune('0'+n))) {
		t.Fatalf("failure %q does not end with the last reason (poll %d)", r.failed, n)
	}
	if n > 20/5+2 {
		t.Fatalf("%d polls for a 20ms timeout every 5ms: the loop is not bounded", n)
	}
}

func TestHolds(t *testing.T) {
	n := 0
	r := &recorder{TB: t}
	Holds(r, "steady", 20*time.Millisecond, 5*time.Millisecond, func() (bool, string) { n++; return true, "" })
	if r.failed != "" || n < 2 || n > 20/5+2 {
		t.Fatalf("a condition that holds: %d polls, failed %q", n, r.failed)
	}
	n = 0
	Holds(r, "steady", time.Second, time.Millisecond, func() (bool, string) { n++; return n < 3, "moved" })
	if n != 3 || !strings.HasSuffix(r.failed, ": moved") || !strings.HasPrefix(r.failed, "steady: broken") {
		t.Fatalf("broken at the third poll: %d polls, failed %q", n, r.failed)
	}
}
