package realtime

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRealtimeNotPermitted runs Lock in a child of this test binary
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
	for _, want := range []string{"realtime: error: SCHED_FIFO priority 10 for the agent's threads: operation not permitted: needs CAP_SYS_NICE", "RLIMIT_RTPRIO of at least 10 (it is 0)", "lanleader-realtime.conf (RestrictRealtime=no, LimitRTPRIO=10, SystemCallFilter=sched_setattr)"} {
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
// Lock and prints the outcome.
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
		tid, err := Lock()
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

// policies is the scheduling policy of every thread of this process, by
// thread id.
func policies(t *testing.T) map[int]int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[int]int)
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		if attr, err := unix.SchedGetAttr(tid, 0); err == nil {
			out[tid] = int(attr.Policy)<<8 | int(attr.Priority)
		}
	}
	return out
}

// childPolicy is the policy line of /proc/self/sched of a shell started
// by start(cmd).
func childPolicy(t *testing.T, start func(*exec.Cmd) error) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", "grep -E '^policy' /proc/self/sched | tr -d ' '")
	var out strings.Builder
	cmd.Stdout = &out
	if err := start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out.String())
}

// TestProcess: Process gives every thread SCHED_FIFO at Priority, and the
// threads Go makes afterwards have it too; a process started through
// Ordinary has the ordinary policy (one started without it inherits the
// realtime one: that is what Ordinary is for), and the starting thread
// has its policy back; Release gives every thread the ordinary policy.
func TestProcess(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: SCHED_FIFO needs CAP_SYS_NICE (TestRealtimeNotPermitted covers the refusal)")
	}
	t.Cleanup(func() { Release() })
	if err := Process(); err != nil {
		t.Fatal(err)
	}
	want := unix.SCHED_FIFO<<8 | Priority
	// Threads made now: goroutines that keep their threads force new ones.
	const n = 8
	tids, release := make(chan int, n), make(chan struct{})
	for range n {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			tids <- unix.Gettid()
			<-release
		}()
	}
	made := make([]int, 0, n)
	for range n {
		made = append(made, <-tids)
	}
	all := policies(t)
	for tid, p := range all {
		if p != want {
			t.Errorf("thread %d: policy<<8|priority %#x, want %#x (SCHED_FIFO %d)", tid, p, want, Priority)
		}
	}
	close(release)
	for _, tid := range made {
		if _, ok := all[tid]; !ok {
			t.Errorf("thread %d, made after Process, not listed", tid)
		}
	}
	if got := childPolicy(t, func(c *exec.Cmd) error { return Ordinary(c.Start) }); got != "policy:0" {
		t.Errorf("a process started through Ordinary: %q, want policy:0 (SCHED_OTHER)", got)
	}
	if got := childPolicy(t, func(c *exec.Cmd) error { return c.Start() }); got != "policy:1" {
		t.Errorf("a process started without Ordinary: %q, want policy:1 (inherited SCHED_FIFO)", got)
	}
	for tid, p := range policies(t) {
		if p != want {
			t.Errorf("after the starts: thread %d: policy<<8|priority %#x, want %#x", tid, p, want)
		}
	}
	if err := Release(); err != nil {
		t.Fatal(err)
	}
	for tid, p := range policies(t) {
		if p != 0 {
			t.Errorf("after Release: thread %d: policy<<8|priority %#x, want 0 (SCHED_OTHER)", tid, p)
		}
	}
	if got := childPolicy(t, func(c *exec.Cmd) error { return Ordinary(c.Start) }); got != "policy:0" {
		t.Errorf("Ordinary after Release: %q, want policy:0", got)
	}
}
