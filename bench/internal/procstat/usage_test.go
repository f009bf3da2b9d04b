//go:build linux

package procstat

import (
	"os"
	"testing"
	"time"
)

// TestSelf reads this test process: its parent is the one the kernel
// names, it has used some CPU, and its resident set is at least a MiB.
func TestSelf(t *testing.T) {
	pid := os.Getpid()
	if got, want := Parent(pid), os.Getppid(); got != want {
		t.Errorf("Parent = %d, want %d", got, want)
	}
	end := time.Now().Add(50 * time.Millisecond)
	for x := 0; time.Now().Before(end); x++ { // burn a little CPU: 5 ticks
		_ = x * x
	}
	cpu, err := CPU(pid)
	if err != nil || cpu < 10*time.Millisecond || cpu%(10*time.Millisecond) != 0 {
		t.Errorf("CPU = %v, %v; want at least one 10 ms tick, in whole ticks", cpu, err)
	}
	rss, err := RSS(pid)
	if err != nil || rss < 1<<20 {
		t.Errorf("RSS = %d, %v; want at least 1 MiB", rss, err)
	}
	if Parent(1<<30) != 0 {
		t.Errorf("Parent of a pid that does not exist is not 0")
	}
	if _, err := CPU(1 << 30); err == nil {
		t.Errorf("CPU of a pid that does not exist: no error")
	}
}

func TestMachine(t *testing.T) {
	b0, a0, err := Machine()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // a span for the machine's clocks to move on
	b1, a1, err := Machine()
	if err != nil {
		t.Fatal(err)
	}
	if b0 <= 0 || a0 < b0 || b1 < b0 || a1 < a0 || a1-a0 < b1-b0 {
		t.Errorf("busy %v of %v, then %v of %v: want 0 < busy ≤ all, neither going back", b0, a0, b1, a1)
	}
}
