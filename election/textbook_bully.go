package election

import (
	"github.com/lanleader/lanleader/wire"
)

// candidate phases.
type phase uint8

const (
	phaseNone      phase = iota
	phaseElecting        // ELECTION sent, waiting up to T for an ANSWER
	phaseAwaiting        // an ANSWER came, waiting for COORDINATOR
	phaseDeferring       // ScaledElection: waiting its rank's delay before ELECTION (scale_bully.go)
)

// Bully is the bully algorithm as a pure state machine. It never reads a
// clock, opens a socket or starts a goroutine: time comes in with every
// Step, and what must be done comes out as actions.
//
// What is not the election itself — heartbeats, terms, the detector,
// preemption, resign, conflicts — is the core every algorithm shares
// (core.go); this file is the election: ELECTION to the larger keys,
// ANSWER, and the waits T and for COORDINATOR.
//
// Concurrency: not safe for concurrent use; one owner (the agent's event
// loop, or the simulator) calls Step.
type Bully struct {
	core

	phase phase
	// committed: this node answered an ELECTION of term committedTerm
	// during its current election, so it has taken that election over and
	// finishes it even against a smaller leader it would not preempt,
	// unless that leader's claim is later than the ELECTION (the result
	// of that election, or of a later one).
	committed     bool
	committedTerm uint64
	// answered: this node answered an ELECTION of answeredTerm while it
	// heard its leader, and asks the leader first; the election it runs
	// if the leader does not answer has taken that one over (commit).
	answered     bool
	answeredTerm uint64
	// told: as leader, this node answered an ELECTION of its own term
	// from these nodes with its claim, at term toldTerm. A set, not the
	// last one: with one, three candidates that could not accept the
	// claim (they had recognised a larger leader of this term, since gone)
	// took turns and none ever counted as asking twice (the role
	// schedules' seed 133).
	told     map[NodeID]bool
	toldTerm uint64

	// scale is the state of the O(n) election (scale_bully.go).
	scale scaleState
}

// NewBully returns a machine for cfg after filling its defaults and
// validating it. The machine does nothing until it is given EvStart.
// cfg.Algorithm must be empty or AlgorithmBully.
func NewBully(cfg Config) (*Bully, error) {
	if cfg.Algorithm != "" && cfg.Algorithm != AlgorithmBully {
		return nil, errNotAlgorithm(cfg.Algorithm, AlgorithmBully)
	}
	b := &Bully{}
	if err := b.core.init(cfg, b); err != nil {
		return nil, err
	}
	return b, nil
}

// Algorithm returns AlgorithmBully.
func (b *Bully) Algorithm() string { return AlgorithmBully }

// onTimer handles the election's two waits.
func (b *Bully) onTimer(t TimerKind) {
	switch t {
	case TimerAnswer:
		if b.state == StateCandidate && b.phase == phaseDeferring {
			b.sendElection()
			return
		}
		// Step 2: no ANSWER within T, this node is the coordinator.
		if b.state == StateCandidate && b.phase == phaseElecting {
			b.becomeLeader()
		}
	case TimerCoordinator:
		// Step 3: an ANSWER came but no COORDINATOR: a new election.
		if b.state == StateCandidate && b.phase == phaseAwaiting {
			b.startElection()
		}
	}
}

func (b *Bully) onMessage(m *wire.Message, from Key) {
	switch m.Type {
	case wire.TypeElection:
		b.onElection(from, m.Term)
	case wire.TypeAnswer:
		b.onAnswer(from)
	}
}

// onElection is step 4: ELECTION from a smaller key is answered, and the
// node runs its own election unless one is already running. ELECTION from
// a larger key is not for this node (multicast reaches every member).
// What step 4 means depends on the node's role: electionToLeader,
// electionToStarting, electionToCandidate and electionToFollower.
func (b *Bully) onElection(from Key, term uint64) {
	if b.self.Less(from) {
		b.heardLarger()
		return
	}
	if !from.Less(b.self) || b.holding() || b.out() {
		return
	}
	switch b.state {
	case StateLeader:
		b.electionToLeader(from, term)
	case StateCandidate:
		b.answer(from.ID)
		b.commit(term)
	case StateStarting:
		b.electionToStarting(from, term)
	default:
		b.answer(from.ID)
		b.electionToFollower(from, term)
	}
}

// electionToLeader: a leader's election would end with itself. A sender
// that is behind only needs to hear who leads. So does, at first, one
// that has seen our term (QuietLeader): it missed our heartbeats, or
// cannot hear at all, and a fresh term would only make everyone follow
// anew (the textbook takes one at once). If it elects again at our term,
// it cannot accept our claim (it recognised a larger leader of this term,
// now gone): the election ends here, under a fresh term everyone accepts.
func (b *Bully) electionToLeader(from Key, term uint64) {
	if term < b.term || term == b.term && b.cfg.QuietLeader && (b.toldTerm != term || !b.told[from.ID]) {
		b.tellElector(from.ID)
		if term == b.term {
			if b.toldTerm != term || b.told == nil {
				b.told, b.toldTerm = make(map[NodeID]bool), term
			}
			b.told[from.ID] = true
		}
		return
	}
	b.becomeLeader()
	b.send(from.ID, wire.TypeAnswer)
}

