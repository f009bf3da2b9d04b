package election

import (
	"github.com/lanleader/lanleader/wire"
)

// This file is the messages the core handles itself, whatever the
// algorithm: claims to lead (COORDINATOR, HEARTBEAT), RESIGN, and the
// quorum mode's and the stability's messages, passed on to quorum.go and
// harden_confirm.go. The algorithm's own messages go to its elector.

func (c *core) onMessage(m *wire.Message) {
	if m.From == c.self.ID || m.From == 0 || m.Term > MaxTerm || m.Term > max(c.term, c.maxSeen)+MaxTermJump {
		return
	}
	if m.Type == wire.TypeNotice {
		// Not a word of a live sender: it teaches no key and lifts no
		// suspicion.
		c.onNotice(m.From, m.Term)
		return
	}
	if m.Term > c.maxSeen {
		c.maxSeen = m.Term
	}
	k := Key{Priority: m.Priority, ID: m.From}
	// In the ring family a header teaches its sender's key only when it
	// is the newest message heard from the sender (newestFrom). (A
	// HEARTBEAT_ACK does not teach keys: quorum-mode followers send one
	// for every claim, and a follower that wakes from a pause acks its
	// backlog under the key it had before a change it has yet to handle;
	// the leader would keep that stale key, as it hears nothing else from
	// a node that now runs for election on the ring.)
	if m.Type != wire.TypeHeartbeatAck && (c.cfg.Algorithm == AlgorithmBully || c.newestFrom(m)) {
		if old, ok := c.members[k.ID]; ok && old != k {
			c.members[k.ID] = k
			c.keysChanged()
		}
	}
	// It speaks, so it is no longer suspected; a resign hold-off is a
	// promise of silence, so it stands until it ends.
	c.unsuspect(k.ID)
	if c.state == StateLeader && m.Term > c.term && (m.Type == wire.TypeAnswer || m.Type == wire.TypeResign) {
		// Someone has seen a later term than ours (a leader that has since
		// died): our claims would look stale to it. Lead on under a fresh
		// term so that everyone can follow.
		c.becomeLeader()
	}
	switch m.Type {
	case wire.TypeCoordinator, wire.TypeHeartbeat:
		// Quorum mode counts the claims of the leadership followed (a
		// HEARTBEAT shows it holds a lease, before it is followed), and
		// acknowledges them.
		counted := c.accepts(k, m.Term) && c.q.countClaim(m)
		c.onClaim(k, m.Term)
		if c.leader == k.ID && c.term == m.Term {
			c.ackClaim(k, m, counted)
		}
	case wire.TypeHeartbeatAck:
		c.onAck(m)
	case wire.TypeResign:
		c.onResign(k, m.Term)
	case wire.TypeProbe:
		c.onProbe(m, k)
	case wire.TypeVouch:
		c.onVouch(m, k)
	default:
		c.e.onMessage(m, k)
	}
}

// sendOrder is where a message stands among those its sender sent: its
// header's incarnation, then its sequence number. The agent's sequence
// grows by one a packet and never wraps within an incarnation (at the
// wrap the incarnation grows); a restarted agent's incarnation is the
// second of its start, and within the same second its sequence starts
// above the previous run's (agent/internal/auth, StartSeq). A restart with a
// smaller incarnation (the clock set back) has its key taught by
// membership alone until its sender is reported gone and back.
type sendOrder struct{ inc, seq uint32 }

func (a sendOrder) after(b sendOrder) bool {
	return a.inc > b.inc || a.inc == b.inc && a.seq > b.seq
}

// newestFrom records m's place among the messages heard from its sender,
// a member, and reports whether m is the newest of them: only then does
// its header show the sender's key as it is now. One sent before it
// changed its priority can arrive after the change was heard (a delayed
// or reordered packet, the backlog of a node that woke from a pause),
// and its key would undo the newer one; a node that then sends this one
// no more (a candidate's hops go to its successor only) would stay on
// the others' rings where it no longer is, and their rounds pass it by
// for good (the simulator's Chang–Roberts seed 15007). A message without
// a sequence number (0: the agent's never is) is taken as the newest.
// Bully keeps the rule it had, any header's key (its runs and traces are
// the reference the ring family is measured against); it has no ring
// order for a stale key to break.
func (c *core) newestFrom(m *wire.Message) bool {
	if m.Seq == 0 && m.Incarnation == 0 {
		return true
	}
	if _, ok := c.members[m.From]; !ok {
		return true
	}
	o := sendOrder{inc: m.Incarnation, seq: m.Seq}
	if last, ok := c.newest[m.From]; ok && !o.after(last) {
		return false
	}
	c.newest[m.From] = o
	return true
}

// accepts reports whether a claim of key from to lead with term is
// recognised: a higher term wins; on an equal term the larger key wins; a
// node never recognises two leaders of one term unless the second is
// larger.
func (c *core) accepts(from Key, term uint64) bool {
	return term > c.term ||
		term == c.term && (c.termLeader == 0 || from.ID == c.termLeader || c.termLeaderKey.Less(from))
}

