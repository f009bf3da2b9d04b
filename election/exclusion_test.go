package election

// Leaving a suspected or resigned leader out of elections (core.go's
// exclusions): how long an entry lasts and what ends it.

import (
	"testing"
	"time"
)

// a node that once resigned leaves an exclusion entry with
// resigned=true that is never deleted (messages and member-up skip resigned
// entries; only member-down removes it). suspectLeader only adds an entry if
// none exists, so every later suspicion of that node is NOT recorded: the
// crashed leader is awaited again (ELECTION + T) instead of being left out,
// contrary to "The suspect is skipped" in docs/design/election.md.
func TestExpiredResignExclusionBlocksLaterSuspicion(t *testing.T) {
	n := followerOf(t, key(2), keys(1, 3), key(3), 1)
	n.step(290*ms, heartbeat(3, 1))
	// 3 resigns: 2 is the largest left and claims term 2 at once.
	n.step(500*ms, resignMsg(3, 1))
	n.is(StateLeader, 2, 2)
	// 3's hold-off is over: it takes back with term 3 and heartbeats.
	n.step(1600*ms, coord(3, 3))
	n.step(1700*ms, heartbeat(3, 3))
	n.is(StateFollower, 3, 3)
	// 3 crashes; the detector fires. 2 is the largest left, so (as in
	// testdata/bully_suspicion.txt) it should lead at once, leaving the
	// suspected 3 out.
	n.step(2000*ms, fire(TimerSuspect))
	if st := n.b.Status(); st.State != StateLeader {
		t.Errorf("after suspecting 3 (which resigned long ago): %v, want leader at once; excluded[3]=%+v (stale resigned entry, so the new suspicion was not recorded)",
			st.State, n.b.excluded[3])
	}
}

// RESIGN from any sender id adds an exclusion entry;
// resigned entries are removed only by EvMemberDown, which never comes for
// an id that was never a member. The map grows with every distinct id.
func TestExcludedGrowsWithUnknownResigners(t *testing.T) {
	n := followerOf(t, key(2), keys(1, 3), key(3), 1)
	for id := NodeID(1000); id < 2000; id++ {
		n.step(20*ms, resignMsg(id, 0))
	}
	n.step(60*time.Second, heartbeat(3, 1))
	if len(n.b.excluded) > 2 {
		t.Errorf("excluded holds %d entries a minute later, for ids that were never members", len(n.b.excluded))
	}
}
