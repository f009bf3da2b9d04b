package sim

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
)

func quorumCluster(t *testing.T, seed uint64, n int) *Sim {
	t.Helper()
	timing := DefaultTiming()
	timing.Quorum = n
	cfg := Config{Seed: seed, Timing: timing, DriftPPM: 500, Net: Net{DelayMin: 100 * time.Microsecond, DelayMax: time.Millisecond}}
	for id := uint64(1); id <= uint64(n); id++ {
		cfg.Nodes = append(cfg.Nodes, Node{Key: election.Key{Priority: 100, ID: id}, Preempt: true})
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The minority side of a partition has no leader and says so; the
// majority side elects one only after the old lease has surely run out;
// after the heal the cluster converges; no lease overlaps on the way.
func TestQuorumPartitionMinorityHasNoLeader(t *testing.T) {
	s := quorumCluster(t, 11, 5)
	s.Start()
	s.RunUntil(2 * time.Second)
	if err := s.Converged(true); err != nil {
		t.Fatal(err)
	}
	// The leader, 5, with 4 on its side: a minority.
	old, _ := s.Status(4)
	if old.State != election.StateLeader || old.LeaseUntil == 0 {
		t.Fatalf("n5 before the cut: %+v, want the leader with a lease", old)
	}
	s.Partition([]int{3, 4})
	cut := s.Now()
	// Cut off from every acknowledgement of the majority, n5 renews its
	// lease no more: it runs out at this global time.
	leaseEnd := s.nodes[4].global(old.LeaseUntil)
	var majorityAt time.Duration
	s.RunWhile(4*time.Second, func() bool {
		if majorityAt == 0 {
			for i := 0; i < 3; i++ {
				if st, _ := s.Status(i); st.State == election.StateLeader {
					majorityAt = s.Now()
				}
			}
		}
		return true
	})
	for i := 3; i < 5; i++ {
		st, _ := s.Status(i)
		if st.State == election.StateLeader || st.Leader != 0 {
			t.Errorf("minority node n%d: %v leader=n%d, want no leader", i+1, st.State, st.Leader)
		}
	}
	if got := s.LiveLeaders(); len(got) != 1 || got[0] != 3 {
		t.Errorf("leaders %v, want [3] on the majority side; %s", got, s.Describe())
	}
	// 5's last acknowledged heartbeat was at most 100ms before the cut:
	// its lease ran out by cut+300ms, the guards by cut+330ms (plus drift).
	if majorityAt < leaseEnd || leaseEnd > cut+300*time.Millisecond {
		t.Errorf("the majority elected %v after the cut; n5's lease ran out %v after it", majorityAt-cut, leaseEnd-cut)
	}
	t.Logf("partition at %v: n5's lease ran out %v later, the majority side leads again %v later", cut, leaseEnd-cut, majorityAt-cut)
	s.Heal()
	s.RunUntil(8 * time.Second)
	if err := s.Converged(true); err != nil {
		t.Error(err)
	}
	if s.Check.Count != 0 || s.Check.DupTerms != 0 {
		t.Errorf("violations: %q, %d same-term leaderships", s.Check.Violations, s.Check.DupTerms)
	}
}

// A leader paused for longer than its lease wakes up, finds its lease
// run out, and steps down before it does anything; meanwhile the others
// elected a new leader, and no lease overlaps.
func TestQuorumPausedLeaderStepsDownOnWake(t *testing.T) {
	s := quorumCluster(t, 12, 3)
	s.Start()
	s.RunUntil(2 * time.Second)
	s.Pause(2)
	s.RunUntil(3 * time.Second)
	if got := s.LiveLeaders(); len(got) != 2 || got[0] != 2 {
		t.Fatalf("during the pause: leaders %v, want 2 (and the paused 3, which has not looked at its clock)", got)
	}
	s.Resume(2)
	s.RunUntil(s.Now() + time.Microsecond)
	if st, _ := s.Status(2); st.State == election.StateLeader {
		t.Fatalf("n3 still leads after its wake-up: %+v", st)
	}
	s.RunUntil(5 * time.Second)
	if err := s.Converged(true); err != nil {
		t.Error(err)
	}
	if s.Check.Count != 0 {
		t.Errorf("violations: %q", s.Check.Violations)
	}
}

// A node's clock runs off by its ppm, and global() is local()'s inverse:
// the first global time at which the node's clock reads a given time.
func TestClockDrift(t *testing.T) {
	for _, ppm := range []int64{-500, -1, 0, 1, 500} {
		n := &node{offset: 5 * time.Second, ppm: ppm}
		if got, want := n.local(10*time.Second)-n.offset-10*time.Second, time.Duration(ppm)*10*time.Microsecond; got != want {
			t.Errorf("ppm %d: after 10s the clock is off by %v, want %v", ppm, got, want)
		}
		for _, g := range []time.Duration{0, 1, 999_999, time.Second + 7, 37 * time.Second} {
			l := n.local(g)
			back := n.global(l)
			if back > g || n.local(back) < l || back > 0 && n.local(back-1) >= l {
				t.Errorf("ppm %d: global(local(%v)) = %v", ppm, g, back)
			}
		}
	}
}
