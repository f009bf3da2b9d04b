package election

import (
	"time"

	"github.com/lanleader/lanleader/detector"
	"github.com/lanleader/lanleader/wire"
)

// Stability: a missed window of heartbeats is evidence, not proof.
//
//  1. Confirm before accusing. A follower whose detector suspects the
//     leader sends PROBE (one multicast packet, to all) up to
//     confirmRounds times over the first half of ConfirmTimeout, until an
//     answer comes. The leader answers VOUCH naming itself; a
//     member that heard the leader more recently than the prober (PROBE
//     says how long ago the prober last heard it) answers VOUCH with its
//     own age of the leader. A vouch that shows the leader alive within
//     the detector's window feeds the detector as if the heartbeat had
//     arrived then, and the follower follows on. Only when no vouch comes
//     within ConfirmTimeout is the leader suspected (suspectLeader). Loss
//     thus costs a few packets, not a change of leader: with loss p on
//     each packet, one round fails for the direct answer with probability
//     q = 1-(1-p)², and the rounds and the members that vouch are
//     independent chances. Because the alarm is a question, it rings
//     early (SuspectAfter 1.5 heartbeats: one heartbeat lost), and the
//     rounds make its answer near certain (confirmRounds).
//     A leader that is gone answers none of them and no member heard it
//     since: it is suspected ConfirmTimeout after the alarm.
//  2. Stickiness. A follower that hears its leader (its detector does not
//     suspect it) ignores claims from keys smaller than that leader's and
//     does not start an election of its own on another node's ELECTION;
//     a leader answers an ELECTION that is not ahead of its term without
//     taking a new one. A node that cannot hear (its input cut) may elect
//     and claim as it likes: it moves nobody.
//  3. Pre-vote (quorum mode; Raft's PreVote). A node elects only once a
//     majority of N, itself included, has answered a PROBE with a VOUCH
//     that grants it: the sender hears no leader, or hears one this node
//     may take over from. A leader that cannot hear loses its lease (no
//     acknowledgement arrives), steps down and, hearing no majority,
//     stays quiet instead of claiming again and again; the others elect
//     among themselves. A follower that cannot hear never gets to elect.

// confirmRounds is how many PROBEs a confirmation sends at most: one,
// then another every probeEvery until a VOUCH ends it. The alarm rings
// after one lost heartbeat (SuspectAfter 1.5 heartbeats), so a follower
// under loss p confirms about p of the heartbeats, and its confirmation
// must almost never fail while the leader lives. It fails only when the
// leader's answer to every round is lost, q^confirmRounds with
// q = 1-(1-p)², and so is every other member's, which has news only if it
// heard the heartbeat that the prober missed. At 30 % loss in 5 nodes:
// 0.51²⁰ = 1.4·10⁻⁶ for the leader's answers, times about
// (0.3 + 0.7·0.51²⁰)³ = 0.027 for the three other followers', 4·10⁻⁸
// a confirmation: with 120 confirmations a second (4 followers, 30 % of
// 100 heartbeats each, --heartbeat 10ms) one false election in about
// 60 hours; with the default heartbeat, one in 600 hours
// (docs/design/election.md, "An early alarm"). Five rounds, the count
// when the alarm rang after two lost heartbeats, would fail 10⁻³ of the
// time: several false elections a minute at --heartbeat 10ms. A dead
// leader costs the same ConfirmTimeout however many rounds there are.
const confirmRounds = 20

// silentRounds is how many PROBE rounds a herd's confirmation sends
// before its vouchers' silence may end it (vouchersSilent).
const silentRounds = 5

// prevoteRounds is how many PROBEs a pre-vote's round sends (outside a
// herd: prevoteProbes): a round asks every voter, each of whose answers
// grants, so that a majority needs no more.
const prevoteRounds = 5

