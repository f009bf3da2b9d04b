package agent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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
// other thread of the process, runs SCHED_FIFO at RealtimePriority with
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
	if attr.Policy != unix.SCHED_FIFO || attr.Priority != RealtimePriority || attr.Flags&unix.SCHED_FLAG_RESET_ON_FORK == 0 {
		t.Errorf("thread %d: policy %d priority %d flags %#x, want SCHED_FIFO (1) %d with SCHED_FLAG_RESET_ON_FORK",
			tid, attr.Policy, attr.Priority, attr.Flags, RealtimePriority)
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

// TestRealtimeNotPermitted runs goRealtime in a child of this test binary
// (TestRealtimeChild) that drops root for nobody: with RLIMIT_RTPRIO 0 it
// is refused with an error that says what is missing; with
// RLIMIT_RTPRIO 10 (the unit's LimitRTPRIO=10) it succeeds, where root may
// raise the limit (CAP_SYS_RESOURCE).
func TestRealtimeNotPermitted(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot start a child as another user")
	}
	child := func(rtprio string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRealtimeChild$", "-test.v")
		cmd.Env = append(os.Environ(), "LANLEADER_TEST_REALTIME_CHILD="+rtprio)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child with RLIMIT_RTPRIO %s: %v\n%s", rtprio, err, out)
		}
		return string(out)
	}
	out := child("0")
	for _, want := range []string{"realtime: error: SCHED_FIFO priority 10 for the event loop's thread: operation not permitted: needs CAP_SYS_NICE", "RLIMIT_RTPRIO of at least 10 (it is 0)", "lanleader-realtime.conf (RestrictRealtime=no, LimitRTPRIO=10, SystemCallFilter=sched_setattr)"} {
		if !strings.Contains(out, want) {
			t.Errorf("RLIMIT_RTPRIO 0: the child's output lacks %q:\n%s", want, out)
		}
	}
	switch out := child("10"); {
	case strings.Contains(out, "realtime: no RLIMIT_RTPRIO 10:"):
		t.Logf("RLIMIT_RTPRIO 10 not tried: raising the limit needs CAP_SYS_RESOURCE, which this host's root lacks")
	case !strings.Contains(out, "realtime: ok: policy 1 priority 10\n"):
		t.Errorf("RLIMIT_RTPRIO 10: want SCHED_FIFO 10, got:\n%s", out)
	}
}

// TestRealtimeChild is TestRealtimeNotPermitted's child: it sets
// RLIMIT_RTPRIO, becomes nobody (which drops every capability), calls
// goRealtime and prints the outcome.
func TestRealtimeChild(t *testing.T) {
	rtprio := os.Getenv("LANLEADER_TEST_REALTIME_CHILD")
	if rtprio == "" {
		t.Skip("only as TestRealtimeNotPermitted's child")
	}
	n, _ := strconv.ParseUint(rtprio, 10, 64)
	if err := unix.Setrlimit(unix.RLIMIT_RTPRIO, &unix.Rlimit{Cur: n, Max: n}); err != nil {
		os.Stdout.WriteString("realtime: no RLIMIT_RTPRIO " + rtprio + ": " + err.Error() + "\n")
		return
	}
	if err := unix.Setgroups(nil); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setresgid(65534, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setresuid(65534, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	done := make(chan string)
	go func() {
		tid, err := goRealtime()
		if err != nil {
			done <- "realtime: error: " + err.Error()
			return
		}
		attr, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			done <- "realtime: getattr: " + err.Error()
			return
		}
		done <- "realtime: ok: policy " + strconv.Itoa(int(attr.Policy)) + " priority " + strconv.Itoa(int(attr.Priority))
	}()
	os.Stdout.WriteString(<-done + "\n")
}
