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

// TestRealtimeLoopThread: with Realtime the event loop's thread, and no
// other thread of the process, runs SCHED_FIFO at realtime.Priority with
// SCHED_RESET_ON_FORK; after the loop the thread is gone or SCHED_OTHER
// again.
func TestRealtimeLoopThread(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: SCHED_FIFO needs CAP_SYS_NICE (TestRealtimeNotPermitted covers the refusal)")
	}
	set := newAgentSet(t)
	cfg := testConfig("node-1", 1)
	cfg.Realtime = true
	a := set.start(0, cfg)
	var tid int
	waitFor(t, "the loop's realtime thread", 10*time.Second, func() (bool, string) {
		tid = int(a.rtTid.Load())
		return tid != 0, "no thread id yet"
	})
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		t.Fatal(err)
	}
	if attr.Policy != unix.SCHED_FIFO || attr.Priority != realtime.Priority || attr.Flags&unix.SCHED_FLAG_RESET_ON_FORK == 0 {
		t.Errorf("thread %d: policy %d priority %d flags %#x, want SCHED_FIFO (1) %d with SCHED_FLAG_RESET_ON_FORK",
			tid, attr.Policy, attr.Priority, attr.Flags, realtime.Priority)
	}
	if p, _ := schedPolicy(t, tid); p != unix.SCHED_FIFO {
		t.Errorf("/proc/self/task/%d/sched: policy %d, want 1", tid, p)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		other, _ := strconv.Atoi(task.Name())
		if p, ok := schedPolicy(t, other); ok && other != tid && p != 0 { // 0: SCHED_OTHER
			t.Errorf("thread %d (not the loop's) has policy %d", other, p)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a.Stop(ctx)
	<-a.Done()
	if p, ok := schedPolicy(t, tid); ok && p != 0 {
		t.Errorf("after the loop: thread %d still has policy %d", tid, p)
	}
}
