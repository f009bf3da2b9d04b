package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/lanleader/lanleader/agent"
	"github.com/lanleader/lanleader/agent/config"
)

const demoUsage = `usage: lanleader demo [--nodes N] [--rounds N] [--every D] [--heartbeat D] [--verbose]

Starts N real agents in this process on loopback (127.0.0.1, free ports):
real memberlist gossip, real UDP election messages (unicast transport, so
that every agent has its own ports on one address), and a real job: each
agent runs this program again as its job while it leads. Once they agree
on a leader, the demo takes the leader down, round after round,
alternating a crash (no RESIGN, no leave: the others notice the missing
heartbeats; the job is killed with its agent) and a graceful stop (the
job stops, then RESIGN: the others elect at once). After each it prints
the new leader and the time from the take-down to it, then the time to
its job running; it brings the old leader back and prints whether it
takes over (preemption, the default) and where the job runs then.

Who leads: the node with the largest election key ("largest key"
below). The key is the pair (priority, node id), compared by priority
first and by node id on a tie, so that no two nodes are equal. The
demo's agents all have priority 100 and node ids 1 to N (node-1 to
node-N): node-N has the largest key and leads while it lives; after it,
the next largest live node. (This key is not a cryptographic key: the
secret that signs the packets of 'lanleader run' is --key-file.)

The times are measured from the moment the leader is taken down to the
moment every surviving node follows one new leader with one term, and to
the moment the new leader's job says it runs, polled every millisecond.
The new leader starts its job as soon as it leads, which can be a moment
before every other node follows it.

At the end (after --rounds, or at Ctrl-C) it stops every agent and prints
a summary: the failovers (take-downs), the median and the longest time to
the new leader and to its job running, and whether the job ever ran on
two nodes at once. That is checked from the jobs' own lives: each job
connects to the demo when it starts, and the demo stamps the end of the
connection, which the kernel closes when the job ends however it ends.

Flags:
  --nodes N       agents to start, 2 to 64 (default 5)
  --rounds N      stop after N take-downs; 0 runs until Ctrl-C (default 0)
  --every D       the pause before each take-down, at least 100ms; the old
                  leader is restarted half of it after the failover
                  (default 3s)
  --heartbeat D   the agents' heartbeat interval, at least 10ms;
                  suspect-after is 3 times it (default 100ms)
  --verbose       print the agents' own log lines (state changes, the
                  jobs' output) to stderr

Ctrl-C (SIGINT) or SIGTERM ends the demo as --rounds does: every agent
stops gracefully, the summary is printed, and the exit status is 0.
Exit status 1: the agents could not start, did not agree on a leader or
start the job within 30 s, or the job ran on two nodes at once; 2: bad
flags.
`

// demoOptions are the flags of `lanleader demo`.
type demoOptions struct {
	nodes, rounds int
	every, hb     time.Duration
	verbose       bool
}

// demoFlags are demo's flags, set into o.
func demoFlags(o *demoOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&o.nodes, "nodes", 5, "")
	fs.IntVar(&o.rounds, "rounds", 0, "")
	fs.DurationVar(&o.every, "every", 3*time.Second, "")
	fs.DurationVar(&o.hb, "heartbeat", config.DefaultHeartbeat, "")
	fs.BoolVar(&o.verbose, "verbose", false, "")
	return fs
}