// stability is the core's state for confirmations and pre-votes.
type stability struct {
	// lastHeard: when the leader followed was last heard from (a claim of
	// it, a vouch of it by itself, or a vouch of another member);
	// heardSelf: the last time this node heard it itself. A node vouches
	// only with what it heard itself: hearsay passed on would gain the
	// packet's delay at every hop and keep a dead leader alive.
	lastHeard time.Duration
	heardSelf time.Duration

	confirming bool
	confirmEnd time.Duration
	// needNews: the confirmation began at confirmStart for another reason
	// than the detector (another node's ELECTION, membership's suspicion)
	// and succeeds only with news: the leader heard, by this node or by a
	// voucher, at or after confirmStart (news). Otherwise whatever ends
	// the detector's suspicion will do.
	needNews     bool
	news         bool
	confirmStart time.Duration
	// asked: the vouchers a herd's confirmation asked (probeTargets);
	// silent: those of them that answered without news of the leader
	// (vouchersSilent).
	asked  map[NodeID]bool
	silent map[NodeID]bool
	probes int // PROBEs sent in the current confirmation or pre-vote round

	// A claim that waits for its claimant's VOUCH (askClaimant), and the
	// claimant that last answered, believed until claimantUntil.
	pendFrom      Key
	pendTerm      uint64
	claimant      NodeID
	claimantUntil time.Duration
	// listClaim: the claim being judged is a ring's COORDINATOR, whose
	// list went round with the claimant on it (ringList.claimOfList).
	listClaim bool

	// prevoting: an election waits for a majority's pre-votes; grants:
	// who granted one, and when.
	prevoting bool
	roundEnd  time.Duration
	grants    map[NodeID]time.Duration
	// grantedUntil: a pre-vote won is good for an election started before
	// this time (the elections that follow one another in a bully run).
	grantedUntil time.Duration
	backoff      time.Duration // the wait before the next pre-vote after one that failed

	herdState // harden_probeherd.go
}

// probeEvery is the time between two PROBEs of one confirmation: they
// go out in the first half of ConfirmTimeout, so that the answer to the
// last one has the other half to come back (125µs apart at the default
// 5ms, 75µs at 3ms). A wait stretched to slow
// round trips (harden_rtt.go) only waits longer for the answers: the PROBEs go
// out as fast, so that the time to the first answer, which the estimate
// takes from the first PROBE, is never off by more than this half.
func (c *core) probeEvery() time.Duration {
	return max(c.cfg.ConfirmTimeout/(2*confirmRounds), time.Microsecond)
}

// prevoteEvery is the time between two PROBEs of a pre-vote's round:
// prevoteRounds over the first half of ConfirmTimeout.
func (c *core) prevoteEvery() time.Duration {
	return max(c.cfg.ConfirmTimeout/(2*prevoteRounds), time.Microsecond)
}

// healthy reports whether this node hears the leader it follows: its
// detector does not suspect it and no confirmation is under way.
func (c *core) healthy() bool {
	return c.leader != 0 && c.leader != c.self.ID && !c.st.confirming && !c.det.Suspect(c.now)
}

// ageOf is how long ago at was, in a PROBE or VOUCH's microseconds.
func (c *core) ageOf(at time.Duration) uint32 {
	d := (c.now - at) / time.Microsecond
	if d < 0 {
		return 0
	}
	if d > wire.MaxAge {
		return wire.MaxAge
	}
	return uint32(d)
}

// --- confirming a suspicion ---------------------------------------------------

// confirmSuspicion runs when the detector suspects the leader (fresh
// false), or when something else gives reason to (fresh true: another
// node's ELECTION, membership's suspicion): probe first, suspect only if
// nobody vouches.
func (c *core) confirmSuspicion(fresh bool) {
	if !c.cfg.ConfirmSuspicion {
		c.suspectLeader()
		return
	}
	s := &c.st
	if s.confirming {
		if fresh && !s.needNews {
			s.needNews, s.news, s.confirmStart = true, false, c.now
		}
		return
	}
	s.confirming, s.confirmEnd, s.probes, s.othersProbed = true, c.now+c.confirmTimeout(), 0, 0
	clear(s.asked)
	clear(s.silent)
	c.rtt.probeAt = 0 // a new request: an answer to an older one is not its round trip
	sent(&c.rtt.probeAt, c.now)
	s.needNews, s.news, s.confirmStart = fresh, false, c.now
	c.probe(c.leader, s.lastHeard, false)
	c.setTimer(TimerConfirm, min(c.now+c.probeEvery(), s.confirmEnd))
}

