package election

import (
	"time"

	"github.com/lanleader/lanleader/detector"
	"github.com/lanleader/lanleader/wire"
)

// suspicionMemory: a suspected leader is left out of elections until it
// speaks again, membership reports it (back), or this many SuspectAfter
// have passed (3s by default): long enough for the elections that follow
// its failure, short enough that a node that lost leadership and now
// follows in silence is awaited again soon.
const suspicionMemory = 10

// Terms from the network are bounded: a message whose term is above
// MaxTerm, or more than MaxTermJump above every term this node has seen, is
// ignored. Terms grow by one an election, so neither happens in a real
// cluster; the bounds keep a corrupt packet from wrapping terms around or
// moving them out of everyone's reach at once. (A hostile sender on the LAN
// is stopped by authentication, not by these bounds.)
const (
	MaxTerm     = 1 << 63
	MaxTermJump = 1 << 32
)

// exclusion leaves a member out of the larger set until a time.
type exclusion struct {
	until time.Duration
	// resigned: it promised silence for its hold-off, so hearing from it
	// does not end the exclusion; a suspicion ends when it speaks.
	resigned bool
}

// candidate phases.
type phase uint8

const (
	phaseNone     phase = iota
	phaseElecting       // ELECTION sent, waiting up to T for an ANSWER
	phaseAwaiting       // an ANSWER came, waiting for COORDINATOR
)

// Bully is the bully algorithm as a pure state machine. It never reads a
// clock, opens a socket or starts a goroutine: time comes in with every
// Step, and what must be done comes out as actions.
//
// Concurrency: not safe for concurrent use; one owner (the agent's event
// loop, or the simulator) calls Step.
type Bully struct {
	cfg  Config
	self Key
	det  detector.Detector

	state State
	phase phase
	// committed: this node answered an ELECTION of term committedTerm
	// during its current election, so it has taken that election over and
	// finishes it even against a smaller leader it would not preempt,
	// unless that leader's claim is later than the ELECTION (the result
	// of that election, or of a later one).
	committed     bool
	committedTerm uint64

	// term is the term of the leadership this node last recognised (or
	// holds); termLeader and termLeaderKey name that leadership and stay
	// set while the node is leaderless, so that a second claim to the same
	// term is accepted only from a larger key.
	term          uint64
	termLeader    NodeID
	termLeaderKey Key
	// maxSeen is the highest term seen in any message; a new coordinator
	// takes max(term, maxSeen)+1.
	maxSeen uint64

	// leader is the node followed (or this node), 0 while no leader is
	// known. When it is not 0 it is termLeader, whose key is termLeaderKey.
	leader NodeID

	members  map[NodeID]Key       // live members other than this node
	excluded map[NodeID]exclusion // suspected or resigned: not awaited in elections for a while

	// startedOnce: EvStart was handled. A machine starts once; a node that
	// restarts gets a new machine (its memory is gone).
	startedOnce bool
	started     time.Duration
	holdUntil   time.Duration // resign hold-off: no answers, no elections before this
	// settleUntil: before this time the node's view may miss an election
	// that is already under way (it has just started, or ignored everyone
	// during a hold-off), so even with no larger member it does not claim
	// before then: a claim may be in flight.
	settleUntil time.Duration
	conflict    bool

	armed    [numTimers]bool
	deadline [numTimers]time.Duration

	// reportedLeader and reportedTerm: what the last ActBecomeLeader or
	// ActFollow told the driver.
	reportedLeader NodeID
	reportedTerm   uint64

	now  time.Duration
	acts []Action
}

// NewBully returns a machine for cfg after filling its defaults and
// validating it. The machine does nothing until it is given EvStart.
func NewBully(cfg Config) (*Bully, error) {
	cfg.fill()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	det := cfg.Detector
	if det == nil {
		det = detector.NewFixed(detector.FixedConfig{Timeout: cfg.SuspectAfter})
	}
	return &Bully{
		cfg:      cfg,
		self:     Key{Priority: cfg.Priority, ID: cfg.ID},
		det:      det,
		state:    StateStarting,
		members:  make(map[NodeID]Key),
		excluded: make(map[NodeID]exclusion),
	}, nil
}

