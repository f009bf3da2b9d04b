// Command complexity prints what one election costs, in messages and
// packets, for each algorithm (bully and the ring family) and cluster
// size, in the best, average and worst placement, next to the textbooks'
// counts. Runs are simulated (sim/), deterministic for a seed.
//
//	go run ./bench/complexity [-n 8,16,32,64,128,256,1024] [-seeds 30] [-algorithm all]
//
// The coordinator, the largest of n nodes (ids 1..n, equal priority),
// crashes, and m = n−1 nodes elect. Each algorithm is measured in the
// setting its textbook counts:
//
//   - bully: one node notices. The placement is which one: best the
//     largest live node, worst the smallest, average a random one.
//   - ring (with the list): one node notices; the placement (which one)
//     hardly matters.
//   - chang-roberts and hirschberg-sinclair: every live node notices and
//     starts (the textbooks' analyses assume it; it is also what happens on
//     a LAN, where every follower's detector was fed the same last
//     heartbeat). The placement is the order of the keys on the ring: best
//     sorted so that each successor is larger, worst the other way, average
//     over random orders (Config.RingOrder.Shuffle).
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lanleader/lanleader/bench/internal/lists"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/sim"
)

func main() {
	sizes := flag.String("n", "8,16,32,64,128,256,1024", "comma-separated cluster sizes (3 or more)")
	seeds := flag.Int("seeds", 30, "placements averaged over (fewer above 128 nodes: at most 4096/n, at least 3)")
	alg := flag.String("algorithm", "all", "one algorithm, or all: "+strings.Join(election.Algorithms, ", "))
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: complexity [-n 8,16,32] [-seeds 30] [-algorithm all]\n\nMessages and packets of one election of each algorithm, next to the textbooks' counts.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	ns, err := lists.Sizes("-n", *sizes, 3, 1024)
	if err != nil {
		fmt.Fprintf(os.Stderr, "complexity: %v\n", err)
		os.Exit(2)
	}
	algs := election.Algorithms
	if *alg != "all" {
		if !slices.Contains(election.Algorithms, *alg) {
			fmt.Fprintf(os.Stderr, "complexity: -algorithm %q: want all or one of %s\n", *alg, strings.Join(election.Algorithms, ", "))
			os.Exit(2)
		}
		algs = []string{*alg}
	}
	if *seeds < 1 {
		fmt.Fprintln(os.Stderr, "complexity: -seeds must be at least 1")
		os.Exit(2)
	}

	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "n\talgorithm\ttextbook\tvalue\tbest\tavg\tworst\tacks\tpackets\tsamples\ttime\t")
	start := time.Now()
	for _, n := range ns {
		for _, a := range algs {
			r, err := measure(a, n, samples(*seeds, n))
			if err != nil {
				fmt.Fprintln(os.Stderr, "complexity:", err)
				os.Exit(1)
			}
			formula, value := textbook(a, n)
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%d\t%.1f\t%d\t%.1f\t%.1f\t%d\t%v\t\n", n, a, formula, value,
				r.best, r.avg, r.worst, r.acks, r.packets, r.samples, r.took.Round(time.Millisecond))
		}
	}
	w.Flush()

	// The LAN case for every algorithm: every live node notices at once,
	// the ring sorted by key (the design's ring).
	fmt.Println("\nEvery live node notices at once (the LAN case), ring sorted by key: messages (+ acks) / packets per election")
	w = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(w, "n\t")
	for _, a := range algs {
		fmt.Fprintf(w, "%s\t", a)
	}
	agent := slices.Contains(algs, election.AlgorithmBully)
	if agent {
		fmt.Fprint(w, "bully O(n) (agent)\t")
	}
	fmt.Fprintln(w)
	for _, n := range ns {
		fmt.Fprintf(w, "%d\t", n)
		for _, a := range algs {
			lanCase(w, sim.Election{Algorithm: a, N: n, All: true, Seed: 1})
		}
		if agent {
			lanCase(w, sim.Election{Algorithm: election.AlgorithmBully, N: n, All: true, Seed: 1, Hardened: true})
		}
		fmt.Fprintln(w)
	}
	w.Flush()
	fmt.Printf("\n(%v)\n", time.Since(start).Round(time.Second))
	fmt.Print(notes)
}

// lanCase measures e (every node notices) and writes its cell:
// messages (+ acks) / packets.
func lanCase(w *tabwriter.Writer, e sim.Election) {
	c, err := sim.Measure(e)
	if err != nil {
		fmt.Fprintln(os.Stderr, "complexity:", err)
		os.Exit(1)
	}
	acks := ""
	if c.Acks() > 0 {
		acks = fmt.Sprintf(" (+%d)", c.Acks())
	}
	fmt.Fprintf(w, "%d%s / %d\t", c.TotalMessages(), acks, c.TotalPackets()+c.Acks())
}

// samples is how many placements to average over for n nodes.
func samples(seeds, n int) int {
	if n > 128 {
		return min(seeds, max(3, 4096/n))
	}
	return seeds
}

// result is what the runs of one algorithm on n nodes cost.
type result struct {
	best, worst int
	avg         float64 // messages per election, acknowledgements left out
	acks        float64 // RING_ACK per election, on average
	packets     float64 // packets per election with multicast, acknowledgements in, on average
	took        time.Duration
	samples     int
}

func (r *result) add(c sim.ElectionCount, inAvg bool) {
	m := c.TotalMessages()
	if r.samples == 0 && r.best == 0 || m < r.best {
		r.best = m
	}
	r.worst = max(r.worst, m)
	if inAvg {
		k := float64(r.samples)
		r.avg = (r.avg*k + float64(m)) / (k + 1)
		r.acks = (r.acks*k + float64(c.Acks())) / (k + 1)
		r.packets = (r.packets*k + float64(c.TotalPackets()+c.Acks())) / (k + 1)
		r.took = time.Duration((float64(r.took)*k + float64(c.Took)) / (k + 1))
		r.samples++
	}
}

