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

// The end of the standby resumes: with no leader known the node listens
// as a node that has just started does, then elects; with a smaller
// leader it takes over.
func TestStandbyEndResumes(t *testing.T) {
	t.Run("no leader, largest", func(t *testing.T) {
		n := started(t, key(5), keys(1, 2, 3, 4))
		n.step(100*ms, standby(true))
		n.expect(400*ms, standby(false), "set-timer startup at 700ms")
		n.is(StateStarting, 0, noLeader)
		n.expect(700*ms, fire(TimerStartup),
			"broadcast COORDINATOR to all (4) term=1",
			"become-leader term=1",
			"set-timer heartbeat at 800ms")
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

// A leader whose link went down (it heard no one: its standby resigned
// it) while the others elected node 2 under term 2 comes back knowing no
// leader. It listens before it claims, hears node 2, follows it and takes
// over under term 3, a takeover from a live leader (whose job its driver
// waits out). Electing at once, it claimed term 2 again, the interim
// leader's, and its job started beside that leader's (the simulator's
// TestJobLinkDown).
func TestStandbyEndListensFirst(t *testing.T) {
	n := leaderOf(t, key(3), keys(1, 2))
	n.step(320*ms, standby(true))
	n.is(StateFollower, 1, noLeader)
	n.expect(1320*ms, fire(TimerHoldoff))
	n.expect(3000*ms, standby(false), "set-timer startup at 3.3s")
	n.is(StateStarting, 1, noLeader)
	n.expect(3050*ms, heartbeat(2, 2),
		"cancel-timer startup",
		"follow leader=2 term=2",
		"set-timer suspect at 3.35s",
		"set-timer answer at 3.3s")
	n.is(StateCandidate, 2, 2)
	n.expect(3300*ms, fire(TimerAnswer),
		"cancel-timer suspect",
		"broadcast COORDINATOR to all (2) term=3",
		"become-leader term=3",
		"set-timer heartbeat at 3.4s")
	n.is(StateLeader, 3, 3)
}

// A standby that ends within the resign hold-off listens until the
// hold-off's end at least (an election cannot start before it), and
// claims after the claims in flight at that end (resign's settleUntil).
func TestStandbyEndInHoldoff(t *testing.T) {
	n := leaderOf(t, key(3), keys(1, 2))
	n.step(320*ms, standby(true))
	n.expect(500*ms, standby(false), "set-timer startup at 1.32s")
	n.expect(1320*ms, fire(TimerHoldoff))
	n.is(StateStarting, 1, noLeader)
	n.expect(1320*ms, fire(TimerStartup), "set-timer answer at 1.42s")
	n.expect(1420*ms, fire(TimerAnswer),
		"broadcast COORDINATOR to all (2) term=2",
		"become-leader term=2",
		"set-timer heartbeat at 1.52s")
	n.is(StateLeader, 2, 3)
}
