package proc

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/lanleader/lanleader/agent/internal/realtime"
)

// Shell is one command for the shell runner: /bin/sh -c Command, with
// Env, in a process group of its own, bounded by Timeout. Hooks and
// checks run through it.
type Shell struct {
	Command string
	Env     []string
	Timeout time.Duration
	// Line, if set, is called with each line of the output (stdout and
	// stderr together, a line longer than 4 KiB in pieces) and the
	// shell's pid. It is called from a goroutine of the run, never
	// concurrently with itself, and must not block: the command writes
	// into a pipe that is read only between calls.
	Line func(pid int, line string)
}

// Result is how a run of a Shell ended.
type Result struct {
	Pid int // 0: it did not start (Err says why)
	// Err is why it did not start, or how it failed (an *exec.ExitError
	// for a non-zero exit); nil when it exited 0.
	Err      error
	State    *os.ProcessState
	TimedOut bool // killed, with its whole group, at Timeout
	Took     time.Duration
	// Last is the last line of the output with something in it, at
	// most 200 bytes (then "…"), blanks trimmed.
	Last string
}

// OK says whether the command exited 0 within its timeout.
func (r Result) OK() bool { return r.Err == nil && !r.TimedOut }

// Run runs the command and waits for it. When the shell exits, or at
// the timeout, whatever is left of its process group is killed; the
// output is read until it ends, at most a second after that (a process
// that left the group may hold the pipe). The group also dies if this
// process does (PR_SET_PDEATHSIG on the shell). Run is safe to call from
// many goroutines at once.
func (sh Shell) Run() Result {
	ctx, cancel := context.WithTimeout(context.Background(), sh.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", sh.Command)
	cmd.Env = sh.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// On timeout the whole group is killed, not only the shell.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	outR, outW, err := os.Pipe()
	if err != nil {
		return Result{Err: err}
	}
	cmd.Stdout, cmd.Stderr = outW, outW
	start := time.Now()
	err = realtime.Ordinary(cmd.Start) // not the agent's realtime policy
	outW.Close()
	if err != nil {
		outR.Close()
		return Result{Err: err}
	}
	pid := cmd.Process.Pid
	var last tail
	var out sync.WaitGroup
	out.Add(1)
	go func() {
		defer out.Done()
		readLines(outR, func(b []byte, eol bool) {
			last.add(b, eol)
			if sh.Line != nil {
				sh.Line(pid, string(b))
			}
		})
	}()
	err = cmd.Wait()
	// Whatever the command left in its group goes with it.
	syscall.Kill(-pid, syscall.SIGKILL)
	waitOutput(&out, outR)
	return Result{Pid: pid, Err: err, State: cmd.ProcessState, TimedOut: ctx.Err() != nil,
		Took: time.Since(start), Last: last.String()}
}