func measure(alg string, n, k int) (result, error) {
	var r result
	switch alg {
	case election.AlgorithmBully, election.AlgorithmRing:
		// One node notices; one cluster, the coordinator crashed and
		// restarted between the runs.
		e := sim.Election{Algorithm: alg, N: n, Seed: 1}
		s, err := sim.Prepare(e)
		if err != nil {
			return r, err
		}
		run := func(noticer int) (sim.ElectionCount, error) {
			e.Noticer = noticer
			c, err := s.Elect(e)
			if err == nil {
				err = s.Recover()
			}
			return c, err
		}
		best, err := run(n - 2)
		if err != nil {
			return r, err
		}
		worst, err := run(0)
		if err != nil {
			return r, err
		}
		r.add(best, false)
		r.add(worst, false)
		noticers := rand.New(rand.NewPCG(uint64(n), 1)).Perm(n - 1)
		if k >= n-1 {
			k = n - 1 // every node once
		}
		for _, i := range noticers[:k] {
			c, err := run(i)
			if err != nil {
				return r, err
			}
			r.add(c, true)
		}
	default:
		// Every node notices; one cluster per placement.
		one := func(o election.RingOrder, seed uint64, inAvg bool) error {
			c, err := sim.Measure(sim.Election{Algorithm: alg, N: n, All: true, Order: o, Seed: seed})
			if err == nil {
				r.add(c, inAvg)
			}
			return err
		}
		if err := one(election.RingOrder{}, 1, false); err != nil {
			return r, err
		}
		if err := one(election.RingOrder{Descending: true}, 1, false); err != nil {
			return r, err
		}
		for seed := uint64(1); seed <= uint64(k); seed++ {
			if err := one(election.RingOrder{Shuffle: seed}, seed, true); err != nil {
				return r, err
			}
		}
	}
	return r, nil
}

// textbook returns the textbook's count for alg on n nodes of which the
// coordinator crashed (m = n−1 elect), and its value.
func textbook(alg string, n int) (string, string) {
	m := n - 1
	switch alg {
	case election.AlgorithmBully:
		return "best n-2, worst n²-n-1", fmt.Sprintf("%d..%d", sim.TextbookBest(n), sim.TextbookWorst(n))
	case election.AlgorithmRing:
		return "2m", strconv.Itoa(2 * m)
	case election.AlgorithmChangRoberts:
		h := 0.0
		for i := 1; i <= m; i++ {
			h += 1 / float64(i)
		}
		return "(2m-1 | m·H_m | m(m+1)/2) + m", fmt.Sprintf("%d|%.0f|%d", 2*m-1+m, float64(m)*h+float64(m), m*(m+1)/2+m)
	case election.AlgorithmHirschbergSinclair:
		b := 8 * m * (int(math.Ceil(math.Log2(float64(m)))) + 1)
		return "≤ 8m(log2 m+1) + m", "≤ " + strconv.Itoa(b+m)
	}
	return "", ""
}

const notes = `
n: the cluster; its coordinator crashes and m = n-1 nodes elect. best, avg,
worst: messages of one election in the best, average and worst placement
(a broadcast to k members counts k; the ring family's acknowledgements are
left out). acks: RING_ACK per election, one per hop (average). packets:
packets on the wire per election with multicast, acknowledgements included
(average). samples: placements averaged. time: from the suspicion to the
last node following the new leader (average; T = 50ms, hops 0.1-1ms).
bully and ring: best and worst are the noticers named above, avg over
random noticers (every one when samples = m). chang-roberts: best the ring
sorted by key, worst reversed, avg over random orders. hirschberg-sinclair:
best and worst are the least and most over those same orders (its textbook
value is a bound, not an exact worst placement).

Where the measured counts depart from the textbooks':
- Every hop of the ring family is acknowledged (RING_ACK), so that a
  successor that does not answer within T is skipped: packets are about
  twice the messages. The textbooks assume reliable channels and count no
  acknowledgement.
- ring: one more ELECTION than 2m when the node before the dead
  coordinator has not suspected it: its hop to it is lost, waited T for,
  and sent on to the next node (the texts' "if the next process does not
  answer, send to the one after it").
- chang-roberts and hirschberg-sinclair: + m for ELECTED, which goes once
  round after the election (the textbook counts of Chang-Roberts' n·H_n and
  n(n+1)/2 are the ELECTION messages alone; Hirschberg-Sinclair's bound is
  for the probes and replies). Hirschberg-Sinclair is far below its bound:
  the bound is a worst case over placements, and a process that has seen a
  larger identifier stops probing (the Czech text's "lost" process only
  passes messages on).
- bully: best is n-1, not n-2: the COORDINATOR also goes to the dead
  coordinator, which membership still lists; worst equals the textbook
  (the noticer leaves out the coordinator it suspects, -1, and COORDINATOR
  goes to the dead one, +1). With multicast every ELECTION and COORDINATOR
  is one packet whatever its count; only the ANSWERs are one packet each.
  When every node notices, bully is O(n²) messages (every node elects);
  the O(n) election the agent runs (last column: rank deferral, one
  multicast ANSWER for all; docs/design/election.md) costs one
  COORDINATOR packet, n-1 messages, as the best case does (the
  confirmations before the suspicion, PROBE and VOUCH, are not counted
  here: bench/msgcount does);
  the ring family stays O(n) (ring, Chang-Roberts sorted by key) or
  O(n log n) (Hirschberg-Sinclair), but each of its messages is a unicast
  hop, and its elections take a hop time per node instead of one T.
`
