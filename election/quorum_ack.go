package election

import "github.com/lanleader/lanleader/wire"

// This file is quorum mode's follower acknowledgements (quorum.go has the
// overview): a follower acknowledges a claim, and so votes and promises,
// and in a large herd thins its acknowledgements (Hardening.ThinAcks).

// ackClaim runs after claim m of leader k (COORDINATOR or HEARTBEAT)
// left this node following k in m's term; counted: countClaim counted m
// before the claim was judged. In quorum mode a follower acknowledges the
// claim (and so votes and promises), unless a promise to another leader
// stands, it voted for another in this term, or it is about to take over
// from it. Outside quorum mode nothing is acknowledged.
func (c *core) ackClaim(k Key, m *wire.Message, counted bool) {
	if !c.q.on() {
		return
	}
	if !counted {
		c.q.countClaim(m)
	}
	term := m.Term
	if c.state != StateFollower || c.leader != k.ID || c.term != term {
		return
	}
	if vis := c.visibleLeader(k.ID, term); c.reportedLeader != vis || c.reportedTerm != term {
		c.emit(Action{Kind: ActFollow, Leader: vis, Term: term})
	}
	if c.thinAck(m) {
		c.q.skipUntil = max(c.q.skipUntil, c.now+c.q.guardFor)
		return
	}
	c.voteAck(k, term)
}

// thinAcksFrom is the quorum (N) from which followers acknowledge every
// other heartbeat (thinAck).
const thinAcksFrom = 64

// thinsAcks reports whether this node's cluster thins its heartbeats'
// acknowledgements: quorum mode, hardened, a herd of a quorum of at
// least thinAcksFrom.
func (c *core) thinsAcks() bool {
	return c.q.on() && c.cfg.ThinAcks && c.cfg.Quorum >= thinAcksFrom && c.inHerd()
}

// thinAck reports whether this follower leaves claim m (counted just now)
// unacknowledged: a lease needs a majority's acknowledgements, not every
// member's, and a 128-node leader read 127 of them a heartbeat. In a
// cluster that thins them (thinsAcks), a follower acknowledges a
// HEARTBEAT only when its number has the parity of the follower's id, or
// when it acknowledged neither that claim's predecessor nor anything
// later (it missed its turn, or the claim that was its turn was lost).
// Every claim that is not a routine heartbeat is acknowledged: a
// COORDINATOR (the claim's votes), the first HEARTBEAT of a leadership
// (the one that tells that it leads, which the leader re-sends until each
// member acknowledged it) and a claim received before (the leader's
// unicast re-send). Each follower's latest acknowledgement is then of one
// of the last two claims, and the leader counts a majority over those two
// (acksEnough). Leaving a claim unacknowledged promises nothing: the
// guard runs from the last acknowledgement, which is all the lease of the
// leader counts on (safety does not depend on how many acknowledge).
//
// The cost is in the lease's margin under loss. A lease runs to the send
// time of the latest claim that a majority acknowledged (each node with
// its latest) plus Lease, and the leader steps down StopBefore ahead of
// that: at the agent's timing, once a majority has had nothing
// acknowledged for three heartbeats. With loss p on every packet a
// follower's try gets through with (1−p)²: 0.49 at 30 %; thinned, it
// tries about twice in three heartbeats, and about 0.75 of the followers
// got one through (0.87 unthinned). At 64 nodes that is 47 of 63
// followers where 32 are needed (4 standard deviations), at 128 about 95
// of 127 where 64 are (6); in a herd of 16 it would be 2, which is why
// smaller clusters do not thin.
func (c *core) thinAck(m *wire.Message) bool {
	q := &c.q
	return c.thinsAcks() && m.Type == wire.TypeHeartbeat && q.hbBefore && !q.dup &&
		(m.Claim+uint32(c.self.ID))%2 == 1 && q.ackSeq+1 >= m.Claim
}

// voteAck acknowledges the leadership of k at term, which this node
// follows, unless it does not vote, is about to take over from k, or the
// vote is not free (grantVote); a vote that a guard withholds is owed
// (oweAck).
func (c *core) voteAck(k Key, term uint64) {
	if !c.cfg.Role.Votes() || c.mayPreempt(k) || c.st.prevoting {
		return
	}
	if !c.q.grantVote(k.ID, term, c.now) {
		c.oweAck(k.ID, term)
		return
	}
	c.q.oweLeader = 0
	ack := c.header(wire.TypeHeartbeatAck)
	ack.AckSeq = c.q.lastClaim(k.ID, term)
	c.q.ackSeq = max(c.q.ackSeq, ack.AckSeq)
	c.emit(Action{Kind: ActSend, To: k.ID, Msg: ack, Count: 1})
}

// oweAck: in a herd, a claim of leader at term that only a guard keeps
// this node from acknowledging (a promise to another leader, or the
// guard of its start) is acknowledged when that guard ends, rather than
// when the leader's next claim comes: a new leader's followers are bound
// to the old one until their guards end at about the moment of its first
// claim, and a newcomer's guard runs for a lease after its start. The
// vote is given then as it would be to a claim that came then (grantVote
// decides again), and echoes the latest claim received, sent before it:
// the lease argument (above) holds as for any acknowledgement. The leader
// then needs no re-sends to the followers that were bound (see
// onResendTimer), which in a 128-host LAN that started one host after
// another went to every follower of every new claimant, three times a
// heartbeat.
func (c *core) oweAck(leader NodeID, term uint64) {
	q := &c.q
	if !c.inHerd() || q.pending || term < q.votedTerm || term == q.votedTerm && q.votedFor != leader {
		return
	}
	until := q.bootGuard
	if q.guardLeader != leader {
		until = max(until, q.guardUntil)
	}
	if until <= c.now {
		return
	}
	q.oweLeader, q.oweTerm = leader, term
	c.setTimer(TimerLease, until)
}

// payAck: a guard that withheld an acknowledgement has ended (TimerLease
// of a follower that owes one). It reports whether one was owed to the
// leadership this node still follows (and so was handled); one owed to
// another is forgotten.
func (c *core) payAck() bool {
	q := &c.q
	leader, term := q.oweLeader, q.oweTerm
	q.oweLeader = 0
	if leader == 0 || c.state != StateFollower || c.leader != leader || c.term != term || q.pending {
		return false
	}
	c.voteAck(c.termLeaderKey, term)
	return true
}
