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

// exclusion leaves a member out of the larger set (bully) or the logical
// ring (the ring family) until a time.
type exclusion struct {
	until time.Duration
	// resigned: it promised silence for its hold-off, so hearing from it
	// does not end the exclusion; a suspicion ends when it speaks.
	resigned bool
}

// elector is the part of a machine that differs between algorithms: how
// an election runs. Everything else — the listen period after a start,
// heartbeats, terms and the claims that carry them, the failure detector,
// preemption, resign and its hold-off, node_id conflicts — is the core's,
// shared by every algorithm. The core calls the elector at the points
// below, and at those of the optional interfaces that follow when the
// elector has them; the elector calls the core back (lead, follow through
// onClaim, setState, send, timers) for everything else.
type elector interface {
	// elect is step 1 of the algorithm. The core has checked that the
	// node may elect (no hold-off, no conflict) and ended its listen
	// period.
	elect()
	// onMessage handles a message of one of the algorithm's own types
	// (the core handles COORDINATOR, HEARTBEAT and RESIGN); from is the
	// sender's key. Messages of another algorithm's types are ignored.
	onMessage(m *wire.Message, from Key)
	// onTimer handles TimerAnswer and TimerCoordinator, which the core
	// leaves to the election.
	onTimer(t TimerKind)
	// stop ends this node's own part in an election: it now leads,
	// follows, or is in conflict. The election's timers are cancelled.
	stop()
	// overrules reports whether a candidate goes on electing when a
	// smaller key claims term (it may not preempt that key): bully, when
	// it answered an ELECTION of that term or a later one.
	overrules(from Key, term uint64) bool
	// memberDown: member id is gone from the view (wasLeader: it was the
	// leader, and the core has already suspected it).
	memberDown(id NodeID, wasLeader bool)
}

// The optional parts of an elector, found by core.init.
type (
	// candidacyLeaver is told when the node's state is now something
	// other than candidate (bully).
	candidacyLeaver interface{ left() }
	// leaderLoser is told when the leader is suspected while an election
	// of this node is already under way (bully).
	leaderLoser interface{ leaderLost() }
	// membersWatcher is told when a member joined or changed its key, or
	// this node's own key changed (the ring family: the ring's order).
	membersWatcher interface{ membersChanged() }
)

// core is the state and behaviour every algorithm shares. A machine is a
// core plus an elector (Bully, or one of the ring family); the core's
// exported methods (Step, Status, Members, Config) are the machine's.
//
// Concurrency: not safe for concurrent use; one owner (the agent's event
// loop, or the simulator) calls Step.
type core struct {
	e elector
	// The elector's optional parts; nil when it has none.
	leaver  candidacyLeaver
	loser   leaderLoser
	watcher membersWatcher

	cfg  Config
	self Key
	det  detector.Detector

	state State

	// term is the term of the leadership this node last recognised (or
	// holds); termLeader and termLeaderKey name that leadership and stay
	// set while the node is leaderless, so that a second claim to the same
	// term is accepted only from a larger key.
	term          uint64
	termLeader    NodeID
	termLeaderKey Key
	// maxSeen is the highest term seen in any message (or proposed by
	// this node); a new coordinator takes max(term, maxSeen)+1.
	maxSeen uint64

	// leader is the node followed (or this node), 0 while no leader is
	// known. When it is not 0 it is termLeader, whose key is termLeaderKey.
	leader NodeID

	members  map[NodeID]Key       // live members other than this node
	excluded map[NodeID]exclusion // suspected, unresponsive or resigned: not awaited in elections for a while

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

	// q is the quorum mode's state (quorum.go); unused when cfg.Quorum is 0.
	q quorum
	// st is the state of confirmations and pre-votes (stability.go).
	st stability

	now  time.Duration
	acts []Action
}

