package sim

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
)

// The same seed gives the same run, byte for byte; another seed does not.
// For every algorithm.
func TestSameSeedSameTrace(t *testing.T) {
	for i, seed := range []uint64{1, 7, 42, 4242, 9, 12, 100, 2024} {
		alg := election.Algorithms[i%len(election.Algorithms)]
		var a, b bytes.Buffer
		ra := Run(GenerateFor(alg, seed), &a)
		rb := Run(GenerateFor(alg, seed), &b)
		if a.Len() == 0 {
			t.Fatalf("seed %d: empty trace", seed)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("seed %d: two runs differ (%x vs %x)", seed, sha256.Sum256(a.Bytes()), sha256.Sum256(b.Bytes()))
		}
		if ra.Stats != rb.Stats || ra.Converge != rb.Converge {
			t.Fatalf("seed %d: results differ: %+v vs %+v", seed, ra.Stats, rb.Stats)
		}
		var c bytes.Buffer
		Run(GenerateFor(alg, seed+1), &c)
		if bytes.Equal(a.Bytes(), c.Bytes()) {
			t.Fatalf("seeds %d and %d gave the same trace", seed, seed+1)
		}
	}
}

// The checker bites: each invariant, broken on purpose, is reported.
func TestCheckerCatchesViolations(t *testing.T) {
	s, err := New(Config{Nodes: []Node{{Key: election.Key{Priority: 1, ID: 1}}, {Key: election.Key{Priority: 1, ID: 2}}, {Key: election.Key{Priority: 1, ID: 3}}}})
	if err != nil {
		t.Fatal(err)
	}
	c := s.Check
	k1, k2, k3 := s.Key(0), s.Key(1), s.Key(2)
	follower := func(leader election.Key, term uint64) election.Status {
		return election.Status{State: election.StateFollower, Term: term, Leader: leader.ID, LeaderKey: leader}
	}
	leaderOf := func(self election.Key, term uint64) election.Status {
		return election.Status{Self: self, State: election.StateLeader, Term: term, Leader: self.ID, LeaderKey: self}
	}
	// Invariant 3: a term goes down.
	c.afterStep(0, follower(k3, 5), follower(k3, 4))
	// Invariant 1, per node: node 1 recognised 3 for term 6, then the
	// smaller 2 for the same term.
	c.afterStep(0, election.Status{}, follower(k3, 6))
	c.afterStep(0, follower(k3, 6), follower(k2, 6))
	if c.Count != 2 || !strings.Contains(c.Violations[0], "invariant 3") || !strings.Contains(c.Violations[1], "invariant 1") {
		t.Fatalf("want one violation of 3 then one of 1, got %d: %q", c.Count, c.Violations)
	}
	// Invariant 1, globally: two nodes lead with the same term.
	c.afterStep(1, election.Status{}, leaderOf(k2, 9))
	c.afterStep(2, election.Status{}, leaderOf(k3, 9))
	if c.DupTerms != 1 {
		t.Fatalf("DupTerms = %d, want 1", c.DupTerms)
	}
	// A larger key for the same term, and a higher term, are fine.
	c.afterStep(0, follower(k2, 6), follower(k3, 6))
	c.afterStep(0, follower(k3, 6), follower(k1, 7))
	if c.Count != 2 {
		t.Fatalf("legal transitions were reported: %q", c.Violations)
	}
}

