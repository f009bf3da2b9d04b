// Command failover measures how long a cluster of real lanleader agents
// goes without an agreed leader when its leader goes away, and how long a
// restarted leader takes to lead again.
//
//	go run ./bench/failover [-nodes 5] [-trials 20] [-heartbeat 100ms,10ms]
//	    [-mode crash,graceful] [-detector fixed] [-seed 1] [-json] [-v]
//
// For each heartbeat interval and each mode it starts one cluster of
// -nodes agents in this process (agent.StartLocal: real memberlist gossip,
// real UDP election packets, unicast transport, on 127.0.0.1), with
// preemption on and suspect-after left at its default, 3 heartbeats. Each
// trial:
//
//  1. waits until every live node follows one leader with one term and
//     that leader is the node with the largest key (the cluster has
//     settled);
//  2. sleeps a random delay in [0, heartbeat) (math/rand/v2 PCG seeded by
//     -seed), so that the take-down falls at a random phase of the
//     leader's heartbeat rather than always just after one;
//  3. t0 := now, and takes the leader down: crash mode stops its event
//     loop and closes its sockets (l.Crash returns once they are closed;
//     the clock runs from before the call), with no RESIGN and no
//     memberlist leave: the others must notice the missing heartbeats,
//     which takes suspect-after plus an election; graceful
//     mode starts a graceful stop (RESIGN, then memberlist leave) without
//     waiting for it, since the leave alone can take a second or two;
//  4. polls the survivors' published status every 0.1 ms until they all
//     follow one leader, other than the old one, with one term, that leader
//     saying it leads: failover := now − t0;
//  5. waits for a graceful stop to end, restarts the old leader on its
//     ports, and waits until it leads again: takeback := from the restart
//     call to that agreement, polled the same way. A starting node listens
//     for a leader for suspect-after before it calls an election, so
//     takeback is expected a little above suspect-after.
//
// Failover is thus "from the moment the leader is taken down to the
// moment every survivor's status names the same new leader". It includes
// the time for the agents' event loops to publish their status, not the
// time an application would take to react. Polling every ≈0.1 ms (the
// sleep and one status read per agent; more on a loaded machine, where
// sleeps overshoot) makes each figure late by at most about one polling
// interval, well under a millisecond, against failovers of a few heartbeats.
//
// ratio is median failover / suspect-after (the crash detector's budget):
// it lets runs on machines of different speeds, or with different
// heartbeats, be compared. A follower suspects the leader suspect-after
// after the last heartbeat it received, and the crash lands a uniformly
// random time (up to one heartbeat) after that heartbeat, so a crash
// failover is expected between suspect-after − heartbeat and suspect-after,
// plus an election (a few packets on loopback): with the default 3
// heartbeats, a ratio of about 2/3 to 1, median ≈ 0.83. A graceful one
// should be far below 1, since RESIGN starts the election at once.
//
// Every agent runs in this one process on loopback: they share this
// process's CPUs and scheduler, and the benchmark's own polling loop
// competes with them. On a busy or small machine (see the header line's
// CPU count) timers fire late and figures grow, most visibly with short
// heartbeats. Compare the ratio across machines rather than raw figures,
// and re-run on an idle machine for final numbers.
//
// A trial with no agreement within 30 s is reported with the cluster's
// state (why there is no agreement) and makes the command exit 1 once all
// is measured; after a failed settle the rest of that cluster's trials are
// skipped. Bad flags exit 2.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lanleader/lanleader/agent"
	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/bench/internal/lists"
	"github.com/lanleader/lanleader/bench/internal/machine"
	"github.com/lanleader/lanleader/bench/internal/stats"
)

// deadline bounds every wait for agreement.
const deadline = 30 * time.Second

// pollEvery is the sleep between two reads of the cluster's state while
// timing.
const pollEvery = 100 * time.Microsecond

type options struct {
	nodes, trials int
	heartbeats    []time.Duration
	modes         []string
	detector      string
	seed          uint64
	json, verbose bool
}

func main() {
	lists.Main("failover", parseFlags, func(o options) int { return run(o, os.Stdout, os.Stderr) })
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("failover", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./bench/failover [-nodes 5] [-trials 20] [-heartbeat 100ms,10ms] [-mode crash,graceful] [-detector fixed] [-seed 1] [-json] [-v]\n\n"+
			"Failover time of an in-process loopback cluster of real agents when the leader\n"+
			"crashes or stops gracefully, and the time a restarted leader takes to lead again.\n\n")
		fs.PrintDefaults()
	}
	var o options
	fs.IntVar(&o.nodes, "nodes", 5, "agents in the cluster, 2…64")
	fs.IntVar(&o.trials, "trials", 20, "take-downs per heartbeat and mode, at least 1")
	hbs := fs.String("heartbeat", "100ms,10ms", "comma-separated heartbeat intervals")
	modes := fs.String("mode", "crash,graceful", "comma-separated modes: crash, graceful")
	fs.StringVar(&o.detector, "detector", config.DetectorFixed, "failure detector: fixed or phi")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the random take-down phase")
	fs.BoolVar(&o.json, "json", false, "one JSON object per heartbeat and mode, with every sample")
	fs.BoolVar(&o.verbose, "v", false, "one line per trial on stderr")
	if err := lists.Parse(fs, args); err != nil {
		return o, err
	}
	if o.nodes < 2 || o.nodes > 64 {
		return o, fmt.Errorf("-nodes: %d out of range 2…64", o.nodes)
	}
	if o.trials < 1 {
		return o, fmt.Errorf("-trials: %d, want at least 1", o.trials)
	}
	var err error
	if o.heartbeats, err = lists.Durations("-heartbeat", *hbs, time.Millisecond); err != nil {
		return o, err
	}
	if o.modes, err = lists.Modes("-mode", *modes); err != nil {
		return o, err
	}
	if o.detector != config.DetectorFixed && o.detector != config.DetectorPhi {
		return o, fmt.Errorf("-detector: %q is not fixed or phi", o.detector)
	}
	return o, nil
}

