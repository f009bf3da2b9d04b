package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/internal/realtime"
)

// TestShellTimeoutKillsGroup: at its timeout the command is killed with
// everything it started in its group.
func TestShellTimeoutKillsGroup(t *testing.T) {
	f := filepath.Join(t.TempDir(), "pids")
	const timeout = 300 * time.Millisecond
	res := Shell{Command: fmt.Sprintf(`sleep 1000 & echo "child $!" >> %s; sleep 1000`, f), Timeout: timeout}.Run()
	if !res.TimedOut || res.OK() || res.Pid == 0 {
		t.Fatalf("result %+v, want a timeout", res)
	}
	if res.Took < timeout || res.Took > timeout+2*time.Second {
		t.Errorf("took %v, want the timeout %v and a little", res.Took, timeout)
	}
	child := pidIn(t, f, "child")
	waitFor(t, "the child killed", 2*time.Second, func() (bool, string) { return !alive(child), fmt.Sprint(child) })
	if ok, detail := RunCheck("sleep 1000", timeout, nil); ok || detail != "timed out after 300ms" {
		t.Errorf("check: %v %q, want timed out after 300ms", ok, detail)
	}
}

// TestShellLeftoversKilled: what a command leaves in its group when it
// exits is killed, and does not hold the run up.
func TestShellLeftoversKilled(t *testing.T) {
	f := filepath.Join(t.TempDir(), "pids")
	res := Shell{Command: fmt.Sprintf(`sleep 1000 & echo "child $!" >> %s; echo done`, f), Timeout: time.Minute}.Run()
	if !res.OK() || res.Last != "done" || res.Took > 2*time.Second {
		t.Fatalf("result %+v, want ok at once with last line done", res)
	}
	child := pidIn(t, f, "child")
	waitFor(t, "the child killed", 2*time.Second, func() (bool, string) { return !alive(child), fmt.Sprint(child) })
}

// TestShellLastLine: the last line of the output, stdout and stderr
// together, blanks trimmed as a check's detail always had them.
func TestShellLastLine(t *testing.T) {
	long := strings.Repeat("x", 5000)
	for _, c := range []struct{ command, want string }{
		{`echo a; echo b`, "b"},
		{`printf 'a\n  b  \n\n \n'`, "  b"},
		{`printf '\n  only  \n'`, "only"},
		{`printf 'no newline'`, "no newline"},
		{`true`, ""},
		{`echo out; echo err >&2`, "err"},
		{`printf 'a\r\nb\r\n'`, "b"},
		{`echo first; echo ` + long, strings.Repeat("x", 200) + "…"},
	} {
		if got := (Shell{Command: c.command, Timeout: 5 * time.Second}).Run().Last; got != c.want {
			t.Errorf("%.40q: last line %q, want %q", c.command, got, c.want)
		}
	}
}

// TestShellLines: Line gets every line, in order, with the shell's pid.
func TestShellLines(t *testing.T) {
	var mu sync.Mutex
	var got []string
	var pids []int
	res := Shell{Command: `echo one; echo two >&2; echo three`, Timeout: 5 * time.Second, Line: func(pid int, line string) {
		mu.Lock()
		defer mu.Unlock()
		got, pids = append(got, line), append(pids, pid)
	}}.Run()
	if !slices.Equal(got, []string{"one", "two", "three"}) {
		t.Errorf("lines %q", got)
	}
	for _, p := range pids {
		if p != res.Pid {
			t.Errorf("line with pid %d, the shell's is %d", p, res.Pid)
		}
	}
}

// TestRunCheck: a check passes when it exits 0; one that fails says its
// exit status and the last line of its output.
func TestRunCheck(t *testing.T) {
	if ok, detail := RunCheck("echo fine", time.Second, nil); !ok || detail != "" {
		t.Errorf("passing check: %v %q", ok, detail)
	}
	if ok, detail := RunCheck("echo first; echo disk full >&2; exit 3", time.Second, nil); ok || detail != "exit status 3: disk full" {
		t.Errorf("failing check: %v %q, want exit status 3: disk full", ok, detail)
	}
	if ok, detail := RunCheck("exit 1", time.Second, nil); ok || detail != "exit status 1" {
		t.Errorf("silent failing check: %v %q, want exit status 1", ok, detail)
	}
	if ok, detail := RunCheck("kill -9 $$", time.Second, nil); ok || detail != "killed by SIGKILL" {
		t.Errorf("killed check: %v %q", ok, detail)
	}
}

// TestJobAndShellNotRealtime: with the agent's threads SCHED_FIFO
// (realtime.Process), the job's guard keeps it, but the job and a shell
// (hooks, checks) run SCHED_OTHER: they start through realtime.Ordinary
// (the job from its guard, after realtime.Adopt).
func TestJobAndShellNotRealtime(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: SCHED_FIFO needs CAP_SYS_NICE")
	}
	if err := realtime.Process(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { realtime.Release() })
	const policy = `grep -E '^policy' /proc/self/sched | tr -d ' '`
	if got := (Shell{Command: policy, Timeout: 5 * time.Second}).Run().Last; got != "policy:0" {
		t.Errorf("a shell: %q, want policy:0 (SCHED_OTHER)", got)
	}
	out := filepath.Join(t.TempDir(), "policy")
	h := newHarness(t, Config{Argv: []string{writeScript(t, policy+` > "$1.tmp"; mv "$1.tmp" "$1"; exec sleep 1000`), out}, Grace: time.Second})
	h.sup.Set(Want{Run: true, Gen: 1, Term: 1, Leader: 7})
	ev := h.next(t, Started, 5*time.Second)
	// The guard keeps the realtime policy: it kills the job at the
	// lease's end on time.
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/sched", ev.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^policy\s*:\s*1$`).Match(b) {
		t.Errorf("the job's guard (pid %d) is not SCHED_FIFO:\n%s", ev.Pid, b)
	}
	waitFor(t, "the job's policy", 5*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(out)
		got := strings.TrimSpace(string(b))
		if got != "" && got != "policy:0" {
			t.Fatalf("the job: %q, want policy:0 (SCHED_OTHER)", got)
		}
		return got == "policy:0", got
	})
}