// init fills cfg's defaults, validates it and sets the core up for the
// elector e. The machine does nothing until it is given EvStart.
func (c *core) init(cfg Config, e elector) error {
	cfg.fill()
	if err := cfg.Validate(); err != nil {
		return err
	}
	det := cfg.Detector
	if det == nil {
		det = detector.NewFixed(detector.FixedConfig{Timeout: cfg.SuspectAfter})
	}
	*c = core{
		e:        e,
		cfg:      cfg,
		self:     Key{Priority: cfg.Priority, ID: cfg.ID},
		det:      det,
		state:    StateStarting,
		members:  make(map[NodeID]Key),
		excluded: make(map[NodeID]exclusion),
	}
	c.leaver, _ = e.(candidacyLeaver)
	c.loser, _ = e.(leaderLoser)
	c.watcher, _ = e.(membersWatcher)
	c.q.init(&cfg)
	c.maxSeen = c.q.lastVote()
	return nil
}

// Config returns the machine's configuration with its defaults filled in.
func (c *core) Config() Config { return c.cfg }

// Status returns the machine's current view.
func (c *core) Status() Status {
	st := Status{Self: c.self, State: c.state, Term: c.term, Leader: c.leader}
	if c.leader != 0 {
		st.LeaderKey = c.termLeaderKey
	}
	c.leaseStatus(&st)
	return st
}

// Members returns the keys of the live members the machine knows, other
// than itself, in no particular order, appended to dst.
func (c *core) Members(dst []Key) []Key {
	for _, k := range c.members {
		dst = append(dst, k)
	}
	return dst
}

// Step feeds one event that happened at now (on this node's monotonic
// clock) and returns what the driver must do, in order. The returned
// slice is reused by the next Step.
func (c *core) Step(now time.Duration, ev Event) []Action {
	c.acts = c.acts[:0]
	if now > c.now {
		c.now = now
	}
	c.checkLease()
	switch ev.Kind {
	case EvStart:
		if !c.startedOnce {
			c.startedOnce = true
			c.start()
		}
	case EvMessage:
		c.onMessage(&ev.Msg)
	case EvTimer:
		if ev.Timer < numTimers && c.armed[ev.Timer] && c.now >= c.deadline[ev.Timer] {
			c.armed[ev.Timer] = false
			c.onTimer(ev.Timer)
		}
	case EvMemberUp:
		c.onMemberUp(ev.Member)
	case EvMemberDown:
		c.onMemberDown(ev.Member.ID)
	case EvSuspectLeader:
		if c.leader != 0 && c.leader != c.self.ID {
			c.confirmSuspicion(true)
		}
	case EvResign:
		if c.state == StateLeader {
			c.resign()
		}
	case EvSetPriority:
		c.onSetPriority(ev.Priority)
	case EvConflict:
		c.onConflict(ev.On)
	}
	return c.acts
}

// --- lifecycle -------------------------------------------------------------

// start begins the listen period: a node that has just (re)started first
// listens for a leader, and runs an election when none speaks up.
func (c *core) start() {
	c.started = c.now
	c.settleUntil = c.now + c.cfg.StartupWait
	c.q.startGuard(c.now)
	c.setState(StateStarting)
	c.setTimer(TimerStartup, c.now+c.cfg.StartupWait)
	if c.cfg.Preempt && c.cfg.PreemptDelay > 0 {
		c.setTimer(TimerPreempt, c.now+c.cfg.PreemptDelay)
	}
}

func (c *core) onTimer(t TimerKind) {
	switch t {
	case TimerStartup:
		if c.state == StateStarting && c.leader == 0 {
			c.startElection()
		}
	case TimerAnswer, TimerCoordinator:
		c.e.onTimer(t)
	case TimerHeartbeat:
		if c.state == StateLeader {
			c.heartbeat()
			c.setTimer(TimerHeartbeat, c.now+c.cfg.HeartbeatInterval)
		}
	case TimerSuspect:
		if c.leader != 0 && c.leader != c.self.ID && !c.st.confirming {
			if c.det.Suspect(c.now) {
				c.confirmSuspicion(false)
			} else if at, ok := c.det.SuspectAt(); ok {
				c.setTimer(TimerSuspect, at)
			}
		}
	case TimerPreempt, TimerHoldoff:
		c.reconsider()
	case TimerLease:
		c.onLeaseTimer()
	case TimerConfirm:
		c.onConfirmTimer()
	case TimerPrevote:
		c.onPrevoteTimer()
	case TimerResend:
		c.onResendTimer()
	}
}

