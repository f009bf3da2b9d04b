package sim

// Simulations that probe the leader re-assert and committed paths found in
// review; each comment says what is measured.

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
)

func r2MaxTerm(s *Sim) uint64 {
	var m uint64
	for i := range s.nodes {
		if st, ok := s.Status(i); ok && st.Term > m {
			m = st.Term
		}
	}
	return m
}

func r2Cluster(t *testing.T, seed uint64, n int, preempt func(i int) bool) *Sim {
	t.Helper()
	cfg := Config{Seed: seed, Timing: DefaultTiming(), Net: Net{DelayMin: 100 * time.Microsecond, DelayMax: time.Millisecond}}
	for i := 0; i < n; i++ {
		cfg.Nodes = append(cfg.Nodes, Node{Key: election.Key{Priority: 100, ID: uint64(i + 1)}, Preempt: preempt(i)})
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Review: can preempting leaders ping-pong terms across a
// one-way partition? Random directed cut matrices held for 20s, then healed.
// Measured: term growth during the fault (per second, after the first 2s),
// and after the heal (must stop once converged). Reported as logs; fails
// only if terms keep growing after convergence or convergence is missed.
func TestRegressionOneWayTermGrowth(t *testing.T) {
	worstDuring, worstSeed, multi := 0.0, uint64(0), 0
	for seed := uint64(1); seed <= 2000; seed++ {
		r := rand.New(rand.NewPCG(seed, 99))
		n := 3 + r.IntN(4)
		pre := make([]bool, n)
		all := true
		for i := range pre {
			pre[i] = seed%2 == 0 || r.IntN(2) == 0
			all = all && pre[i]
		}
		s := r2Cluster(t, seed, n, func(i int) bool { return pre[i] })
		s.Start()
		s.RunUntil(time.Second)
		p := []float64{0.2, 0.4, 0.6}[r.IntN(3)]
		for a := 0; a < n; a++ {
			for b := 0; b < n; b++ {
				if a != b && r.Float64() < p {
					s.Cut(a, b)
				}
			}
		}
		s.RunUntil(3 * time.Second)
		t0 := r2MaxTerm(s)
		s.RunUntil(21 * time.Second)
		t1 := r2MaxTerm(s)
		if len(s.LiveLeaders()) > 1 {
			multi++
		}
		rate := float64(t1-t0) / 18
		if rate > worstDuring {
			worstDuring, worstSeed = rate, seed
		}
		s.Heal()
		s.RunUntil(25 * time.Second)
		if err := s.Converged(all); err != nil {
			t.Errorf("seed %d: 4s after heal: %v", seed, err)
			continue
		}
		t2 := r2MaxTerm(s)
		s.RunUntil(60 * time.Second)
		if t3 := r2MaxTerm(s); t3 != t2 {
			t.Errorf("seed %d: terms grow after convergence: %d -> %d", seed, t2, t3)
		}
	}
	t.Logf("worst term growth during a held one-way fault: %.2f terms/s (seed %d); %d runs had several leaders during the fault", worstDuring, worstSeed, multi)
}

// Regression (deviation, introduced by `committed`, fixed): a node restarted within
// its PreemptDelay (or with Preempt off) that receives, during its listen
// period, an ELECTION from a smaller node still electing after its own
// crash, answers it, becomes committed and then ignores the COORDINATOR of
// the smaller node that won that very election: at the end of its listen
// period it claims, and leadership moves twice (3 -> 2 -> 3) within half a
// second of the restart. Before the change the candidate followed 2
// (mayPreempt was false) and took over only at started+PreemptDelay.
// PreemptDelay ("a node waits this long before it takes over from a
// smaller leader") and nopreempt are bypassed. Fix: remember the term of
// the ELECTION answered and let a claim with a later term (the outcome of
// that election) end the commitment.
func TestRegressionCommittedBypassesPreemptDelayAfterRestart(t *testing.T) {
	for _, c := range []struct {
		name    string
		delay   time.Duration
		preempt bool
	}{{"preempt delay 5s", 5 * time.Second, true}, {"nopreempt", 0, false}} {
		bad, first := 0, ""
		for seed := uint64(1); seed <= 200; seed++ {
			timing := DefaultTiming()
			timing.PreemptDelay = c.delay
			// Jitter up to 10ms (Generate uses up to T/4 = 12ms without a fault).
			cfg := Config{Seed: seed, Timing: timing, Net: Net{DelayMin: 100 * time.Microsecond, DelayMax: 10 * time.Millisecond}}
			for id := uint64(1); id <= 4; id++ {
				cfg.Nodes = append(cfg.Nodes, Node{Key: election.Key{Priority: 100, ID: id}, Preempt: id != 4 || c.preempt})
			}
			s, _ := New(cfg)
			s.Start()
			// 4 leads; it crashes and its process is restarted 150ms later.
			s.At(1000*time.Millisecond, func() { s.Crash(3) })
			s.At(1150*time.Millisecond, func() { s.Restart(3) })
			var moves []election.NodeID
			last := election.NodeID(0)
			s.RunWhile(3*time.Second, func() bool {
				if l := s.LiveLeaders(); len(l) == 1 && l[0] != last {
					last = l[0]
					moves = append(moves, last)
				}
				return true
			})
			if last == 4 {
				bad++
				if first == "" {
					first = fmt.Sprintf("seed %d: leaders over time %v", seed, moves)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: in %d of 200 runs node 4, restarted at 1.15s, leads again by 3s (%s); it should follow 3 (until 6.15s with the delay, for good with nopreempt)", c.name, bad, first)
		}
	}
}
