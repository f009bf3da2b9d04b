package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/sim"
	"github.com/lanleader/lanleader/wire"
)

const simUsage = `usage: lanleader sim [-algorithm A] [-nodes N] [-seed S [-trace]]

Without -seed: a scripted story on N simulated nodes (default 5): they
start and elect the largest, the leader crashes and the others elect again,
the old leader returns and takes over (preempt), then it resigns and hands
over, and takes over again when its resign hold-off ends. Every election
message and role change is printed, with the failover time of each step.

-algorithm is the election every node runs: bully (the default), ring,
chang-roberts or hirschberg-sinclair.

With -seed S: plays random fault schedule S (the one the test suite runs
under that seed), checks every invariant and prints what it found; -trace
prints every event. The exit status is 1 if an invariant broke.

Flags:
`

// simOptions are the flags of `lanleader sim`.
type simOptions struct {
	nodes     *int
	algorithm *string
	seed      *uint64
	trace     *bool
}

// newSimFlags is the FlagSet of `lanleader sim`, writing to out; its
// PrintDefaults is the flags' part of -h (and of the man page).
func newSimFlags(out io.Writer) (*flag.FlagSet, simOptions) {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(out)
	return fs, simOptions{
		nodes:     fs.Int("nodes", 5, "number of nodes of the scripted story (3 to 64)"),
		algorithm: fs.String("algorithm", election.AlgorithmBully, "the election `algorithm`: "+strings.Join(election.Algorithms, ", ")),
		seed:      fs.Uint64("seed", 0, "play random fault schedule `S` instead of the story"),
		trace:     fs.Bool("trace", false, "with -seed: print every event of the run"),
	}
}

func runSim(args []string, stdout, stderr io.Writer) int {
	fs, o := newSimFlags(stderr)
	nodes, algorithm, seed, trace := o.nodes, o.algorithm, o.seed, o.trace
	fs.Usage = func() { fmt.Fprint(stderr, simUsage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lanleader sim: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if !slices.Contains(election.Algorithms, *algorithm) {
		fmt.Fprintf(stderr, "lanleader sim: -algorithm %q: want one of %s\n", *algorithm, strings.Join(election.Algorithms, ", "))
		return 2
	}
	if *seed != 0 {
		return replay(*algorithm, *seed, *trace, stdout)
	}
	if *nodes < 3 || *nodes > 64 {
		fmt.Fprintf(stderr, "lanleader sim: -nodes %d: want 3 to 64\n", *nodes)
		return 2
	}
	return story(*algorithm, *nodes, stdout)
}

func replay(algorithm string, seed uint64, trace bool, stdout io.Writer) int {
	sch := sim.GenerateFor(algorithm, seed)
	fmt.Fprint(stdout, sch.Describe())
	var w io.Writer
	if trace {
		w = stdout
	}
	res := sim.Run(sch, w)
	fmt.Fprintf(stdout, "converged %v after the last fault (bound %v); %d same-term leaderships; %d packets delivered, %d dropped\n",
		res.Converge, sch.Bound(), res.DupTerms, res.Stats.Delivered, res.Stats.Dropped)
	if res.Failed() {
		for _, v := range res.Violations {
			fmt.Fprintln(stdout, "VIOLATION:", v)
		}
		return 1
	}
	fmt.Fprintln(stdout, "all invariants held")
	return 0
}

// story runs the scripted demonstration.
func story(algorithm string, n int, stdout io.Writer) int {
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	cfg := sim.Config{Seed: 1, Algorithm: algorithm, Timing: sim.DefaultTiming(), Net: sim.Net{DelayMin: 200 * time.Microsecond, DelayMax: time.Millisecond}}
	for id := 1; id <= n; id++ {
		cfg.Nodes = append(cfg.Nodes, sim.Node{Key: election.Key{Priority: 100, ID: uint64(id)}, Preempt: true})
	}
	cfg.Trace = &electionLines{w: out}
	s, err := sim.New(cfg)
	if err != nil {
		fmt.Fprintln(out, err)
		return 1
	}
	tm := s.Config().Timing
	fmt.Fprintf(out, "%d simulated nodes running %s, ids 1..%d, priority 100; heartbeat %v, suspect after %v, T %v\n\n",
		n, algorithm, n, tm.HeartbeatInterval, tm.SuspectAfter, tm.AnswerTimeout)
	// step runs act, then the simulation until node want leads and every
	// live node follows it.
	step := func(title string, act func(), want int) bool {
		fmt.Fprintf(out, "== %s\n", title)
		start := s.Now()
		act()
		settled := func() bool {
			st, _ := s.Status(want - 1)
			if st.State != election.StateLeader {
				return false
			}
			for i := range s.N() {
				if o, up := s.Status(i); up && (o.Leader != st.Leader || o.Term != st.Term) {
					return false
				}
			}
			return true
		}
		if !s.RunWhile(start+10*time.Second, func() bool { return !settled() }) {
			fmt.Fprintf(out, "node %d did not take the lead within 10s: %s\n", want, s.Describe())
			return false
		}
		st, _ := s.Status(want - 1)
		fmt.Fprintf(out, "-> node %d leads with term %d and all %d live nodes follow it (%v)\n\n",
			want, st.Term, live(s), (s.Now() - start).Round(time.Microsecond))
		s.RunUntil(s.Now() + 200*time.Millisecond)
		return true
	}
	ok := step("start all", s.Start, n) &&
		step(fmt.Sprintf("crash of leader %d (no one is told; its heartbeats stop)", n), func() { s.Crash(n - 1) }, n-1) &&
		step(fmt.Sprintf("restart of node %d (it listens, hears a smaller leader, takes over)", n), func() { s.Restart(n - 1) }, n) &&
		step(fmt.Sprintf("resign of leader %d (RESIGN: the others elect at once)", n), func() { s.Resign(n - 1) }, n-1) &&
		step(fmt.Sprintf("wait: node %d's resign hold-off is %v after its resign; preempt is on, so it then takes over again", n, tm.ResignHoldoff), func() {}, n)
	if !ok {
		return 1
	}
	var sent []string
	for t, c := range s.Stats.Messages {
		if c > 0 {
			sent = append(sent, fmt.Sprintf("%d %v", c, wire.Type(t)))
		}
	}
	fmt.Fprintf(out, "messages sent: %s (%d packets with multicast)\n", strings.Join(sent, ", "), sumPackets(s.Stats))
	if v := s.Check.Violations; len(v) > 0 {
		fmt.Fprintln(out, "VIOLATIONS:", v)
		return 1
	}
	return 0
}

func live(s *sim.Sim) int {
	n := 0
	for i := range s.N() {
		if s.Up(i) {
			n++
		}
	}
	return n
}

func sumPackets(st sim.Stats) int {
	n := 0
	for _, p := range st.Packets {
		n += p
	}
	return n
}

// electionLines passes the simulator's trace through, less the heartbeats
// and the receptions (every send is shown once, by its sender).
type electionLines struct {
	w   io.Writer
	buf []byte
}

func (e *electionLines) Write(p []byte) (int, error) {
	e.buf = append(e.buf, p...)
	for {
		i := strings.IndexByte(string(e.buf), '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(e.buf[:i+1])
		e.buf = e.buf[i+1:]
		if strings.Contains(line, " recv ") || strings.Contains(line, "HEARTBEAT") || strings.Contains(line, " timer heartbeat") {
			continue
		}
		io.WriteString(e.w, line)
	}
}
