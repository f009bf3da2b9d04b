package sim

import (
	"testing"

	"github.com/lanleader/lanleader/election"
)

// The bully schedules with phi nodes that did not converge when phi's
// threshold came down to 1.64 (the confirmed alarm's: 1.5 heartbeats on a
// quiet network), each replayed as it is generated: they converge now.
// In each, a node rang its alarm at nearly every heartbeat after the
// faults had ended, and a confirmation that its live leader's answers
// did not reach in time made it elect: its phi had learnt the
// confirmations' VOUCHes (twenty of them, 125µs apart, when the alarm
// rang) as heartbeats, whose short gaps kept the alarm early, once a burst
// of short gaps (a backlog read after a pause, reordered or duplicated
// heartbeats) had started it. A VOUCH is now evidence that the leader
// lives, not a heartbeat (detector.Witnessed).
func TestPhiSchedulesOnceBroken(t *testing.T) {
	for _, seed := range []uint64{624, 1156, 2709, 2740, 2972, 3258, 3575, 3585, 3586, 3715, 4059, 4152, 4283, 4295, 4618, 4656, 4950} {
		sch := GenerateFor(election.AlgorithmBully, seed)
		if !sch.Config.Phi {
			t.Errorf("bully/%d: the schedule has no phi nodes now; it no longer replays the failure", seed)
			continue
		}
		if res := Run(sch, nil); res.Failed() {
			t.Errorf("bully/%d (it was: no convergence, a node's alarm rang at every heartbeat):\n%s%v", seed, sch.Describe(), res.Violations)
		}
	}
}
