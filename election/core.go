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
	// unacked: it did not acknowledge a hop of the ring family's; only
	// such a node is passed by on the ring (textbook_ring.go, skipped).
	unacked bool
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
	roles    map[NodeID]Role      // the members that are not candidates, and their roles
	excluded map[NodeID]exclusion // suspected, unresponsive or resigned: not awaited in elections for a while
	// newest: the place of the newest message heard from each member,
	// whose header alone may teach the member's key (core_claims.go).
	newest map[NodeID]sendOrder

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
	// standby: the driver keeps this node out of the elections (EvStandby).
	standby bool

	armed    [numTimers]bool
	deadline [numTimers]time.Duration

	// reportedLeader and reportedTerm: what the last ActBecomeLeader or
	// ActFollow told the driver.
	reportedLeader NodeID
	reportedTerm   uint64

	// q is the quorum mode's state (quorum.go); unused when cfg.Quorum is 0.
	q quorum
	// st is the state of confirmations and pre-votes (harden_confirm.go).
	st stability
	// rtt stretches the waits to the round trips measured (harden_rtt.go); late
	// is how late the timer being handled fired (0 for other events).
	rtt     rtt
	late    time.Duration
	yielded [numTimers]bool // yieldToBacklog put this timer off once

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
		newest:   make(map[NodeID]sendOrder),
		roles:    make(map[NodeID]Role),
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
	c.late = 0
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
			c.lateBy(c.deadline[ev.Timer])
			if c.yieldToBacklog(ev.Timer) {
				break
			}
			c.onTimer(ev.Timer)
		}
	case EvMemberUp:
		c.onMemberUp(ev.Member, ev.Role)
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
	case EvStandby:
		c.onStandby(ev.On)
	case EvSetPreempt:
		c.onSetPreempt(ev.On)
	}
	return c.acts
}

// --- lifecycle -------------------------------------------------------------

// start begins the listen period: a node that has just (re)started first
// listens for a leader, and runs an election when none speaks up.
func (c *core) start() {
	c.started = c.now
	c.q.startGuard(c.now)
	c.listen(c.now + c.cfg.StartupWait)
	if c.cfg.Preempt && c.cfg.PreemptDelay > 0 {
		c.setTimer(TimerPreempt, c.now+c.cfg.PreemptDelay)
	}
}

// listen: until `until` the node waits for a leader to speak, and claims
// nothing (settleUntil) before it has heard the claims in flight;
// TimerStartup elects if none did. A claim heard ends it (follow).
func (c *core) listen(until time.Duration) {
	c.settleUntil = max(c.settleUntil, until)
	c.setState(StateStarting)
	c.setTimer(TimerStartup, until)
}

func (c *core) onTimer(t TimerKind) {
	switch t {
	case TimerStartup:
		if c.state == StateStarting && c.leader == 0 {
			if c.benched() && !c.conflict {
				// No leader heard: a witness or an observer waits for one.
				c.setState(StateFollower)
			}
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
				c.armSuspect(at)
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
	if c.holding() || c.out() || c.state == StateCandidate || c.state == StateLeader {
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

// unsuspect ends the exclusion of id, which spoke or is back, unless it
// is a resign hold-off: a promise of silence, which stands until it ends.
func (c *core) unsuspect(id NodeID) {
	if x, ok := c.excluded[id]; ok && !x.resigned {
		delete(c.excluded, id)
	}
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
	c.st.herdState.membersChanged()
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
	c.armed[t], c.deadline[t], c.yielded[t] = true, at, false
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