// Convergence is judged on live, awake nodes: one leader, everyone follows
// it with its term, and it is the largest key when everyone preempts.
func TestConverged(t *testing.T) {
	cfg := Config{Seed: 3, Timing: DefaultTiming(), Net: Net{DelayMin: time.Millisecond, DelayMax: time.Millisecond}}
	for id := uint64(1); id <= 4; id++ {
		cfg.Nodes = append(cfg.Nodes, Node{Key: election.Key{Priority: 100, ID: id}, Preempt: true})
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if err := s.Converged(true); err == nil {
		t.Fatal("converged before any election")
	}
	s.RunUntil(2 * time.Second)
	if err := s.Converged(true); err != nil {
		t.Fatal(err)
	}
	if got := s.LiveLeaders(); len(got) != 1 || got[0] != 4 {
		t.Fatalf("leaders %v, want [4]", got)
	}
	// Pause the leader: the others are judged alone, and elect 3.
	s.Pause(3)
	if err := s.Converged(true); err == nil {
		t.Fatal("converged with the leader paused and no new leader yet")
	}
	s.RunUntil(4 * time.Second)
	if err := s.Converged(true); err != nil {
		t.Fatal(err)
	}
	// It wakes up, still believing it leads: two leaders until it hears 3.
	s.Resume(3)
	if got := s.LiveLeaders(); len(got) != 2 {
		t.Fatalf("right after the resume: leaders %v, want the stale 4 and 3", got)
	}
	s.RunUntil(6 * time.Second)
	if err := s.Converged(true); err != nil {
		t.Fatal(err)
	}
	if got := s.LiveLeaders(); len(got) != 1 || got[0] != 4 {
		t.Fatalf("after the resume: leaders %v, want [4] (it is the largest and preempts)", got)
	}
}

// The network's faults do what they say: a cut link and total loss drop
// every packet, duplication delivers some twice, and healing restores the
// link.
func TestNetworkFaults(t *testing.T) {
	cfg := Config{Seed: 9, Timing: DefaultTiming(), Net: Net{DelayMin: time.Millisecond, DelayMax: 2 * time.Millisecond}}
	for id := uint64(1); id <= 3; id++ {
		cfg.Nodes = append(cfg.Nodes, Node{Key: election.Key{Priority: 100, ID: id}, Preempt: true})
	}
	s, _ := New(cfg)
	s.Start()
	s.RunUntil(time.Second)
	// Leader 3 is cut off both ways: 2 takes over on its side.
	s.Partition([]int{2})
	if s.Connected(0, 2) || !s.Connected(0, 1) {
		t.Fatal("Partition did not cut exactly the leader's links")
	}
	dropped := s.Stats.Dropped
	s.RunUntil(2 * time.Second)
	if s.Stats.Dropped <= dropped {
		t.Fatal("a cut link dropped nothing")
	}
	if got := s.LiveLeaders(); len(got) != 2 {
		t.Fatalf("partitioned: leaders %v, want one on each side (textbook bully has no quorum)", got)
	}
	s.Heal()
	s.RunUntil(3 * time.Second)
	if got := s.LiveLeaders(); len(got) != 1 || got[0] != 3 {
		t.Fatalf("healed: leaders %v, want [3]", got)
	}
	// Total loss: nothing is delivered.
	s.SetNet(Net{DelayMin: time.Millisecond, DelayMax: time.Millisecond, Loss: 1})
	delivered := s.Stats.Delivered
	s.RunUntil(4 * time.Second)
	if s.Stats.Delivered > delivered+4 { // at most the packets already in flight
		t.Fatalf("loss 1 delivered %d packets", s.Stats.Delivered-delivered)
	}
	// Duplication: more deliveries than packets sent.
	s.SetNet(Net{DelayMin: time.Millisecond, DelayMax: time.Millisecond, Dup: 1})
	s.RunUntil(10 * time.Second) // the cluster re-forms
	before, sent := s.Stats.Delivered, s.Stats.Packets[4]
	s.RunUntil(11 * time.Second)
	hb := s.Stats.Packets[4] - sent
	if got := s.Stats.Delivered - before; hb == 0 || got < 4*hb-4 {
		t.Fatalf("dup 1: %d deliveries for %d heartbeat multicasts to 2 nodes, want about 4 each", got, hb)
	}
}

// BenchmarkSchedule measures one random schedule (3 to 16 nodes, up to
// 11 s of simulated time).
func BenchmarkSchedule(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		Run(Generate(uint64(i%1000+1)), nil)
	}
}