// Config returns the machine's configuration with its defaults filled in.
func (b *Bully) Config() Config { return b.cfg }

// Status returns the machine's current view.
func (b *Bully) Status() Status {
	st := Status{Self: b.self, State: b.state, Term: b.term, Leader: b.leader}
	if b.leader != 0 {
		st.LeaderKey = b.termLeaderKey
	}
	return st
}

// Members returns the keys of the live members the machine knows, other
// than itself, in no particular order, appended to dst.
func (b *Bully) Members(dst []Key) []Key {
	for _, k := range b.members {
		dst = append(dst, k)
	}
	return dst
}

// Step feeds one event that happened at now (on this node's monotonic
// clock) and returns what the driver must do, in order. The returned
// slice is reused by the next Step.
func (b *Bully) Step(now time.Duration, ev Event) []Action {
	b.acts = b.acts[:0]
	if now > b.now {
		b.now = now
	}
	switch ev.Kind {
	case EvStart:
		if !b.startedOnce {
			b.startedOnce = true
			b.start()
		}
	case EvMessage:
		b.onMessage(&ev.Msg)
	case EvTimer:
		if ev.Timer < numTimers && b.armed[ev.Timer] && b.now >= b.deadline[ev.Timer] {
			b.armed[ev.Timer] = false
			b.onTimer(ev.Timer)
		}
	case EvMemberUp:
		b.onMemberUp(ev.Member)
	case EvMemberDown:
		b.onMemberDown(ev.Member.ID)
	case EvSuspectLeader:
		if b.leader != 0 && b.leader != b.self.ID {
			b.suspectLeader()
		}
	case EvResign:
		if b.state == StateLeader {
			b.resign()
		}
	case EvSetPriority:
		b.onSetPriority(ev.Priority)
	case EvConflict:
		b.onConflict(ev.On)
	}
	return b.acts
}

// --- lifecycle -------------------------------------------------------------

// start begins the listen period: a node that has just (re)started first
// listens for a leader, and runs an election when none speaks up.
func (b *Bully) start() {
	b.started = b.now
	b.settleUntil = b.now + b.cfg.StartupWait
	b.setState(StateStarting)
	b.setTimer(TimerStartup, b.now+b.cfg.StartupWait)
	if b.cfg.Preempt && b.cfg.PreemptDelay > 0 {
		b.setTimer(TimerPreempt, b.now+b.cfg.PreemptDelay)
	}
}

func (b *Bully) onTimer(t TimerKind) {
	switch t {
	case TimerStartup:
		if b.state == StateStarting && b.leader == 0 {
			b.startElection()
		}
	case TimerAnswer:
		// Step 2: no ANSWER within T, this node is the coordinator.
		if b.state == StateCandidate && b.phase == phaseElecting {
			b.becomeLeader()
		}
	case TimerCoordinator:
		// Step 3: an ANSWER came but no COORDINATOR: a new election.
		if b.state == StateCandidate && b.phase == phaseAwaiting {
			b.startElection()
		}
	case TimerHeartbeat:
		if b.state == StateLeader {
			b.broadcast(wire.TypeHeartbeat, ScopeAll, len(b.members))
			b.setTimer(TimerHeartbeat, b.now+b.cfg.HeartbeatInterval)
		}
	case TimerSuspect:
		if b.leader != 0 && b.leader != b.self.ID {
			if b.det.Suspect(b.now) {
				b.suspectLeader()
			} else if at, ok := b.det.SuspectAt(); ok {
				b.setTimer(TimerSuspect, at)
			}
		}
	case TimerPreempt, TimerHoldoff:
		b.reconsider()
	}
}