// parseDemo parses demo's flags; exit is the status to end with at once
// (0 after --help, 2 for a bad flag), or -1 to go on.
func parseDemo(args []string, stdout, stderr io.Writer) (o demoOptions, exit int) {
	fs := demoFlags(&o)
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

// demo is a running `lanleader demo`: the local cluster, its jobs, the
// signals that end it, and its output.
type demo struct {
	l           *agent.Local
	jobs        *jobWatch
	sigs        chan os.Signal
	out         io.Writer
	start       time.Time
	interrupted bool // a signal came: the demo ends with status 0
	failovers   []failover
}

// failover is one take-down: how, and the times from it to the new
// leader and to its job running.
type failover struct {
	crash       bool
	leader, job time.Duration
}

// demoJob is the job's command line for the demo's socket: this program
// again (the tests replace it with their binary).
var demoJob = func(socket string) ([]string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return []string{self, "demo-job", socket}, nil
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

	jobs, err := watchJobs()
	if err != nil {
		fmt.Fprintf(stderr, "lanleader demo: the jobs' socket: %s\n", oneLineErr(err))
		return 1
	}
	d.jobs = jobs
	job, err := demoJob(jobs.socket())
	if err != nil {
		jobs.close(0)
		fmt.Fprintf(stderr, "lanleader demo: the job: %s\n", oneLineErr(err))
		return 1
	}
	opt := agent.LocalOptions{Nodes: o.nodes, Base: func(c *agent.Config) {
		c.Heartbeat, c.Version = o.hb, version
		c.DeriveTimeouts() // suspect after three of these heartbeats
		c.Job, c.JobGrace = job, 2*time.Second
	}}
	if o.verbose {
		opt.Logger = func(i int) *slog.Logger {
			return slog.New(slog.NewTextHandler(stderr, nil)).With("agent", fmt.Sprintf("node-%d", i+1))
		}
	}
	d.say("starting %d agents on 127.0.0.1 (heartbeat %v, suspect after %v; node-%d has the largest key: priority 100, node id %d)",
		o.nodes, o.hb, config.DefaultSuspectAfter(o.hb, 0), o.nodes, o.nodes)
	l, err := agent.StartLocal(opt)
	if err != nil {
		jobs.close(0)
		fmt.Fprintf(stderr, "lanleader demo: %s\n", oneLineErr(err))
		return 1
	}
	d.l = l
	code := d.rounds(o, stderr)
	d.say("stopping every agent")
	l.Close()
	jobs.close(5 * time.Second)
	if !d.summary() && code == 0 {
		code = 1
	}
	return code
}

// rounds runs the demo until its rounds are done or a signal comes, and
// returns the exit status.
func (d *demo) rounds(o demoOptions, stderr io.Writer) int {
	t0 := time.Now()
	ag, ok := d.wait(30*time.Second, nil)
	if !ok {
		return d.exit()
	}
	d.say("%s leads, term %d: elected %v after start", nodeName(ag.Index), ag.Term, time.Since(t0).Round(time.Millisecond))
	if _, ok := d.waitJob(ag, t0); !ok {
		return d.exit()
	}
	d.say("         %s's job runs, %v after start", nodeName(ag.Index), time.Since(t0).Round(time.Millisecond))
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
	fo := failover{crash: crash, leader: time.Since(t0)}
	// The new leader is told as soon as it leads; the old agent's leave
	// (memberlist's, 0.5 s or so) goes on meanwhile.
	if ok {
		d.say("         %s leads, term %d: failover %v", nodeName(ag.Index), ag.Term, fo.leader.Round(time.Millisecond))
		var run jobRun
		if run, ok = d.waitJob(ag, t0); ok {
			fo.job = run.start.Sub(t0)
			d.failovers = append(d.failovers, fo)
			d.say("         %s's job runs, %v after the take-down (%s)", nodeName(ag.Index), fo.job.Round(time.Millisecond),
				d.endOf(nodeName(old.Index), t0))
		}
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
		return ag, ok
	}
	if !ok {
		return ag, ok
	}
	// The job moves with the leadership: the one it took over from
	// stops its job first.
	if _, ok = d.waitJob(ag, t0); ok {
		d.say("         %s's job runs, %v after its restart", nodeName(ag.Index), time.Since(t0).Round(time.Millisecond))
	}
	return ag, ok
}

// waitJob waits for the job of ag's leader to run, a run started at or
// after since, or a signal; ok false means stop.
func (d *demo) waitJob(ag agent.Agreement, since time.Time) (run jobRun, ok bool) {
	name := nodeName(ag.Index)
	ok = d.until(30*time.Second, func() bool {
		run, ok = d.jobs.running(name, since)
		return ok
	})
	if !ok && !d.interrupted {
		d.say("%s's job did not start within 30s", name)
	}
	return run, ok
}

// endOf says when node's job ended, after t0.
func (d *demo) endOf(node string, t0 time.Time) string {
	end := d.jobs.lastEnd(node)
	if end.Before(t0) {
		return node + "'s job has not ended"
	}
	return fmt.Sprintf("%s's job ended %v after the take-down", node, end.Sub(t0).Round(time.Millisecond))
}

// until polls cond every millisecond until it holds (true), timeout
// passes or a signal comes (false).
func (d *demo) until(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-d.sigs:
			d.interrupted = true
			return false
		default:
		}
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// summary prints the failovers' times and the jobs' runs, and reports
// whether the job never ran on two nodes at once.
func (d *demo) summary() bool {
	crashes := 0
	var leader, job []time.Duration
	for _, f := range d.failovers {
		if f.crash {
			crashes++
		}
		leader, job = append(leader, f.leader), append(job, f.job)
	}
	d.say("summary: %s (%s, %s)", count(len(d.failovers), "failover"), count(crashes, "crash"), count(len(d.failovers)-crashes, "graceful stop"))
	if len(d.failovers) > 0 {
		d.say("         take-down to the new leader:  median %v, max %v", median(leader), slices.Max(leader).Round(time.Millisecond))
		d.say("         take-down to its job running: median %v, max %v", median(job), slices.Max(job).Round(time.Millisecond))
	}
	runs := d.jobs.all()
	nodes := map[string]bool{}
	for _, r := range runs {
		nodes[r.node] = true
	}
	if ov := overlaps(runs, time.Now(), d.start); len(ov) > 0 {
		for _, o := range ov {
			d.say("         the job ran on two nodes at once: %s", o)
		}
		return false
	}
	d.say("         the job never ran on two nodes at once: %s on %s, each ended before the next began (from the jobs' own starts and ends)",
		count(len(runs), "run"), count(len(nodes), "node"))
	return true
}

// count is n and the noun, plural unless n is 1.
func count(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "sh"):
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// median is the median of ds (the mean of the middle two of an even
// count), to the millisecond.
func median(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + m) / 2
	}
	return m.Round(time.Millisecond)
}

// wait waits for agreement, or a signal; ok false means stop.
func (d *demo) wait(timeout time.Duration, accept func(agent.Agreement) bool) (ag agent.Agreement, ok bool) {
	ok = d.until(timeout, func() bool {
		ag = d.l.Agreement()
		return ag.Leader != 0 && (accept == nil || accept(ag))
	})
	if !ok && !d.interrupted {
		d.say("no agreement within %v: %s", timeout, d.l.Agreement().Why)
	}
	return ag, ok
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
