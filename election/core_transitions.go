package election

import (
	"github.com/lanleader/lanleader/wire"
)

// This file is the core's changes of role: starting an election, leading,
// following, suspecting the leader, resigning, and preempting a smaller
// leader.

// startElection starts the algorithm's election, unless the node holds
// off after a resign or is in conflict.
func (c *core) startElection() {
	if c.holding() || c.out() {
		return
	}
	if c.state != StateCandidate {
		if until, wait := c.putOff(); wait {
			// Quorum mode: the lease of the leader this node last
			// acknowledged may still run; elect once it surely has not,
			// and support it no more meanwhile.
			c.cancelTimer(TimerStartup)
			c.setTimer(TimerLease, until)
			return
		}
	}
	c.q.dropPutOff()
	c.cancelTimer(TimerStartup)
	// Quorum mode asks for pre-votes first; otherwise the election
	// starts at once.
	c.prevote()
}

// becomeLeader: this node leads under a fresh term, one more than any
// term seen, and says so to everyone with one COORDINATOR.
func (c *core) becomeLeader() { c.lead(max(c.term, c.maxSeen)+1, true) }

// lead makes this node the leader with term (which the caller has checked
// is above every leadership it recognised). With announce it sends
// COORDINATOR to all (one multicast); otherwise the election announces
// the result its own way (the ring family: around the ring).
func (c *core) lead(term uint64, announce bool) {
	wasLeader := c.state == StateLeader
	c.term = term
	c.maxSeen = max(c.maxSeen, term)
	c.termLeader, c.termLeaderKey = c.self.ID, c.self
	c.leader = c.self.ID
	c.e.stop()
	c.cancelTimer(TimerStartup)
	c.cancelTimer(TimerSuspect)
	c.stopConfirm()
	c.stopPrevote()
	c.det.Reset()
	c.setState(StateLeader)
	// In quorum mode a claim, which leads once a majority acknowledges it.
	c.proclaim(wasLeader, announce)
	c.setTimer(TimerHeartbeat, c.now+c.cfg.HeartbeatInterval)
}

// follow records leader k with term and feeds its claim to the detector.
func (c *core) follow(k Key, term uint64) {
	// A leadership the driver has not been told of is reported; a return
	// to following after an election that changed nothing is not.
	vis := c.visibleLeader(k.ID, term)
	changed := c.reportedLeader != vis || c.reportedTerm != term
	if c.leader != k.ID {
		// Another leader (or the old one back after a suspicion): an
		// election put off for the guard, or waiting for its pre-votes, is
		// no longer wanted.
		c.q.dropPutOff()
		c.stopPrevote()
	}
	if c.state == StateLeader {
		c.q.depose(c.cfg.LeaseMargin, c.cfg.planted().DeposedAck)
		c.cancelTimer(TimerHeartbeat)
		c.cancelTimer(TimerLease) // armed in quorum mode only
	}
	c.term = term
	c.termLeader, c.termLeaderKey = k.ID, k
	c.leader = k.ID
	c.e.stop()
	c.cancelTimer(TimerStartup)
	c.setState(StateFollower)
	if changed {
		c.det.Reset()
		c.emit(Action{Kind: ActFollow, Leader: vis, Term: term})
	}
	c.observeLeader()
}

// observeLeader feeds a claim of the leader to the detector and moves the
// suspicion deadline.
func (c *core) observeLeader() {
	if c.stoodStill() {
		c.det.Reset()
	}
	c.det.Observe(c.now)
	c.st.lastHeard, c.st.heardSelf = c.now, c.now
	c.stopConfirm()
	if at, ok := c.det.SuspectAt(); ok {
		c.armSuspect(at)
	}
}

// stoodStill reports whether this node stood still (a pause, SIGSTOP, a
// starved process) past its own alarm: the suspicion's timer is armed,
// and came due more than lateYield ago without being handled, or was
// put off for the backlog (yieldToBacklog). A claim of the leader handled
// now waited in the socket, for as long as the node stood still: the gap
// it ends is this node's stall, not the leader's silence. A phi detector
// that learnt it (a pause of seconds among heartbeats 100ms apart) would
// wait seconds more before its next alarm: a node that woke to its dead
// leader's late heartbeat ignored the new leader's claims for 4.4s (the
// simulator's ring seed 8954; bully's stickiness asks the leader on a
// later term, the ring family's does not). The detector starts afresh
// from the arrival instead, as for a new leader.
func (c *core) stoodStill() bool {
	return c.armed[TimerSuspect] && (c.now-c.deadline[TimerSuspect] > lateYield || c.yielded[TimerSuspect])
}

// suspectLeader: the leader is thought dead (detector, membership, or its
// RESIGN). It is not awaited in the election that follows.
func (c *core) suspectLeader() {
	// A running exclusion (the RESIGN that led here) stands; an expired
	// one gives way to the suspicion.
	if x, ok := c.excluded[c.leader]; !ok || x.until <= c.now {
		c.exclude(c.leader, exclusion{until: c.now + suspicionMemory*c.cfg.LossWindow()})
	}
	c.leader = 0
	c.cancelTimer(TimerSuspect)
	c.stopConfirm()
	c.det.Reset()
	c.emit(Action{Kind: ActFollow, Term: c.term})
	if c.state == StateCandidate {
		// An election is already running: it goes on, without waiting for
		// the suspect.
		if c.loser != nil {
			c.loser.leaderLost()
		}
		return
	}
	c.setState(StateFollower)
	c.startElection()
}

// resign: a leader hands over. It tells everyone, and stays out of
// elections for the hold-off so that leadership really moves.
func (c *core) resign() {
	c.broadcast(wire.TypeResign, ScopeAll, len(c.members))
	c.cancelTimer(TimerHeartbeat)
	c.holdUntil = c.now + c.cfg.ResignHoldoff
	// An election it ignored just before the hold-off ended ends with a
	// claim within T plus two packet delays (less than 2T) of that end.
	c.settleUntil = c.holdUntil + 2*c.cfg.AnswerTimeout
	c.leader = 0
	c.setState(StateFollower)
	c.emit(Action{Kind: ActFollow, Term: c.term})
	c.setTimer(TimerHoldoff, c.holdUntil)
}

// maybePreempt is bully's step 5, shared by every algorithm: a node whose
// key is larger than its leader's takes over, unless preemption is off,
// delayed, or held off.
func (c *core) maybePreempt() {
	if c.leader == 0 || c.leader == c.self.ID || c.state == StateCandidate {
		return
	}
	if c.cfg.Preempt && c.termLeaderKey.Less(c.self) && c.now < c.started+c.cfg.PreemptDelay {
		c.setTimer(TimerPreempt, c.started+c.cfg.PreemptDelay)
		return
	}
	if c.mayPreempt(c.termLeaderKey) {
		c.startElection()
	}
}

// mayPreempt reports whether this node may take over now from leader k.
func (c *core) mayPreempt(k Key) bool {
	return c.cfg.Preempt && k.Less(c.self) && !c.holding() && !c.out() &&
		c.now >= c.started+c.cfg.PreemptDelay && c.listed(k.ID)
}

// listed reports whether membership lists node id. A node takes over only
// from a leader that membership lists (ListedPreemption): a node that has
// just returned hears the leader's heartbeats before its membership has
// joined, and its driver learns from membership whether the displaced
// leader's job still runs, which it must wait out before starting its
// own. onMemberUp takes the preemption up once the leader is listed.
func (c *core) listed(id NodeID) bool {
	if !c.cfg.ListedPreemption {
		return true
	}
	_, ok := c.members[id]
	return ok
}
