package election

import "github.com/lanleader/lanleader/internal/planted"

// Hardening is what the agent adds to the algorithms of the seeds for a
// real LAN, one switch a mechanism, as raft names its CheckQuorum and
// PreVote. The zero value runs the algorithms as the seeds describe them
// (a perfect detector, reliable delivery, delays within T/2): the
// step-by-step tests of the seeds and the message counts of the texts
// use it. The agent runs Hardened(); DefaultConfig sets it.
type Hardening struct {
	// ConfirmSuspicion makes the detector's alarm a question
	// (harden_confirm.go): the follower asks the leader and its vouchers
	// with PROBE before it suspects, and elects only if no VOUCH shows
	// the leader alive within ConfirmTimeout. Off: the detector's word is
	// final.
	ConfirmSuspicion bool
	// StickyLeader keeps a follower that hears its leader with it: a
	// claim or an ELECTION from a key smaller than the leader's (one that
	// could not take over from it, a node that cannot hear) is a reason
	// to ask the leader, not to follow or elect; and membership's word
	// that the leader is dead does not outweigh its heartbeats. Off: the
	// textbook judges claims by term and key alone and runs its own
	// election on every ELECTION it answers.
	StickyLeader bool
	// CheckClaimant makes a follower check a claimant that would replace
	// a leader it still hears with a PROBE before it follows it: a node
	// that cannot hear claims again and again (askClaimant). Default mode
	// only (quorum mode's pre-vote does the same).
	CheckClaimant bool
	// QuietLeader: a leader that hears an ELECTION of its own term from a
	// node it has not told yet tells that node who leads (ANSWER and its
	// claim) instead of taking a fresh term at once, as the textbook's
	// leader does, which would make everyone follow anew.
	QuietLeader bool
	// ListedPreemption: a node takes over only from a leader that
	// membership lists (its driver learns from membership whether the
	// displaced job still runs), and a node in its listen period that may
	// not take over yet does not take an ELECTION over either.
	ListedPreemption bool
	// ScaledElection is bully in O(n) messages (scale_bully.go): a
	// follower waits its rank's delay before its ELECTION, ANSWERs and a
	// leader's reply go to all, at most one a rank step, and a smaller
	// candidate that hears a larger node elect waits for its COORDINATOR.
	ScaledElection bool
	// AdaptiveWaits stretches bully's confirmation and answer waits to
	// the round trips this node lives (harden_rtt.go). The ring family
	// keeps its fixed waits.
	AdaptiveWaits bool
	// PassByAcked: a ring hop passes a suspected leader by only when it
	// did not acknowledge the hop; off, a suspected leader is passed by at
	// once (the texts' detector is perfect).
	PassByAcked bool
	// PreVote: in quorum mode a node makes sure that a majority would
	// hear of it and keeps no live leader before it elects.
	PreVote bool
	// SplitVoteRetry: in quorum mode a leader whose claim waits for its
	// majority and hears a smaller claimant of its own term holding votes
	// claims again at once under a fresh term.
	SplitVoteRetry bool
	// ThinAcks: in a quorum-mode herd of at least thinAcksFrom nodes a
	// follower acknowledges every other heartbeat.
	ThinAcks bool
}

// Hardened is every mechanism on: the machine the agent runs.
func Hardened() Hardening {
	return Hardening{
		ConfirmSuspicion: true,
		StickyLeader:     true,
		CheckClaimant:    true,
		QuietLeader:      true,
		ListedPreemption: true,
		ScaledElection:   true,
		AdaptiveWaits:    true,
		PassByAcked:      true,
		PreVote:          true,
		SplitVoteRetry:   true,
		ThinAcks:         true,
	}
}

// planted returns the bugs planted in c, none when c.Planted is nil.
func (c *Config) planted() planted.Election {
	if c.Planted == nil {
		return planted.Election{}
	}
	return *c.Planted
}