// reconsider runs when a hold-off or the preempt delay ends: a node with
// no leader elects, a node larger than its leader takes over.
func (b *Bully) reconsider() {
	if b.holding() || b.conflict || b.state == StateCandidate || b.state == StateLeader {
		return
	}
	if b.leader == 0 {
		if b.state != StateStarting {
			b.startElection()
		}
		return
	}
	b.maybePreempt()
}

// --- messages --------------------------------------------------------------

func (b *Bully) onMessage(m *wire.Message) {
	if m.From == b.self.ID || m.From == 0 || m.Term > MaxTerm || m.Term > max(b.term, b.maxSeen)+MaxTermJump {
		return
	}
	if m.Term > b.maxSeen {
		b.maxSeen = m.Term
	}
	k := Key{Priority: m.Priority, ID: m.From}
	if _, ok := b.members[k.ID]; ok {
		b.members[k.ID] = k
	}
	// It speaks, so it is no longer suspected; a resign hold-off is a
	// promise of silence, so it stands until it ends.
	if x, ok := b.excluded[k.ID]; ok && !x.resigned {
		delete(b.excluded, k.ID)
	}
	if b.state == StateLeader && m.Term > b.term && (m.Type == wire.TypeAnswer || m.Type == wire.TypeResign) {
		// Someone has seen a later term than ours (a leader that has since
		// died): our claims would look stale to it. Lead on under a fresh
		// term so that everyone can follow.
		b.becomeLeader()
	}
	switch m.Type {
	case wire.TypeElection:
		b.onElection(k, m.Term)
	case wire.TypeAnswer:
		b.onAnswer(k)
	case wire.TypeCoordinator, wire.TypeHeartbeat:
		b.onClaim(k, m.Term)
	case wire.TypeResign:
		b.onResign(k, m.Term)
	}
}

