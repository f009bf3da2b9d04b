package election

import (
	"time"

	"github.com/lanleader/lanleader/wire"
)

// Quorum mode (Config.Quorum = N > 0): split-brain safety for every
// algorithm, on top of the election. The election still decides who
// claims (bully: the largest live key), and the core still judges claims
// by term and key; quorum mode adds votes and leases, in the manner of
// Raft's votes and leader leases, so that a job run on the leader never
// runs on two nodes at once:
//
//  1. A claim is a vote request. A node that follows a claim of (term,
//     leader) acknowledges it with HEARTBEAT_ACK, unicast to the leader,
//     and so votes for it: it acknowledges at most one leader per term.
//  2. An acknowledgement is a promise. A node that acknowledged leader X
//     at its local time r acknowledges no other leader, does not vote for
//     itself and starts no election before r + Lease + LeaseMargin (the
//     guard). A node that has just started keeps the same guard from its
//     start (it may have promised before a crash).
//  3. A claimant leads (ActBecomeLeader, State leader) only once a
//     majority of N — itself included, its own guard over — acknowledged
//     its term. Until then it is a candidate and claims again with
//     COORDINATOR every heartbeat interval; after ClaimWait it gives up
//     and runs a new election (a fresh term).
//  4. A lease. Claims are numbered within their leadership (Claim: 1, 2,
//     …), and each acknowledgement echoes the highest claim number its
//     sender has received (AckSeq), so the leader knows the
//     acknowledgement was made after it sent that claim, at its local
//     time s. Duplicates, reordered old claims and lost ones do not skew
//     this. With acks from a majority (itself included) the lease runs to
//     s + Lease, s being the latest send time that a majority
//     acknowledged; each member counts with its latest acknowledgement,
//     whichever round it answered. A leader re-sends its latest claim,
//     unicast, to each member that has not acknowledged it within
//     resendEvery, resendRounds times: with loss p per packet a member
//     fails a round trip with probability q = 1-(1-p)², and all of a
//     heartbeat's resendRounds+1 tries with q^(resendRounds+1) (0.07 at
//     p = 30 %), so that a lease that needs a majority's answer within
//     Lease-StopBefore (three heartbeats by default) lapses with
//     probability well under 10⁻⁶ a heartbeat at 30 % loss in five nodes.
//     In a herd (more than eight other members, harden_probeherd.go) the leader
//     re-sends only while fewer than a majority acknowledged the claim,
//     and only to members that acknowledged an earlier claim of its
//     leadership; a follower that a guard kept from acknowledging does so
//     when the guard ends (oweAck). There the majority comes from many
//     independent round trips, and each member counts with its latest
//     acknowledgement of the window's claims: at 30 % loss about 94 of a
//     128-node LAN's 127 followers acknowledged one of the last two.
//     A leader that cannot renew steps down (ActFollow, leader 0)
//     StopBefore ahead of the end of its lease (so that its driver can
//     stop the job gently before the lease ends), then runs an election.
//     Every Step checks the lease before anything else, so that a leader
//     that wakes from a pause with its timers overdue steps down before
//     it does anything.
//  5. Why leases never overlap. Clock rates differ from the true rate by
//     at most MaxClockDrift (500 ppm). A lease ends, in true time, at most
//     Lease/(1-ρ) after the true send time of its claim; the guard of a
//     node that acknowledged that claim (after receiving it) ends at least
//     (Lease+LeaseMargin)/(1+ρ) after it. LeaseMargin ≥ Lease·2ρ/(1-ρ)
//     (MinLeaseMargin) makes every guard outlast the lease it supports. A
//     new leader needs a majority, which holds a node of the old lease's
//     majority, which supports nobody else before its guard is over.
//  6. The term is the fencing token: leaderships need a majority of votes
//     for their term, so two nodes never lead with one term, as long as a
//     node's votes survive a restart (Status.VotedTerm kept by the driver
//     and given back as Config.InitialTerm). A leader that loses its lease
//     and claims again takes a fresh term.
//
// Followers report a leader (Status.Leader, ActFollow) only once it holds
// a lease: a confirmed leader sends HEARTBEAT, a claimant COORDINATOR. The
// minority side of a partition therefore shows no leader: a candidate
// whose claim no majority acknowledges, and followers with leader 0.

// MaxClockDrift is the clock-rate error this package assumes between any
// node's monotonic clock and true time: 500 ppm, ten times what NTP-free
// quartz oscillators are specified for (20 to 50 ppm).
const MaxClockDrift = 500e-6

// MinLeaseMargin is the smallest LeaseMargin that keeps leases apart for
// a lease of d under MaxClockDrift: d·2ρ/(1-ρ), rounded up to the
// microsecond.
func MinLeaseMargin(d time.Duration) time.Duration {
	m := time.Duration(float64(d) * 2 * MaxClockDrift / (1 - MaxClockDrift))
	return (m/time.Microsecond + 1) * time.Microsecond
}

// sentWindow is how many of its latest claims a leader remembers the send
// time of; an acknowledgement of an older claim is ignored (it could only
// give a lease that has already run out).
const sentWindow = 64

