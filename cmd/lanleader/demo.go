package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/lanleader/lanleader/agent"
)

const demoUsage = `usage: lanleader demo [--nodes N] [--rounds N] [--every D] [--heartbeat D] [--verbose]

Starts N real agents in this process on loopback (127.0.0.1, free ports):
real memberlist gossip, real UDP election messages (unicast transport, so
that every agent has its own ports on one address). Once they agree on a
leader, it takes the leader down, round after round, alternating a crash
(no RESIGN, no leave: the others notice the missing heartbeats) and a
graceful stop (RESIGN: the others elect at once), prints the new leader and
the measured failover time, then brings the old leader back and prints
whether it takes over (preemption, the default).

The failover time is measured from the moment the leader is taken down to
the moment every surviving node follows one new leader with one term,
polled every millisecond.

Flags:
  --nodes N       agents to start, 2 to 64 (default 5)
  --rounds N      stop after N take-downs; 0 runs until Ctrl-C (default 0)
  --every D       the pause before each take-down, at least 100ms; the old
                  leader is restarted half of it after the failover
                  (default 3s)
  --heartbeat D   the agents' heartbeat interval, at least 10ms;
                  suspect-after is 3 times it (default 100ms)
  --verbose       print the agents' own log lines (state changes) to stderr

Ctrl-C (SIGINT) or SIGTERM stops every agent gracefully and exits 0.
Exit status 1: the agents could not start or did not agree on a leader
within 30 s; 2: bad flags.
`

// runDemo is `lanleader demo`.
func runDemo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	nodes := fs.Int("nodes", 5, "")
	rounds := fs.Int("rounds", 0, "")
	every := fs.Duration("every", 3*time.Second, "")
	hb := fs.Duration("heartbeat", agent.DefaultHeartbeat, "")
	verbose := fs.Bool("verbose", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, demoUsage)
			return 0
		}
		fmt.Fprintf(stderr, "lanleader demo: %v\n", err)
		return 2
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "lanleader demo: unexpected argument %q\n", fs.Arg(0))
		return 2
	case *nodes < 2 || *nodes > 64:
		fmt.Fprintf(stderr, "lanleader demo: --nodes: %d out of range 2…64\n", *nodes)
		return 2
	case *rounds < 0:
		fmt.Fprintf(stderr, "lanleader demo: --rounds: %d must not be negative\n", *rounds)
		return 2
	case *every < 100*time.Millisecond:
		fmt.Fprintf(stderr, "lanleader demo: --every: %v is shorter than 100ms\n", *every)
		return 2
	case *hb < agent.MinHeartbeat:
		fmt.Fprintf(stderr, "lanleader demo: --heartbeat: %v is shorter than %v\n", *hb, agent.MinHeartbeat)
		return 2
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)

	opt := agent.LocalOptions{Nodes: *nodes, Base: func(c *agent.Config) {
		c.Heartbeat, c.Version = *hb, version
		c.DeriveTimeouts() // suspect after three of these heartbeats
	}}
	if *verbose {
		opt.Logger = func(i int) *slog.Logger {
			return slog.New(slog.NewTextHandler(stderr, nil)).With("agent", fmt.Sprintf("node-%d", i+1))
		}
	}
	start := time.Now()
	stamp := func() string { return fmt.Sprintf("%7.3fs", time.Since(start).Seconds()) }
	fmt.Fprintf(stdout, "%s starting %d agents on 127.0.0.1 (heartbeat %v, suspect after %v; node-%d has the largest key)\n",
		stamp(), *nodes, *hb, agent.DefaultSuspectAfter(*hb), *nodes)
	l, err := agent.StartLocal(opt)
	if err != nil {
		fmt.Fprintf(stderr, "lanleader demo: %s\n", oneLineErr(err))
		return 1
	}
	defer func() {
		fmt.Fprintf(stdout, "%s stopping every agent\n", stamp())
		l.Close()
	}()
	interrupted := false
	name := func(i int) string { return fmt.Sprintf("node-%d", i+1) }
	// wait waits for agreement, or a signal; ok false means stop.
	wait := func(timeout time.Duration, accept func(agent.Agreement) bool) (agent.Agreement, bool) {
		deadline := time.Now().Add(timeout)
		for {
			select {
			case <-sigs:
				interrupted = true
				return agent.Agreement{}, false
			default:
			}
			if ag := l.Agreement(); ag.Leader != 0 && (accept == nil || accept(ag)) {
				return ag, true
			}
			if time.Now().After(deadline) {
				fmt.Fprintf(stdout, "%s no agreement within %v: %s\n", stamp(), timeout, l.Agreement().Why)
				return agent.Agreement{}, false
			}
			time.Sleep(time.Millisecond)
		}
	}
	pause := func(d time.Duration) bool {
		select {
		case <-sigs:
			interrupted = true
			return false
		case <-time.After(d):
			return true
		}
	}
	t0 := time.Now()
	ag, ok := wait(30*time.Second, nil)
	if !ok {
		return exitFor(interrupted)
	}
	fmt.Fprintf(stdout, "%s %s leads, term %d: elected %v after start\n", stamp(), name(ag.Index), ag.Term, time.Since(t0).Round(time.Millisecond))

	for round := 1; *rounds == 0 || round <= *rounds; round++ {
		if !pause(*every) {
			return 0
		}
		old := ag
		crash := round%2 == 1
		how := "stopping gracefully (RESIGN)"
		var stopped <-chan error
		t0 = time.Now()
		if crash {
			how = "crashed (no RESIGN)"
			l.Crash(old.Index)
		} else {
			stopped = l.StopAsync(old.Index)
		}
		fmt.Fprintf(stdout, "%s round %d: %s leader %s\n", stamp(), round, how, name(old.Index))
		ag, ok = wait(30*time.Second, func(a agent.Agreement) bool { return a.Leader != old.Leader })
		failover := time.Since(t0)
		if stopped != nil {
			<-stopped
		}
		if !ok {
			return exitFor(interrupted)
		}
		fmt.Fprintf(stdout, "%s          %s leads, term %d: failover %v\n", stamp(), name(ag.Index), ag.Term, failover.Round(time.Millisecond))

		if !pause(*every / 2) {
			return 0
		}
		t0 = time.Now()
		if err := l.Start(old.Index); err != nil {
			fmt.Fprintf(stderr, "lanleader demo: restart %s: %s\n", name(old.Index), oneLineErr(err))
			return 1
		}
		fmt.Fprintf(stdout, "%s          %s restarted\n", stamp(), name(old.Index))
		// With preemption the returning node takes over when its key is the
		// largest; otherwise the leader stays.
		ag, ok = wait(30*time.Second, func(a agent.Agreement) bool { return a.Index == l.Largest() })
		if !ok {
			return exitFor(interrupted)
		}
		if ag.Index == old.Index {
			fmt.Fprintf(stdout, "%s          %s takes the lead back (largest key, preempt), term %d, %v after its restart\n", stamp(), name(ag.Index), ag.Term, time.Since(t0).Round(time.Millisecond))
		} else {
			fmt.Fprintf(stdout, "%s          %s follows %s, term %d\n", stamp(), name(old.Index), name(ag.Index), ag.Term)
		}
	}
	return 0
}

// exitFor: a signal is a normal end (0); anything else is a failure (1).
func exitFor(interrupted bool) int {
	if interrupted {
		return 0
	}
	return 1
}
