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
	"github.com/lanleader/lanleader/agent/config"
)

const demoUsage = `usage: lanleader demo [--nodes N] [--rounds N] [--every D] [--heartbeat D] [--verbose]

Starts N real agents in this process on loopback (127.0.0.1, free ports):
real memberlist gossip, real UDP election messages (unicast transport, so
that every agent has its own ports on one address). Once they agree on a
leader, it takes the leader down, round after round, alternating a crash
(no RESIGN, no leave: the others notice the missing heartbeats) and a
graceful stop (RESIGN: the others elect at once), prints the new leader and
the measured failover time as soon as it leads (after a graceful stop, the
old agent's leave is told when it ends, later), then brings the old leader
back and prints whether it takes over (preemption, the default).

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

// demoOptions are the flags of `lanleader demo`.
type demoOptions struct {
	nodes, rounds int
	every, hb     time.Duration
	verbose       bool
}

// parseDemo parses demo's flags; exit is the status to end with at once
// (0 after --help, 2 for a bad flag), or -1 to go on.
func parseDemo(args []string, stdout, stderr io.Writer) (o demoOptions, exit int) {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&o.nodes, "nodes", 5, "")
	fs.IntVar(&o.rounds, "rounds", 0, "")
	fs.DurationVar(&o.every, "every", 3*time.Second, "")
	fs.DurationVar(&o.hb, "heartbeat", config.DefaultHeartbeat, "")
	fs.BoolVar(&o.verbose, "verbose", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, demoUsage)
			return o, 0
		}
		fmt.Fprintf(stderr, "lanleader demo: %v\n", err)
		return o, 2
	}
	bad := ""
	switch {
	case fs.NArg() > 0:
		bad = fmt.Sprintf("unexpected argument %q", fs.Arg(0))
	case o.nodes < 2 || o.nodes > 64:
		bad = fmt.Sprintf("--nodes: %d out of range 2…64", o.nodes)
	case o.rounds < 0:
		bad = fmt.Sprintf("--rounds: %d must not be negative", o.rounds)
	case o.every < 100*time.Millisecond:
		bad = fmt.Sprintf("--every: %v is shorter than 100ms", o.every)
	case o.hb < config.MinHeartbeat:
		bad = fmt.Sprintf("--heartbeat: %v is shorter than %v", o.hb, config.MinHeartbeat)
	}
	if bad != "" {
		fmt.Fprintf(stderr, "lanleader demo: %s\n", bad)
		return o, 2
	}
	return o, -1
}

// demo is a running `lanleader demo`: the local cluster, the signals that
// end it, and its output.
type demo struct {
	l           *agent.Local
	sigs        chan os.Signal
	out         io.Writer
	start       time.Time
	interrupted bool // a signal came: the demo ends with status 0
}

// runDemo is `lanleader demo`.
func runDemo(args []string, stdout, stderr io.Writer) int {
	o, exit := parseDemo(args, stdout, stderr)
	if exit >= 0 {
		return exit
	}
	d := &demo{sigs: make(chan os.Signal, 1), out: stdout, start: time.Now()}
	signal.Notify(d.sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(d.sigs)

	opt := agent.LocalOptions{Nodes: o.nodes, Base: func(c *agent.Config) {
		c.Heartbeat, c.Version = o.hb, version
		c.DeriveTimeouts() // suspect after three of these heartbeats
	}}
	if o.verbose {
		opt.Logger = func(i int) *slog.Logger {
			return slog.New(slog.NewTextHandler(stderr, nil)).With("agent", fmt.Sprintf("node-%d", i+1))
		}
	}
	d.say("starting %d agents on 127.0.0.1 (heartbeat %v, suspect after %v; node-%d has the largest key)",
		o.nodes, o.hb, config.DefaultSuspectAfter(o.hb), o.nodes)
	l, err := agent.StartLocal(opt)
	if err != nil {
		fmt.Fprintf(stderr, "lanleader demo: %s\n", oneLineErr(err))
		return 1
	}
	d.l = l
	defer func() {
		d.say("stopping every agent")
		l.Close()
	}()
	t0 := time.Now()
	ag, ok := d.wait(30*time.Second, nil)
	if !ok {
		return d.exit()
	}
	d.say("%s leads, term %d: elected %v after start", nodeName(ag.Index), ag.Term, time.Since(t0).Round(time.Millisecond))
	for round := 1; o.rounds == 0 || round <= o.rounds; round++ {
		if !d.pause(o.every) {
			return 0
		}
		old := ag
		if ag, ok = d.takeDown(round, old); !ok {
			return d.exit()
		}
		if !d.pause(o.every / 2) {
			return 0
		}
		if ag, ok = d.restart(old.Index, stderr); !ok {
			return d.exit()
		}
	}
	return 0
}

func nodeName(i int) string { return fmt.Sprintf("node-%d", i+1) }

// say prints a line stamped with the time since the demo started.
func (d *demo) say(format string, args ...any) {
	fmt.Fprintf(d.out, "%7.3fs "+format+"\n", append([]any{time.Since(d.start).Seconds()}, args...)...)
}

// takeDown crashes (odd rounds) or stops (even rounds) the leader old and
// waits for another leader.
func (d *demo) takeDown(round int, old agent.Agreement) (agent.Agreement, bool) {
	crash := round%2 == 1
	how := "stopping gracefully (RESIGN)"
	var stopped <-chan error
	t0 := time.Now()
	if crash {
		how = "crashed (no RESIGN)"
		d.l.Crash(old.Index)
	} else {
		stopped = d.l.StopAsync(old.Index)
	}
	d.say("round %d: %s leader %s", round, how, nodeName(old.Index))
	ag, ok := d.wait(30*time.Second, func(a agent.Agreement) bool { return a.Leader != old.Leader })
	failover := time.Since(t0)
	// The new leader is told as soon as it leads; the old agent's leave
	// (memberlist's, 0.5 s or so) goes on meanwhile.
	if ok {
		d.say("         %s leads, term %d: failover %v", nodeName(ag.Index), ag.Term, failover.Round(time.Millisecond))
	}
	if stopped != nil {
		err := <-stopped
		if ok {
			d.say("         %s has left (its graceful stop took %v)", nodeName(old.Index), time.Since(t0).Round(time.Millisecond))
		}
		if err != nil {
			d.say("         %s stopped with an error: %s", nodeName(old.Index), oneLineErr(err))
		}
	}
	return ag, ok
}

// restart starts node old again and waits for the leader the keys call
// for: with preemption the returning node takes over when its key is the
// largest; otherwise the leader stays.
func (d *demo) restart(old int, stderr io.Writer) (agent.Agreement, bool) {
	t0 := time.Now()
	if err := d.l.Start(old); err != nil {
		fmt.Fprintf(stderr, "lanleader demo: restart %s: %s\n", nodeName(old), oneLineErr(err))
		return agent.Agreement{}, false
	}
	d.say("         %s restarted", nodeName(old))
	ag, ok := d.wait(30*time.Second, func(a agent.Agreement) bool { return a.Index == d.l.Largest() })
	switch {
	case !ok:
	case ag.Index == old:
		d.say("         %s takes the lead back (largest key, preempt), term %d, %v after its restart", nodeName(ag.Index), ag.Term, time.Since(t0).Round(time.Millisecond))
	default:
		d.say("         %s follows %s, term %d", nodeName(old), nodeName(ag.Index), ag.Term)
	}
	return ag, ok
}

// wait waits for agreement, or a signal; ok false means stop.
func (d *demo) wait(timeout time.Duration, accept func(agent.Agreement) bool) (agent.Agreement, bool) {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-d.sigs:
			d.interrupted = true
			return agent.Agreement{}, false
		default:
		}
		if ag := d.l.Agreement(); ag.Leader != 0 && (accept == nil || accept(ag)) {
			return ag, true
		}
		if time.Now().After(deadline) {
			d.say("no agreement within %v: %s", timeout, d.l.Agreement().Why)
			return agent.Agreement{}, false
		}
		time.Sleep(time.Millisecond)
	}
}

// pause waits d, or for a signal (false).
func (d *demo) pause(dur time.Duration) bool {
	select {
	case <-d.sigs:
		d.interrupted = true
		return false
	case <-time.After(dur):
		return true
	}
}

// exit is the status after a wait that did not succeed: a signal is a
// normal end (0); anything else is a failure (1).
func (d *demo) exit() int { return exitFor(d.interrupted) }

// exitFor: a signal is a normal end (0); anything else is a failure (1).
func exitFor(interrupted bool) int {
	if interrupted {
		return 0
	}
	return 1
}
