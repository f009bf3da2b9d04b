package election

import "testing"

// EvStandby: the driver takes the node out of the elections (the agent,
// while an interface it tracks is down) without the state a conflict
// shows.

func standby(on bool) Event { return Event{Kind: EvStandby, On: on} }

// A leader put on standby resigns: RESIGN to all, the hold-off, no
// leader; it stays a follower.
func TestStandbyLeaderResigns(t *testing.T) {
	n := leaderOf(t, key(5), keys(1, 2, 3, 4))
	n.expect(320*ms, standby(true),
		"broadcast RESIGN to all (4) term=1",
		"cancel-timer heartbeat",
		"follow leader=0 term=1",
		"set-timer holdoff at 1.32s")
	n.is(StateFollower, 1, noLeader)
	n.expect(330*ms, standby(true)) // already
	// The hold-off ends: still on standby, it does not elect.
	n.expect(1320*ms, fire(TimerHoldoff))
	n.is(StateFollower, 1, noLeader)
}

// On standby the node neither elects, nor answers, nor preempts a
// smaller leader, whose claim it follows.
func TestStandbyNoElectionsOrAnswers(t *testing.T) {
	n := started(t, key(3), keys(1, 2, 4, 5))
	n.expect(100*ms, standby(true), "cancel-timer startup")
	n.is(StateFollower, 0, noLeader)
	n.expect(110*ms, election(1, 0))
	n.expect(310*ms, evSuspect)
	n.expect(320*ms, coord(2, 1),
		"follow leader=2 term=1",
		"set-timer suspect at 620ms")
	n.is(StateFollower, 1, 2) // smaller, but no preemption on standby

	c := electing3of5(t)
	c.expect(310*ms, standby(true), "cancel-timer answer")
	c.is(StateFollower, 0, noLeader)
	c.expect(350*ms, fire(TimerAnswer))
	c.is(StateFollower, 0, noLeader)
}

// The end of the standby resumes: with no leader known the node elects;
// with a smaller leader it takes over.
func TestStandbyEndResumes(t *testing.T) {
	t.Run("no leader, largest", func(t *testing.T) {
		n := started(t, key(5), keys(1, 2, 3, 4))
		n.step(100*ms, standby(true))
		n.expect(400*ms, standby(false),
			"broadcast COORDINATOR to all (4) term=1",
			"become-leader term=1",
			"set-timer heartbeat at 500ms")
		n.is(StateLeader, 1, 5)
	})
	t.Run("smaller leader", func(t *testing.T) {
		n := started(t, key(5), keys(1, 2, 3, 4))
		n.step(100*ms, standby(true))
		n.step(200*ms, coord(4, 1))
		n.is(StateFollower, 1, 4)
		n.step(400*ms, standby(false))
		if st := n.m.Status(); st.State != StateCandidate && st.State != StateLeader {
			t.Errorf("after the standby, state %v, want an election of its own", st.State)
		}
	})
	t.Run("conflict outlasts it", func(t *testing.T) {
		n := started(t, key(5), keys(1, 2, 3, 4))
		n.step(100*ms, standby(true))
		n.step(110*ms, conflict(true))
		n.expect(400*ms, standby(false))
		n.is(StateConflict, 0, noLeader)
	})
}
