package election

import (
	"time"

	"github.com/lanleader/lanleader/wire"
)

// The O(n) election: bully as the agent runs it (Hardening.ScaledElection).
//
// On a LAN every follower's detector was fed the same last heartbeat, so
// every follower notices a crash at once. The textbook then costs O(n²):
// each of the n−1 survivors sends ELECTION to the keys above it, and each
// of those answers every smaller sender, (n−1)(n−2)/2 ANSWERs even when
// every ELECTION is one multicast packet (4,031 messages at n = 64). Three
// changes keep the outcome (the largest live candidate leads) and the
// latency of the common case (the largest survivor leads at once, as in
// the textbook), and bring the packets of a failover to O(n):
//
//  1. Rank deferral. A candidate with r live larger keys waits
//     min(r, deferSlots)·T/deferStepDiv before it sends its ELECTION (the
//     largest survivor, r = 0, does not wait: it leads at once). While it
//     waits, a COORDINATOR ends its election (the usual case: the largest
//     survivor claimed), and so does an ELECTION or an ANSWER of a larger
//     key: a larger node is electing, and its result is larger than this
//     node; it waits for COORDINATOR as after an ANSWER. The wait is at
//     most T/2, and only for nodes that cannot win.
//  2. One ANSWER for all. An ANSWER is one multicast packet (to all, not
//     to the ELECTION's sender) and a node sends at most one every rank
//     step (T/16): it silences every smaller candidate, including those
//     whose ELECTION it has not received yet, or never will. The limit
//     loses no answer: an ELECTION that arrives less than a step after
//     this node's last ANSWER was sent by a node that had been a candidate
//     for at least a step (its deferral), so since before that ANSWER
//     left; that ANSWER reached it as a candidate and silenced it, or is
//     its answer.
//  3. One claim for all. A leader that answers an ELECTION (its sender
//     missed its claims) sends its ANSWER and its claim to all, under the
//     same limit: the smaller nodes the ELECTION silenced follow at once
//     instead of after CoordinatorTimeout or the next heartbeat.
//
// Quorum mode defers and limits its ANSWERs only in a herd (inHerd: more
// than vouchers other members): there every candidate whose pre-vote won
// at the same moment (a start of the whole LAN) elected at once, and the
// ANSWERs of their ELECTIONs were O(n²) multicasts (8,128 of them in the
// simulator at 128 nodes). A smaller quorum-mode cluster sends an ANSWER,
// still to all, for every ELECTION; everywhere in quorum mode the
// leader's replies go to the ELECTION's sender alone. None of this
// touches a vote: a claim still leads only with a majority's
// acknowledgements (quorum.go).
//
// A silence is not remembered past the election it came in: a node whose
// detector fires a little after a larger node answered waits its rank's
// delay and sends its ELECTION. Remembering it would make that node wait
// CoordinatorTimeout for a larger node that may have died since (the
// seeds' worked example of a second failure during the election), where
// the textbook waits T.
//
// A node whose larger peers fail to conclude waits CoordinatorTimeout and
// elects again, as in the textbook, so a lost or lying silence costs time,
// never the outcome.

// deferSlots and deferStepDiv bound rank deferral: T/16 a rank, at most 8
// ranks (T/2: 25ms at the default T). A slot is several packet delays of a
// LAN (well under a millisecond), so a larger node's ELECTION reaches the
// smaller ones before their own turn comes.
const (
	deferSlots   = 8
	deferStepDiv = 16
)

// scaleState is the O(n) election's state of a bully machine.
type scaleState struct {
	// answeredAt: when this node last multicast an ANSWER (answered;
	// not counted in quorum mode).
	answered   bool
	answeredAt time.Duration
}

// rankStep is the deferral of one rank.
func rankStep(cfg *Config) time.Duration { return cfg.AnswerTimeout / deferStepDiv }

// rankDelay is how long a candidate with rank live larger keys defers
// its ELECTION.
func rankDelay(cfg *Config, rank int) time.Duration {
	return time.Duration(min(rank, deferSlots)) * rankStep(cfg)
}

// deferElection starts this node's election in the O(n) way, given rank
// (> 0) live larger keys: it waits its rank's delay before sending
// ELECTION. It reports false without ScaledElection (the caller sends ELECTION at
// once), and in quorum mode outside a herd, whose pre-votes (harden_confirm.go)
// space the few candidates out.
func (b *Bully) deferElection(rank int) bool {
	if !b.cfg.ScaledElection || b.q.on() && !b.inHerd() {
		return false
	}
	b.phase = phaseDeferring
	b.setTimer(TimerAnswer, b.now+rankDelay(&b.cfg, rank))
	return true
}

// heardLarger: an ELECTION or ANSWER of a larger key arrived. With
// ScaledElection, a candidate still waiting to send its ELECTION, or
// waiting for an ANSWER, now waits for COORDINATOR: a larger node is
// electing.
func (b *Bully) heardLarger() {
	if b.cfg.ScaledElection && b.state == StateCandidate && b.running() {
		b.await()
	}
}

// answer answers an ELECTION of node to (step 4): without ScaledElection one
// unicast ANSWER to it; otherwise one multicast ANSWER to all, unless one
// left less than a rank step ago (mayAnswer).
func (b *Bully) answer(to NodeID) {
	if !b.cfg.ScaledElection {
		b.send(to, wire.TypeAnswer)
		return
	}
	if b.mayAnswer() {
		b.broadcast(wire.TypeAnswer, ScopeAll, len(b.members))
	}
}

// mayAnswer reports whether this node may multicast an ANSWER now, and
// if so counts it: at most one every rank step, but in quorum mode
// outside a herd (which does not defer).
func (b *Bully) mayAnswer() bool {
	if b.q.on() && !b.inHerd() {
		return true
	}
	if b.scale.answered && b.now < b.scale.answeredAt+rankStep(&b.cfg) {
		return false
	}
	b.scale.answered, b.scale.answeredAt = true, b.now
	return true
}

// tellElector is a leader's reply to an ELECTION of node to from behind
// (step 4 for a node that leads): ANSWER, then its claim. Without
// ScaledElection, and in quorum mode (whose claim tellLeader sends), both go to that
// node; otherwise both go to all, under mayAnswer's limit, so that the
// smaller nodes that the ELECTION silenced (heardLarger) follow at once
// instead of after CoordinatorTimeout or the next heartbeat.
func (b *Bully) tellElector(to NodeID) {
	if !b.cfg.ScaledElection || b.q.on() {
		b.send(to, wire.TypeAnswer)
		b.tellLeader(to)
		return
	}
	if b.mayAnswer() {
		b.broadcast(wire.TypeAnswer, ScopeAll, len(b.members))
		b.broadcast(wire.TypeCoordinator, ScopeAll, len(b.members))
	}
}