// result is one (heartbeat, mode) cell.
type result struct {
	Heartbeat    time.Duration
	SuspectAfter time.Duration
	Mode         string
	Failover     []time.Duration
	Takeback     []time.Duration
	Failures     []string
}

func run(o options, stdout, stderr io.Writer) int {
	m := machine.This()
	rng := rand.New(rand.NewPCG(o.seed, 0x6c616e6c65616465)) // "lanleade"
	var results []result
	failed := false
	if !o.json {
		fmt.Fprintf(stdout, "# %s\n", m.Line())
		fmt.Fprintf(stdout, "# %d nodes, %d trials, detector %s, seed %d; in-process agents on 127.0.0.1, unicast transport\n",
			o.nodes, o.trials, o.detector, o.seed)
	}
	for _, hb := range o.heartbeats {
		for _, mode := range o.modes {
			fmt.Fprintf(stderr, "failover: heartbeat %v, %s: %d trials…\n", hb, mode, o.trials)
			r := measure(o, hb, mode, rng, stderr)
			if len(r.Failures) > 0 {
				failed = true
				for _, f := range r.Failures {
					fmt.Fprintf(stderr, "failover: heartbeat %v, %s: %s\n", hb, mode, f)
				}
			}
			results = append(results, r)
			if o.json {
				if err := writeJSON(stdout, o, m, r); err != nil {
					fmt.Fprintf(stderr, "failover: %v\n", err)
					return 1
				}
			}
		}
	}
	if !o.json {
		writeTable(stdout, results)
	}
	if failed {
		return 1
	}
	return 0
}

// measure runs the trials of one (heartbeat, mode) on a fresh cluster.
func measure(o options, hb time.Duration, mode string, rng *rand.Rand, stderr io.Writer) result {
	base := func(c *agent.Config) {
		c.Heartbeat, c.Detector = hb, o.detector
		c.DeriveTimeouts()
	}
	r := result{Heartbeat: hb, SuspectAfter: config.DefaultSuspectAfter(hb, 0), Mode: mode}
	fail := func(format string, args ...any) {
		r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
	}
	l, err := agent.StartLocal(agent.LocalOptions{Nodes: o.nodes, Base: base})
	if err != nil {
		fail("start: %v", oneLine(err))
		return r
	}
	defer l.Close()
	if _, ok, why := poll(l, nil); !ok {
		fail("no first agreement within %v: %s", deadline, why)
		return r
	}
	settled := func(a agent.Agreement) bool { return a.Index == l.Largest() }
	for trial := 1; trial <= o.trials; trial++ {
		old, ok, why := poll(l, settled)
		if !ok {
			fail("trial %d: not settled on node-%d within %v: %s; skipping the remaining trials", trial, l.Largest()+1, deadline, why)
			return r
		}
		time.Sleep(time.Duration(rng.Int64N(int64(hb))))

		var stopped <-chan error
		t0 := time.Now()
		if mode == "crash" {
			l.Crash(old.Index)
		} else {
			stopped = l.StopAsync(old.Index)
		}
		ag, ok, why := poll(l, func(a agent.Agreement) bool { return a.Leader != old.Leader })
		failover := time.Since(t0)
		if stopped != nil {
			if err := <-stopped; err != nil {
				fail("trial %d: graceful stop of node-%d: %v", trial, old.Index+1, oneLine(err))
			}
		}
		if !ok {
			fail("trial %d: no new leader within %v after node-%d went down: %s", trial, deadline, old.Index+1, why)
		} else {
			r.Failover = append(r.Failover, failover)
		}

		t1 := time.Now()
		if err := l.Start(old.Index); err != nil {
			fail("trial %d: restart of node-%d: %v; skipping the remaining trials", trial, old.Index+1, oneLine(err))
			return r
		}
		back, ok2, why := poll(l, func(a agent.Agreement) bool { return a.Index == old.Index })
		takeback := time.Since(t1)
		if !ok2 {
			fail("trial %d: restarted node-%d does not lead within %v: %s", trial, old.Index+1, deadline, why)
		} else {
			r.Takeback = append(r.Takeback, takeback)
		}
		if o.verbose && ok && ok2 {
			fmt.Fprintf(stderr, "  trial %2d: node-%d → node-%d term %d, failover %v; node-%d back, term %d, after %v\n",
				trial, old.Index+1, ag.Index+1, ag.Term, failover.Round(10*time.Microsecond),
				old.Index+1, back.Term, takeback.Round(10*time.Microsecond))
		}
	}
	return r
}

