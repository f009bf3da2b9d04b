package election

import (
	"slices"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// The PROBE herd. When the leader dies every follower's detector fires at
// once (they were fed the same last heartbeat) and each confirms with
// confirmRounds PROBEs: with PROBEs to all, 20(n−1) multicast packets of n−1
// copies each, the
// largest cost of a failover once the election is O(n), and what a
// 1,024-node failover's CPU went to. In a cluster of more than vouchers+1
// nodes, with bully outside quorum mode (thinned, harden_vouchers.go):
//
//   - the leader answers a PROBE with one VOUCH to all (at most one every
//     probe interval) instead of one to the prober: every follower that
//     confirms hears it, whoever asked;
//   - a follower that heard at least herdSkip PROBEs about its leader from
//     others since its last round leaves out its next round: the leader,
//     if alive, answers them to all (it hears the PROBEs it vouches for);
//   - a PROBE goes, one packet each, to the leader and to probeVouchers
//     of the prober's own vouchers (probeTargets), not by multicast to
//     all: a multicast costs every host a packet to read, and a LAN where
//     many followers confirm at once (a start-up under load, rivals
//     claiming) had each of 128 agents read hundreds of PROBEs a second. A crash's herd
//     costs more packets on the wire than with multicast PROBEs (each
//     follower's round is probeVouchers+1 packets), and a small part of
//     the packets that hosts read.
//
// A follower that confirms alone (a loss of its own) hears no herd and
// sends every round; in a herd its chance a round is at least
// as good (one of many PROBEs reaches the leader, whose one VOUCH then
// reaches it with probability 1−p, against (1−p)² for its own round trip).
// Smaller clusters and the ring family never count as a herd.
//
// Quorum mode follows the same rules (its crash is the same herd, and
// worse: every follower then also pre-votes, and every voter answers every
// pre-vote's PROBE), and these:
//
//   - a confirmation's PROBE goes to the leader and the vouchers as above;
//     a pre-vote's goes to all (it needs a majority's VOUCHes), one PROBE a
//     round (prevoteProbes): a round's answers come from a majority of
//     many, and a round that falls short is followed by another, whose
//     grants add to its own;
//   - an election put off for the guard (the lease of the leader last
//     acknowledged may still run) waits, besides, by the node's rank among
//     the live candidates (electSkew), as the detector's alarm does: the
//     largest survivor pre-votes and claims as soon as the guard is over,
//     and the others follow its claim instead of all pre-voting at once;
//   - a leader stops re-sending a claim once a majority acknowledged it
//     (acksEnough, quorum_lease.go).
//
// None of these touches the lease argument (quorum.go): they decide who
// pre-votes and claims first, and when, never what a node acknowledges or
// how long its guard lasts; a wait by rank only comes on top of the guard.
// A 128-host LAN in quorum mode never converged on two cores without them:
// a crash cost about 170,000 election packets in the simulator (127 nodes
// pre-voting at once, each PROBE answered by 127 VOUCHes, and the ANSWERs
// of 127 ELECTIONs), and the leader re-sent each heartbeat to most of its
// followers.

// inHerd reports whether the herd rules apply: bully, with more than
// vouchers other members.
func (c *core) inHerd() bool { return c.cfg.Algorithm == AlgorithmBully && len(c.members) > vouchers }

// prevoteProbes is how many PROBEs a pre-vote's round sends: prevoteRounds,
// or one in a herd. With loss p on each packet, a round gets the answer
// of each voter with probability (1-p)²: 81 of a 128-host LAN's 127
// voters on average at p = 20 %, more than the 64 grants it needs.
func (c *core) prevoteProbes() int {
	if c.inHerd() {
		return 1
	}
	return prevoteRounds
}

// noteProbe counts a PROBE of another node about the leader this node is
// confirming.
func (c *core) noteProbe(m *wire.Message) {
	if c.st.confirming && c.leader != 0 && m.Leader == c.leader {
		c.st.othersProbed++
	}
}

// skipRound reports whether this node leaves out its next PROBE round
// (at least vouchers others probed since its last), and starts counting
// anew.
func (c *core) skipRound() bool {
	skip := c.inHerd() && c.st.othersProbed >= herdSkip
	c.st.othersProbed = 0
	return skip
}

// leaderVouch sends the leader's VOUCH v for a PROBE of node to: to it,
// or in a herd to all, at most one every probe interval.
func (c *core) leaderVouch(to NodeID, v wire.Message) {
	if !c.inHerd() {
		c.emit(Action{Kind: ActSend, To: to, Msg: v, Count: 1})
		return
	}
	if c.st.vouchedAll && c.now < c.st.vouchedAt+c.vouchEvery() {
		return
	}
	c.st.vouchedAll, c.st.vouchedAt = true, c.now
	c.emit(Action{Kind: ActBroadcast, Msg: v, Scope: ScopeAll, Count: len(c.members)})
}

// vouchEvery is how often, at most, a herd's leader sends a VOUCH to all:
// a tenth of ConfirmTimeout, five in the first half, where the PROBEs of
// a confirmation go out. Every follower that confirms hears each one,
// whoever asked; the rounds of one follower are closer (probeEvery), and
// a VOUCH to all for each would cost every member a packet to read.
func (c *core) vouchEvery() time.Duration {
	return max(c.cfg.ConfirmTimeout/10, time.Microsecond)
}

// herdState is the stability state of the herd rules.
type herdState struct {
	othersProbed int           // PROBEs of others about the leader since this node's last round
	vouchedAll   bool          // leader: a VOUCH went to all, at vouchedAt
	vouchedAt    time.Duration //
	// myVouchers and suspectSkew's rank (for leader rankLeader), kept
	// until the members or their keys change (membersChanged).
	vouchers   []NodeID
	vouchersOK bool
	rank       int
	rankOK     bool
	rankLeader NodeID
}

// membersChanged forgets what was derived from the members: a member
// joined, left or changed its key, or this node's own key changed.
func (h *herdState) membersChanged() { h.vouchersOK, h.rankOK = false, false }

// heardJustNow reports whether this node, in a cluster of more than
// vouchers+1 nodes (inHerd), heard its leader itself within the last
// heartbeat interval: a rival's later claim or a smaller node's ELECTION
// is then no reason to ask the leader again. Each such question is a
// confirmation of its own at every follower that heard the claim, and a
// LAN where rivals claim (a start-up under load) had every follower
// probing on every claim: O(n) confirmations per claim, the storm that
// kept 128 agents on two cores from ever agreeing. A follower that has
// not heard its leader for a heartbeat interval still asks, and its
// detector still runs.
func (c *core) heardJustNow() bool {
	return c.inHerd() && c.healthy() && c.now-c.st.heardSelf < c.cfg.HeartbeatInterval
}

// probeTargets: in a herd (inHerd) a PROBE goes, one packet each, to the
// leader asked about and to this node's vouchers (vouchesFor, computed
// here from the prober's side: members v with mix64(v, self) % n below
// vouchers), not by multicast to every member: a multicast PROBE costs
// every host of the LAN a packet to read, and many followers confirming
// at once made that n² (a few hundred PROBEs a second read by each of
// 128 agents). It reports false when the PROBE should go to all.
func (c *core) probeTargets(m wire.Message) bool {
	if !c.inHerd() {
		return false
	}
	sent := 0
	if m.Leader != 0 && m.Leader != c.self.ID {
		if _, ok := c.members[m.Leader]; ok {
			c.emit(Action{Kind: ActSend, To: m.Leader, Msg: m, Count: 1})
			sent++
		}
	}
	asked := 0
	for _, id := range c.myVouchers() {
		if asked == probeVouchers {
			break
		}
		if id != m.Leader {
			c.emit(Action{Kind: ActSend, To: id, Msg: m, Count: 1})
			sent++
			asked++
			if c.st.confirming {
				if c.st.asked == nil {
					c.st.asked, c.st.silent = map[NodeID]bool{}, map[NodeID]bool{}
				}
				c.st.asked[id] = true
			}
		}
	}
	return sent > 0
}

// herdSkip is how many PROBEs of others about its leader, since its last
// round, make a follower leave its next round out. A PROBE reaches a
// follower only when it is one of the prober's vouchers (probeTargets),
// about probeVouchers PROBEs a round in a herd: two of them mean that
// others, too, have stopped hearing the leader.
const herdSkip = 2

// probeVouchers is how many of its vouchers a prober asks in each round,
// besides the leader: in a crash nobody has news to give, and every
// packet of the herd is one a host must read (127 followers times nine
// packets a round made a 128-host failover's confirmations cost more than
// its election). With loss p on each packet a round then fails for all
// four with probability (1−(1−p)²)⁴, 1.7 % at p = 20 %, and a
// confirmation has confirmRounds rounds.
const probeVouchers = 3

// myVouchers lists, in ascending order, the members that vouch to this
// node's PROBEs: computed once per membership change (an O(n log n) pass,
// not one per PROBE).
func (c *core) myVouchers() []NodeID {
	h := &c.st.herdState
	if h.vouchersOK {
		return h.vouchers
	}
	h.vouchers, h.vouchersOK = h.vouchers[:0], true
	n := uint64(len(c.members))
	for id := range c.members {
		if id != c.self.ID && mix64(id, c.self.ID)%n < vouchers {
			h.vouchers = append(h.vouchers, id)
		}
	}
	slices.Sort(h.vouchers)
	return h.vouchers
}

// maxSkewRank caps the rank that suspectSkew counts: the last ranks
// wait SuspectAfter more, no longer.
const maxSkewRank = 16

// armSuspect arms the detector's alarm for at, put off by suspectSkew.
func (c *core) armSuspect(at time.Duration) {
	c.setTimer(TimerSuspect, at+c.suspectSkew())
}

// suspectSkew: in a herd, a follower's detector alarm is put off by its
// rank, as VRRP's backups skew their master-down timers by priority: r
// live candidates with a larger key than this node's, besides the leader,
// put it off min(r, maxSkewRank)·SuspectAfter/maxSkewRank (a witness or
// an observer, which never claims, by the most). The largest survivor
// confirms at once and claims; a follower whose detector suspects but
// whose alarm has not yet rung does not hear its leader (healthy is
// false), so it takes that claim as soon as it arrives and never probes.
// Without the skew, a crash of a 128-host LAN's leader sets all 127
// followers probing and electing at once. The alarm itself is put off (not rung and
// re-armed), so that the followers do not all wake at the same moment.
// The rank is counted again only when the members or the leader change.
func (c *core) suspectSkew() time.Duration {
	if !c.inHerd() {
		return 0
	}
	h := &c.st.herdState
	if !h.rankOK || h.rankLeader != c.leader {
		h.rankOK, h.rankLeader = true, c.leader
		r := maxSkewRank
		if c.cfg.Role.MayLead() {
			r = 0
			for id, k := range c.members {
				if id != c.leader && c.self.Less(k) && c.roleOf(id).MayLead() {
					if r++; r == maxSkewRank {
						break
					}
				}
			}
		}
		h.rank = min(r+c.unlisted(), maxSkewRank)
	}
	return time.Duration(h.rank) * c.cfg.LossWindow() / maxSkewRank
}

// unlisted is, in quorum mode, how many of the Quorum nodes besides this
// one and its leader its membership does not list yet; the herd's ranks
// (suspectSkew, electSkew) count them as larger. Right after a LAN
// starts, gossip has not told every node of every other: on a 128-host
// test bed the second largest node, which did not know the largest yet,
// ranked itself first, and with it a dozen others that lacked the nodes
// above them; they all pre-voted and claimed at once, an election storm
// of 5,000–6,000 packets and a second term. Counted as larger, an
// unknown node can only delay an election, never hasten one.
func (c *core) unlisted() int {
	if !c.q.on() {
		return 0
	}
	n := c.cfg.Quorum - 1 - len(c.members)
	if _, ok := c.members[c.leader]; c.leader != 0 && c.leader != c.self.ID && !ok {
		n--
	}
	return max(n, 0)
}

// electSkew is how long, in a herd in quorum mode, an election put off for
// the guard waits after the guard's end: the node's rank among the live
// candidates that may lead and are not left out of elections (the leader
// suspected is), as suspectSkew's, SuspectAfter/maxSkewRank a rank up to
// maxSkewRank, then a quarter of that a rank (a 128-node LAN's last rank
// waits 2.2 SuspectAfter). The ranks past maxSkewRank elect only when the
// largest survivors' claims are late or lost; had they all waited
// SuspectAfter, 112 pre-votes would go out at one instant, each a PROBE
// to every member, on a LAN whose hosts are slow to answer already. It is
// counted once an election (O(n)).
func (c *core) electSkew() time.Duration {
	if !c.q.on() || !c.inHerd() {
		return 0
	}
	r := len(c.members)
	if c.cfg.Role.MayLead() {
		r = 0
		for id, k := range c.members {
			if c.self.Less(k) && c.roleOf(id).MayLead() && !c.isExcluded(id) {
				r++
			}
		}
	}
	if c.cfg.Role.MayLead() {
		r += c.unlisted()
	}
	step := c.cfg.LossWindow() / maxSkewRank
	if r <= maxSkewRank {
		return time.Duration(r) * step
	}
	return maxSkewRank*step + time.Duration(r-maxSkewRank)*step/4
}
