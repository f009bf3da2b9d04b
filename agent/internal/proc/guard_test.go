package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startAgent starts this test binary as an agent that runs script with
// grace, and returns it.
func startAgent(t *testing.T, grace time.Duration, script string, args ...string) *exec.Cmd {
	t.Helper()
	return startSelf(t, nil, []string{asAgentEnv + "=" + grace.String()}, append([]string{"--", script}, args...)...)
}

// TestGuardStopsJobWhenAgentDies: when the agent is SIGKILLed, its
// guard stops the job as the agent would have: SIGTERM to the group (the
// job's trap runs), then SIGKILL after the grace to whatever is left,
// the job's child included.
func TestGuardStopsJobWhenAgentDies(t *testing.T) {
	stamps := filepath.Join(t.TempDir(), "stamps")
	script := writeScript(t, `trap 'echo "stop $$" >> "$1"; exit 0' TERM
sleep 1000 &
echo "child $!" >> "$1"
echo "up $$" >> "$1"
while :; do sleep 0.05; done
`)
	agent := startAgent(t, 5*time.Second, script, stamps)
	job, child := pidIn(t, stamps, "up"), pidIn(t, stamps, "child")
	agent.Process.Kill()
	agent.Wait()
	pidIn(t, stamps, "stop")
	// The child ignores nothing but was not asked: the guard's SIGKILL of
	// the group ends it once the job has exited, well within the grace.
	waitFor(t, "the job and its child gone", 3*time.Second, func() (bool, string) {
		return !alive(job) && !alive(child), ""
	})
}

// TestGuardGraceWhenAgentDies: a job that ignores SIGTERM is killed,
// with its group, when the grace ends after the agent's death, and not
// before.
func TestGuardGraceWhenAgentDies(t *testing.T) {
	stamps := filepath.Join(t.TempDir(), "stamps")
	const grace = 500 * time.Millisecond
	agent := startAgent(t, grace, writeScript(t, stubbornJob+"\n"), stamps)
	child := pidIn(t, stamps, "child")
	// The job's trap is set once it wrote its child's pid.
	t0 := time.Now()
	agent.Process.Kill()
	agent.Wait()
	waitFor(t, "the job's child killed", grace+5*time.Second, func() (bool, string) { return !alive(child), "" })
	if took := time.Since(t0); took < grace || took > grace+2*time.Second {
		t.Errorf("the group was killed %v after the agent died, want the grace %v and a little", took, grace)
	}
	if b, _ := os.ReadFile(stamps); strings.Count(string(b), "child ") != 1 {
		t.Errorf("the job ran more than once: %q", b)
	}
}

// A stop that reaches the guard before it has started the job (the
// agent stopped the job, or died, a moment after starting it) means no
// job: the signal reached nobody else, and the guard's wait leaves
// SIGTERM to the job. Other signals do not stop it.
func TestGuardStoppedBeforeStart(t *testing.T) {
	for _, tc := range []struct {
		sigs []os.Signal
		want bool
	}{
		{nil, false},
		{[]os.Signal{syscall.SIGHUP, syscall.SIGPIPE}, false},
		{[]os.Signal{syscall.SIGTERM}, true},
		{[]os.Signal{syscall.SIGPIPE, syscall.SIGINT}, true},
		{[]os.Signal{guardDeathSignal}, true},
	} {
		ch := make(chan os.Signal, 4)
		for _, s := range tc.sigs {
			ch <- s
		}
		if got := stoppedBeforeStart(ch); got != tc.want {
			t.Errorf("signals %v before the start: stopped %v, want %v", tc.sigs, got, tc.want)
		}
		if len(ch) != 0 && !tc.want {
			t.Errorf("signals %v: %d left in the channel, want all taken", tc.sigs, len(ch))
		}
	}
}

// TestStatFields: the state and the process group of /proc/PID/stat,
// whatever the command's name holds.
func TestStatFields(t *testing.T) {
	for _, c := range []struct {
		stat  string
		state byte
		pgrp  int
		ok    bool
	}{
		{"42 (sleep) S 1 42 42 0 -1 4194560 95 0 0 0", 'S', 42, true},
		{"7 (a b) (c) Z 1 9 9 0", 'Z', 9, true},
		{"7 (x)) R 3 11 11", 'R', 11, true},
		{"7 (x) R 3", 0, 0, false},
		{"7 (x", 0, 0, false},
		{"7 (x) R 3 y 1", 0, 0, false},
	} {
		state, pgrp, ok := statFields([]byte(c.stat))
		if state != c.state || pgrp != c.pgrp || ok != c.ok {
			t.Errorf("%q: %c %d %v, want %c %d %v", c.stat, state, pgrp, ok, c.state, c.pgrp, c.ok)
		}
	}
	// This process, read for real: its group is its own pgrp.
	got := -1
	if !scanGroup(syscall.Getpgrp(), func(pid int) {
		if pid == os.Getpid() {
			got = pid
		}
	}) || got != os.Getpid() {
		t.Errorf("scanGroup(%d) did not list this process (%d)", syscall.Getpgrp(), os.Getpid())
	}
}