// quorum is the core's quorum-mode state, and its decisions. With quorum
// mode off (size 0) its methods answer as the textbook would: no guard,
// no claim to count, no lease to hold.
type quorum struct {
	size     int           // Config.Quorum: the expected cluster size; 0: quorum mode is off
	self     NodeID        // this node (a guard of its own: see depose)
	guardFor time.Duration // Lease + LeaseMargin: how long an acknowledgement binds its sender

	// Follower side.
	votedTerm   uint64 // the last term this node voted in (acknowledged, or claimed itself)
	votedFor    NodeID
	guardLeader NodeID        // whom the guard protects (0: nobody)
	guardUntil  time.Duration // no support for anyone else before this
	bootGuard   time.Duration // start + Lease + LeaseMargin: promises made before a restart
	pending     bool          // an election waits for the guard to end: no more support meanwhile
	// An acknowledgement owed (herd): a claim of oweLeader at oweTerm came
	// while a guard bound this node; it acknowledges at the guard's end.
	oweLeader NodeID
	oweTerm   uint64
	// The claims of one leadership (leader, term, incarnation) received:
	// the highest claim number, and whether one was a HEARTBEAT (the
	// leader holds a lease).
	cntLeader NodeID
	cntTerm   uint64
	cntInc    uint32
	cnt       uint32
	cntHB     bool
	// Of that leadership's claims: the highest this node acknowledged,
	// and of the claim being handled, whether a HEARTBEAT was counted
	// before it and whether it was counted before (a re-send): thinAck.
	ackSeq   uint32
	hbBefore bool
	dup      bool
	// skipUntil: a heartbeat left unacknowledged (thinAck) at t puts
	// this node's elections off until t + guardFor, as its
	// acknowledgement would have (putOff).
	skipUntil time.Duration

	// Leader side.
	confirmed bool          // the claim is confirmed: this node leads
	leaseTerm uint64        // the term of the lease held
	leaseEnd  time.Duration // the lease runs out at this local time
	claimEnd  time.Duration // an unconfirmed claim is given up at this time
	nSent     uint32        // claims sent under the current term
	sent      [sentWindow]time.Duration
	acked     map[NodeID]uint32 // per acknowledging node: the latest claim number it acknowledged
	// latest[k%sentWindow]: how many nodes' latest acknowledgement is of
	// claim k, for the claims of the window (renew's count); nLatest: how
	// many members acknowledged the latest claim (the herd's re-sends).
	latest  [sentWindow]int
	nLatest int
	resends int // re-sends of the latest claim so far
	// told: the claim number that told the followers this node leads
	// (the first after the confirmation); re-sent until every member
	// acknowledged it, in a herd too (acksEnough).
	told uint32
	ids  []NodeID
}

// init sets quorum mode up for cfg. A node in quorum mode restarts with
// the term it last voted in (Config.InitialTerm): it votes in no earlier
// term, nor again in that one.
func (q *quorum) init(cfg *Config) {
	q.size, q.guardFor, q.self = cfg.Quorum, cfg.Lease+cfg.LeaseMargin, cfg.ID
	if q.on() {
		q.votedTerm = cfg.InitialTerm
	}
}

// on reports whether quorum mode is on.
func (q *quorum) on() bool { return q.size > 0 }

// lastVote is the last term this node voted in: a claim of its own must
// be later (0 with quorum mode off).
func (q *quorum) lastVote() uint64 { return q.votedTerm }

// startGuard: a node that has just started at now keeps a guard for as
// long as an acknowledgement binds, since it may have promised support
// before a crash.
func (q *quorum) startGuard(now time.Duration) {
	if q.on() {
		q.bootGuard = now + q.guardFor
	}
}

// putOff reports whether an election must wait for the guard to end (the
// lease of the leader this node last acknowledged may still run), and
// then skew more (electSkew: in a herd, by rank), and until when. Until
// it runs, the node supports nobody. A guard of its own lease (depose)
// does not put its election off: its own claim may follow at once, since
// its driver starts a new job only after the old one.
//
// With thinned acknowledgements (thinAck) the two halves' guards end a
// heartbeat apart, and ranks next to each other are in different halves:
// a 128-host LAN's second largest survivor, its guard over first, elected
// before the largest and set off an election storm (1.2 s, 2,600
// packets). So the wait runs from the later of the guard and the heartbeat
// left unacknowledged (skipUntil), as if every heartbeat had been
// acknowledged.
func (q *quorum) putOff(now, skew time.Duration) (until time.Duration, wait bool) {
	end := max(q.guardUntil, q.skipUntil)
	if !q.on() || now >= end+skew || q.guardLeader == q.self {
		return 0, false
	}
	q.pending = true
	return end + skew, true
}

// putOff is q.putOff with this node's skew.
func (c *core) putOff() (until time.Duration, wait bool) {
	if !c.q.on() || c.q.guardLeader == c.q.self || c.q.guardUntil == 0 {
		return 0, false // (no guard yet: nothing to skew from)
	}
	return c.q.putOff(c.now, c.electSkew())
}

