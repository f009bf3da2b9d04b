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
	"strings"
	"syscall"
	"time"

	"github.com/lanleader/lanleader/agent"
)

// stopTimeout bounds a graceful stop: RESIGN, memberlist leave, close.
const stopTimeout = 5 * time.Second

// runRun is `lanleader run`: the agent, until SIGINT or SIGTERM.
// Exit status 0 after a clean stop, 2 for bad flags or config (nothing has
// started), 1 when the agent fails while running.
func runRun(args []string, stdout, stderr io.Writer) int {
	cfg, job, once, err := parseRunOnce(args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "lanleader run: %v\n", err)
		return 2
	}
	if len(job) > 0 {
		// Refused now rather than at the first leadership: a job that
		// cannot start would make every node fail it in turn.
		if _, err := exec.LookPath(job[0]); err != nil {
			fmt.Fprintf(stderr, "lanleader run: job: %s\n", lookPathMessage(job[0], err))
			return 2
		}
	}
	cfg.Version = version
	a, err := agent.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "lanleader run: %s\n", oneLineErr(err))
		return 2
	}
	// Signals are caught before the agent starts, so that a SIGTERM during
	// the start still stops it cleanly.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := a.Start(); err != nil {
		fmt.Fprintf(stderr, "lanleader run: %s\n", oneLineErr(err))
		return 2
	}
	log := a.Config().Logger
	// A panic of this goroutine takes the job down first (one of another
	// goroutine kills the process: the job's guard stops the job then).
	defer func() {
		if r := recover(); r != nil {
			a.KillJob()
			panic(r)
		}
	}()
	// The graceful stop waits for the job to stop (up to its grace
	// period), then leaves.
	timeout := stopTimeout
	if len(job) > 0 || cfg.JobUnit != "" {
		timeout += cfg.JobGrace
	}
	if once.on {
		return waitOnce(a, sigs, once, timeout)
	}
	select {
	case sig := <-sigs:
		log.Info("stopping", "signal", sig.String())
		gracefulStop(a, sigs, timeout)
		return 0
	case <-a.Failed():
		log.Error("the agent cannot go on; stopping", "err", a.Err())
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		a.Stop(ctx)
		return 1
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
		os.Exit(1)
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
