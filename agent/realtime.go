package agent

import (
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// RealtimePriority is the SCHED_FIFO priority of the event loop's thread
// with Config.Realtime: low (1 is the lowest, 99 the highest), above
// every ordinary (SCHED_OTHER) thread of the host, below the kernel's
// threaded interrupt handlers (50) and watchdogs (99).
const RealtimePriority = 10

// goRealtime locks the calling goroutine to its OS thread and gives that
// thread, and only it, SCHED_FIFO at RealtimePriority. It returns the
// thread's id. The goroutine keeps the thread until leaveRealtime, so
// the policy never reaches another goroutine. Go makes the new threads of a process with a locked thread
// from a thread of its own, and SCHED_RESET_ON_FORK keeps the policy from
// any process forked on this thread (the job, a hook).
func goRealtime() (tid int, err error) {
	runtime.LockOSThread()
	tid = unix.Gettid()
	attr := unix.SchedAttr{Policy: unix.SCHED_FIFO, Flags: unix.SCHED_FLAG_RESET_ON_FORK, Priority: RealtimePriority}
	if err := unix.SchedSetAttr(tid, &attr, 0); err != nil {
		return tid, realtimeError(err)
	}
	return tid, nil
}

// realtimeError says what the host lacks for --realtime.
func realtimeError(err error) error {
	if errors.Is(err, unix.EPERM) {
		var lim unix.Rlimit
		unix.Getrlimit(unix.RLIMIT_RTPRIO, &lim)
		return fmt.Errorf("SCHED_FIFO priority %d for the event loop's thread: %w: needs CAP_SYS_NICE, or an RLIMIT_RTPRIO of at least %d (it is %d) and sched_setattr not refused by a system call filter: under systemd, enable the drop-in /usr/share/lanleader/lanleader-realtime.conf (RestrictRealtime=no, LimitRTPRIO=%d, SystemCallFilter=sched_setattr)",
			RealtimePriority, err, RealtimePriority, lim.Cur, RealtimePriority)
	}
	return fmt.Errorf("SCHED_FIFO priority %d for the event loop's thread: %w", RealtimePriority, err)
}

// enterRealtime, called first by the event loop's goroutine, gives it
// its SCHED_FIFO thread with Config.Realtime; without the permission the
// agent logs why and goes on without: a late heartbeat is better than no
// agent.
func (a *Agent) enterRealtime() {
	if !a.cfg.Realtime {
		return
	}
	tid, err := goRealtime()
	if err != nil {
		a.log.Warn("realtime: running without", "err", err)
		return
	}
	a.rtTid.Store(int64(tid))
	a.log.Info("realtime: the event loop's thread runs with SCHED_FIFO", "priority", RealtimePriority, "tid", tid)
}

// leaveRealtime, deferred by the event loop, gives its thread back to Go
// as SCHED_OTHER. (A goroutine that ends locked ends its thread, except
// Go's main thread, which stays parked: with its policy, were it not
// reset here.)
func (a *Agent) leaveRealtime() {
	if a.rtTid.Load() == 0 {
		return
	}
	attr := unix.SchedAttr{Policy: unix.SCHED_NORMAL}
	if err := unix.SchedSetAttr(int(a.rtTid.Load()), &attr, 0); err != nil {
		a.log.Warn("realtime: the event loop's thread stays SCHED_FIFO", "err", err)
		return
	}
	runtime.UnlockOSThread()
}