// poll reads the cluster's agreement every pollEvery until it has a leader
// that accept takes (nil: any), or deadline passes; then it says why not.
func poll(l *agent.Local, accept func(agent.Agreement) bool) (agent.Agreement, bool, string) {
	end := time.Now().Add(deadline)
	for {
		ag := l.Agreement()
		if ag.Leader != 0 && (accept == nil || accept(ag)) {
			return ag, true, ""
		}
		if time.Now().After(end) {
			why := ag.Why
			if ag.Leader != 0 {
				why = fmt.Sprintf("all follow node_id %d term %d, not the leader wanted", ag.Leader, ag.Term)
			}
			return ag, false, why
		}
		time.Sleep(pollEvery)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fmtMS prints a duration in milliseconds with a precision fit for it.
func fmtMS(d time.Duration) string {
	v := ms(d)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func writeTable(w io.Writer, results []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "heartbeat\tsuspect\tmode\tn\tmin ms\tmedian ms\tp90 ms\tmax ms\tratio\ttakeback ms\tfailed\t")
	for _, r := range results {
		s, tb := stats.Summarize(r.Failover), stats.Summarize(r.Takeback)
		if s.N == 0 {
			fmt.Fprintf(tw, "%v\t%v\t%s\t0\t-\t-\t-\t-\t-\t-\t%d\t\n", r.Heartbeat, r.SuspectAfter, r.Mode, len(r.Failures))
			continue
		}
		tbs := "-"
		if tb.N > 0 {
			tbs = fmtMS(tb.Median)
		}
		fmt.Fprintf(tw, "%v\t%v\t%s\t%d\t%s\t%s\t%s\t%s\t%.3f\t%s\t%d\t\n", r.Heartbeat, r.SuspectAfter, r.Mode, s.N,
			fmtMS(s.Min), fmtMS(s.Median), fmtMS(s.P90), fmtMS(s.Max),
			float64(s.Median)/float64(r.SuspectAfter), tbs, len(r.Failures))
	}
	tw.Flush()
	fmt.Fprintln(w, `
failover: from the take-down to every survivor following one new leader
(polled every 0.1 ms). ratio: median failover / suspect-after. takeback:
median time from restarting the old leader to it leading again (preempt;
it includes the starting node's listen period, suspect-after).
p90 is nearest-rank (the ceil(0.9n)-th smallest sample).`)
}

// jsonResult is one line of -json output.
type jsonResult struct {
	Machine        machine.Info `json:"machine"`
	Nodes          int          `json:"nodes"`
	Detector       string       `json:"detector"`
	Seed           uint64       `json:"seed"`
	HeartbeatMS    float64      `json:"heartbeat_ms"`
	SuspectAfterMS float64      `json:"suspect_after_ms"`
	Mode           string       `json:"mode"`
	Trials         int          `json:"trials"`
	N              int          `json:"n"`
	MinMS          float64      `json:"min_ms"`
	MedianMS       float64      `json:"median_ms"`
	P90MS          float64      `json:"p90_ms"`
	MaxMS          float64      `json:"max_ms"`
	Ratio          float64      `json:"ratio_median_suspect_after"`
	TakebackMedMS  float64      `json:"takeback_median_ms"`
	FailoverMS     []float64    `json:"failover_ms"`
	TakebackMS     []float64    `json:"takeback_ms"`
	Failures       []string     `json:"failures"`
}

func writeJSON(w io.Writer, o options, m machine.Info, r result) error {
	s, tb := stats.Summarize(r.Failover), stats.Summarize(r.Takeback)
	j := jsonResult{
		Machine: m, Nodes: o.nodes, Detector: o.detector, Seed: o.seed,
		HeartbeatMS: ms(r.Heartbeat), SuspectAfterMS: ms(r.SuspectAfter), Mode: r.Mode, Trials: o.trials,
		N: s.N, MinMS: ms(s.Min), MedianMS: ms(s.Median), P90MS: ms(s.P90), MaxMS: ms(s.Max),
		TakebackMedMS: ms(tb.Median),
		FailoverMS:    make([]float64, 0, len(r.Failover)),
		TakebackMS:    make([]float64, 0, len(r.Takeback)),
		Failures:      append([]string{}, r.Failures...),
	}
	if s.N > 0 {
		j.Ratio = float64(s.Median) / float64(r.SuspectAfter)
	}
	for _, d := range r.Failover {
		j.FailoverMS = append(j.FailoverMS, ms(d))
	}
	for _, d := range r.Takeback {
		j.TakebackMS = append(j.TakebackMS, ms(d))
	}
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// oneLine joins a multi-line error (errors.Join) into one line.
func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
