package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/lanleader/lanleader/agent"
	"github.com/lanleader/lanleader/agent/config"
)

// `lanleader run --once -- CMD`: consul lock's and etcdctl lock's
// contract. The agent joins as usual, waits to lead (at most
// --once-timeout), runs CMD once as the job (job mode once: with the term
// in its environment, under the guard), then stops gracefully (resigning,
// so that the next node leads at once) and exits with CMD's status.

// exitTempFail is the exit status when this node did not lead within
// --once-timeout (sysexits' EX_TEMPFAIL): CMD did not run.
const exitTempFail = 75

// onceFlags are the flags of a run of the job once.
type onceFlags struct {
	on         bool
	timeout    time.Duration // 0: wait to lead for ever
	timeoutSet bool
}

// define adds --once and --once-timeout to fs.
func (o *onceFlags) define(fs *flag.FlagSet) {
	fs.BoolVar(&o.on, "once", false, "")
	fs.Func("once-timeout", "", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%q is not a duration (like 100ms or 2s)", v)
		}
		if d < 0 {
			return fmt.Errorf("%s is negative; want 0 (wait for ever) or more", v)
		}
		o.timeout, o.timeoutSet = d, true
		return nil
	})
}

// apply puts s in job mode once for --once, which needs a command (or a
// job unit, run once the same way).
func (o *onceFlags) apply(s *settings) error {
	if !o.on {
		if o.timeoutSet {
			return errors.New("--once-timeout: only with --once")
		}
		return nil
	}
	if len(s.Job) == 0 && s.JobUnit == "" {
		return errors.New("--once: nothing to run: give the command after -- (or a --job-unit)")
	}
	s.JobMode = config.JobModeOnce
	// A --once agent that has not reached its cluster yet must not
	// elect itself and run CMD beside the cluster's leader.
	s.JoinBeforeLead = true
	return nil
}

// waitOnce runs a started agent in --once mode to its end and returns
// the exit status: CMD's, exitTempFail when this node did not lead in
// time, 0 after SIGINT or SIGTERM before CMD started (it did not run), 1
// when the agent failed. A signal while CMD runs stops it as the job is
// stopped (SIGTERM to its group, SIGKILL after --job-grace), and the
// status is CMD's.
func waitOnce(a *agent.Agent, sigs chan os.Signal, o onceFlags, stopWithin time.Duration) int {
	log := a.Config().Logger
	var deadline <-chan time.Time
	if o.timeout > 0 {
		t := time.NewTimer(o.timeout)
		defer t.Stop()
		deadline = t.C
	}
	ran := a.JobRan()
	code := -1 // CMD's, once it ran
	log.Info("waiting to lead, to run the command once", "timeout", o.timeout)
wait:
	for {
		select {
		case <-ran:
			log.Info("leading: the command runs")
			ran, deadline = nil, nil
		case <-a.JobEnded():
			break wait
		case sig := <-sigs:
			log.Info("stopping", "signal", sig.String())
			code = 0
			break wait
		case <-deadline:
			if ranYet(a) {
				deadline = nil
				continue
			}
			log.Warn("did not lead in time: the command did not run", "timeout", o.timeout)
			code = exitTempFail
			break wait
		case <-a.Failed():
			log.Error("the agent cannot go on; stopping", "err", a.Err())
			code = 1
			break wait
		}
	}
	gracefulStop(a, sigs, stopWithin)
	if c, ok := a.JobExitStatus(); ok && code != 1 {
		log.Info("the command has run", "exit_status", c)
		return c
	}
	if code < 0 {
		code = 1 // not reached: JobEnded comes after an exit
	}
	return code
}

func ranYet(a *agent.Agent) bool {
	select {
	case <-a.JobRan():
		return true
	default:
		return false
	}
}
