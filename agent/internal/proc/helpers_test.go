package proc

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/lanleader/lanleader/internal/syncbuf"
	"github.com/lanleader/lanleader/internal/waitfor"
)

// TestMain enters the guard first, as main does: the supervisors of
// these tests start their jobs through this test binary, started again.
func TestMain(m *testing.M) {
	SetNoticeSend(testNoticeSend)
	if os.Getenv(removalsEnv) != "" {
		vipRemove = testRemove
	}
	Guard()
	if os.Getenv(asAgentEnv) != "" {
		asAgent()
	}
	if os.Getenv(asKeptAgentEnv) != "" {
		asKeptAgent()
	}
	if os.Getenv(asNotifiedAgentEnv) != "" {
		asNotifiedAgent()
	}
	os.Exit(m.Run())
}

// asAgentEnv makes the test binary play an agent that runs the job after
// "--" with the grace in the variable, until it is killed (the
// helper-process pattern of os/exec's tests).
const asAgentEnv = "PROC_TEST_AS_AGENT"

func asAgent() {
	grace, _ := time.ParseDuration(os.Getenv(asAgentEnv))
	argv := os.Args
	for i, a := range argv {
		if a == "--" {
			argv = argv[i+1:]
			break
		}
	}
	s := New(Config{Argv: argv, Grace: grace})
	s.Set(Want{Run: true, Gen: 1})
	s.Run()
	os.Exit(1)
}

// logBuffer is a log safe for the writers of a run and the test.
type logBuffer struct{ syncbuf.Buffer }

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// waitFor polls cond every 5ms until it holds or timeout passes, and
// fails with what cond last said.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	waitfor.Until(t, what, timeout, 5*time.Millisecond, cond)
}

// alive says whether pid runs (a zombie does not).
func alive(pid int) bool {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return false
	}
	st, err := p.Stat()
	return err == nil && st.State != "Z" && st.State != "X"
}

func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "job.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// pidIn waits until file holds a line "PREFIX PID" and returns the pid.
func pidIn(t *testing.T, file, prefix string) int {
	t.Helper()
	pid := 0
	waitFor(t, prefix+" in "+file, 5*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(file)
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, prefix+" "); ok {
				pid, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		return pid > 0, fmt.Sprintf("%q", b)
	})
	return pid
}

// startSelf starts this test binary again, running no test, with args
// and the variables env added to this process's, its standard error to
// stderr (nil: none), and kills it when the test ends.
func startSelf(t *testing.T, stderr *os.File, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	if stderr != nil {
		cmd.Stderr = stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}
