package election

import (
	"slices"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// This file is quorum mode's leader side (quorum.go has the overview and
// the follower side): the claim and its numbered re-sends, the
// acknowledgements that confirm it, and the lease they renew, which the
// leader gives up before it runs out. Outside quorum mode a claim leads
// at once and a leader's heartbeat is a plain HEARTBEAT to all.

// checkLease is run first in every Step: a leader whose lease has run out
// (a pause, overdue timers) steps down before it handles anything.
func (c *core) checkLease() {
	if c.q.on() && c.state == StateLeader && c.q.confirmed && c.now >= c.stepDownAt() && !c.cfg.UnsafeSkipWakeCheck {
		c.loseLease()
	}
}

// stepDownAt is when a leader that has not renewed its lease steps down:
// StopBefore ahead of its end, so that the driver can stop the job gently
// before the end of the lease.
func (c *core) stepDownAt() time.Duration { return c.q.leaseEnd - c.cfg.StopBefore }

// loseLease: the lease ran out, or a claim found no majority in time. The
// node stops leading (the driver stops the job) and elects again, under
// a fresh term.
func (c *core) loseLease() {
	c.q.depose(c.cfg.LeaseMargin, c.cfg.UnsafeDeposedAck)
	c.cancelTimer(TimerHeartbeat)
	c.cancelTimer(TimerLease)
	c.leader = 0
	c.setState(StateFollower)
	if c.reportedLeader != 0 {
		c.emit(Action{Kind: ActFollow, Term: c.term})
	}
	c.startElection()
}

// proclaim tells everyone that this node leads with the term lead has
// just set. Outside quorum mode it leads at once: with announce, one
// COORDINATOR to all (otherwise the election announces the result its
// own way: the ring family, around the ring). In quorum mode it is a
// claim, always announced to all for their votes, which leads once a
// majority acknowledges it; a leader that re-asserts under a fresh term
// keeps its lease while the new term gathers its acknowledgements.
func (c *core) proclaim(wasLeader, announce bool) {
	if !c.q.on() {
		if announce {
			c.broadcast(wire.TypeCoordinator, ScopeAll, len(c.members))
		}
		c.emit(Action{Kind: ActBecomeLeader, Term: c.term})
		return
	}
	q := &c.q
	if !wasLeader || !q.confirmed {
		q.confirmed = false
		q.claimEnd = c.now + c.cfg.ClaimWait
		c.setTimer(TimerLease, q.claimEnd)
	}
	q.votedTerm, q.votedFor = c.term, c.self.ID
	q.nSent = 0
	if q.acks == nil {
		q.acks = make(map[NodeID]time.Duration)
		q.acked = make(map[NodeID]uint32)
	}
	clear(q.acks)
	clear(q.acked)
	c.claim()
	c.renew()
}

// tellAll tells every member now, rather than at the next heartbeat,
// that this node leads: a HEARTBEAT, or in quorum mode a numbered claim.
func (c *core) tellAll() {
	if !c.q.on() {
		c.broadcast(wire.TypeHeartbeat, ScopeAll, len(c.members))
		return
	}
	c.claim()
}

// claim broadcasts one numbered claim: HEARTBEAT from a leader that holds
// a lease, COORDINATOR from a claimant.
func (c *core) claim() {
	q := &c.q
	q.sent[q.nSent%sentWindow] = c.now
	q.nSent++
	q.resends = 0
	c.emit(Action{Kind: ActBroadcast, Msg: c.claimMsg(), Scope: ScopeAll, Count: len(c.members)})
	c.setTimer(TimerResend, c.now+c.resendEvery())
}

// claimMsg is the latest claim: HEARTBEAT from a leader that holds a
// lease, COORDINATOR from a claimant.
func (c *core) claimMsg() wire.Message {
	t := wire.TypeCoordinator
	if c.q.confirmed {
		t = wire.TypeHeartbeat
	}
	m := c.header(t)
	m.Claim = c.q.nSent
	return m
}

// resendRounds and resendEvery: how often, and how soon after it, a
// leader re-sends its latest claim to a member that has not acknowledged
// it (a tenth of a heartbeat, at least a millisecond: several round trips
// of a LAN).
const resendRounds = 3

func (c *core) resendEvery() time.Duration {
	return max(c.cfg.HeartbeatInterval/10, time.Millisecond)
}

// allAcked reports whether every member acknowledged the latest claim.
func (c *core) allAcked() bool {
	for id := range c.members {
		if c.q.acked[id] < c.q.nSent {
			return false
		}
	}
	return true
}

// onResendTimer re-sends the latest claim, unicast, to every member that
// has not acknowledged it, in the order of their ids.
func (c *core) onResendTimer() {
	q := &c.q
	if !q.on() || c.state != StateLeader || q.nSent == 0 || q.resends >= resendRounds {
		return
	}
	q.resends++
	q.ids = q.ids[:0]
	for id := range c.members {
		if q.acked[id] < q.nSent {
			q.ids = append(q.ids, id)
		}
	}
	if len(q.ids) == 0 {
		return
	}
	slices.Sort(q.ids)
	m := c.claimMsg()
	for _, id := range q.ids {
		c.emit(Action{Kind: ActSend, To: id, Msg: m, Count: 1})
	}
	if q.resends < resendRounds {
		c.setTimer(TimerResend, c.now+c.resendEvery())
	}
}

// tellLeader tells node to that this node leads: a unicast COORDINATOR in
// textbook mode; in quorum mode a numbered claim to all (a unicast would
// be counted by its receiver as a claim the others did not get).
func (c *core) tellLeader(to NodeID) {
	if c.q.on() {
		if q := &c.q; q.nSent == 0 || q.sent[(q.nSent-1)%sentWindow] != c.now {
			c.claim()
		}
		return
	}
	c.send(to, wire.TypeCoordinator)
}

// onAck: an acknowledgement of this node's claim number AckSeq (quorum
// mode).
func (c *core) onAck(m *wire.Message) {
	q := &c.q
	if !q.on() || c.state != StateLeader || m.Term != c.term || m.AckSeq == 0 || m.AckSeq > q.nSent || q.nSent-m.AckSeq >= sentWindow {
		return
	}
	s := q.sent[(m.AckSeq-1)%sentWindow]
	q.acked[m.From] = max(q.acked[m.From], m.AckSeq)
	if m.AckSeq == q.nSent && c.allAcked() {
		c.cancelTimer(TimerResend)
	}
	if old, ok := q.acks[m.From]; !ok || s > old {
		q.acks[m.From] = s
		c.renew()
	}
}

// renew confirms the claim or extends the lease when a majority supports
// it: the lease runs to Lease after the latest send time that a majority
// (this node included) acknowledged.
func (c *core) renew() {
	q := &c.q
	if c.state != StateLeader || c.q.guarded(c.self.ID, c.now) {
		return
	}
	need := c.majority() - 1
	var base time.Duration
	if need == 0 {
		base = c.now
	} else {
		if len(q.acks) < need {
			return
		}
		q.scratch = q.scratch[:0]
		for _, s := range q.acks {
			q.scratch = append(q.scratch, s)
		}
		slices.Sort(q.scratch)
		base = q.scratch[len(q.scratch)-need]
	}
	end := base + c.cfg.Lease
	if end-c.cfg.StopBefore <= c.now {
		return // a lease it would step down from at once
	}
	if !q.confirmed || q.leaseTerm != c.term {
		if !q.confirmed || end > q.leaseEnd {
			q.leaseEnd = end
		}
		q.confirmed, q.leaseTerm = true, c.term
		c.emit(Action{Kind: ActBecomeLeader, Term: c.term})
		c.setTimer(TimerLease, c.stepDownAt())
		// Tell the followers at once that this node leads.
		c.claim()
		return
	}
	if end > q.leaseEnd {
		q.leaseEnd = end
		c.setTimer(TimerLease, c.stepDownAt())
	}
}

// heartbeat is a leader's heartbeat: a HEARTBEAT to all; in quorum mode
// a numbered claim, and a renewal for a cluster of one or two.
func (c *core) heartbeat() {
	if !c.q.on() {
		c.broadcast(wire.TypeHeartbeat, ScopeAll, len(c.members))
		return
	}
	c.claim()
	c.renew()
}

// onLeaseTimer: a leader's lease or claim has run out, or a follower's
// guard is over and the election it put off may run.
func (c *core) onLeaseTimer() {
	q := &c.q
	if c.state == StateLeader {
		switch {
		case q.confirmed && c.now >= c.stepDownAt():
			c.loseLease()
		case q.confirmed:
			c.setTimer(TimerLease, c.stepDownAt())
		case c.now >= q.claimEnd:
			c.loseLease()
		default:
			c.setTimer(TimerLease, q.claimEnd)
		}
		return
	}
	if c.holding() || c.out() || c.state == StateCandidate {
		return
	}
	if c.leader == 0 || q.pending {
		c.startElection()
		return
	}
	c.maybePreempt()
}