// probe sends one PROBE about leader, last heard at heard: a pre-vote's
// (prevote) to all, for a majority's answers; a confirmation's to the
// herd's targets in a herd (probeTargets), to all otherwise.
func (c *core) probe(leader NodeID, heard time.Duration, prevote bool) {
	m := c.header(wire.TypeProbe)
	m.Leader = leader
	m.Age = wire.MaxAge
	if leader != 0 {
		m.Age = c.ageOf(heard)
	}
	c.st.probes++
	if !prevote && c.probeTargets(m) {
		return
	}
	c.emit(Action{Kind: ActBroadcast, Msg: m, Scope: ScopeAll, Count: len(c.members)})
}

func (c *core) onConfirmTimer() {
	s := &c.st
	if !s.confirming {
		return
	}
	switch {
	case c.heardAgain():
		c.endConfirm()
	case c.now >= s.confirmEnd, c.vouchersSilent():
		s.confirming = false
		c.suspectLeader()
	case s.probes < confirmRounds:
		if c.skipRound() {
			s.probes++
		} else {
			c.probe(c.leader, s.lastHeard, false)
		}
		c.setTimer(TimerConfirm, min(c.now+c.probeEvery(), s.confirmEnd))
	default:
		c.setTimer(TimerConfirm, s.confirmEnd)
	}
}

// vouchersSilent reports whether a herd's confirmation has sent all its
// rounds and every voucher it asked answered without news of the leader:
// none of them has heard it for SuspectAfter either (in quorum mode a
// follower answers every PROBE; outside it, only with news, so this
// never holds there). The leader had its silentRounds chances to answer
// (five, not confirmRounds: the vouchers' silence is the evidence here,
// and a herd's crash confirmed with 20 rounds, each answered by three
// vouchers, cost a 128-node failover more than 12 packets a node). A
// live leader's answers to five rounds are all lost with probability
// 0.51⁵ = 0.035 at 30 % loss, its three vouchers missed its heartbeat
// with 0.3³ = 0.027: a false suspicion in 10³ confirmations, which in
// quorum mode still needs a majority's pre-votes, and the others hear
// their leader.
// Waiting out the rest of confirmTimeout, which a node's round-trip
// estimate stretches up to SuspectAfter, then buys nothing: on a
// 128-host test bed the largest survivor, its estimate inflated by the
// loaded start, waited 300 ms more while the next ranks, with short
// estimates, suspected, pre-voted and claimed: an election storm.
// Missing for all three vouchers the heartbeats of a SuspectAfter at 30 %
// loss has a chance of about (0.3³)³ = 2·10⁻⁵, and a suspicion in quorum
// mode still needs a majority's pre-votes before anyone elects.
func (c *core) vouchersSilent() bool {
	s := &c.st
	if s.probes < silentRounds || len(s.asked) == 0 {
		return false
	}
	for id := range s.asked {
		if !s.silent[id] {
			return false
		}
	}
	return true
}

// voucherSilent: voucher id answered this confirmation without news of
// the leader; once every voucher asked has, the suspicion stands.
func (c *core) voucherSilent(id NodeID) {
	s := &c.st
	if !s.confirming || !s.asked[id] {
		return
	}
	s.silent[id] = true
	if c.vouchersSilent() {
		s.confirming = false
		c.cancelTimer(TimerConfirm)
		c.suspectLeader()
	}
}

// heardAgain reports whether a confirmation has the news it needs.
func (c *core) heardAgain() bool {
	return !c.det.Suspect(c.now) && (!c.st.needNews || c.st.news)
}

// endConfirm: the leader was heard again; the detector's deadline is
// armed anew.
func (c *core) endConfirm() {
	if !c.st.confirming {
		return
	}
	c.st.confirming = false
	c.cancelTimer(TimerConfirm)
	if at, ok := c.det.SuspectAt(); ok && c.leader != 0 && c.leader != c.self.ID {
		c.armSuspect(at)
	}
}

