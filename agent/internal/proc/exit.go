package proc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// exitStatus is a shell's view of how a process ended.
func exitStatus(st *os.ProcessState) int {
	if st == nil {
		return -1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok {
		return waitStatus(ws)
	}
	return st.ExitCode()
}

// waitStatus is ws as a shell gives it: the exit code, or 128 plus the
// signal that ended the process.
func waitStatus(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// DescribeExit says how a process ended, for the log and /status:
// "exit status 3", "killed by SIGKILL"; err when st is nil (the process
// did not start or could not be waited for).
func DescribeExit(st *os.ProcessState, err error) string {
	if st == nil {
		if err != nil {
			return err.Error()
		}
		return "unknown"
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		if name := unix.SignalName(ws.Signal()); name != "" {
			return "killed by " + name // "killed by SIGKILL", not "killed by killed"
		}
		return fmt.Sprintf("killed by signal %d", int(ws.Signal()))
	}
	return fmt.Sprintf("exit status %d", st.ExitCode())
}

// Environ is this process's environment without the guard's variables
// and systemd's NOTIFY_SOCKET, plus extra: the environment of a job, a
// hook or a check.
func Environ(extra ...string) []string {
	var env []string
	for _, e := range os.Environ() {
		if strings.HasPrefix(e, guardEnv+"=") || strings.HasPrefix(e, guardGraceEnv+"=") || strings.HasPrefix(e, guardLeaseEnv+"=") ||
			strings.HasPrefix(e, guardHoldEnv+"=") || strings.HasPrefix(e, noticeEnv+"=") || strings.HasPrefix(e, "NOTIFY_SOCKET=") {
			continue
		}
		env = append(env, e)
	}
	return append(env, extra...)
}

// HookEnv is the environment of a hook or a check of node nodeID, named
// name, in state with term and leader.
func HookEnv(nodeID uint64, name, state string, term, leader uint64) []string {
	return Environ("LANLEADER_STATE="+state,
		"LANLEADER_TERM="+strconv.FormatUint(term, 10),
		"LANLEADER_NODE_ID="+strconv.FormatUint(nodeID, 10),
		"LANLEADER_LEADER_ID="+strconv.FormatUint(leader, 10),
		"LANLEADER_NAME="+name)
}
