package agent

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lanleader/lanleader/agent/internal/realtime"
)

// schedPolicy is the scheduling policy of this process's thread tid, from
// /proc/self/task/TID/sched ("policy : 1"); false if the thread is gone.
func schedPolicy(t *testing.T, tid int) (int, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc/self/task", strconv.Itoa(tid), "sched"))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "policy" {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("thread %d: policy %q", tid, v)
			}
			return n, true
		}
	}
	t.Fatalf("thread %d: no policy line in\n%s", tid, b)
	return 0, false
}

// TestRealtimeThreads: with Realtime every thread of the process runs
// SCHED_FIFO at realtime.Priority, without SCHED_RESET_ON_FORK (the
// threads Go makes later inherit it); after the loop every thread is
// SCHED_OTHER again. (That the job, hooks and checks do not inherit it is
// the proc package's TestJobAndShellNotRealtime.)
func TestRealtimeThreads(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: SCHED_FIFO needs CAP_SYS_NICE (TestRealtimeNotPermitted covers the refusal)")
	}
	set := newAgentSet(t)
	cfg := testConfig("node-1", 1)
	cfg.Realtime = true
	a := set.start(0, cfg)
	waitFor(t, "the agent's realtime threads", 10*time.Second, func() (bool, string) {
		return a.rt.Load(), "not yet"
	})
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		attr, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			continue // gone
		}
		if attr.Policy != unix.SCHED_FIFO || attr.Priority != realtime.Priority || attr.Flags&unix.SCHED_FLAG_RESET_ON_FORK != 0 {
			t.Errorf("thread %d: policy %d priority %d flags %#x, want SCHED_FIFO (1) %d without SCHED_FLAG_RESET_ON_FORK",
				tid, attr.Policy, attr.Priority, attr.Flags, realtime.Priority)
		}
		if p, ok := schedPolicy(t, tid); ok && p != unix.SCHED_FIFO {
			t.Errorf("/proc/self/task/%d/sched: policy %d, want 1", tid, p)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a.Stop(ctx)
	<-a.Done()
	tasks, err = os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		if p, ok := schedPolicy(t, tid); ok && p != 0 {
			t.Errorf("after the loop: thread %d still has policy %d", tid, p)
		}
	}
}
