package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lanleader/lanleader/agent"
)

// stopTimeout bounds a graceful stop: RESIGN, memberlist leave, close.
const stopTimeout = 5 * time.Second

// Exit statuses of `lanleader run`, the contract with systemd's unit
// (RestartPreventExitStatus=2, Restart=on-failure).
const (
	exitStopped  = 0   // a clean stop (SIGTERM, SIGINT)
	exitFailed   = 1   // a failure at run time that a restart may cure
	exitConfig   = 2   // a config that can never work: nothing started
	exitNotReady = 3   // the host was not ready within --start-timeout
	exitAborted  = 134 // SIGABRT (systemd's watchdog): goroutines dumped
)

// runRun is `lanleader run`: the agent, until SIGINT or SIGTERM; SIGHUP
// reloads the config file and the flags. The exit statuses are above.
func runRun(args []string, stdout, stderr io.Writer) int {
	cfg, once, err := loadRun(args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitStopped
	}
	if err != nil {
		fmt.Fprintf(stderr, "lanleader run: %v\n", err)
		return exitConfig
	}
	if _, err := agent.New(cfg); err != nil {
		fmt.Fprintf(stderr, "lanleader run: %s\n", oneLineErr(err))
		return exitConfig
	}
	// Signals are caught before the agent starts, so that a SIGTERM during
	// the start still stops it cleanly, and a SIGHUP does not end it.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	hups := make(chan os.Signal, 1)
	signal.Notify(hups, syscall.SIGHUP)
	defer signal.Stop(hups)
	defer dumpOnAbort(stderr)()
	log := cfg.Logger
	a, sig, err := startAgent(cfg, sigs)
	switch {
	case errors.Is(err, agent.ErrStopped):
		log.Info("stopped before the start", "signal", sig.String())
		return exitStopped
	case errors.Is(err, agent.ErrNotReady):
		fmt.Fprintf(stderr, "lanleader run: %s (gave up after --start-timeout %v)\n", oneLineErr(err), cfg.StartTimeout)
		return exitNotReady
	case err != nil:
		fmt.Fprintf(stderr, "lanleader run: %s\n", oneLineErr(err))
		return exitConfig
	}
	// The agent logged its own warnings (the role's); these need the
	// host's interfaces, which are up now.
	for _, w := range cfg.VIPWarnings() {
		log.Warn(w)
	}
	// A panic of this goroutine takes the job down first (one of another
	// goroutine kills the process: the job's guard stops the job then).
	defer func() {
		if r := recover(); r != nil {
			a.KillJob()
			panic(r)
		}
	}()
	timeout := stopWithin(cfg)
	if once.on && sig == nil {
		return waitOnce(a, sigs, once, timeout)
	}
	for sig == nil {
		select {
		case <-hups:
			log.Info("reloading", "signal", "hangup")
			a.Reload(func() (agent.Config, error) {
				c, _, err := loadRun(args, io.Discard, io.Discard)
				return c, err
			})
		case sig = <-sigs:
		case <-a.Failed():
			log.Error("the agent cannot go on; stopping", "err", a.Err())
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			a.Stop(ctx)
			return exitFailed
		}
	}
	log.Info("stopping", "signal", sig.String())
	gracefulStop(a, sigs, timeout)
	return exitStopped
}

// stopWithin bounds the graceful stop of cfg's agent: the job stops (up
// to its grace period), then the agent leaves.
func stopWithin(cfg agent.Config) time.Duration {
	if len(cfg.Job) > 0 || cfg.JobUnit != "" {
		return stopTimeout + cfg.JobGrace
	}
	return stopTimeout
}

// startAgent starts the agent of cfg, retrying while the host is not
// ready (agent.StartRetrying). A signal on sigs during the retries ends
// them (agent.ErrStopped); one that comes as the start succeeds is
// returned with the agent, to be stopped.
func startAgent(cfg agent.Config, sigs <-chan os.Signal) (*agent.Agent, os.Signal, error) {
	stop, done := make(chan struct{}), make(chan struct{})
	var caught os.Signal
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case caught = <-sigs:
			close(stop)
		case <-done:
		}
	}()
	a, err := agent.StartRetrying(cfg, stop)
	close(done)
	wg.Wait()
	return a, caught, err
}

// dumpOnAbort makes SIGABRT (systemd's watchdog) write every goroutine's
// stack to stderr and exit 134, which Restart=on-failure restarts (Go's
// own SIGABRT exit status is 2, which the unit never restarts). It
// returns the function that ends the handling.
func dumpOnAbort(stderr io.Writer) func() {
	ch, done := make(chan os.Signal, 1), make(chan struct{})
	signal.Notify(ch, syscall.SIGABRT)
	go func() {
		select {
		case <-ch:
		case <-done:
			return
		}
		fmt.Fprintf(stderr, "lanleader run: SIGABRT: the stacks of every goroutine follow; exiting %d\n", exitAborted)
		stderr.Write(allStacks())
		os.Exit(exitAborted)
	}()
	return func() { signal.Stop(ch); close(done) }
}

// allStacks is the stack of every goroutine, as a panic prints them.
func allStacks() []byte {
	for n := 1 << 20; ; n *= 2 {
		buf := make([]byte, n)
		if m := runtime.Stack(buf, true); m < n || n >= 64<<20 {
			return buf[:m]
		}
	}
}

// gracefulStop stops a within timeout. A second signal does not wait
// for the graceful stop: the job is killed, never left behind, and the
// process exits at once with status 1.
func gracefulStop(a *agent.Agent, sigs chan os.Signal, timeout time.Duration) {
	log := a.Config().Logger
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	go func() {
		<-sigs
		log.Warn("second signal: killing the job and exiting without waiting")
		a.KillJob()
		os.Exit(exitFailed)
	}()
	if err := a.Stop(ctx); err != nil {
		log.Warn("stopped with an error", "err", err)
	}
	log.Info("stopped")
}

// lookPathMessage says why the job's program cannot be run.
func lookPathMessage(name string, err error) string {
	if errors.Is(err, exec.ErrNotFound) {
		return fmt.Sprintf("%q not found in PATH", name)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s: %v", name, pe.Err)
	}
	return err.Error()
}

// oneLineErr joins a multi-line error (errors.Join) into one line.
func oneLineErr(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
