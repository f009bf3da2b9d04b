package sim

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/lanleader/lanleader/election"
)

// A schedule run: its result, and the faults applied as they come due.

// Result is what a run found.
type Result struct {
	Schedule Schedule
	// Violations of invariants 1 and 3, and of invariant 2 (not converged
	// by FaultEnd+Bound, or not stable afterwards).
	Violations []string
	DupTerms   int
	// Leaderships counts every time a node became leader.
	Leaderships int
	// Converge is how long after FaultEnd the cluster first converged.
	Converge time.Duration
	Stats    Stats
	// Config.Jobs: the jobs started, and the pairs of jobs that ran at
	// once (in quorum mode each is a violation too), with the longest
	// overlap and their sum.
	JobStarts     int
	JobOverlaps   int
	JobOverlapMax time.Duration
	JobOverlapSum time.Duration
	// The crashed leaders' NOTICEs sent, and the deliveries that ended
	// the leadership their receiver followed.
	NoticesSent, NoticesActed int
}

// Failed reports whether the run broke an invariant.
func (r Result) Failed() bool {
	return len(r.Violations) > 0 || r.Schedule.Reliable && r.DupTerms > 0
}

// Replay is the command that replays the run, with its trace.
func (r Result) Replay() string {
	if r.Schedule.Config.Timing.Quorum > 0 {
		return fmt.Sprintf("go test ./sim -run 'TestQuorumSchedules/%s$' -sim.seed %d -v", r.Schedule.algorithm(), r.Schedule.Seed)
	}
	if alg := r.Schedule.algorithm(); alg != election.AlgorithmBully {
		return fmt.Sprintf("go run ./cmd/lanleader sim -algorithm %s -seed %d -trace", alg, r.Schedule.Seed)
	}
	return fmt.Sprintf("go run ./cmd/lanleader sim -seed %d -trace", r.Schedule.Seed)
}

// Run plays a schedule and checks every invariant. trace may be nil.
func Run(sch Schedule, trace io.Writer) Result {
	cfg := sch.Config
	cfg.Trace = trace
	s, err := New(cfg)
	if err != nil {
		return Result{Schedule: sch, Violations: []string{err.Error()}}
	}
	base := cfg.Net
	largestWins := true
	for _, n := range cfg.Nodes {
		largestWins = largestWins && n.Preempt
	}
	s.Start()
	for _, f := range sch.Faults {
		s.At(f.At, func() { s.apply(f, base) })
	}
	s.At(sch.FaultEnd, func() {
		s.tracef("faults end")
		s.Heal()
		s.SetNet(base)
		for i := range s.nodes {
			s.Resume(i)
			s.LinkUp(i)
		}
		for _, i := range sch.RestartAtEnd {
			s.Restart(i)
		}
	})
	res := Result{Schedule: sch}
	s.RunUntil(sch.FaultEnd)
	// Invariant 2: converged by the bound, and from then on after every
	// event. The convergence time is when it last became converged.
	deadline := sch.FaultEnd + sch.Bound()
	converged, since := s.converged(largestWins), sch.FaultEnd
	s.RunWhile(deadline, func() bool {
		c := s.converged(largestWins)
		if c && !converged {
			since = s.now
		}
		converged = c
		return true
	})
	if !converged {
		s.Check.violate("invariant 2: %v", s.Converged(largestWins))
	} else {
		res.Converge = since - sch.FaultEnd
		if s.RunWhile(deadline+2*time.Second, func() bool { return s.converged(largestWins) }) {
			s.Check.violate("invariant 2 (stability): %v", s.Converged(largestWins))
		}
	}
	s.Check.jobsFinish()
	res.Violations = s.Check.Violations
	res.DupTerms = s.Check.DupTerms
	res.JobStarts, res.JobOverlaps = s.Check.JobStarts, s.Check.Jobs.Overlaps
	res.NoticesSent, res.NoticesActed = s.Check.NoticesSent, s.Check.NoticesActed
	res.JobOverlapMax, res.JobOverlapSum = s.Check.Jobs.Max, s.Check.Jobs.Total
	res.Leaderships = s.Check.Leaderships
	res.Stats = s.Stats
	if sch.Config.Timing.Quorum > 0 && res.DupTerms > 0 {
		res.Violations = append(res.Violations, fmt.Sprintf("invariant 4: %d leaderships reused a term in quorum mode", res.DupTerms))
	} else if sch.Reliable && res.DupTerms > 0 {
		res.Violations = append(res.Violations, fmt.Sprintf("invariant 1: %d leaderships reused a term in a reliable schedule", res.DupTerms))
	}
	return res
}

// apply carries out one fault.
func (s *Sim) apply(f Fault, base Net) {
	node := f.Node
	if node < 0 {
		node = s.currentLeader()
	}
	switch f.Kind {
	case FaultCrash:
		s.crash(node, f.Notice)
	case FaultRestart:
		s.Restart(node)
	case FaultPause:
		s.Pause(node)
		s.At(s.now+f.Dur, func() { s.Resume(node) })
	case FaultPartition:
		s.Partition(f.Side)
		s.At(s.now+f.Dur, s.Heal)
	case FaultOneWay:
		rest := s.complement(f.Side)
		s.OneWay(f.Side, rest)
		s.At(s.now+f.Dur, s.Heal)
	case FaultLoss, FaultDup, FaultDelay:
		n := s.net
		switch f.Kind {
		case FaultLoss:
			n.Loss = f.P
		case FaultDup:
			n.Dup = f.P
		case FaultDelay:
			n.DelayMax = max(f.Delay, n.DelayMin)
		}
		s.SetNet(n)
		s.At(s.now+f.Dur, func() { s.SetNet(base) })
	case FaultResign:
		s.tracef("n%d asked to resign", s.nodes[node].key.ID)
		s.Resign(node)
	case FaultPriority:
		s.tracef("n%d priority %d", s.nodes[node].key.ID, f.Prio)
		s.SetPriority(node, f.Prio)
	case FaultSuspect:
		s.tracef("n%d told its leader is dead", s.nodes[node].key.ID)
		s.Suspect(node)
	case FaultLink:
		s.LinkDown(node)
		s.At(s.now+f.Dur, func() { s.LinkUp(node) })
	}
}

// currentLeader returns the live leader with the largest key, or a random
// live node when none leads, or 0 when every node is down.
func (s *Sim) currentLeader() int {
	best := -1
	var live []int
	for i, n := range s.nodes {
		if !n.up {
			continue
		}
		live = append(live, i)
		if n.m.Status().State == election.StateLeader && (best < 0 || s.nodes[best].key.Less(n.key)) {
			best = i
		}
	}
	if best >= 0 {
		return best
	}
	if len(live) == 0 {
		return 0
	}
	return live[s.rng.IntN(len(live))]
}

func (s *Sim) complement(side []int) []int {
	var out []int
	for i := range s.nodes {
		if !slices.Contains(side, i) {
			out = append(out, i)
		}
	}
	return out
}
