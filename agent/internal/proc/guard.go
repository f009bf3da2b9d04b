package proc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lanleader/lanleader/agent/internal/realtime"
	"github.com/lanleader/lanleader/agent/internal/vip"
)

// The job guard: the supervisor does not start the job itself but its
// own executable again, with guardEnv set, as the leader of the job's
// process group; the guard starts the job in that group and waits for it.
// The kernel sends the guard guardDeathSignal when the agent dies, by any
// means, SIGKILL included (PR_SET_PDEATHSIG): the guard then stops the
// whole group as the agent would have (SIGTERM, then SIGKILL after the
// grace period). The end of the guard's life pipe (its input) comes
// first, before the dead agent's sockets are released (top.go); the
// guard then raises the death signal itself. A parent-death signal set on the job itself would reach
// only its first process, and could not be caught to give it a grace
// period.
//
// The guard is entered explicitly (Guard), first thing in main, as
// docker's pkg/reexec does: not from an init function, so that importing
// this package never turns a program into something else.
const (
	guardEnv      = "LANLEADER_JOB_GUARD"       // "1": this process is a job guard
	guardGraceEnv = "LANLEADER_JOB_GUARD_GRACE" // the grace period, a Go duration
	// guardLifeEnv "1": the guard's input is the life pipe, whose only
	// write end the agent holds; its end of file is the agent's death.
	guardLifeEnv = "LANLEADER_JOB_GUARD_LIFE"
	// guardDeathSignal is what the kernel sends the guard when the agent
	// dies. Not SIGTERM: that one the agent sends to the whole group to
	// stop the job, and the guard must tell the two apart.
	guardDeathSignal = syscall.SIGUSR1
	// guardDefaultGrace is the grace of a guard given none it can read
	// (the agent always gives one): agent.DefaultJobGrace.
	guardDefaultGrace = 10 * time.Second
)

// guardInstalled: this program called Guard, so that its executable, run
// again with guardEnv set, becomes a guard rather than itself.
var guardInstalled atomic.Bool

// errNoGuard is why a supervisor of a program that never called Guard
// does not start the job.
var errNoGuard = errors.New("proc: cannot start the job: this program does not enter the job guard (it must call the guard's entry, agent.Guard, first thing in main, and in TestMain of tests that run jobs)")

// IsGuard says whether this process was started as a job guard.
func IsGuard() bool { return os.Getenv(guardEnv) == "1" }

// Guard is the entry of the job guard. Call it first thing in main (and
// in TestMain of every test binary whose tests start jobs): in a process
// started as a guard it runs the job and exits with the job's status (as
// the address keeper, it waits for the agent's end: keeper.go);
// otherwise it returns at once, and supervisors in this process may start
// jobs from then on.
func Guard() {
	if IsGuard() {
		os.Exit(guardMain(os.Args[1:]))
	}
	if os.Getenv(keeperEnv) == "1" {
		os.Exit(keeperMain())
	}
	if os.Getenv(noticeEnv) == "1" {
		os.Exit(noticeMain())
	}
	guardInstalled.Store(true)
}

// guardMain runs argv in this process's group and waits for it; it
// returns the job's exit status (128+signal when a signal ended it, as a
// shell does). When the agent dies it stops the group; in quorum mode it
// kills the group when the lease ends.
func guardMain(argv []string) int {
	grace, err := time.ParseDuration(os.Getenv(guardGraceEnv))
	if err != nil || grace < 0 {
		grace = guardDefaultGrace
	}
	os.Unsetenv(guardEnv)
	os.Unsetenv(guardGraceEnv)
	realtime.Adopt()
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "lanleader job guard: no command")
		return 127
	}
	guardHold()
	lease, err := openGuardLease()
	if err != nil {
		fmt.Fprintf(os.Stderr, "lanleader job guard: bad lease: %v\n", err)
		return 126
	}
	vips, err := guardVIPs()
	if err != nil {
		// The job runs; the agent still removes the addresses itself.
		fmt.Fprintf(os.Stderr, "lanleader job guard: %v\n", err)
	}
	if lease != nil && MonoNow() >= lease.current() {
		fmt.Fprintln(os.Stderr, "lanleader job guard: the leader's lease ran out before the job started; not starting it")
		return 125
	}
	sigs := make(chan os.Signal, 4)
	// SIGTERM and SIGINT reach the guard with the rest of the group when
	// the agent stops the job: the job gets them too, the guard waits.
	// SIGPIPE: once the agent is gone its pipes are broken; the guard
	// then drops the job's output instead of dying of it (caught, not
	// ignored: an ignored signal would stay ignored in the job).
	signal.Notify(sigs, guardDeathSignal, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	watchLife()
	subreaper = becomeSubreaper() // before the job: what it leaves comes to us (reap.go)
	done, status, err := guardStart(argv, sigs)
	if errors.Is(err, errStoppedBeforeStart) {
		fmt.Fprintln(os.Stderr, "lanleader job guard: told to stop before the job started; not starting it")
		return 128 + int(syscall.SIGTERM)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "lanleader job guard: %v\n", err)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return 127
		}
		return 126
	}
	// The agent may have died before the kernel knew to tell us.
	if os.Getppid() == 1 {
		sigs <- guardDeathSignal
	}
	return guardWait(done, status, sigs, lease, grace, vips)
}