// leaderKey is the key of the leader followed, as membership knows it now.
func (c *core) leaderKey() Key {
	if k, ok := c.members[c.leader]; ok {
		return k
	}
	return c.termLeaderKey
}

// onClaim handles COORDINATOR and HEARTBEAT, both a claim to lead with a
// term (and the ring family's announcements, relayed on the ring). A
// higher term wins; on an equal term the larger key wins; a node never
// recognises two leaders of one term unless the second is larger.
func (c *core) onClaim(from Key, term uint64) {
	if c.cfg.StickyLeader && c.state == StateFollower && from.ID != c.leader && c.healthy() && from.Less(c.leaderKey()) {
		// Stickiness: the leader followed is heard, and this claimant could
		// not take over from it. A node that cannot hear claims like this.
		// A later term is a reason to ask the leader, though: what this
		// node last heard of it may be old news (packets that waited while
		// this node was paused), and the others may have elected since
		// (the simulator's seed 1935: a paused node woke to a dead
		// leader's late heartbeat and, with phi's window stretched by the
		// pause, ignored the new leader for seconds). Bully only: in the
		// ring family the elections this starts raced the ring's own and
		// kept a few random schedules from converging.
		if term > c.term && c.cfg.Algorithm == AlgorithmBully && !c.heardJustNow() {
			c.confirmSuspicion(true)
		}
		return
	}
	if !c.accepts(from, term) {
		if c.state == StateLeader && c.q.awaitingMajority() && term == c.term && c.cfg.SplitVoteRetry {
			// A split vote: a smaller claimant of our own term holds votes
			// that our claim needs, and its voters vote no more in this
			// term. Claim again under a fresh term at once rather than at
			// the end of ClaimWait: they follow us, and vote in it.
			c.becomeLeader()
			return
		}
		if c.state == StateLeader {
			// A stale or smaller leader: tell it who leads now.
			c.tellLeader(from.ID)
		}
		c.nudgeStale(from, term)
		return
	}
	if c.state == StateLeader && c.cfg.Preempt && from.Less(c.self) {
		// A smaller node claims a later term: we would follow it and at
		// once take over again. Lead on under a term above its own
		// instead, without stepping down in between.
		c.becomeLeader()
		return
	}
	if c.askClaimant(from, term) {
		return
	}
	if c.state == StateCandidate && from.Less(c.self) && (c.e.overrules(from, term) || c.mayPreempt(from)) {
		// Our own election takes over from this smaller leader (we
		// preempt it, or we answered an ELECTION and so took the election
		// over, textbook step 4): note its claim, keep electing.
		if c.leader != from.ID || c.term != term {
			c.det.Reset()
		}
		c.term = term
		c.termLeader, c.termLeaderKey = from.ID, from
		c.leader = from.ID
		c.observeLeader()
		return
	}
	c.follow(from, term)
	c.maybePreempt()
}

// onNotice: a crashed leader's guard says that from's leadership of term
// is over and its job dead (wire.TypeNotice). Quorum mode: this node's
// promise to from for that term, and that term only, is released, as
// RESIGN releases it. A node that follows from in exactly that term
// elects at once, without from, as after RESIGN; any other notice (a
// later term followed, another leader, a replay) changes nothing else.
// The sender is left out as a suspect is (suspectLeader), not for a
// resign's hold-off: a restarted agent is heard as soon as it speaks.
func (c *core) onNotice(from NodeID, term uint64) {
	c.q.release(from, term, c.now)
	if from == c.leader && term == c.term {
		c.suspectLeader()
	}
}

// NoticeActs reports whether a NOTICE from leader of term would end the
// leadership st follows: its sender is the leader st follows in exactly
// that term. Drivers count the others as dropped.
func NoticeActs(st Status, from NodeID, term uint64) bool {
	return from != 0 && from != st.Self.ID && from == st.Leader && term == st.Term
}

// NoticeReleases reports whether a NOTICE from leader of term would free
// the vote st gave it in quorum mode: st voted last in exactly that term,
// for from. It may no longer follow from (another claim heard first);
// the vote is freed all the same (onNotice). Drivers count a notice that
// neither acts nor releases as dropped.
func NoticeReleases(st Status, from NodeID, term uint64) bool {
	return from != 0 && from != st.Self.ID && from == st.VotedFor && term == st.VotedTerm
}

func (c *core) onResign(from Key, term uint64) {
	// The resigner stays out of elections for its hold-off, counted from
	// when it sent RESIGN. Stop leaving it out a little earlier (T, which
	// is more than one packet delay) so that it is never left out after it
	// may have come back: a node that came back is always awaited.
	if _, ok := c.members[from.ID]; ok || from.ID == c.leader {
		c.exclude(from.ID, exclusion{until: c.now + c.cfg.ResignHoldoff - c.cfg.AnswerTimeout, resigned: true})
	}
	c.q.release(from.ID, term, c.now)
	if from.ID == c.leader && term >= c.term {
		c.suspectLeader()
	}
}