// electionToStarting: a node in its listen period that may not take over
// from a smaller leader yet (nopreempt, or its preempt delay) does not
// take the election over either (ListedPreemption): its ANSWER would
// leave the others waiting for its claim at the end of that period. They
// elect among themselves; it follows the result. Otherwise it answers and
// elects as a follower does.
func (b *Bully) electionToStarting(from Key, term uint64) {
	if b.cfg.ListedPreemption && !b.mayPreempt(from) {
		return
	}
	b.answer(from.ID)
	b.electionToFollower(from, term)
}

// electionToFollower: a node that is not electing answered, and runs its
// own election (step 4), but for two cases of the hardening.
func (b *Bully) electionToFollower(from Key, term uint64) {
	// An ELECTION from a term before the leadership this node follows was
	// sent before its sender heard of that leadership, whose COORDINATOR
	// is on its way to it. Running an election of our own would only
	// repeat the one just finished.
	if b.leader != 0 && term < b.term {
		return
	}
	// StickyLeader: a follower that hears its leader takes an ELECTION
	// from a key smaller than the leader's (one that cannot be taking over
	// from it) as a reason to ask the leader (harden_confirm.go), not as
	// proof of its death: the sender may be unable to hear. It elects
	// (step 4) only if the leader does not answer within ConfirmTimeout.
	if b.cfg.StickyLeader && b.healthy() && from.Less(b.leaderKey()) {
		b.answered, b.answeredTerm = true, max(term, b.answeredTerm)
		if !b.heardJustNow() {
			b.confirmSuspicion(true)
		}
		return
	}
	b.startElection()
	if b.state == StateCandidate {
		b.commit(term)
	}
}

// commit records that this node answered an ELECTION of the given term.
func (b *Bully) commit(term uint64) {
	if !b.committed || term > b.committedTerm {
		b.committedTerm = term
	}
	b.committed = true
}

func (b *Bully) onAnswer(from Key) {
	if !b.self.Less(from) || !b.roleOf(from.ID).MayLead() {
		return
	}
	b.rtt.answered(&b.rtt.electAt, b.now, b.cfg.LossWindow())
	if b.cfg.ScaledElection {
		b.heardLarger()
		return
	}
	if b.state != StateCandidate || b.phase != phaseElecting {
		return
	}
	b.await()
}

// await: a larger node answered (or, with ScaledElection, is electing): wait
// for COORDINATOR.
func (b *Bully) await() {
	b.phase = phaseAwaiting
	b.cancelTimer(TimerAnswer)
	b.setTimer(TimerCoordinator, b.now+b.cfg.CoordinatorTimeout)
}

// overrules: a candidate that answered an ELECTION has taken that
// election over (textbook step 4) and finishes it, unless the claim is
// later than the ELECTION it answered.
func (b *Bully) overrules(_ Key, term uint64) bool {
	return b.committed && term <= b.committedTerm
}

// memberDown: the last larger node we were waiting for is gone: no need
// to wait T.
func (b *Bully) memberDown(_ NodeID, wasLeader bool) {
	if wasLeader {
		return
	}
	if b.state == StateCandidate && b.running() && b.largerCount() == 0 && b.now >= b.settleUntil {
		b.becomeLeader()
	}
}

// leaderLost: an election is already running (an ELECTION from a smaller
// node started it): it goes on, without waiting for the suspect.
func (b *Bully) leaderLost() {
	if b.running() && b.largerCount() == 0 && b.now >= b.settleUntil {
		b.becomeLeader()
	}
}

// elect is step 1: ELECTION to every live node with a larger key, then
// wait T for an ANSWER. With no such node the wait is pointless and this
// node is the coordinator at once (the textbook's best case).
func (b *Bully) elect() {
	b.cancelTimer(TimerCoordinator)
	b.setState(StateCandidate)
	if b.answered {
		b.commit(b.answeredTerm)
		b.answered = false
	}
	n := b.largerCount()
	if n == 0 && b.now >= b.settleUntil {
		b.becomeLeader()
		return
	}
	if n > 0 && b.deferElection(n) {
		return
	}
	b.sendElection()
}

// sendElection sends ELECTION to the live larger keys, if any, and waits
// T for an ANSWER (and, just after a start, at least until settleUntil).
func (b *Bully) sendElection() {
	n := b.largerCount()
	if n == 0 && b.now >= b.settleUntil {
		b.becomeLeader()
		return
	}
	b.phase = phaseElecting
	b.rtt.electAt = 0
	if n > 0 {
		b.broadcast(wire.TypeElection, ScopeLarger, n)
		sent(&b.rtt.electAt, b.now)
	}
	b.setTimer(TimerAnswer, max(b.now+b.answerTimeout(), b.settleUntil))
}

// running reports whether this node's election has not yet heard of a
// larger live node (it waits T for an ANSWER, or its turn to send
// ELECTION).
func (b *Bully) running() bool { return b.phase == phaseElecting || b.phase == phaseDeferring }

// stop ends this node's election: no more waiting for ANSWER or
// COORDINATOR.
func (b *Bully) stop() {
	b.phase = phaseNone
	b.answered = false
	b.cancelTimer(TimerAnswer)
	b.cancelTimer(TimerCoordinator)
}

// left: the node is no longer a candidate; what it answered in its
// election is over.
func (b *Bully) left() {
	b.phase = phaseNone
	b.committed = false
}

// largerCount counts the live members with a larger key that are not
// suspected or holding off.
func (b *Bully) largerCount() int {
	n := 0
	for id, k := range b.members {
		if !b.self.Less(k) {
			continue
		}
		if b.isExcluded(id) || !b.roleOf(id).MayLead() {
			continue
		}
		n++
	}
	return n
}
