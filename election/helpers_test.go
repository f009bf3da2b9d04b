package election

import (
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// This file holds the helpers of the single-step tests: a machine built
// from DefaultConfig with a given member set, events written the way the
// textbook says them, and a comparison of the actions in their String
// form so that a failure reads as two lists of "send ANSWER to 1 term=0".

const ms = time.Millisecond

// Default timing, spelled out so that the expected deadlines below can be
// checked by eye: T = 50ms, the wait for COORDINATOR 200ms, heartbeats
// every 100ms, suspicion 300ms after the last one, a 300ms listen period
// after start and a 1s resign hold-off.
const (
	tAnswer  = 50 * ms
	tCoord   = 200 * ms
	tHB      = 100 * ms
	tSuspect = 300 * ms // the textbook's detector timeout, and the hardened tests'
	tAlarm   = 150 * ms // the agent's: a confirmed alarm rings after 1.5 heartbeats
	tStartup = 300 * ms
	tHoldoff = 1000 * ms
	defPrio  = uint16(100)
	noLeader = NodeID(0)
)

// key is the key of node id at the default priority.
func key(id NodeID) Key { return Key{Priority: defPrio, ID: id} }

// keys lists the keys of ids at the default priority.
func keys(ids ...NodeID) []Key {
	out := make([]Key, len(ids))
	for i, id := range ids {
		out[i] = key(id)
	}
	return out
}

// tnode is one machine under test, of any algorithm; b is the machine
// when it is bully's (nil otherwise), for the tests that look inside.
type tnode struct {
	t *testing.T
	m Machine
	b *Bully
}

// newNode builds the bully machine of self from DefaultConfig (changed by
// opts) and tells it about members with EvMemberUp. It is not started.
func newNode(t *testing.T, self Key, members []Key, opts ...func(*Config)) tnode {
	t.Helper()
	return newMachine(t, AlgorithmBully, self, members, opts...)
}

// newMachine builds the machine of alg for self from DefaultConfig
// (changed by opts) and tells it about members. It is not started.
func newMachine(t *testing.T, alg string, self Key, members []Key, opts ...func(*Config)) tnode {
	t.Helper()
	cfg := DefaultConfig(self.ID)
	cfg.Priority = self.Priority
	cfg.Algorithm = alg
	// The step-by-step tests follow the seeds, with the seeds' detector
	// timeout (SuspectAfter 0: the textbook's default); hardened() turns
	// the hardening back on.
	cfg.Hardening, cfg.SuspectAfter = Hardening{}, 0
	for _, o := range opts {
		o(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	n := tnode{t: t, m: m}
	n.b, _ = m.(*Bully)
	for _, k := range members {
		if acts := m.Step(0, memberUp(k)); len(acts) != 0 {
			t.Fatalf("EvMemberUp %v before start: unexpected actions %q", k, actLines(acts))
		}
	}
	return n
}

// started is newNode followed by EvStart at time 0.
func started(t *testing.T, self Key, members []Key, opts ...func(*Config)) tnode {
	t.Helper()
	n := newNode(t, self, members, opts...)
	n.expect(0, Event{Kind: EvStart}, "set-timer startup at 300ms")
	n.is(StateStarting, 0, noLeader)
	return n
}

// electing3of5 is node 3 of nodes 1 to 5 (default priorities) after the
// end of its listen period at 300ms, which started its election: ELECTION
// went to 4 and 5, and it waits for an ANSWER until 350ms.
func electing3of5(t *testing.T) tnode {
	t.Helper()
	n := started(t, key(3), keys(1, 2, 4, 5))
	n.step(tStartup, fire(TimerStartup))
	return n
}

// leaderOf drives self, which must be the largest key, to leadership with
// term 1 at 300ms (the end of its listen period). Its next heartbeat is due
// at 400ms.
func leaderOf(t *testing.T, self Key, members []Key, opts ...func(*Config)) tnode {
	t.Helper()
	n := started(t, self, members, opts...)
	n.step(tStartup, fire(TimerStartup))
	n.is(StateLeader, 1, self.ID)
	return n
}

// followerOf drives self to follow leader with term: the leader's
// COORDINATOR arrives at 10ms, during the listen period. The suspect
// timer is then armed at 310ms. self must be smaller than leader (or
// preemption off), or it would take over.
func followerOf(t *testing.T, self Key, members []Key, leader Key, term uint64, opts ...func(*Config)) tnode {
	t.Helper()
	n := started(t, self, members, opts...)
	acts := n.step(10*ms, claim(wire.TypeCoordinator, leader, term))
	// In a herd the alarm is put off by the follower's rank (suspectSkew).
	want := []string{"cancel-timer startup", fmtFollow(leader.ID, term),
		(Action{Kind: ActSetTimer, Timer: TimerSuspect, At: 10*ms + n.b.cfg.SuspectAfter + n.b.suspectSkew()}).String()}
	if got := actLines(acts); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the leader's COORDINATOR at 10ms: actions\n got:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	n.is(StateFollower, term, leader.ID)
	return n
}

func fmtFollow(leader NodeID, term uint64) string {
	return (Action{Kind: ActFollow, Leader: leader, Term: term}).String()
}

// step feeds ev at now and returns the actions (a copy: Step reuses its
// slice).
func (n tnode) step(now time.Duration, ev Event) []Action {
	n.t.Helper()
	return append([]Action(nil), n.m.Step(now, ev)...)
}

// expect feeds ev at now and compares the actions with want, in order;
// a message sent to one node shows its body (actLines).
func (n tnode) expect(now time.Duration, ev Event, want ...string) []Action {
	n.t.Helper()
	acts := n.step(now, ev)
	got := actLines(acts)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		n.t.Errorf("at %v, %v: actions\n got:\n\t%s\nwant:\n\t%s",
			now, describe(ev), strings.Join(orNone(got), "\n\t"), strings.Join(orNone(want), "\n\t"))
	}
	return acts
}

// is checks the machine's state, term and leader.
func (n tnode) is(state State, term uint64, leader NodeID) {
	n.t.Helper()
	st := n.m.Status()
	if st.State != state || st.Term != term || st.Leader != leader {
		n.t.Errorf("status: got %v term=%d leader=%d, want %v term=%d leader=%d",
			st.State, st.Term, st.Leader, state, term, leader)
	}
}

func actStrings(acts []Action) []string {
	out := make([]string, len(acts))
	for i, a := range acts {
		out[i] = a.String()
	}
	return out
}

// actLines is actStrings with the body of the messages sent to one node
// ("send RING_ELECTION to 3 term=2 origin=2 list=[2]").
func actLines(acts []Action) []string {
	out := make([]string, len(acts))
	for i, a := range acts {
		out[i] = a.String()
		if a.Kind == ActSend {
			out[i] += string(a.Msg.AppendBody(nil, ""))
		}
	}
	return out
}

func orNone(s []string) []string {
	if len(s) == 0 {
		return []string{"(none)"}
	}
	return s
}

func describe(ev Event) string {
	switch ev.Kind {
	case EvMessage:
		return ev.Msg.Type.String() + " from " + keyOfMsg(ev.Msg).String() + " term=" + itoa(ev.Msg.Term)
	case EvTimer:
		return "timer " + ev.Timer.String()
	case EvMemberUp, EvMemberDown:
		return ev.Kind.String() + " " + ev.Member.String()
	case EvSetPriority:
		return "set-priority " + itoa(uint64(ev.Priority))
	}
	return ev.Kind.String()
}

func keyOfMsg(m wire.Message) Key { return Key{Priority: m.Priority, ID: m.From} }

func itoa(u uint64) string {
	if u == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for u > 0 {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
	}
	return string(b[i:])
}

// Events.

// claim is a message of type typ from the node with key from, carrying term.
func claim(typ wire.Type, from Key, term uint64) Event {
	m := wire.Message{Type: typ, From: from.ID, Priority: from.Priority, Term: term}
	return Event{Kind: EvMessage, Msg: m}
}

func election(from NodeID, term uint64) Event  { return claim(wire.TypeElection, key(from), term) }
func answer(from NodeID, term uint64) Event    { return claim(wire.TypeAnswer, key(from), term) }
func coord(from NodeID, term uint64) Event     { return claim(wire.TypeCoordinator, key(from), term) }
func heartbeat(from NodeID, term uint64) Event { return claim(wire.TypeHeartbeat, key(from), term) }
func resignMsg(from NodeID, term uint64) Event { return claim(wire.TypeResign, key(from), term) }

func fire(t TimerKind) Event     { return Event{Kind: EvTimer, Timer: t} }
func memberUp(k Key) Event       { return Event{Kind: EvMemberUp, Member: k} }
func memberDown(id NodeID) Event { return Event{Kind: EvMemberDown, Member: Key{ID: id}} }
func setPriority(p uint16) Event { return Event{Kind: EvSetPriority, Priority: p} }
func conflict(on bool) Event     { return Event{Kind: EvConflict, On: on} }

var (
	evStart   = Event{Kind: EvStart}
	evResign  = Event{Kind: EvResign}
	evSuspect = Event{Kind: EvSuspectLeader}
)

// noPreempt and preemptDelay are Config options.
func noPreempt(c *Config) { c.Preempt = false }

// hardened runs the machine as the agent does: every mechanism of
// Hardening on. The step-by-step tests of the mechanisms keep the
// detector's timeout they were written with, three heartbeats (300ms);
// earlyAlarm gives the agent's default, one and a half.
func hardened(c *Config) { c.Hardening, c.SuspectAfter = Hardened(), 3*c.HeartbeatInterval }

// earlyAlarm runs the machine as the agent does, with the default
// SuspectAfter of a confirmed alarm (1.5 heartbeats, 150ms).
func earlyAlarm(c *Config) { c.Hardening, c.SuspectAfter = Hardened(), 0 }

func preemptDelay(d time.Duration) func(*Config) {
	return func(c *Config) { c.PreemptDelay = d }
}

// othersOf is the keys of nodes 1 … n−1 and leader, self left out: the
// members of a cluster as self sees them.
func othersOf(self NodeID, n int, leader NodeID) []Key {
	var out []Key
	for id := NodeID(1); id < NodeID(n); id++ {
		if id != self {
			out = append(out, key(id))
		}
	}
	if leader != self {
		out = append(out, key(leader))
	}
	return out
}