// dropPutOff: the election put off is no longer waited for (it runs, or a
// leader is followed).
func (q *quorum) dropPutOff() { q.pending = false }

// release: leader resigned its leadership of term. In quorum mode a leader
// resigns only once it has stopped leading (and its driver has stopped
// the job), so the promise made to it for that term is over: the guard
// need not run its course.
func (q *quorum) release(leader NodeID, term uint64, now time.Duration) {
	if q.on() && q.guardLeader == leader && q.votedFor == leader && q.votedTerm == term && now < q.guardUntil {
		q.guardUntil = now
		q.skipUntil = min(q.skipUntil, now)
	}
}

// depose: this node stops leading under a lease that may still run: it
// follows another claim, or its lease is about to run out. Its driver
// only now begins to stop the job, and the job's guard kills it at the
// end of the lease: until then the old leadership's job may run. Its vote
// would let a new claimant reach a majority (with two candidates and a
// witness: itself and the claimant) while that job runs, so it supports
// nobody else before the lease and the margin are over. unsafe
// (planted.Election.DeposedAck) leaves the vote free at once.
func (q *quorum) depose(margin time.Duration, unsafe bool) {
	if !q.on() || !q.confirmed || unsafe {
		return
	}
	if end := q.leaseEnd + margin; end > q.guardUntil {
		q.guardLeader, q.guardUntil = q.self, end
	}
}

// awaitingMajority reports whether this node's claim to lead still waits
// for a majority's acknowledgements (never with quorum mode off, where a
// claim leads at once).
func (q *quorum) awaitingMajority() bool { return q.on() && !q.confirmed }

// notLeading: the node left the leader state; a lease it held is no
// longer its.
func (q *quorum) notLeading() { q.confirmed = false }

// majority is the number of nodes, this one included, that a leader needs.
func (c *core) majority() int { return c.cfg.Quorum/2 + 1 }

// guarded reports whether this node must not support a leader other than
// id at now (id 0: anyone but the one it acknowledged).
func (q *quorum) guarded(id NodeID, now time.Duration) bool {
	return now < q.bootGuard || now < q.guardUntil && q.guardLeader != id
}

// grantVote reports whether this node votes for leader in term at now,
// and if so records the vote and the promise that comes with it (the
// guard): it votes at most once a term, in no term before its last vote,
// not while a promise to another leader stands, and not while an election
// of its own waits for the guard to end.
func (q *quorum) grantVote(leader NodeID, term uint64, now time.Duration) bool {
	if term < q.votedTerm || term == q.votedTerm && q.votedFor != leader || q.guarded(leader, now) || q.pending {
		return false
	}
	q.votedTerm, q.votedFor = term, leader
	q.guardLeader, q.guardUntil = leader, now+q.guardFor
	return true
}

// leaseStatus adds quorum mode's view to st: the term voted in, the
// lease a leader holds; a claim that no majority has acknowledged yet
// shows as a candidate, and a leader that holds no lease is not
// reported by its followers.
func (c *core) leaseStatus(st *Status) {
	if !c.q.on() {
		return
	}
	st.VotedTerm, st.VotedFor = c.q.votedTerm, c.q.votedFor
	switch {
	case c.state == StateLeader && c.q.confirmed:
		st.Term, st.LeaseUntil = c.q.leaseTerm, c.q.leaseEnd
	case c.state == StateLeader:
		// A claim no majority has acknowledged yet.
		st.State, st.Leader, st.LeaderKey = StateCandidate, 0, Key{}
	case c.leader != 0 && c.visibleLeader(c.leader, c.term) == 0:
		st.Leader, st.LeaderKey = 0, Key{}
	}
}

// countClaim counts a COORDINATOR or HEARTBEAT from its leader: distinct
// packets by sequence number, per leadership and incarnation of the
// sender. It reports whether it counted: only quorum mode counts.
func (q *quorum) countClaim(m *wire.Message) bool {
	if !q.on() {
		return false
	}
	if q.cntLeader != m.From || q.cntTerm != m.Term || q.cntInc != m.Incarnation {
		q.cntLeader, q.cntTerm, q.cntInc = m.From, m.Term, m.Incarnation
		q.cnt, q.cntHB, q.ackSeq = 0, false, 0
	}
	q.hbBefore, q.dup = q.cntHB, m.Claim <= q.cnt
	q.cnt = max(q.cnt, m.Claim)
	if m.Type == wire.TypeHeartbeat {
		q.cntHB = true
	}
	return true
}

// lastClaim is the highest claim number counted from leader's
// leadership of term (0: none counted): what an acknowledgement echoes.
func (q *quorum) lastClaim(leader NodeID, term uint64) uint32 {
	if q.cntLeader == leader && q.cntTerm == term {
		return q.cnt
	}
	return 0
}

// visibleLeader is the leader a follower reports: in quorum mode only one
// that holds a lease (it has sent a HEARTBEAT of its term).
func (c *core) visibleLeader(id NodeID, term uint64) NodeID {
	if !c.q.on() || id == c.self.ID {
		return id
	}
	q := &c.q
	if q.cntLeader == id && q.cntTerm == term && q.cntHB {
		return id
	}
	return 0
}
