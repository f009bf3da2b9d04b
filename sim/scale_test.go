package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
)

// The collapse of issue 19: 128 agents started one after another ended
// with 77 self-leaders that never recovered. The election must converge
// from any number of simultaneous leaders, under loss, and stay. Three
// ways to reach many at once, each under 20 % loss of every packet copy:
//
//   - at-once: every node starts at the same instant;
//   - one-by-one: each node starts staggerGap after the previous one, in
//     an order drawn from the seed, and learns of the others through the
//     membership layer, as agents that join one after another do;
//   - all-lead: every node starts alone (the network drops everything),
//     so each leads itself, then the network comes back.
//
// Each run must converge on the largest node (all preempt) within
// scaleConverge of the last start (or of the network's return), keep it
// (same leader, same term) for a second and scaleStay more, send no
// election packet in those scaleStay (the first second lets the
// election's last packets land), and break no invariant. CI runs
// 128 nodes each way and 1,024 at once, on one seed; the long sweep
// (LANLEADER_SIM_SCHEDULES) 16 to 1,024 nodes each way on five seeds.
func TestScaleConvergesUnderLoss(t *testing.T) {
	sizes, seeds := []int{128, 1024}, []uint64{1}
	if sweep() {
		sizes, seeds = []int{16, 64, 128, 256, 512, 1024}, []uint64{1, 2, 3, 4, 5}
	}
	for _, way := range scaleWays {
		for _, n := range sizes {
			for _, seed := range seeds {
				if n > 128 && way != "at-once" && !sweep() {
					continue // seconds each: the long sweep runs them
				}
				t.Run(fmt.Sprintf("%s/n=%d/seed=%d", way, n, seed), func(t *testing.T) {
					scaleRun(t, way, n, seed)
				})
			}
		}
	}
}

const (
	scaleLoss     = 0.2
	staggerGap    = 5 * time.Millisecond
	scaleConverge = 5 * time.Second
	scaleStay     = 10 * time.Second
)

var scaleWays = []string{"at-once", "one-by-one", "all-lead"}

func scaleRun(t *testing.T, way string, n int, seed uint64) {
	net := Net{DelayMin: 100 * time.Microsecond, DelayMax: time.Millisecond, Loss: scaleLoss}
	cfg := Config{Seed: seed, Timing: DefaultTiming(), Net: net, MembershipDelay: 500 * time.Millisecond}
	for id := 1; id <= n; id++ {
		cfg.Nodes = append(cfg.Nodes, Node{Key: election.Key{Priority: 100, ID: uint64(id)}, Preempt: true})
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	from := scaleStart(t, s, way)
	if !s.RunWhile(from+scaleConverge, func() bool { return !s.converged(true) }) {
		t.Fatalf("%s, %d nodes: not converged %v after the last start: %v", way, n, scaleConverge, s.Converged(true))
	}
	took := s.Now() - from
	st, _ := s.Status(n - 1)
	before := s.Stats
	holds := func() bool {
		now, _ := s.Status(n - 1)
		return s.converged(true) && now.Term == st.Term
	}
	// The election's last packets, in flight when the last node followed,
	// land within a second (T, CoordinatorTimeout and packet delays);
	// from then on nobody elects.
	settled := s.Now() + time.Second
	if s.RunWhile(settled, holds) {
		t.Fatalf("%s, %d nodes: converged on n%d term %d, then lost it: %v", way, n, n, st.Term, s.Converged(true))
	}
	quiet := s.Stats
	if s.RunWhile(settled+scaleStay, holds) {
		t.Fatalf("%s, %d nodes: converged on n%d term %d, then lost it: %v", way, n, n, st.Term, s.Converged(true))
	}
	if st.State != election.StateLeader {
		t.Fatalf("%s, %d nodes: converged with n%d %v", way, n, n, st.State)
	}
	if s.Check.Count > 0 {
		t.Fatalf("%s, %d nodes: %d violations, first: %s", way, n, s.Check.Count, s.Check.Violations[0])
	}
	// While it holds, nobody elects: only the leader's heartbeats and the
	// followers' occasional questions (PROBE, VOUCH) after a loss.
	if e := electionPackets(&s.Stats) - electionPackets(&quiet); e != 0 {
		t.Errorf("%s, %d nodes: %d election packets while the leader held", way, n, e)
	}
	t.Logf("%s, %d nodes: converged %v after the last start; %d packets (%d election) until then",
		way, n, took, before.totalPackets(), electionPackets(&before))
}

// scaleStart starts the nodes of s the given way and returns the time
// from which convergence is measured.
func scaleStart(t *testing.T, s *Sim, way string) time.Duration {
	switch way {
	case "at-once":
		s.Start()
	case "one-by-one":
		for k, i := range s.Rand().Perm(s.N()) {
			s.At(time.Duration(k)*staggerGap, func() { s.Restart(i) })
		}
		s.RunUntil(time.Duration(s.N()-1) * staggerGap)
	case "all-lead":
		net := s.Net()
		s.SetNet(Net{DelayMin: net.DelayMin, DelayMax: net.DelayMax, Loss: 1})
		s.Start()
		if !s.RunWhile(2*time.Second, func() bool { return len(s.LiveLeaders()) < s.N() }) {
			t.Fatalf("all-lead: %d leaders of %d nodes, want every one", len(s.LiveLeaders()), s.N())
		}
		s.SetNet(net)
	default:
		t.Fatalf("unknown way %q", way)
	}
	return s.Now()
}

func (st *Stats) totalPackets() int {
	n := 0
	for _, p := range st.Packets {
		n += p
	}
	return n
}

func electionPackets(st *Stats) int {
	n := 0
	for _, ty := range electionTypes {
		n += st.Packets[ty]
	}
	return n
}
