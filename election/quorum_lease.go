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
	if c.q.on() && c.state == StateLeader && c.q.confirmed && c.now >= c.stepDownAt() && !c.cfg.planted().SkipWakeCheck {
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
	c.q.depose(c.cfg.LeaseMargin, c.cfg.planted().DeposedAck)
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
	q.nSent, q.told = 0, 0
	if q.acked == nil {
		q.acked = make(map[NodeID]uint32)
	}
	clear(q.acked)
	clear(q.latest[:])
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
	// Claim nSent+1 takes the slot of claim nSent+1-sentWindow, which
	// leaves the window: the nodes whose latest acknowledgement it was
	// no longer count (onAck ignores such an acknowledgement too).
	q.sent[q.nSent%sentWindow] = c.now
	q.latest[q.nSent%sentWindow] = 0
	q.nSent++
	q.nLatest = 0
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

// acksEnough reports whether the latest claim needs no more re-sends:
// every member acknowledged it; in a herd (inHerd), a majority, this node
// included. That majority renewed the lease to the latest send time plus
// Lease, the most any acknowledgement of this claim can give, so a
// re-send to the others would buy nothing: the lease is why the leader
// re-sends. A follower that missed the claim hears the next heartbeat,
// or its detector's alarm rings (one lost: SuspectAfter is one and a half
// heartbeats by default) and it asks the leader with the herd's PROBE,
// which the leader answers. A 128-host LAN's leader re-sent to
// every member whose acknowledgement had not come back within a tenth of
// a heartbeat (most of them, on a loaded host), up to three times, and
// every re-send drew another acknowledgement: hundreds of packets a
// heartbeat more than the majority it needs.
//
// The claim that tells the followers this node leads (told) is the
// exception: until a follower hears it, or a later claim, it names no
// leader, and among 127 followers one missed it at almost every failover
// at 5 % loss (a heartbeat more before all agree). Until every member
// acknowledged it or a later claim, for up to tellClaims claims, each
// claim goes to every member that has not. (The next heartbeat can come
// a moment after it: the heartbeat timer keeps the phase of the claims
// before the confirmation; a member that missed both was told nothing
// when only the told claim itself was re-sent.)
//
// When the followers thin their acknowledgements (thinAck), each answers
// one of every two heartbeats: there a majority whose latest
// acknowledgement is of one of the last two claims is enough.
func (c *core) acksEnough() bool { return !c.telling() && c.leaseAcked() }

// leaseAcked reports whether the latest claim has the acknowledgements
// that the lease needs from it (acksEnough, the told claim aside).
func (c *core) leaseAcked() bool {
	q := &c.q
	if !c.inHerd() {
		return c.allAcked(q.nSent)
	}
	n := q.nLatest
	if c.thinsAcks() && q.nSent >= 2 {
		n = q.latest[(q.nSent-1)%sentWindow] + q.latest[(q.nSent-2)%sentWindow]
	}
	return n+1 >= c.majority()
}

// tellClaims: for how many claims, the one that told included, a leader
// re-sends its latest to every member that has not acknowledged the one
// that told (a member that missed them all and their re-sends is gone,
// or hears the next).
const tellClaims = 3

// telling reports whether a member may not know yet that this node leads
// (acksEnough): it has not acknowledged the claim that told it, or a
// later one, and that claim is one of the last tellClaims. Once every
// member did, it forgets the told claim.
func (c *core) telling() bool {
	q := &c.q
	if q.told == 0 || q.nSent-q.told >= tellClaims {
		return false
	}
	if c.allAcked(q.told) {
		q.told = 0
		return false
	}
	return true
}

// allAcked reports whether every member acknowledged claim seq or a later
// one.
func (c *core) allAcked(seq uint32) bool {
	for id := range c.members {
		if c.q.acked[id] < seq {
			return false
		}
	}
	return true
}

// onResendTimer re-sends the latest claim, unicast, in the order of their
// ids, to the members that acksEnough says need it: while telling, those
// that did not acknowledge the told claim; when the lease lacks its
// acknowledgements, every member that did not acknowledge the latest
// claim, in a herd only some of them.
func (c *core) onResendTimer() {
	q := &c.q
	if !q.on() || c.state != StateLeader || q.nSent == 0 || q.resends >= resendRounds {
		return
	}
	telling, acked := c.telling(), c.leaseAcked()
	if !telling && acked {
		return
	}
	q.resends++
	herd, thin := c.inHerd(), c.thinsAcks()
	q.ids = q.ids[:0]
	for id := range c.members {
		a := q.acked[id]
		switch {
		case a >= q.nSent:
			continue
		case telling && a < q.told:
		case acked:
			continue
		case !herd:
		case a == 0:
			// In a herd, only to a member that acknowledged an earlier
			// claim of this leadership: its acknowledgement of this one,
			// or this claim, may have been lost. One that never
			// acknowledged is bound by a guard (it acknowledges when the
			// guard ends: oweAck), or missed every claim, and hears the
			// next heartbeat's.
			continue
		case thin && a+1 >= q.nSent:
			// Its latest is of the claim before: this one was the other
			// half's turn (thinAck).
			continue
		}
		q.ids = append(q.ids, id)
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
// mode). Its work is O(1) but for renew's, which is O(1) in the usual
// case: a 128-host LAN's leader takes 127 a heartbeat.
func (c *core) onAck(m *wire.Message) {
	q := &c.q
	if !q.on() || c.state != StateLeader || m.Term != c.term || m.AckSeq == 0 || m.AckSeq > q.nSent || q.nSent-m.AckSeq >= sentWindow {
		return
	}
	old := q.acked[m.From]
	if m.AckSeq <= old {
		return // a duplicate, or older than what it acknowledged before
	}
	q.acked[m.From] = m.AckSeq
	if old > 0 && q.nSent-old < sentWindow {
		q.latest[(old-1)%sentWindow]--
	}
	q.latest[(m.AckSeq-1)%sentWindow]++
	if m.AckSeq == q.nSent {
		if _, ok := c.members[m.From]; ok {
			q.nLatest++
		}
		if c.acksEnough() {
			c.cancelTimer(TimerResend)
		}
	}
	c.renew()
}

// leaseBase is the latest send time that need nodes acknowledged (each
// with its latest acknowledgement), and whether there is one: the claims
// of the window are walked from the latest down, adding the nodes whose
// latest acknowledgement each is, until need are counted (one or two
// claims in the usual case, at most sentWindow). A node whose latest
// acknowledgement is older than the window does not count: a lease from
// it has run out (see sentWindow), and leaving it out can only make a
// lease shorter. It replaces a sort of every node's latest send time at
// every acknowledgement: O(n log n) an acknowledgement, n of them a
// heartbeat.
func (q *quorum) leaseBase(need int) (time.Duration, bool) {
	n := 0
	for k := q.nSent; k > 0 && q.nSent-k < sentWindow; k-- {
		if n += q.latest[(k-1)%sentWindow]; n >= need {
			return q.sent[(k-1)%sentWindow], true
		}
	}
	return 0, false
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
	base := c.now
	if need > 0 {
		var ok bool
		if base, ok = q.leaseBase(need); !ok {
			return
		}
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
		q.told = q.nSent
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
	if c.payAck() {
		return
	}
	if c.leader == 0 || q.pending {
		c.startElection()
		return
	}
	c.maybePreempt()
}
