package election

import (
	"time"

	"github.com/lanleader/lanleader/wire"
)

// The PROBE herd. When the leader dies every follower's detector fires at
// once (they were fed the same last heartbeat) and each confirms with
// probeRounds PROBEs to all: 5(n−1) multicast packets, n−1 copies each, the
// largest cost of a failover once the election is O(n), and what a
// 1,024-node failover's CPU went to. In a cluster of more than vouchers+1
// nodes, with bully outside quorum mode (thinned, vouchers.go):
//
//   - the leader answers a PROBE with one VOUCH to all (at most one every
//     probe interval) instead of one to the prober: every follower that
//     confirms hears it, whoever asked;
//   - a follower that heard at least vouchers PROBEs about its leader from
//     others since its last round leaves out its next round: the leader,
//     if alive, answers them to all.
//
// A follower that confirms alone (a loss of its own) hears no herd and
// sends every round, as before; in a herd its chance a round is at least
// as good (one of many PROBEs reaches the leader, whose one VOUCH then
// reaches it with probability 1−p, against (1−p)² for its own round trip).
// Smaller clusters, quorum mode (whose VOUCH is a pre-vote) and the ring
// family are as before.

// inHerd reports whether the herd rules apply: bully outside quorum
// mode (thinned), with more than vouchers other members.
func (c *core) inHerd() bool { return c.thinned() && len(c.members) > vouchers }

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
	skip := c.inHerd() && c.st.othersProbed >= vouchers
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
	if c.st.vouchedAll && c.now < c.st.vouchedAt+c.probeEvery() {
		return
	}
	c.st.vouchedAll, c.st.vouchedAt = true, c.now
	c.emit(Action{Kind: ActBroadcast, Msg: v, Scope: ScopeAll, Count: len(c.members)})
}

// herdState is the stability state of the herd rules.
type herdState struct {
	othersProbed int           // PROBEs of others about the leader since this node's last round
	vouchedAll   bool          // leader: a VOUCH went to all, at vouchedAt
	vouchedAt    time.Duration //
}