// stopConfirm drops a confirmation that no longer matters (the leader
// is suspected, or another is followed).
func (c *core) stopConfirm() {
	if c.st.confirming {
		c.st.confirming = false
		c.cancelTimer(TimerConfirm)
	}
}

// --- confirming a claimant (textbook mode's stickiness) ---------------------------

// askClaimant: a claim that would make this node leave a leader it hears
// (it leads, or follows one it hears) is taken only once the claimant
// has answered a PROBE: a node that cannot hear claims in vain, and one
// that hears answers within a round trip. It reports whether the claim
// waits for that answer. Quorum mode needs none: a claim there leads
// only with a majority's acknowledgements, and a node that cannot hear
// gets no pre-vote to claim with. Nor does a ring's COORDINATOR
// (listClaim): its claimant is the largest key of a list that went round
// the ring, which that node received and passed on, so it heard and was
// heard; and it learns that it won only when COORDINATOR reaches it,
// before which it cannot vouch for itself: the check would stop the lap.
func (c *core) askClaimant(from Key, term uint64) bool {
	if !c.cfg.CheckClaimant || c.q.on() || c.st.listClaim || from.ID == c.leader || c.leader == 0 {
		return false
	}
	if c.state != StateLeader && !c.healthy() {
		return false
	}
	s := &c.st
	if s.claimant == from.ID && c.now < s.claimantUntil {
		return false // it answered recently
	}
	s.pendFrom, s.pendTerm = from, term
	// Not timed (harden_rtt.go): every follower that hears the claim checks the
	// claimant at once, and its VOUCH comes after the herd's PROBEs
	// queued before it; its delay measures the claimant's queue (tens of
	// milliseconds at 128 hosts), and in the estimate it stretched the
	// next crash's confirmation by as much.
	m := c.header(wire.TypeProbe)
	m.Leader, m.Age = from.ID, wire.MaxAge
	c.emit(Action{Kind: ActSend, To: from.ID, Msg: m, Count: 1})
	return true
}

// claimantAnswered: the claimant asked about vouched for itself: its
// claim (or a later one) is taken now.
func (c *core) claimantAnswered(m *wire.Message, from Key) {
	s := &c.st
	s.claimant, s.claimantUntil = from.ID, c.now+c.cfg.LossWindow()
	term := max(s.pendTerm, m.Term)
	s.pendFrom = Key{}
	c.onClaim(from, term)
}

// --- PROBE and VOUCH -------------------------------------------------------------

// onProbe answers a PROBE. The leader always vouches for itself. In
// quorum mode every node answers, for the pre-votes; in textbook mode a
// follower answers only with news: it heard the leader asked about more
// recently than the prober did.
func (c *core) onProbe(m *wire.Message, from Key) {
	c.noteProbe(m)
	v := c.header(wire.TypeVouch)
	switch {
	case c.state == StateLeader:
		v.Leader, v.Age = c.self.ID, 0
	case c.healthy():
		v.Leader, v.Age = c.leader, c.ageOf(c.st.heardSelf)
	default:
		v.Leader, v.Age = 0, wire.MaxAge
	}
	news := v.Leader != 0 && v.Leader == m.Leader && v.Age < m.Age
	if !c.q.on() && (!news || c.state != StateLeader && !c.vouchesFor(from)) {
		return
	}
	if c.q.on() && !c.cfg.Role.Votes() && !news {
		return
	}
	if c.state == StateLeader {
		c.leaderVouch(from.ID, v)
		return
	}
	c.emit(Action{Kind: ActSend, To: from.ID, Msg: v, Count: 1})
}