// onElection is step 4: ELECTION from a smaller key is answered, and the
// node runs its own election unless one is already running. ELECTION from
// a larger key is not for this node (multicast reaches every member).
func (b *Bully) onElection(from Key, term uint64) {
	if !from.Less(b.self) || b.holding() || b.conflict {
		return
	}
	if b.state == StateLeader {
		// A leader's election would end with itself. A sender that is
		// behind only needs to hear who leads. A sender that has seen our
		// term and still elects either suspects us or cannot accept our
		// claim (it recognised a larger leader for this term, now gone):
		// the election ends here, under a fresh term everyone accepts.
		if term < b.term {
			b.send(from.ID, wire.TypeAnswer)
			b.send(from.ID, wire.TypeCoordinator)
		} else {
			b.becomeLeader()
			b.send(from.ID, wire.TypeAnswer)
		}
		return
	}
	b.send(from.ID, wire.TypeAnswer)
	switch b.state {
	case StateCandidate:
		b.commit(term)
	default:
		// Hardening: an ELECTION from a term before the leadership this
		// node follows was sent before its sender heard of that
		// leadership, whose COORDINATOR is on its way to it. Running an
		// election of our own would only repeat the one just finished.
		if b.leader != 0 && term < b.term {
			return
		}
		b.startElection()
		if b.state == StateCandidate {
			b.commit(term)
		}
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
	if b.state != StateCandidate || b.phase != phaseElecting || !b.self.Less(from) {
		return
	}
	b.phase = phaseAwaiting
	b.cancelTimer(TimerAnswer)
	b.setTimer(TimerCoordinator, b.now+b.cfg.CoordinatorTimeout)
}

// onClaim handles COORDINATOR and HEARTBEAT, both a claim to lead with a
// term. A higher term wins; on an equal term the larger key wins; a node
// never recognises two leaders of one term unless the second is larger.
func (b *Bully) onClaim(from Key, term uint64) {
	accept := term > b.term ||
		term == b.term && (b.termLeader == 0 || from.ID == b.termLeader || b.termLeaderKey.Less(from))
	if !accept {
		if b.state == StateLeader {
			// A stale or smaller leader: tell it who leads now.
			b.send(from.ID, wire.TypeCoordinator)
		}
		return
	}
	if b.state == StateLeader && b.cfg.Preempt && from.Less(b.self) {
		// A smaller node claims a later term: we would follow it and at
		// once take over again. Lead on under a term above its own
		// instead, without stepping down in between.
		b.becomeLeader()
		return
	}
	if b.state == StateCandidate && from.Less(b.self) && (b.committed && term <= b.committedTerm || b.mayPreempt(from)) {
		// Our own election takes over from this smaller leader (we
		// preempt it, or we answered an ELECTION and so took the election
		// over, textbook step 4): note its claim, keep electing.
		if b.leader != from.ID || b.term != term {
			b.det.Reset()
		}
		b.term = term
		b.termLeader, b.termLeaderKey = from.ID, from
		b.leader = from.ID
		b.observeLeader()
		return
	}
	b.follow(from, term)
	b.maybePreempt()
}

func (b *Bully) onResign(from Key, term uint64) {
	// The resigner stays out of elections for its hold-off, counted from
	// when it sent RESIGN. Stop leaving it out a little earlier (T, which
	// is more than one packet delay) so that it is never left out after it
	// may have come back: a node that came back is always awaited.
	if _, ok := b.members[from.ID]; ok || from.ID == b.leader {
		b.exclude(from.ID, exclusion{until: b.now + b.cfg.ResignHoldoff - b.cfg.AnswerTimeout, resigned: true})
	}
	if from.ID == b.leader && term >= b.term {
		b.suspectLeader()
	}
}

// --- membership --------------------------------------------------------------

func (b *Bully) onMemberUp(k Key) {
	if k.ID == b.self.ID || k.ID == 0 {
		return
	}
	b.members[k.ID] = k
	// Back (or never gone): await it in elections again.
	if x, ok := b.excluded[k.ID]; ok && !x.resigned {
		delete(b.excluded, k.ID)
	}
	// The key of the leadership followed follows membership; that of a
	// past one stays as it was recognised.
	if k.ID == b.leader {
		b.termLeaderKey = k
		b.maybePreempt()
	}
}

func (b *Bully) onMemberDown(id NodeID) {
	if id == b.self.ID || id == 0 {
		return
	}
	delete(b.members, id)
	delete(b.excluded, id)
	if id == b.leader {
		b.suspectLeader()
		return
	}
	// The last larger node we were waiting for is gone: no need to wait T.
	if b.state == StateCandidate && b.phase == phaseElecting && b.largerCount() == 0 && b.now >= b.settleUntil {
		b.becomeLeader()
	}
}

func (b *Bully) onSetPriority(p uint16) {
	if p == b.self.Priority {
		return
	}
	b.self.Priority = p
	if b.state == StateLeader {
		b.termLeaderKey = b.self
		// Tell everyone now rather than at the next heartbeat, so that a
		// larger node can take over at once.
		b.broadcast(wire.TypeHeartbeat, ScopeAll, len(b.members))
		return
	}
	b.maybePreempt()
}

// onConflict: while another live node has our node_id, neither may lead.
func (b *Bully) onConflict(on bool) {
	if on == b.conflict {
		return
	}
	b.conflict = on
	if on {
		if b.state == StateLeader {
			b.broadcast(wire.TypeResign, ScopeAll, len(b.members))
			b.cancelTimer(TimerHeartbeat)
			b.leader = 0
			b.emit(Action{Kind: ActFollow, Term: b.term})
		}
		b.cancelTimer(TimerAnswer)
		b.cancelTimer(TimerCoordinator)
		b.cancelTimer(TimerStartup)
		b.phase = phaseNone
		b.state = StateConflict
		return
	}
	if b.leader != 0 {
		b.setState(StateFollower)
		b.maybePreempt()
		return
	}
	b.setState(StateFollower)
	b.startElection()
}

// --- transitions -------------------------------------------------------------

// startElection is step 1: ELECTION to every live node with a larger key,
// then wait T for an ANSWER. With no such node the wait is pointless and
// this node is the coordinator at once (the textbook's best case).
func (b *Bully) startElection() {
	if b.holding() || b.conflict {
		return
	}
	b.cancelTimer(TimerStartup)
	b.cancelTimer(TimerCoordinator)
	b.setState(StateCandidate)
	n := b.largerCount()
	if n == 0 && b.now >= b.settleUntil {
		b.becomeLeader()
		return
	}
	b.phase = phaseElecting
	if n > 0 {
		b.broadcast(wire.TypeElection, ScopeLarger, n)
	}
	b.setTimer(TimerAnswer, max(b.now+b.cfg.AnswerTimeout, b.settleUntil))
}

// becomeLeader: step 2, or the end of a preemption. The term is one more
// than any term seen.
func (b *Bully) becomeLeader() {
	b.term = max(b.term, b.maxSeen) + 1
	b.maxSeen = b.term
	b.termLeader, b.termLeaderKey = b.self.ID, b.self
	b.leader = b.self.ID
	b.phase = phaseNone
	b.cancelTimer(TimerAnswer)
	b.cancelTimer(TimerCoordinator)
	b.cancelTimer(TimerStartup)
	b.cancelTimer(TimerSuspect)
	b.det.Reset()
	b.setState(StateLeader)
	b.broadcast(wire.TypeCoordinator, ScopeAll, len(b.members))
	b.emit(Action{Kind: ActBecomeLeader, Term: b.term})
	b.setTimer(TimerHeartbeat, b.now+b.cfg.HeartbeatInterval)
}

// follow records leader k with term and feeds its claim to the detector.
func (b *Bully) follow(k Key, term uint64) {
	// A leadership the driver has not been told of is reported; a return
	// to following after an election that changed nothing is not.
	changed := b.reportedLeader != k.ID || b.reportedTerm != term
	if b.state == StateLeader {
		b.cancelTimer(TimerHeartbeat)
	}
	b.term = term
	b.termLeader, b.termLeaderKey = k.ID, k
	b.leader = k.ID
	b.phase = phaseNone
	b.cancelTimer(TimerAnswer)
	b.cancelTimer(TimerCoordinator)
	b.cancelTimer(TimerStartup)
	b.setState(StateFollower)
	if changed {
		b.det.Reset()
		b.emit(Action{Kind: ActFollow, Leader: k.ID, Term: term})
	}
	b.observeLeader()
}

// observeLeader feeds a claim of the leader to the detector and moves the
// suspicion deadline.
func (b *Bully) observeLeader() {
	b.det.Observe(b.now)
	if at, ok := b.det.SuspectAt(); ok {
		b.setTimer(TimerSuspect, at)
	}
}

// suspectLeader: the leader is thought dead (detector, membership, or its
// RESIGN). It is not awaited in the election that follows.
func (b *Bully) suspectLeader() {
	// A running exclusion (the RESIGN that led here) stands; an expired
	// one gives way to the suspicion.
	if x, ok := b.excluded[b.leader]; !ok || x.until <= b.now {
		b.exclude(b.leader, exclusion{until: b.now + suspicionMemory*b.cfg.SuspectAfter})
	}
	b.leader = 0
	b.cancelTimer(TimerSuspect)
	b.det.Reset()
	b.emit(Action{Kind: ActFollow, Term: b.term})
	if b.state == StateCandidate {
		// An election is already running (an ELECTION from a smaller node
		// started it): it goes on, without waiting for the suspect.
		if b.phase == phaseElecting && b.largerCount() == 0 && b.now >= b.settleUntil {
			b.becomeLeader()
		}
		return
	}
	b.setState(StateFollower)
	b.startElection()
}

// resign: a leader hands over. It tells everyone, and stays out of
// elections for the hold-off so that leadership really moves.
func (b *Bully) resign() {
	b.broadcast(wire.TypeResign, ScopeAll, len(b.members))
	b.cancelTimer(TimerHeartbeat)
	b.holdUntil = b.now + b.cfg.ResignHoldoff
	// An election it ignored just before the hold-off ended ends with a
	// claim within T plus two packet delays (less than 2T) of that end.
	b.settleUntil = b.holdUntil + 2*b.cfg.AnswerTimeout
	b.leader = 0
	b.setState(StateFollower)
	b.emit(Action{Kind: ActFollow, Term: b.term})
	b.setTimer(TimerHoldoff, b.holdUntil)
}

// maybePreempt is step 5: a node whose key is larger than its leader's
// takes over, unless preemption is off, delayed, or held off.
func (b *Bully) maybePreempt() {
	if b.leader == 0 || b.leader == b.self.ID || b.state == StateCandidate {
		return
	}
	if b.cfg.Preempt && b.termLeaderKey.Less(b.self) && b.now < b.started+b.cfg.PreemptDelay {
		b.setTimer(TimerPreempt, b.started+b.cfg.PreemptDelay)
		return
	}
	if b.mayPreempt(b.termLeaderKey) {
		b.startElection()
	}
}

// mayPreempt reports whether this node may take over now from leader k.
func (b *Bully) mayPreempt(k Key) bool {
	return b.cfg.Preempt && k.Less(b.self) && !b.holding() && !b.conflict &&
		b.now >= b.started+b.cfg.PreemptDelay
}

// --- helpers ------------------------------------------------------------------

func (b *Bully) holding() bool { return b.now < b.holdUntil }

// exclude records an exclusion and forgets the ones that have run out, so
// that the map stays as small as the set of nodes recently suspected.
func (b *Bully) exclude(id NodeID, x exclusion) {
	for k, old := range b.excluded {
		if old.until <= b.now {
			delete(b.excluded, k)
		}
	}
	b.excluded[id] = x
}

// largerCount counts the live members with a larger key that are not
// suspected or holding off.
func (b *Bully) largerCount() int {
	n := 0
	for id, k := range b.members {
		if !b.self.Less(k) {
			continue
		}
		if x, ok := b.excluded[id]; ok && b.now < x.until {
			continue
		}
		n++
	}
	return n
}

func (b *Bully) setState(s State) {
	if b.conflict {
		s = StateConflict
	}
	b.state = s
	if s != StateCandidate {
		b.phase = phaseNone
		b.committed = false
	}
}

func (b *Bully) header(t wire.Type) wire.Message {
	return wire.Message{Type: t, From: b.self.ID, Priority: b.self.Priority, Term: b.term}
}

func (b *Bully) send(to NodeID, t wire.Type) {
	b.emit(Action{Kind: ActSend, To: to, Msg: b.header(t), Count: 1})
}

func (b *Bully) broadcast(t wire.Type, scope Scope, count int) {
	m := b.header(t)
	if t == wire.TypeHeartbeat {
		m.Interval = uint32(b.cfg.HeartbeatInterval / time.Millisecond)
	}
	b.emit(Action{Kind: ActBroadcast, Msg: m, Scope: scope, Count: count})
}

func (b *Bully) setTimer(t TimerKind, at time.Duration) {
	b.armed[t], b.deadline[t] = true, at
	b.emit(Action{Kind: ActSetTimer, Timer: t, At: at})
}

func (b *Bully) cancelTimer(t TimerKind) {
	if !b.armed[t] {
		return
	}
	b.armed[t] = false
	b.emit(Action{Kind: ActCancelTimer, Timer: t})
}

func (b *Bully) emit(a Action) {
	switch a.Kind {
	case ActBecomeLeader:
		b.reportedLeader, b.reportedTerm = b.self.ID, a.Term
	case ActFollow:
		b.reportedLeader, b.reportedTerm = a.Leader, a.Term
	}
	b.acts = append(b.acts, a)
}
