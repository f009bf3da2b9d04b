package sim

import (
	"github.com/lanleader/lanleader/internal/cputime"
	"math"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

// The ring family in the simulator: what one election costs against the
// textbooks' counts, when the coordinator n crashes and the n−1 others
// (m live nodes) elect. Every hop is acknowledged: RING_ACK is counted
// apart (Acks), and a hop to the dead coordinator, which does not answer,
// costs one message and no acknowledgement.

// Ring with list, one node notices (the textbook's setting): ELECTION goes
// once round the m live nodes, COORDINATOR once round: 2m messages, the
// textbook's 2n for n = m. Node n−1 has not suspected n: its hop to n is
// lost, waited T for, and skipped: one more ELECTION.
func TestCountRingIsTwoLaps(t *testing.T) {
	for _, n := range []int{4, 8, 16, 32} {
		m := n - 1
		c, err := Measure(Election{Algorithm: election.AlgorithmRing, N: n, Noticer: 0, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if c.Leader != uint64(m) {
			t.Errorf("n=%d: leader %d, want %d", n, c.Leader, m)
		}
		el, co := c.Messages[wire.TypeRingElection], c.Messages[wire.TypeRingCoordinator]
		if el != m+1 || co != m || c.Acks() != 2*m {
			t.Errorf("n=%d: %d ELECTION, %d COORDINATOR, %d acks; want %d, %d, %d", n, el, co, c.Acks(), m+1, m, 2*m)
		}
		// The node next to the coordinator notices: no lost hop, 2m.
		c, err = Measure(Election{Algorithm: election.AlgorithmRing, N: n, Noticer: n - 2, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.TotalMessages(); got != 2*m || c.Acks() != 2*m {
			t.Errorf("n=%d, the suspect's predecessor notices: %d messages, %d acks; want 2m = %d each", n, got, c.Acks(), 2*m)
		}
	}
}

// Chang–Roberts, every node notices (the textbook's setting): with the
// ring sorted by key (each successor larger: the best placement) each
// identifier but the largest is dropped after one hop: 2m−1 ELECTION; with
// the ring the other way (the worst placement) identifier i travels i
// hops: m(m+1)/2. Then m ELECTED.
func TestCountChangRobertsBestAndWorstPlacement(t *testing.T) {
	for _, n := range []int{4, 8, 16, 32, 64} {
		m := n - 1
		for _, tc := range []struct {
			name  string
			order election.RingOrder
			want  int
		}{
			{"best", election.RingOrder{}, 2*m - 1},
			{"worst", election.RingOrder{Descending: true}, m * (m + 1) / 2},
		} {
			c, err := Measure(Election{Algorithm: election.AlgorithmChangRoberts, N: n, All: true, Order: tc.order, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			el, ed := c.Messages[wire.TypeCRElection], c.Messages[wire.TypeCRElected]
			if el != tc.want || ed != m || c.Leader != uint64(m) || c.Acks() != el+ed {
				t.Errorf("n=%d %s: %d ELECTION, %d ELECTED, %d acks, leader %d; want %d, %d, %d, %d",
					n, tc.name, el, ed, c.Acks(), c.Leader, tc.want, m, tc.want+m, m)
			}
		}
	}
}

// Chang–Roberts with random placements averages about m·H_m ELECTION
// messages (Chang and Roberts, 1979): within 15% over 30 placements.
func TestCountChangRobertsAverageIsNHn(t *testing.T) {
	n, m, runs := 32, 31, 30
	sum := 0
	for seed := uint64(1); seed <= uint64(runs); seed++ {
		c, err := Measure(Election{Algorithm: election.AlgorithmChangRoberts, N: n, All: true, Order: election.RingOrder{Shuffle: seed}, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		sum += c.Messages[wire.TypeCRElection]
	}
	avg, want := float64(sum)/float64(runs), float64(m)*harmonic(m)
	if math.Abs(avg-want) > 0.15*want {
		t.Errorf("average %0.1f ELECTION over %d placements, want about m·H_m = %0.1f", avg, runs, want)
	}
}

func harmonic(n int) float64 {
	h := 0.0
	for i := 1; i <= n; i++ {
		h += 1 / float64(i)
	}
	return h
}

// Hirschberg–Sinclair, every node notices: probes and replies stay within
// the paper's bound 8m(⌈log2 m⌉ + 1), in any placement, then m ELECTED.
func TestCountHirschbergSinclairWithinBound(t *testing.T) {
	for _, n := range []int{4, 8, 16, 32, 64} {
		m := n - 1
		bound := 8 * m * (int(math.Ceil(math.Log2(float64(m)))) + 1)
		for _, order := range []election.RingOrder{{}, {Descending: true}, {Shuffle: 7}} {
			c, err := Measure(Election{Algorithm: election.AlgorithmHirschbergSinclair, N: n, All: true, Order: order, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			hs := c.Messages[wire.TypeHSProbe] + c.Messages[wire.TypeHSReply]
			if hs > bound || c.Messages[wire.TypeCRElected] != m || c.Leader != uint64(m) {
				t.Errorf("n=%d %+v: %d probes and replies (bound %d), %d ELECTED, leader %d",
					n, order, hs, bound, c.Messages[wire.TypeCRElected], c.Leader)
			}
		}
	}
}

// Every algorithm elects the largest live node, and only one, in a
// 64-node cluster where every node notices.
func TestEveryAlgorithmElectsTheLargest(t *testing.T) {
	for _, alg := range election.Algorithms {
		c, err := Measure(Election{Algorithm: alg, N: 64, All: true, Seed: 3})
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		if c.Leader != 63 {
			t.Errorf("%s: leader %d, want 63", alg, c.Leader)
		}
	}
}

// BenchmarkElection1024 measures one election of a 1,024-node simulated
// cluster for each algorithm: the coordinator crashes and every other node
// notices at once (the LAN case: every follower's detector was fed the
// same last heartbeat), until every node follows the new leader and the
// election's last packet has landed. Starting the cluster (and its first
// election) is not timed. cpu-s/op is the process's CPU time (user and
// system, the garbage collector's included) per election; it must stay
// under 5 s for every algorithm. Each algorithm runs as the seeds describe
// it (the zero election.Hardening), bully also as the agent runs it (bully-agent: the
// O(n) election, with the confirmations before the suspicion):
//
//	go test ./sim -run XXX -bench Election1024 -benchtime 1x
func BenchmarkElection1024(b *testing.B) {
	type variant struct {
		name, alg string
		agent     bool
	}
	var vs []variant
	for _, alg := range election.Algorithms {
		vs = append(vs, variant{alg, alg, false})
	}
	vs = append(vs, variant{"bully-agent", election.AlgorithmBully, true})
	for _, v := range vs {
		b.Run(v.name, func(b *testing.B) {
			e := Election{Algorithm: v.alg, N: 1024, All: true, Seed: 1, Hardened: v.agent}
			var cpu time.Duration
			msgs := 0
			for range b.N {
				b.StopTimer()
				s, err := Prepare(e)
				if err != nil {
					b.Fatal(err)
				}
				c0 := cputime.Self()
				b.StartTimer()
				c, err := s.Elect(e)
				b.StopTimer()
				cpu += cputime.Self() - c0
				if err != nil {
					b.Fatal(err)
				}
				msgs = c.TotalMessages() + c.Acks()
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(msgs), "msgs/op")
		})
	}
}
