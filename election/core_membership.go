package election

import (
	"github.com/lanleader/lanleader/wire"
)

// This file is how the core follows the membership view and this node's
// own identity: members that join, change their key or go, a priority
// changed at run time, and a node_id conflict.

func (c *core) onMemberUp(k Key, r Role) {
	if k.ID == c.self.ID || k.ID == 0 {
		return
	}
	c.members[k.ID] = k
	c.setRole(k.ID, r)
	c.keysChanged()
	// Back (or never gone): await it in elections again.
	c.unsuspect(k.ID)
	// The key of the leadership followed follows membership; that of a
	// past one stays as it was recognised.
	if k.ID == c.leader {
		c.termLeaderKey = k
		c.maybePreempt()
	}
}

func (c *core) onMemberDown(id NodeID) {
	if id == c.self.ID || id == 0 {
		return
	}
	delete(c.members, id)
	delete(c.newest, id)
	delete(c.roles, id)
	delete(c.excluded, id)
	c.st.herdState.membersChanged()
	wasLeader := id == c.leader
	if wasLeader {
		if c.healthy() && c.cfg.StickyLeader {
			// Membership says it is dead, its heartbeats say otherwise: a
			// lossy network fools SWIM too, and a leader that really died
			// is suspected by the detector (SuspectAfter) long before
			// membership declares it dead (seconds). Follow it on; the
			// detector judges it, and membership will report it back.
			wasLeader = false
		} else {
			c.suspectLeader()
		}
	}
	c.e.memberDown(id, wasLeader)
}

func (c *core) onSetPriority(p uint16) {
	if p == c.self.Priority {
		return
	}
	c.self.Priority = p
	c.keysChanged()
	if c.state == StateLeader {
		c.termLeaderKey = c.self
		// Tell everyone now rather than at the next heartbeat, so that a
		// larger node can take over at once.
		c.tellAll()
		return
	}
	c.maybePreempt()
}

// onSetPreempt turns preemption on or off (a reload of the config): a
// node larger than its leader takes over at once when it is turned on.
func (c *core) onSetPreempt(on bool) {
	if on == c.cfg.Preempt {
		return
	}
	c.cfg.Preempt = on
	if on && c.state != StateLeader {
		c.maybePreempt()
	}
}

// onConflict: while another live node has our node_id, neither may lead.
func (c *core) onConflict(on bool) {
	if on == c.conflict {
		return
	}
	c.conflict = on
	if on {
		if c.state == StateLeader {
			c.broadcast(wire.TypeResign, ScopeAll, len(c.members))
			c.cancelTimer(TimerHeartbeat)
			c.leader = 0
			c.emit(Action{Kind: ActFollow, Term: c.term})
		}
		c.e.stop()
		c.cancelTimer(TimerStartup)
		c.stopConfirm()
		c.stopPrevote()
		c.state = StateConflict
		return
	}
	// Back in the elections, as a node that has just started is: in
	// quorum mode it supports nobody, itself included, for as long as an
	// acknowledgement binds, so that a leadership it takes over (it is
	// often the larger key) begins only after the lease of the one it
	// displaces has surely ended. Votes under this node_id may have been
	// given meanwhile by the other node that had it.
	c.q.startGuard(c.now)
	if c.leader != 0 {
		c.setState(StateFollower)
		c.maybePreempt()
		return
	}
	c.setState(StateFollower)
	c.startElection()
}

// out reports whether this node takes no part as a candidate in elections
// now: a node_id conflict, a standby its driver asked for, or a role that
// may not lead.
func (c *core) out() bool { return c.absent() || c.benched() }

// absent reports whether this node takes no part at all in elections now,
// not even passing a ring's messages on: a node_id conflict, or a standby.
func (c *core) absent() bool { return c.conflict || c.standby }

// onStandby takes this node out of the elections, or lets it back in, for
// a reason of its driver's (the agent's: an interface it tracks is down).
// Unlike a conflict, it changes no state shown: a standby node follows,
// acknowledges and votes, but never claims, answers an ELECTION, takes
// part in a ring, or preempts. A leader resigns (the agent resigns first
// itself, so that its job stops before the RESIGN, unless the interface
// lost its carrier: then it steps down at once, deposed as by a lost
// lease). When the standby ends
// a node that follows a leader takes it over if it is smaller, as after a
// conflict; one that knows no leader listens first, as a node that has
// just started does (listen). Electing at once, it would claim the term
// the others may have given a leader meanwhile, which it did not hear of
// (a node that heard no one: its link was down), and start its job
// beside that leader's instead of taking over once that job has stopped.
func (c *core) onStandby(on bool) {
	if on == c.standby {
		return
	}
	c.standby = on
	if !on {
		if c.conflict {
			return
		}
		if c.leader == 0 {
			// (Not before a resign hold-off ends: the election
			// TimerStartup starts would not start then.)
			c.listen(max(c.now+c.cfg.StartupWait, c.holdUntil))
			return
		}
		c.reconsider()
		return
	}
	if c.state == StateLeader {
		// Its job stops only now and may run until its guard kills it
		// at the lease's end: no vote of this node may complete another
		// majority before then (quorum.depose), in standby or out of it.
		// (A resign the driver asks for comes after its job has stopped.)
		c.q.depose(c.cfg.LeaseMargin, c.cfg.planted().DeposedAck)
		c.resign()
	}
	c.e.stop()
	c.cancelTimer(TimerStartup)
	c.stopConfirm()
	c.stopPrevote()
	if c.state == StateCandidate || c.state == StateStarting {
		c.setState(StateFollower)
	}
}