// onVouch takes a VOUCH: evidence that the leader lives, and in quorum
// mode a pre-vote.
func (c *core) onVouch(m *wire.Message, from Key) {
	if s := &c.st; s.pendFrom.ID == from.ID && from.ID != 0 && m.Leader == from.ID && m.Term >= s.pendTerm {
		c.claimantAnswered(m, from)
		return
	}
	c.rtt.answered(&c.rtt.probeAt, c.now, c.cfg.LossWindow())
	if m.Leader != c.leader || m.Age >= wire.MaxAge {
		c.voucherSilent(from.ID) // it hears no leader, or another
	}
	if c.leader != 0 && c.leader != c.self.ID && m.Leader == c.leader && m.Age < wire.MaxAge {
		var heard time.Duration
		switch {
		case from.ID == c.leader && m.Term >= c.term:
			heard = c.now
			c.st.heardSelf = c.now
		case m.Term == c.term:
			heard = c.now - time.Duration(m.Age)*time.Microsecond
		default:
			heard = -1
		}
		if heard >= 0 {
			improved := heard > c.st.lastHeard
			if improved {
				c.st.lastHeard = heard
				c.aliveAt(heard)
			}
			switch {
			case c.st.confirming:
				if heard >= c.st.confirmStart {
					c.st.news = true
				}
				if c.heardAgain() {
					c.endConfirm()
				} else {
					c.voucherSilent(from.ID)
				}
			case improved:
				if at, ok := c.det.SuspectAt(); ok {
					c.armSuspect(at)
				}
			}
		}
	}
	if !c.st.prevoting {
		return
	}
	if c.grants(m) && c.roleOf(from.ID).Votes() {
		c.st.grants[from.ID] = c.now
		if c.countGrants() >= c.majority() {
			c.winPrevote()
		}
		return
	}
	if k, ok := c.members[m.Leader]; ok && c.self.Less(k) {
		// A larger leader is alive, as far as the voucher knows: the
		// election would end with it, and its claim stops the pre-vote
		// (follow) when it comes. Until then the pre-vote waits, as after
		// a round that failed, and asks again: the voucher may not have
		// noticed yet that its leader is gone. (Stopped here, it waited
		// for a claim that never came: 2 candidates and 2 witnesses, a
		// witness that still named the crashed leader, no leader for
		// good.)
		if s := &c.st; s.probes > 0 || c.now < s.roundEnd {
			s.roundEnd, s.probes = c.now, 0
			c.prevoteBackoff()
		}
		if m.Term < c.term && c.leader == 0 {
			// But its term is behind ours, so its claims are stale here
			// and this node would wait for nothing: an ANSWER of our
			// term makes it lead on under a fresh one, which we follow
			// (as a witness's nudgeStale does).
			c.send(m.Leader, wire.TypeAnswer)
		}
	}
}

// aliveAt gives the detector a vouch's evidence that the leader was alive
// at heard: as an arrival to a detector that cannot tell it from one, as
// evidence that is no heartbeat to one that can (detector.Witnessed). A
// vouch answers this node's own PROBE, sent when its alarm rang: phi that
// learnt its time as a heartbeat's cut the leader's interval in two, its
// mean fell and its alarm rang earlier, asked again and learnt again. At
// threshold 1.64 a follower that read a backlog of heartbeats at once
// after a pause (16 gaps of 0) rang 55ms after every heartbeat from then
// on, and the confirmation that one late VOUCH failed made it elect
// against its live leader (the simulator's bully seed 3715).
func (c *core) aliveAt(heard time.Duration) {
	if w, ok := c.det.(detector.Witnessed); ok {
		w.Alive(heard)
		return
	}
	c.det.Observe(heard)
}

// grants reports whether a VOUCH grants this node's pre-vote: its sender
// hears no leader, or only one with a smaller key than this node's (which
// this node takes over from by preemption, or by an election of a smaller
// node that it answered: bully's step 4).
func (c *core) grants(m *wire.Message) bool {
	if m.Leader == 0 || m.Leader == c.self.ID {
		return true
	}
	if time.Duration(m.Age)*time.Microsecond >= c.cfg.LossWindow() {
		return true
	}
	k, ok := c.members[m.Leader]
	if !ok && m.Leader == c.leader {
		// The leader this node follows, known from its claims though
		// membership does not list it yet: a node that has just
		// restarted, whose member list fills in seconds on a large LAN
		// (a 64-host LAN's returning largest node could not take over
		// for as long).
		k, ok = c.termLeaderKey, true
	}
	return ok && k.Less(c.self)
}

// hearsLarger reports whether this node hears a leader with a larger key:
// an election of its own would end with that leader.
func (c *core) hearsLarger() bool {
	return c.healthy() && c.self.Less(c.leaderKey())
}
