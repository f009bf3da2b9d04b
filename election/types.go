package election

import (
	"fmt"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// NodeID is a node's numeric identity, unique in the cluster. 0 means "none".
type NodeID = uint64

// Key orders nodes for the election: the larger key wins. It is compared
// by Priority first, then by ID, so that two nodes never compare equal.
type Key struct {
	Priority uint16
	ID       NodeID
}

// Less reports whether k orders before o.
func (k Key) Less(o Key) bool {
	if k.Priority != o.Priority {
		return k.Priority < o.Priority
	}
	return k.ID < o.ID
}

func (k Key) String() string { return fmt.Sprintf("%d/%d", k.Priority, k.ID) }

// State is a node's role as shown in /status and metrics.
type State uint8

// The states. Their String forms are part of the /status contract.
const (
	StateStarting  State = iota // just started, listening for a leader
	StateFollower               // follows a leader, or waits for one (leader 0)
	StateCandidate              // an election of its own is under way
	StateLeader                 // leads
	StateConflict               // another live node has the same node_id
)

var stateNames = [...]string{"starting", "follower", "candidate", "leader", "conflict"}

func (s State) String() string { return enumName(stateNames[:], s, "state") }

// TimerKind names one of the machine's timers. At most one timer of each
// kind is armed at a time; setting it again moves its deadline.
type TimerKind uint8

// The timers.
const (
	TimerStartup     TimerKind = iota // end of the listen period after start
	TimerAnswer                       // T: the wait for ANSWER after ELECTION
	TimerCoordinator                  // the wait for COORDINATOR after an ANSWER
	TimerHeartbeat                    // leader: next HEARTBEAT
	TimerSuspect                      // follower: the detector's suspicion deadline
	TimerPreempt                      // end of preempt_delay
	TimerHoldoff                      // end of a resign hold-off
	TimerLease                        // quorum mode: leader: end of its lease or claim; follower: end of its guard
	TimerConfirm                      // follower: the next PROBE, or the end of the confirmation of a suspicion
	TimerPrevote                      // quorum mode: the next PROBE of a pre-vote, the end of one, or the next try
	TimerResend                       // quorum mode: leader: re-send the latest claim to whoever has not acknowledged it
	numTimers
)

// NumTimers is the number of timer kinds: a driver that keeps one
// deadline per kind sizes its table with it.
const NumTimers = int(numTimers)

var timerNames = [...]string{"startup", "answer", "coordinator", "heartbeat", "suspect", "preempt", "holdoff", "lease", "confirm", "prevote", "resend"}

func (t TimerKind) String() string { return enumName(timerNames[:], t, "timer") }

// EventKind says what happened.
type EventKind uint8

// The events a machine accepts.
const (
	EvStart         EventKind = iota // the node has just started (or restarted)
	EvMessage                        // a message arrived: Event.Msg
	EvTimer                          // a timer set earlier fired: Event.Timer
	EvMemberUp                       // a member joined or changed its key: Event.Member
	EvMemberDown                     // a member left or was declared dead: Event.Member.ID
	EvSuspectLeader                  // something outside (membership) suspects the leader
	EvResign                         // the operator asks the leader to hand over
	EvSetPriority                    // this node's own priority changed: Event.Priority
	EvConflict                       // a duplicate node_id was seen (Event.On) or cleared
	EvStandby                        // the driver takes this node out of the elections (Event.On) or lets it back in
	EvSetPreempt                     // this node's preemption is turned on (Event.On) or off: a reload
)

var eventNames = [...]string{"start", "message", "timer", "member-up", "member-down", "suspect-leader", "resign", "set-priority", "conflict", "standby", "set-preempt"}

func (e EventKind) String() string { return enumName(eventNames[:], e, "event") }

// Event is the input of Step.
type Event struct {
	Kind     EventKind
	Msg      wire.Message // EvMessage
	Timer    TimerKind    // EvTimer
	Member   Key          // EvMemberUp, EvMemberDown (ID only)
	Role     Role         // EvMemberUp: the member's role (candidate unless it says otherwise)
	Priority uint16       // EvSetPriority
	On       bool         // EvConflict, EvStandby, EvSetPreempt
}

// ActionKind says what the driver must do.
type ActionKind uint8

// The actions a machine asks for.
const (
	ActSend         ActionKind = iota // send Msg to node To (unicast)
	ActBroadcast                      // send Msg to the members of Scope (one multicast packet)
	ActSetTimer                       // arm Timer to fire at At (replacing an earlier deadline)
	ActCancelTimer                    // disarm Timer
	ActBecomeLeader                   // this node now leads with Term
	ActFollow                         // this node no longer leads; it follows Leader (0: none known) at Term
)

var actionNames = [...]string{"send", "broadcast", "set-timer", "cancel-timer", "become-leader", "follow"}

func (a ActionKind) String() string { return enumName(actionNames[:], a, "action") }

// enumName is the name of v, one of the enums above, in names; a value
// past them is written kind(v).
func enumName[T ~uint8](names []string, v T, kind string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", kind, uint8(v))
}

// Scope says who a broadcast is for. Over multicast the packet reaches
// every member and receivers filter by key; a unicast fan-out sends it
// only to the members of the scope.
type Scope uint8

// The scopes.
const (
	ScopeAll    Scope = iota // every other member
	ScopeLarger              // members whose key is larger than the sender's
)

func (s Scope) String() string {
	if s == ScopeLarger {
		return "larger"
	}
	return "all"
}

// Action is one output of Step.
type Action struct {
	Kind   ActionKind
	To     NodeID       // ActSend
	Msg    wire.Message // ActSend, ActBroadcast: Type, From, Priority, Term and body are set
	Scope  Scope        // ActBroadcast
	Count  int          // ActSend: 1; ActBroadcast: recipients in the machine's view (the algorithm's message count)
	Timer  TimerKind    // ActSetTimer, ActCancelTimer
	At     time.Duration
	Term   uint64 // ActBecomeLeader, ActFollow
	Leader NodeID // ActFollow
}

func (a Action) String() string {
	switch a.Kind {
	case ActSend:
		return fmt.Sprintf("send %v to %d term=%d", a.Msg.Type, a.To, a.Msg.Term)
	case ActBroadcast:
		return fmt.Sprintf("broadcast %v to %v (%d) term=%d", a.Msg.Type, a.Scope, a.Count, a.Msg.Term)
	case ActSetTimer:
		return fmt.Sprintf("set-timer %v at %v", a.Timer, a.At)
	case ActCancelTimer:
		return fmt.Sprintf("cancel-timer %v", a.Timer)
	case ActBecomeLeader:
		return fmt.Sprintf("become-leader term=%d", a.Term)
	case ActFollow:
		return fmt.Sprintf("follow leader=%d term=%d", a.Leader, a.Term)
	}
	return a.Kind.String()
}

// Status is a snapshot of a machine's view, for /status and tests.
type Status struct {
	Self      Key
	State     State
	Term      uint64
	Leader    NodeID // 0 while no leader is known (quorum mode: none that holds a lease)
	LeaderKey Key
	// LeaseUntil (quorum mode, leader only): the lease runs out at this
	// time of the node's monotonic clock; 0 otherwise.
	LeaseUntil time.Duration
	// VotedTerm (quorum mode): the last term this node voted in. The
	// driver keeps it on stable storage, written before it carries out
	// the actions of the Step that raised it, and passes it back as
	// Config.InitialTerm when the node starts again.
	VotedTerm uint64
	// VotedFor (quorum mode): whom that vote went to; Self.ID for this
	// node's own claim.
	VotedFor NodeID
}
