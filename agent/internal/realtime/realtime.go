// Package realtime gives the agent's event loop a thread of its own with
// a realtime scheduling policy (--realtime), so that heartbeats go out on
// time on a loaded host, and gives the thread back when the loop ends.
// Linux only.
package realtime

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"

	"golang.org/x/sys/unix"
)

// Priority is the SCHED_FIFO priority of the event loop's thread with
// Config.Realtime: low (1 is the lowest, 99 the highest), above every
// ordinary (SCHED_OTHER) thread of the host, below the kernel's threaded
// interrupt handlers (50) and watchdogs (99).
const Priority = 10

// Lock locks the calling goroutine to its OS thread and gives that
// thread, and only it, SCHED_FIFO at Priority. It returns the thread's
// id. The goroutine keeps the thread until Leave, so the policy never
// reaches another goroutine. Go makes the new threads of a process with
// a locked thread from a thread of its own, and SCHED_RESET_ON_FORK keeps
// the policy from any process forked on this thread (the job, a hook).
func Lock() (tid int, err error) {
	runtime.LockOSThread()
	tid = unix.Gettid()
	attr := unix.SchedAttr{Policy: unix.SCHED_FIFO, Flags: unix.SCHED_FLAG_RESET_ON_FORK, Priority: Priority}
	if err := unix.SchedSetAttr(tid, &attr, 0); err != nil {
		return tid, explain(err)
	}
	return tid, nil
}

// explain says what the host lacks for --realtime.
func explain(err error) error {
	if errors.Is(err, unix.EPERM) {
		var lim unix.Rlimit
		unix.Getrlimit(unix.RLIMIT_RTPRIO, &lim)
		return fmt.Errorf("SCHED_FIFO priority %d for the event loop's thread: %w: needs CAP_SYS_NICE, or an RLIMIT_RTPRIO of at least %d (it is %d) and sched_setattr not refused by a system call filter: under systemd, enable the drop-in /usr/share/lanleader/lanleader-realtime.conf (RestrictRealtime=no, LimitRTPRIO=%d, SystemCallFilter=sched_setattr)",
			Priority, err, Priority, lim.Cur, Priority)
	}
	return fmt.Errorf("SCHED_FIFO priority %d for the event loop's thread: %w", Priority, err)
}

// Enter, called first by the event loop's goroutine, gives it its
// SCHED_FIFO thread (Lock) and returns the thread's id; without the
// permission it logs why and returns 0, and the loop goes on without: a
// late heartbeat is better than no agent.
func Enter(log *slog.Logger) (tid int) {
	tid, err := Lock()
	if err != nil {
		log.Warn("realtime: running without", "err", err)
		return 0
	}
	log.Info("realtime: the event loop's thread runs with SCHED_FIFO", "priority", Priority, "tid", tid)
	return tid
}

// Leave, deferred by the event loop, gives its thread tid (from Enter; 0
// does nothing) back to Go as SCHED_OTHER. (A goroutine that ends locked
// ends its thread, except Go's main thread, which stays parked: with its
// policy, were it not reset here.)
func Leave(tid int, log *slog.Logger) {
	if tid == 0 {
		return
	}
	attr := unix.SchedAttr{Policy: unix.SCHED_NORMAL}
	if err := unix.SchedSetAttr(tid, &attr, 0); err != nil {
		log.Warn("realtime: the event loop's thread stays SCHED_FIFO", "err", err)
		return
	}
	runtime.UnlockOSThread()
}
