package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
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
	cfg, job, err := parseRunConfig(args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "lanleader run: %v\n", err)
		return 2
	}
	if len(job) > 0 {
		fmt.Fprintf(stderr, "lanleader run: a job command after -- is not supported by this build yet (%q)\n", job[0])
		return 2
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
	select {
	case sig := <-sigs:
		log.Info("stopping", "signal", sig.String())
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		go func() {
			// A second signal does not wait for the graceful stop.
			<-sigs
			log.Warn("second signal: exiting without waiting")
			os.Exit(1)
		}()
		if err := a.Stop(ctx); err != nil {
			log.Warn("stopped with an error", "err", err)
		}
		log.Info("stopped")
		return 0
	case <-a.Failed():
		log.Error("the agent cannot go on; stopping", "err", a.Err())
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		a.Stop(ctx)
		return 1
	}
}

// oneLineErr joins a multi-line error (errors.Join) into one line.
func oneLineErr(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