// reconsider runs when a hold-off or the preempt delay ends: a node with
// no leader elects, a node larger than its leader takes over.
func (c *core) reconsider() {
	if c.holding() || c.conflict || c.state == StateCandidate || c.state == StateLeader {
		return
	}
	if c.leader == 0 {
		if c.state != StateStarting {
			c.startElection()
		}
		return
	}
	c.maybePreempt()
}

// --- messages --------------------------------------------------------------

func (c *core) onMessage(m *wire.Message) {
	if m.From == c.self.ID || m.From == 0 || m.Term > MaxTerm || m.Term > max(c.term, c.maxSeen)+MaxTermJump {
		return
	}
	if m.Term > c.maxSeen {
		c.maxSeen = m.Term
	}
	k := Key{Priority: m.Priority, ID: m.From}
	// (A HEARTBEAT_ACK does not teach keys: quorum-mode followers send
	// one for every claim, and a follower that wakes from a pause acks its
	// backlog under the key it had before a change it has yet to handle;
	// the leader would keep that stale key, as it hears nothing else from
	// a node that now runs for election on the ring.)
	if old, ok := c.members[k.ID]; ok && old != k && m.Type != wire.TypeHeartbeatAck {
		c.members[k.ID] = k
		c.keysChanged()
	}
	// It speaks, so it is no longer suspected; a resign hold-off is a
	// promise of silence, so it stands until it ends.
	if len(c.excluded) > 0 {
		if x, ok := c.excluded[k.ID]; ok && !x.resigned {
			delete(c.excluded, k.ID)
		}
	}
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
	if !c.cfg.Textbook && c.state == StateFollower && from.ID != c.leader && c.healthy() && from.Less(c.leaderKey()) {
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
		if term > c.term && c.cfg.Algorithm == AlgorithmBully {
			c.confirmSuspicion(true)
		}
		return
	}
	if !c.accepts(from, term) {
		if c.state == StateLeader && c.q.awaitingMajority() && term == c.term && !c.cfg.Textbook {
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

// --- membership --------------------------------------------------------------

func (c *core) onMemberUp(k Key) {
	if k.ID == c.self.ID || k.ID == 0 {
		return
	}
	c.members[k.ID] = k
	c.keysChanged()
	// Back (or never gone): await it in elections again.
	if x, ok := c.excluded[k.ID]; ok && !x.resigned {
		delete(c.excluded, k.ID)
	}
	// The key of the leadership followed follows membership; that of a
	// past one stays as it was recognised.
	if k.ID == c.leader {
		c.termLeaderKey = k
		c.maybePreempt()
	}
}

func (c *core) onMemberDown(id NodeID) {
	if id == c.self.ID || id == 0 {
		return
	}
	delete(c.members, id)
	delete(c.excluded, id)
	wasLeader := id == c.leader
	if wasLeader {
		if c.healthy() && !c.cfg.Textbook {
			// Membership says it is dead, its heartbeats say otherwise: a
			// lossy network fools SWIM too, and a leader that really died
			// is suspected by the detector (SuspectAfter) long before
			// membership declares it dead (seconds). Follow it on; the
			// detector judges it, and membership will report it back.
			wasLeader = false
		} else {
			c.suspectLeader()
		}
	}
	c.e.memberDown(id, wasLeader)
}

func (c *core) onSetPriority(p uint16) {
	if p == c.self.Priority {
		return
	}
	c.self.Priority = p
	c.keysChanged()
	if c.state == StateLeader {
		c.termLeaderKey = c.self
		// Tell everyone now rather than at the next heartbeat, so that a
		// larger node can take over at once.
		c.tellAll()
		return
	}
	c.maybePreempt()
}

// onConflict: while another live node has our node_id, neither may lead.
func (c *core) onConflict(on bool) {
	if on == c.conflict {
		return
	}
	c.conflict = on
	if on {
		if c.state == StateLeader {
			c.broadcast(wire.TypeResign, ScopeAll, len(c.members))
			c.cancelTimer(TimerHeartbeat)
			c.leader = 0
			c.emit(Action{Kind: ActFollow, Term: c.term})
		}
		c.e.stop()
		c.cancelTimer(TimerStartup)
		c.stopConfirm()
		c.stopPrevote()
		c.state = StateConflict
		return
	}
	if c.leader != 0 {
		c.setState(StateFollower)
		c.maybePreempt()
		return
	}
	c.setState(StateFollower)
	c.startElection()
}

// --- transitions -------------------------------------------------------------

// startElection starts the algorithm's election, unless the node holds
// off after a resign or is in conflict.
func (c *core) startElection() {
	if c.holding() || c.conflict {
		return
	}
	if c.state != StateCandidate {
		if until, wait := c.q.putOff(c.now); wait {
			// Quorum mode: the lease of the leader this node last
			// acknowledged may still run; elect once it surely has not,
			// and support it no more meanwhile.
			c.cancelTimer(TimerStartup)
			c.setTimer(TimerLease, until)
			return
		}
	}
	c.q.dropPutOff()
	c.cancelTimer(TimerStartup)
	// Quorum mode asks for pre-votes first; otherwise the election
	// starts at once.
	c.prevote()
}

// becomeLeader: this node leads under a fresh term, one more than any
// term seen, and says so to everyone with one COORDINATOR.
func (c *core) becomeLeader() { c.lead(max(c.term, c.maxSeen)+1, true) }

// lead makes this node the leader with term (which the caller has checked
// is above every leadership it recognised). With announce it sends
// COORDINATOR to all (one multicast); otherwise the election announces
// the result its own way (the ring family: around the ring).
func (c *core) lead(term uint64, announce bool) {
	wasLeader := c.state == StateLeader
	c.term = term
	c.maxSeen = max(c.maxSeen, term)
	c.termLeader, c.termLeaderKey = c.self.ID, c.self
	c.leader = c.self.ID
	c.e.stop()
	c.cancelTimer(TimerStartup)
	c.cancelTimer(TimerSuspect)
	c.stopConfirm()
	c.stopPrevote()
	c.det.Reset()
	c.setState(StateLeader)
	// In quorum mode a claim, which leads once a majority acknowledges it.
	c.proclaim(wasLeader, announce)
	c.setTimer(TimerHeartbeat, c.now+c.cfg.HeartbeatInterval)
}

// follow records leader k with term and feeds its claim to the detector.
func (c *core) follow(k Key, term uint64) {
	// A leadership the driver has not been told of is reported; a return
	// to following after an election that changed nothing is not.
	vis := c.visibleLeader(k.ID, term)
	changed := c.reportedLeader != vis || c.reportedTerm != term
	if c.leader != k.ID {
		// Another leader (or the old one back after a suspicion): an
		// election put off for the guard, or waiting for its pre-votes, is
		// no longer wanted.
		c.q.dropPutOff()
		c.stopPrevote()
	}
	if c.state == StateLeader {
		c.cancelTimer(TimerHeartbeat)
		c.cancelTimer(TimerLease) // armed in quorum mode only
	}
	c.term = term
	c.termLeader, c.termLeaderKey = k.ID, k
	c.leader = k.ID
	c.e.stop()
	c.cancelTimer(TimerStartup)
	c.setState(StateFollower)
	if changed {
		c.det.Reset()
		c.emit(Action{Kind: ActFollow, Leader: vis, Term: term})
	}
	c.observeLeader()
}

// observeLeader feeds a claim of the leader to the detector and moves the
// suspicion deadline.
func (c *core) observeLeader() {
	c.det.Observe(c.now)
	c.st.lastHeard, c.st.heardSelf = c.now, c.now
	c.stopConfirm()
	if at, ok := c.det.SuspectAt(); ok {
		c.setTimer(TimerSuspect, at)
	}
}

// suspectLeader: the leader is thought dead (detector, membership, or its
// RESIGN). It is not awaited in the election that follows.
func (c *core) suspectLeader() {
	// A running exclusion (the RESIGN that led here) stands; an expired
	// one gives way to the suspicion.
	if x, ok := c.excluded[c.leader]; !ok || x.until <= c.now {
		c.exclude(c.leader, exclusion{until: c.now + suspicionMemory*c.cfg.SuspectAfter})
	}
	c.leader = 0
	c.cancelTimer(TimerSuspect)
	c.stopConfirm()
	c.det.Reset()
	c.emit(Action{Kind: ActFollow, Term: c.term})
	if c.state == StateCandidate {
		// An election is already running: it goes on, without waiting for
		// the suspect.
		if c.loser != nil {
			c.loser.leaderLost()
		}
		return
	}
	c.setState(StateFollower)
	c.startElection()
}

// resign: a leader hands over. It tells everyone, and stays out of
// elections for the hold-off so that leadership really moves.
func (c *core) resign() {
	c.broadcast(wire.TypeResign, ScopeAll, len(c.members))
	c.cancelTimer(TimerHeartbeat)
	c.holdUntil = c.now + c.cfg.ResignHoldoff
	// An election it ignored just before the hold-off ended ends with a
	// claim within T plus two packet delays (less than 2T) of that end.
	c.settleUntil = c.holdUntil + 2*c.cfg.AnswerTimeout
	c.leader = 0
	c.setState(StateFollower)
	c.emit(Action{Kind: ActFollow, Term: c.term})
	c.setTimer(TimerHoldoff, c.holdUntil)
}

// maybePreempt is bully's step 5, shared by every algorithm: a node whose
// key is larger than its leader's takes over, unless preemption is off,
// delayed, or held off.
func (c *core) maybePreempt() {
	if c.leader == 0 || c.leader == c.self.ID || c.state == StateCandidate {
		return
	}
	if c.cfg.Preempt && c.termLeaderKey.Less(c.self) && c.now < c.started+c.cfg.PreemptDelay {
		c.setTimer(TimerPreempt, c.started+c.cfg.PreemptDelay)
		return
	}
	if c.mayPreempt(c.termLeaderKey) {
		c.startElection()
	}
}

// mayPreempt reports whether this node may take over now from leader k.
func (c *core) mayPreempt(k Key) bool {
	return c.cfg.Preempt && k.Less(c.self) && !c.holding() && !c.conflict &&
		c.now >= c.started+c.cfg.PreemptDelay
}

// --- helpers ------------------------------------------------------------------

func (c *core) holding() bool { return c.now < c.holdUntil }

// exclude records an exclusion and forgets the ones that have run out, so
// that the map stays as small as the set of nodes recently suspected.
func (c *core) exclude(id NodeID, x exclusion) {
	for k, old := range c.excluded {
		if old.until <= c.now {
			delete(c.excluded, k)
		}
	}
	c.excluded[id] = x
}

// isExcluded reports whether member id is left out of elections now.
func (c *core) isExcluded(id NodeID) bool {
	x, ok := c.excluded[id]
	return ok && c.now < x.until
}

func (c *core) setState(s State) {
	if c.conflict {
		s = StateConflict
	}
	c.state = s
	if s != StateLeader {
		c.q.notLeading()
	}
	if s != StateCandidate && c.leaver != nil {
		c.leaver.left()
	}
}

// keysChanged tells the elector that a member joined or changed its
// key, or that this node's own key changed.
func (c *core) keysChanged() {
	if c.watcher != nil {
		c.watcher.membersChanged()
	}
}

func (c *core) header(t wire.Type) wire.Message {
	return wire.Message{Type: t, From: c.self.ID, Priority: c.self.Priority, Term: c.term}
}

func (c *core) send(to NodeID, t wire.Type) {
	c.emit(Action{Kind: ActSend, To: to, Msg: c.header(t), Count: 1})
}

func (c *core) broadcast(t wire.Type, scope Scope, count int) {
	m := c.header(t)
	c.emit(Action{Kind: ActBroadcast, Msg: m, Scope: scope, Count: count})
}

func (c *core) setTimer(t TimerKind, at time.Duration) {
	c.armed[t], c.deadline[t] = true, at
	c.emit(Action{Kind: ActSetTimer, Timer: t, At: at})
}

func (c *core) cancelTimer(t TimerKind) {
	if !c.armed[t] {
		return
	}
	c.armed[t] = false
	c.emit(Action{Kind: ActCancelTimer, Timer: t})
}

func (c *core) emit(a Action) {
	switch a.Kind {
	case ActBecomeLeader:
		c.reportedLeader, c.reportedTerm = c.self.ID, a.Term
	case ActFollow:
		c.reportedLeader, c.reportedTerm = a.Leader, a.Term
	}
	c.acts = append(c.acts, a)
}
