package sim

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
)

// Roles over random fault schedules, every algorithm, with and without
// quorum mode: witnesses (quorum mode) and observers, the largest key
// often among them. Every invariant holds (1 to 4 as ever; 5: no witness
// or observer ever leads) and the cluster converges on the largest live
// candidate after the last fault.
func TestRoleSchedules(t *testing.T) {
	for _, alg := range election.Algorithms {
		for _, quorum := range []bool{false, true} {
			name := alg
			if quorum {
				name += "/quorum"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				n := schedules(t) / 10
				if alg != election.AlgorithmBully && *flagSchedules == 0 && !sweep() {
					n /= 5
				}
				roleSchedules(t, alg, quorum, n)
			})
		}
	}
}

func roleSchedules(t *testing.T, alg string, quorum bool, n int) {
	first := uint64(1)
	if *flagSeed != 0 {
		first, n = *flagSeed, 1
	}
	start := time.Now()
	var failed, leaderships, nonCandidates, largestNot int
	for seed := first; seed < first+uint64(n); seed++ {
		sch := GenerateRoles(alg, seed, quorum)
		var trace *bytes.Buffer
		if *flagSeed != 0 {
			trace = &bytes.Buffer{}
		}
		res := runTraced(sch, trace)
		nonCandidates += countNonCandidates(sch)
		if largestIsNotCandidate(sch) {
			largestNot++
		}
		if res.Failed() {
			failed++
			if failed <= 5 {
				t.Errorf("seed %d broke an invariant:\n%s%v", seed, sch.Describe(), res.Violations)
				if trace != nil {
					t.Log(trace.String())
				}
			}
		}
		leaderships += res.Leaderships
	}
	if *flagSeed == 0 && (nonCandidates == 0 || largestNot == 0) {
		// (A single seed replayed tests what it has.)
		t.Errorf("the schedules had %d witnesses and observers, %d with the largest key: nothing tested", nonCandidates, largestNot)
	}
	t.Logf("%s (quorum %v): %d schedules in %v, %d failed; %d witnesses and observers, the largest key not a candidate in %d; %d leaderships",
		alg, quorum, n, time.Since(start).Round(time.Millisecond), failed, nonCandidates, largestNot, leaderships)
}

func countNonCandidates(sch Schedule) int {
	k := 0
	for _, n := range sch.Config.Nodes {
		if !n.Role.MayLead() {
			k++
		}
	}
	return k
}

func largestIsNotCandidate(sch Schedule) bool {
	nodes := sch.Config.Nodes
	largest := 0
	for i := range nodes {
		if nodes[largest].Key.Less(nodes[i].Key) {
			largest = i
		}
	}
	return !nodes[largest].Role.MayLead()
}

// The checker bites: a node that is a witness to the checker but whose
// machine runs as a candidate leads, as the largest key; invariant 5
// catches it.
func TestRoleCheckerCatchesALeadingWitness(t *testing.T) {
	cfg := Config{Seed: 1, Timing: DefaultTiming(), Net: Net{DelayMin: 100 * time.Microsecond, DelayMax: time.Millisecond}}
	cfg.Timing.Quorum = 3
	for id := uint64(1); id <= 3; id++ {
		cfg.Nodes = append(cfg.Nodes, Node{Key: election.Key{Priority: 100, ID: id}, Preempt: true})
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	// Set once every machine has started: node 3's runs as a candidate,
	// and the others took it for one.
	s.nodes[2].role = election.RoleWitness
	s.RunUntil(2 * time.Second)
	found := false
	for _, v := range s.Check.Violations {
		found = found || bytes.Contains([]byte(v), []byte("invariant 5: n3, a witness, leads"))
	}
	if !found {
		t.Fatalf("violations %q, want invariant 5 for n3", s.Check.Violations)
	}
}

// Role schedules in quorum mode that once ended with no leader, each
// replayed as generated: a pre-vote stopped for good by a VOUCH that named
// the crashed leader (its sender had not noticed the crash yet) waited for
// a claim that never came. They converge now.
func TestRoleSchedulesOnceStuck(t *testing.T) {
	for _, tc := range []struct {
		alg  string
		seed uint64
	}{
		{election.AlgorithmBully, 2287},
		{election.AlgorithmBully, 2784},
		{election.AlgorithmRing, 475},
		{election.AlgorithmChangRoberts, 2287},
		{election.AlgorithmHirschbergSinclair, 2207},
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.alg, tc.seed), func(t *testing.T) {
			sch := GenerateRoles(tc.alg, tc.seed, true)
			if res := Run(sch, nil); res.Failed() {
				t.Errorf("%s%v", sch.Describe(), res.Violations)
			}
		})
	}
}
