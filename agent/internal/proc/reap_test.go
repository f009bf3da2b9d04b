package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ppidOf is pid's parent from /proc/PID/stat, and its state; 0 when pid
// is gone (reaped).
func ppidOf(pid int) (ppid int, state string) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, ""
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b)[i+2:])
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[0]
}

// TestGuardAdoptsAndReapsWhatTheJobLeaves: a process the job started and
// left (its parent, a subshell, exited at once) is handed to the job's
// guard, not to init, and the guard reaps it when it ends: no zombie
// stays under a guard whose job runs on. So a guard with no child knows
// that nothing of its job is left (reap.go).
func TestGuardAdoptsAndReapsWhatTheJobLeaves(t *testing.T) {
	stamps := filepath.Join(t.TempDir(), "stamps")
	script := writeScript(t, `echo "guard $PPID" >> "$1"
( sleep 1000 & echo "orphan $!" >> "$1" )
echo "up $$" >> "$1"
exec sleep 1000
`)
	startAgent(t, time.Second, script, stamps)
	guard, orphan := pidIn(t, stamps, "guard"), pidIn(t, stamps, "orphan")
	pidIn(t, stamps, "up")
	waitFor(t, "the orphan handed to the guard", 5*time.Second, func() (bool, string) {
		ppid, st := ppidOf(orphan)
		return ppid == guard, fmt.Sprintf("orphan %d: parent %d (state %q), want the guard %d", orphan, ppid, st, guard)
	})
	syscall.Kill(orphan, syscall.SIGKILL)
	waitFor(t, "the orphan reaped", 5*time.Second, func() (bool, string) {
		ppid, st := ppidOf(orphan)
		return ppid == 0, fmt.Sprintf("orphan %d still there: parent %d, state %q", orphan, ppid, st)
	})
	if ppid, _ := ppidOf(guard); ppid == 0 {
		t.Fatalf("the guard %d is gone: it should run as long as its job", guard)
	}
}

// BenchmarkScanGroup is one look through /proc for the processes of a
// group, the guard's way when it has children left (endGroup): a read
// of every process's stat file, so it costs in proportion to the host's
// processes. BenchmarkNoChildren is the question a subreaper guard asks
// instead.
func BenchmarkScanGroup(b *testing.B) {
	pg := syscall.Getpgrp()
	for b.Loop() {
		groupMembers(pg, 0)
	}
}

func BenchmarkNoChildren(b *testing.B) {
	for b.Loop() {
		noChildren()
	}
}
