package realtime

import (
	"os"
	"os/exec"
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
