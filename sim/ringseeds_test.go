package sim

import (
	"slices"
	"testing"

	"github.com/lanleader/lanleader/election"
)

// The ring family's random schedules that once broke an invariant, each
// replayed as it was generated then: they hold every invariant now.
func TestRingFamilySchedulesOnceBroken(t *testing.T) {
	for _, tc := range []struct {
		name string
		sch  Schedule
		was  string
	}{
		{"chang-roberts/8951", withoutJobs(GenerateFor(election.AlgorithmChangRoberts, 8951)),
			"two leaders of term 5 in a reliable schedule: a node that suspected its live former leader passed it by on the ring"},
		{"chang-roberts/15007", withoutJobs(GenerateFor(election.AlgorithmChangRoberts, 15007)),
			"no convergence: a late HEARTBEAT, sent before a change of priority, undid it on the others' rings, whose rounds then passed the node by"},
		// With jobs and pulled cables, as GenerateFor makes them now: after
		// a resign that waited for a slow job and pulled cables, the ring's
		// COORDINATOR was held back at its first node, which heard another
		// leader, to ask its winner whether it led; the winner never
		// learnt it had won, and the initiator started a round every
		// 245 ms for ever (fixed by not holding a list's COORDINATOR back:
		// textbook_ring_list.go, claimOfList).
		{"ring/1234", GenerateFor(election.AlgorithmRing, 1234), "no convergence: a round every 245 ms for ever"},
		{"ring/4857", GenerateFor(election.AlgorithmRing, 4857), "no convergence: a round every 245 ms for ever"},
		{"ring/roles/94", GenerateRoles(election.AlgorithmRing, 94, false), "no convergence"},
		// Observers that recognised the larger of two leaders of one
		// term (one each side of a cut), which then died, took no claim
		// of the smaller and could not elect: leaderless for good.
		{"ring/roles/7267", GenerateRoles(election.AlgorithmRing, 7267, false), "no convergence: observers without a leader"},
		{"chang-roberts/roles/17226", GenerateRoles(election.AlgorithmChangRoberts, 17226, false), "no convergence: observers without a leader"},
		{"hirschberg-sinclair/roles/12534", GenerateRoles(election.AlgorithmHirschbergSinclair, 12534, false), "no convergence: observers without a leader"},
		// A preemption behind a one-way link: the displaced leader did
		// not hear it, led on, and claimed a new term behind a partition;
		// it learnt 3.8 s later that it no longer led, and its job (which
		// ignores SIGTERM) died at its grace's end, 1.8 s after the new
		// leader's wait, counted from the takeover, had run out. A claim
		// of the displaced leader heard before the job starts now makes
		// the wait run from then (job.Driver.HeardClaim).
		// A node paused for 1.9s woke to its dead leader's heartbeat,
		// which had waited in its socket (the 20-PROBE confirmations of
		// the others filled the rest of it, so the new claims were
		// lost); its phi detector learnt the pause as a gap between two
		// heartbeats and put its alarm 4.4s off, and the ring's
		// stickiness ignored the new leader's smaller key meanwhile.
		// The detector now starts afresh from an arrival that ends a
		// stall past the alarm (core_transitions.go, stoodStill).
		{"ring/8954", GenerateFor(election.AlgorithmRing, 8954), "no convergence: a woken node followed its dead leader for 4.4s"},
		{"hirschberg-sinclair/roles/4867", GenerateRoles(election.AlgorithmHirschbergSinclair, 4867, false), "invariant 8: the takeover's job started while the displaced job ran"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Run(tc.sch, nil)
			// Failed counts the same-term leaderships of a reliable schedule.
			if res.Failed() {
				t.Errorf("%s (it was: %s):\n%s%v, %d same-term leaderships (reliable: %v)", tc.name, tc.was, tc.sch.Describe(), res.Violations, res.DupTerms, tc.sch.Reliable)
			}
		})
	}
}

// withoutJobs is sch as GenerateFor made the ring family's schedules
// before they had jobs and pulled cables: no jobs, no link-down.
func withoutJobs(sch Schedule) Schedule {
	sch.Config.Jobs = false
	sch.Faults = slices.DeleteFunc(slices.Clone(sch.Faults), func(f Fault) bool { return f.Kind == FaultLink })
	return sch
}
