// Package realtime gives the agent's threads a realtime scheduling policy
// (--realtime), so that on a host whose CPUs are busy with other work its
// heartbeats go out, its packets are read and its timers fire on time,
// and gives them back when the agent stops. The processes it starts (the
// job's guard and job, hooks, checks) run with the ordinary policy.
// Linux only.
package realtime

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Priority is the SCHED_FIFO priority of the agent's threads with
// Config.Realtime: low (1 is the lowest, 99 the highest), above every
// ordinary (SCHED_OTHER) thread of the host, below the kernel's threaded
// interrupt handlers (50) and watchdogs (99).
const Priority = 10

// The whole process, and its guards (the job's, the address keeper, the
// notice guard: children of the agent that act on its death and on the
// lease's end, on time), not one thread: a Go program's goroutines move
// between its threads, and the event loop alone at a realtime priority
// fired its timers on time while the packets that would have stopped
// them waited, unread, behind the host's other work on the threads that
// read the sockets (measured: more false elections than without).
//
// A new thread takes its policy from the thread that makes it, so once
// every thread has it, so do the threads Go makes later. Nothing of it
// reaches a process the agent, or a guard, starts through Ordinary.

var (
	mu sync.Mutex // serialises Process, Ordinary and Release
	on bool       // Process succeeded and Release has not run
)

var fifo = unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: Priority}

// Process gives every thread of the process SCHED_FIFO at Priority. It
// goes over the threads until a pass finds none without it: a thread made
// meanwhile by one not yet set is set by the next pass.
func Process() error {
	mu.Lock()
	defer mu.Unlock()
	if err := setAll(fifo); err != nil {
		setAll(unix.SchedAttr{Policy: unix.SCHED_NORMAL})
		return explain(err)
	}
	on = true
	return nil
}

// Release gives every thread the ordinary policy again (the agent
// stopped; tests run several agents in one process).
func Release() error {
	mu.Lock()
	defer mu.Unlock()
	on = false
	return setAll(unix.SchedAttr{Policy: unix.SCHED_NORMAL})
}

// setAll sets attr on every thread of the process, going over them again
// until a pass finds no thread it has not set (at most 100 passes:
// threads are made far more slowly than that). A thread made during a
// pass by one not yet set is found by the next.
func setAll(attr unix.SchedAttr) error {
	set := make(map[int]bool)
	for range 100 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		found := false
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || set[tid] {
				continue
			}
			a := attr
			if err := unix.SchedSetAttr(tid, &a, 0); err != nil && !errors.Is(err, unix.ESRCH) { // ESRCH: gone
				return err
			}
			set[tid], found = true, true
		}
		if !found {
			return nil
		}
	}
	return errors.New("threads kept appearing faster than they could be set")
}

// Ordinary runs start (which starts a process: exec.Cmd.Start) on a
// thread of the ordinary policy, so that the process does not inherit the
// agent's: the job, a hook or a check at a realtime priority could keep
// every ordinary process of the host from a CPU. Without Process it just
// runs start. The thread gets its policy back afterwards, and is never
// ended: a process started with a parent-death signal would take its
// end for the agent's.
func Ordinary(start func() error) error {
	mu.Lock()
	defer mu.Unlock()
	if !on {
		return start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	normal := unix.SchedAttr{Policy: unix.SCHED_NORMAL}
	if err := unix.SchedSetAttr(tid, &normal, 0); err != nil {
		return fmt.Errorf("realtime: the ordinary policy for a thread that starts a process: %w", err)
	}
	err := start()
	// Back to SCHED_FIFO with the permission that set it before; should
	// that fail, the thread stays ordinary, which harms nothing.
	a := fifo
	unix.SchedSetAttr(tid, &a, 0)
	return err
}

// Adopt, called first by a child of the agent that keeps its policy (the
// job's guard), takes this process as realtime when its thread runs
// SCHED_FIFO (inherited from the agent's thread that started it; so are
// the threads Go makes), so that Ordinary gives the processes it starts,
// the job, the ordinary policy.
func Adopt() {
	attr, err := unix.SchedGetAttr(0, 0)
	if err != nil || attr.Policy != unix.SCHED_FIFO {
		return
	}
	mu.Lock()
	on = true
	mu.Unlock()
}

// Lock is Process, for the tests of the refusal: it returns the calling
// thread's id with the policy set.
func Lock() (tid int, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := Process(); err != nil {
		return unix.Gettid(), err
	}
	return unix.Gettid(), nil
}

// explain says what the host lacks for --realtime.
func explain(err error) error {
	if errors.Is(err, unix.EPERM) {
		var lim unix.Rlimit
		unix.Getrlimit(unix.RLIMIT_RTPRIO, &lim)
		return fmt.Errorf("SCHED_FIFO priority %d for the agent's threads: %w: needs CAP_SYS_NICE, or an RLIMIT_RTPRIO of at least %d (it is %d) and sched_setattr not refused by a system call filter: under systemd, enable the drop-in /usr/share/lanleader/lanleader-realtime.conf (RestrictRealtime=no, LimitRTPRIO=%d, SystemCallFilter=sched_setattr)",
			Priority, err, Priority, lim.Cur, Priority)
	}
	return fmt.Errorf("SCHED_FIFO priority %d for the agent's threads: %w", Priority, err)
}

// Enter, called first by the event loop, gives the agent's threads
// SCHED_FIFO (Process) and tells whether it did; without the permission
// it logs why and returns false, and the agent goes on without: a late
// heartbeat is better than no agent.
func Enter(log *slog.Logger) bool {
	if err := Process(); err != nil {
		log.Warn("realtime: running without", "err", err)
		return false
	}
	log.Info("realtime: the agent's threads run with SCHED_FIFO (its job, hooks and checks do not)", "priority", Priority)
	return true
}

// Leave, deferred by the event loop after an Enter that returned true,
// gives the threads back the ordinary policy.
func Leave(log *slog.Logger) {
	if err := Release(); err != nil {
		log.Warn("realtime: some threads stay SCHED_FIFO", "err", err)
	}
}
