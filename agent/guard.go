package agent

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The job guard: the agent does not start the job itself but its own
// executable again, with guardEnv set, as the leader of the job's process
// group; the guard starts the job in that group and waits for it. The
// kernel sends the guard guardDeathSignal when the agent dies, by any
// means, SIGKILL included (PR_SET_PDEATHSIG): the guard then stops the
// whole group as the agent would have (SIGTERM, then SIGKILL after the
// grace period). A parent-death signal set on the job itself would reach
// only its first process, and could not be caught to give it a grace
// period.
//
// The guard is started by an init function of this package, before main:
// any program that imports agent can run jobs. (docker's pkg/reexec does
// the same with an explicit call.)
const (
	guardEnv      = "LANLEADER_JOB_GUARD"       // "1": this process is a job guard
	guardGraceEnv = "LANLEADER_JOB_GUARD_GRACE" // the grace period, a Go duration
	// guardDeathSignal is what the kernel sends the guard when the agent
	// dies. Not SIGTERM: that one the agent sends to the whole group to
	// stop the job, and the guard must tell the two apart.
	guardDeathSignal = syscall.SIGUSR1
)

func init() {
	if os.Getenv(guardEnv) == "1" {
		os.Exit(guardMain(os.Args[1:]))
	}
}

// guardMain runs argv in this process's group and waits for it; it
// returns the job's exit status (128+signal when a signal ended it, as a
// shell does). When the agent dies it stops the group.
func guardMain(argv []string) int {
	grace, err := time.ParseDuration(os.Getenv(guardGraceEnv))
	if err != nil || grace < 0 {
		grace = DefaultJobGrace
	}
	os.Unsetenv(guardEnv)
	os.Unsetenv(guardGraceEnv)
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "lanleader job guard: no command")
		return 127
	}
	lease, err := openGuardLease()
	if err != nil {
		fmt.Fprintf(os.Stderr, "lanleader job guard: bad lease: %v\n", err)
		return 126
	}
	if lease != nil && monoNow() >= lease.end {
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
	cmd := exec.Command(argv[0], argv[1:]...)
	// The job writes to the guard, which relays to the agent: a job that
	// logs while it stops after the agent died must not die of SIGPIPE.
	var relays sync.WaitGroup
	var readers []*os.File
	for _, dst := range []*os.File{os.Stdout, os.Stderr} {
		r, w, err := os.Pipe()
		if err != nil {
			fmt.Fprintf(os.Stderr, "lanleader job guard: %v\n", err)
			return 126
		}
		defer w.Close()
		if dst == os.Stdout {
			cmd.Stdout = w
		} else {
			cmd.Stderr = w
		}
		readers = append(readers, r)
		relays.Add(1)
		go func() {
			defer relays.Done()
			relay(dst, r)
		}()
	}
	err = cmd.Start()
	cmd.Stdout.(*os.File).Close()
	cmd.Stderr.(*os.File).Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "lanleader job guard: %v\n", err)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return 127
		}
		return 126
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		// The rest of its output, unless something it left holds the
		// pipe (the agent kills the group then).
		waitOutput(&relays, readers...)
		close(done)
	}()
	// The agent may have died before the kernel knew to tell us.
	if os.Getppid() == 1 {
		sigs <- guardDeathSignal
	}
	// Quorum mode: the job dies with the lease (lease.go).
	var expiry <-chan time.Time
	var renew chan int64
	var leaseTimer *time.Timer
	if lease != nil {
		renew = lease.renew
		leaseTimer = time.NewTimer(time.Duration(lease.end - monoNow()))
		defer leaseTimer.Stop()
		expiry = leaseTimer.C
	}
	for {
		select {
		case end := <-renew:
			if end > lease.end {
				lease.end = end
				leaseTimer.Reset(time.Duration(end - monoNow()))
			}
		case <-expiry:
			if now := monoNow(); now < lease.end {
				leaseTimer.Reset(time.Duration(lease.end - now))
				continue
			}
			// The lease is over: no grace. The agent's loop stops the
			// job as well, if it runs; it may not (a paused agent).
			fmt.Fprintln(os.Stderr, "lanleader job guard: the leader's lease ran out: SIGKILL to the job's process group")
			syscall.Kill(-syscall.Getpgrp(), syscall.SIGKILL)
			return 128 + int(syscall.SIGKILL)
		case <-done:
			return exitStatus(cmd.ProcessState)
		case s := <-sigs:
			if s != guardDeathSignal {
				continue
			}
			pg := syscall.Getpgrp()
			syscall.Kill(-pg, syscall.SIGTERM)
			if lease != nil {
				// Quorum mode: never past the end of the lease.
				grace = max(min(grace, time.Duration(lease.end-monoNow())), 0)
			}
			t := time.NewTimer(grace)
			select {
			case <-done:
			case <-t.C:
			}
			// Whatever is left of the group (this guard included).
			syscall.Kill(-pg, syscall.SIGKILL)
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

// exitStatus is a shell's view of how a process ended.
func exitStatus(st *os.ProcessState) int {
	if st == nil {
		return -1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// describeExit says how a process ended, for the log.
func describeExit(st *os.ProcessState, err error) string {
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

// environ is os.Environ without the guard's variables, plus extra.
func environ(extra ...string) []string {
	var env []string
	for _, e := range os.Environ() {
		if strings.HasPrefix(e, guardEnv+"=") || strings.HasPrefix(e, guardGraceEnv+"=") || strings.HasPrefix(e, guardLeaseEnv+"=") || strings.HasPrefix(e, "NOTIFY_SOCKET=") {
			continue
		}
		env = append(env, e)
	}
	return append(env, extra...)
}