// watchLife raises the death signal at the end of the life pipe, when
// the agent gave one (guardLifeEnv): the agent is gone. Its signal
// handler must be in place (signal.Notify): the signal's default would
// end the guard.
func watchLife() {
	given := os.Getenv(guardLifeEnv) == "1"
	os.Unsetenv(guardLifeEnv)
	if !given {
		return
	}
	syscall.CloseOnExec(0)
	go func() {
		io.Copy(io.Discard, os.Stdin)
		syscall.Kill(os.Getpid(), guardDeathSignal)
	}()
}

// errStoppedBeforeStart: the agent stopped the job (or died) before the
// guard had started it.
var errStoppedBeforeStart = errors.New("stopped before the job started")

// stoppedBeforeStart takes the signals that reached the guard before it
// starts the job and reports whether one of them stops it: SIGTERM or
// SIGINT, which the agent sends to the whole group to stop the job, or
// the agent's death. Such a signal reached no job (there was none yet in
// the group), and the guard's wait ignores SIGTERM, which it expects to
// reach the job too: started anyway, the job would run until the
// agent's SIGKILL at the end of its grace, beside the next leader's.
// Other signals are dropped, as the wait drops them.
func stoppedBeforeStart(sigs chan os.Signal) bool {
	for {
		select {
		case s := <-sigs:
			if s == syscall.SIGTERM || s == syscall.SIGINT || s == guardDeathSignal {
				return true
			}
		default:
			return false
		}
	}
}

// guardStart starts the job with its output relayed through this
// process, unless a signal that came first stops it
// (errStoppedBeforeStart); done is closed when the job has exited and
// its output is relayed, and *status is then its exit status.
func guardStart(argv []string, sigs chan os.Signal) (done chan struct{}, status *int, err error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	// The job writes to the guard, which relays to the agent: a job that
	// logs while it stops after the agent died must not die of SIGPIPE.
	var relays sync.WaitGroup
	var readers, writers []*os.File
	defer func() {
		for _, w := range writers {
			w.Close()
		}
	}()
	for _, dst := range []*os.File{os.Stdout, os.Stderr} {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, nil, err
		}
		writers = append(writers, w)
		readers = append(readers, r)
		relays.Add(1)
		go func() {
			defer relays.Done()
			relay(dst, r)
		}()
	}
	cmd.Stdout, cmd.Stderr = writers[0], writers[1]
	// Last thing before the fork: a stop sent from here on reaches the
	// job with the rest of the group.
	if stoppedBeforeStart(sigs) {
		return nil, nil, errStoppedBeforeStart
	}
	if err := realtime.Ordinary(cmd.Start); err != nil { // not the agent's realtime policy
		return nil, nil, err
	}
	done, status = make(chan struct{}), new(int)
	go func() {
		if subreaper {
			*status = waitStatus(reapChildren(cmd.Process.Pid))
			cmd.Process.Release()
		} else {
			cmd.Wait()
			*status = exitStatus(cmd.ProcessState)
		}
		// The rest of its output, unless something it left holds the
		// pipe (the agent kills the group then).
		waitOutput(&relays, readers...)
		close(done)
	}()
	return done, status, nil
}

// guardWait waits for the job to exit, for the agent's death (then stops
// the group with its grace) or for the end of the lease (then kills it),
// and returns the guard's exit status. The virtual addresses vips go
// at the lease's end and at the agent's death, before the last SIGKILL.
func guardWait(done chan struct{}, status *int, sigs chan os.Signal, lease *guardLease, grace time.Duration, vips []vip.Addr) int {
	// Quorum mode: the job dies with the lease (lease.go).
	var expiry <-chan time.Time
	var moved chan struct{}
	var leaseTimer *time.Timer
	if lease != nil {
		moved = lease.moved
		leaseTimer = time.NewTimer(time.Duration(lease.current() - MonoNow()))
		defer leaseTimer.Stop()
		expiry = leaseTimer.C
	}
	for {
		select {
		case <-moved:
			leaseTimer.Reset(time.Duration(lease.current() - MonoNow()))
		case <-expiry:
			// What is in the pipe first: a renewal may have come while
			// this guard waited for a CPU.
			if end, now := lease.current(), MonoNow(); now < end {
				leaseTimer.Reset(time.Duration(end - now))
				continue
			}
			// The lease is over: no grace. The agent's loop stops the
			// job as well, if it runs; it may not (a paused agent).
			fmt.Fprintln(os.Stderr, "lanleader job guard: the leader's lease ran out: SIGKILL to the job's process group")
			removeVIPs(vips, "the lease ran out")
			endGroup(syscall.Getpgrp())
			return 128 + int(syscall.SIGKILL)
		case <-done:
			if holding {
				endGroup(syscall.Getpgrp())
			}
			return *status
		case s := <-sigs:
			if s != guardDeathSignal {
				continue
			}
			pg := syscall.Getpgrp()
			syscall.Kill(-pg, syscall.SIGTERM)
			if lease != nil {
				// Quorum mode: never past the end of the lease.
				grace = max(min(grace, time.Duration(lease.current()-MonoNow())), 0)
			}
			t := time.NewTimer(grace)
			select {
			case <-done:
			case <-t.C:
			}
			// The job has stopped (or had its grace): the addresses go,
			// then whatever is left of the group (this guard included).
			removeVIPs(vips, "the agent is gone")
			endGroup(pg)
			return 128 + int(syscall.SIGTERM)
		}
	}
}

// relay copies the job's output to dst until r ends; once dst fails (the
// agent is gone) it reads on and drops.
func relay(dst *os.File, r *os.File) {
	defer r.Close()
	buf := make([]byte, 32<<10)
	ok := true
	for {
		n, err := r.Read(buf)
		if n > 0 && ok {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				ok = false
			}
		}
		if err != nil {
			return
		}
	}
}
