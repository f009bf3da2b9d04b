package election

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// Roles: a witness votes in quorum mode but never puts itself forward;
// an observer follows and neither votes nor claims; candidates do not
// wait for either.

func roleOf(r Role) func(*Config) { return func(c *Config) { c.Role = r } }

func memberAs(k Key, r Role) Event { return Event{Kind: EvMemberUp, Member: k, Role: r} }

// putsItselfForward reports whether a, an action of ev, sends something
// by which self claims, elects, answers an ELECTION or stands as a
// candidate on a ring. The one ANSWER allowed is the nudge of a stale
// claimant: after a claim of a term older than the ANSWER's.
func putsItselfForward(ev Event, a Action, self NodeID) bool {
	claims := []wire.Type{wire.TypeCoordinator, wire.TypeHeartbeat, wire.TypeRingCoordinator, wire.TypeCRElected}
	if a.Kind == ActSend && a.Msg.Type == wire.TypeAnswer && ev.Kind == EvMessage &&
		slices.Contains(claims, ev.Msg.Type) && ev.Msg.Term < a.Msg.Term {
		return false
	}
	switch a.Kind {
	case ActBecomeLeader:
		return true
	case ActSend, ActBroadcast:
	default:
		return false
	}
	m := a.Msg
	switch m.Type {
	case wire.TypeElection, wire.TypeAnswer, wire.TypeCoordinator, wire.TypeHeartbeat, wire.TypeResign:
		return true
	}
	return m.CandID == self || slices.ContainsFunc(m.List, func(e wire.Member) bool { return e.ID == self })
}

// A witness (and an observer) never claims, answers, elects or stands on
// a ring, whatever it receives: random schedules of every message type
// from larger and smaller keys, timers, suspicions, resigns and
// membership changes, for every algorithm. Its key is the largest.
func TestRoleNeverPutsItselfForward(t *testing.T) {
	types := []wire.Type{wire.TypeElection, wire.TypeAnswer, wire.TypeCoordinator, wire.TypeHeartbeat,
		wire.TypeResign, wire.TypeHeartbeatAck, wire.TypeProbe, wire.TypeVouch,
		wire.TypeRingElection, wire.TypeRingCoordinator, wire.TypeCRElection, wire.TypeCRElected,
		wire.TypeHSProbe, wire.TypeHSReply}
	for _, alg := range Algorithms {
		for _, role := range []Role{RoleWitness, RoleObserver} {
			for seed := range uint64(20) {
				rng := rand.New(rand.NewPCG(seed, uint64(role)))
				n := newMachine(t, alg, key(9), keys(1, 2, 3, 4), roleOf(role), quorumOf(3), hardened)
				now := time.Duration(0)
				n.step(now, evStart)
				for i := range 400 {
					now += time.Duration(rng.IntN(40)) * ms
					ev := randomRoleEvent(rng, types)
					for _, a := range n.step(now, ev) {
						if putsItselfForward(ev, a, 9) {
							t.Fatalf("%s %v seed %d step %d (%v): %v", alg, role, seed, i, describe(ev), actLines([]Action{a}))
						}
					}
					if st := n.m.Status(); st.State == StateLeader || st.State == StateCandidate || st.Leader == 9 {
						t.Fatalf("%s %v seed %d step %d: status %+v", alg, role, seed, i, st)
					}
				}
			}
		}
	}
}

// randomRoleEvent is one event of the schedule above: a message of any
// type from node 1 to 4 (or 10, larger than the node under test) with a
// term and a ring body that names others (the node's own number comes
// round a ring only after it put itself forward), or a timer, or a change
// of membership, or a suspicion or a resign.
func randomRoleEvent(rng *rand.Rand, types []wire.Type) Event {
	from := []NodeID{1, 2, 3, 4, 10}[rng.IntN(5)]
	switch rng.IntN(6) {
	case 0:
		return fire(TimerKind(rng.IntN(NumTimers)))
	case 1:
		return []Event{evSuspect, evResign, memberDown(from), memberUp(key(from))}[rng.IntN(4)]
	}
	m := wire.Message{Type: types[rng.IntN(len(types))], From: from, Priority: defPrio,
		Term: uint64(rng.IntN(6)), Seq: rng.Uint32(), Claim: uint32(rng.IntN(4)), AckSeq: uint32(rng.IntN(4))}
	m.Leader = []NodeID{0, from, 9}[rng.IntN(3)]
	m.Origin, m.CandID, m.CandPrio = from, []NodeID{from, 10}[rng.IntN(2)], defPrio
	m.List = []wire.Member{{ID: from, Priority: defPrio}}
	m.Dir, m.Hops = uint8(rng.IntN(2)), uint16(rng.IntN(3))
	return Event{Kind: EvMessage, Msg: m}
}

// In quorum mode a witness acknowledges a claim (its vote) and answers a
// PROBE (a pre-vote); an observer follows the same claim but does
// neither.
func TestRoleWitnessVotesObserverDoesNot(t *testing.T) {
	w := started(t, key(9), keys(1, 2), quorumOf(3), roleOf(RoleWitness), hardened)
	acts := w.step(400*ms, qclaim(wire.TypeHeartbeat, 2, 1, 1))
	if !has(acts, "send HEARTBEAT_ACK to 2 term=1") {
		t.Fatalf("witness: no vote for 2: %q", actStrings(acts))
	}
	w.is(StateFollower, 1, 2)
	if acts := w.step(410*ms, probeMsg(1, 1, 2, 50*ms)); !has(acts, "send VOUCH to 1 term=1") {
		t.Fatalf("witness: no answer to a PROBE: %q", actStrings(acts))
	}

	o := started(t, key(9), keys(1, 2), quorumOf(3), roleOf(RoleObserver), hardened)
	acts = o.step(400*ms, qclaim(wire.TypeHeartbeat, 2, 1, 1))
	if hasKind(acts, ActSend) || !has(acts, fmtFollow(2, 1)) {
		t.Fatalf("observer: %q, want to follow 2 and send nothing", actStrings(acts))
	}
	o.is(StateFollower, 1, 2)
	// A PROBE that asks about an older hearing of 2 is news: answered
	// (stability), but not a pre-vote for 1 from a node it heard long
	// ago...
	if acts := o.step(410*ms, probeMsg(1, 1, 0, 0)); hasKind(acts, ActSend) {
		t.Fatalf("observer: answered a pre-vote PROBE: %q", actStrings(acts))
	}
}

// A witness or observer with no leader that hears a claim of a term
// older than its own tells the claimant with an ANSWER of its term (a
// candidate would elect); the leader then leads on under a fresh term.
// A bully candidate takes no ANSWER from a node that may not lead.
func TestRoleNudgesAStaleLeader(t *testing.T) {
	o := started(t, key(9), keys(1, 5), roleOf(RoleObserver))
	o.step(100*ms, coord(5, 2)) // the leader of term 2, then gone
	o.step(200*ms, memberDown(5))
	o.is(StateFollower, 2, noLeader)
	o.expect(300*ms, heartbeat(1, 1), "send ANSWER to 1 term=2")
	o.is(StateFollower, 2, noLeader)

	l := leaderOf(t, key(1), nil)
	acts := l.step(310*ms, answer(9, 2))
	if !has(acts, "broadcast COORDINATOR to all (0) term=3") {
		t.Fatalf("the leader told of term 2: %q, want a claim of term 3", actStrings(acts))
	}

	c := newNode(t, key(3), keys(1))
	c.step(0, memberAs(key(9), RoleObserver))
	c.step(0, memberUp(key(5)))
	c.step(0, evStart)
	c.expect(tStartup, fire(TimerStartup), "broadcast ELECTION to larger (1) term=0", "set-timer answer at 350ms")
	c.expect(310*ms, answer(9, 2))
	if acts := c.step(311*ms, answer(5, 0)); !has(acts, "set-timer coordinator at 511ms") {
		t.Fatalf("ANSWER of candidate 5: %q", actStrings(acts))
	}
}

// In the ring family a witness or observer with no leader that hears a
// claim of its own term by a smaller key than the one it recognised for
// that term (two leaderships of one term, one each side of a cut, the
// larger since gone) asks the claimant for the term after it; the leader
// leads on under a fresh term, which the observer follows. Before, it
// stayed leaderless for good (the role schedules, ring 7267). Bully's
// observer says nothing, as before.
func TestRoleNudgesALeaderOfItsOwnTerm(t *testing.T) {
	for _, alg := range []string{AlgorithmRing, AlgorithmChangRoberts, AlgorithmHirschbergSinclair} {
		t.Run(alg, func(t *testing.T) {
			o := newMachine(t, alg, key(9), keys(1, 5), roleOf(RoleObserver))
			o.step(0, evStart)
			o.step(100*ms, coord(5, 2)) // the leader of term 2, then gone
			o.step(200*ms, memberDown(5))
			o.is(StateFollower, 2, noLeader)
			o.expect(300*ms, heartbeat(1, 2), "send ANSWER to 1 term=3")
			o.is(StateFollower, 2, noLeader)

			l := newMachine(t, alg, key(1), nil)
			l.step(0, evStart)
			l.step(tStartup, fire(TimerStartup))
			acts := l.step(320*ms, answer(9, 3))
			if !has(acts, "broadcast COORDINATOR to all (0) term=4") {
				t.Fatalf("the leader told of term 3: %q, want a claim of term 4", actStrings(acts))
			}
			o.expect(330*ms, coord(1, 4), fmtFollow(1, 4), "set-timer suspect at 630ms")
		})
	}
	b := started(t, key(9), keys(1, 5), roleOf(RoleObserver))
	b.step(100*ms, coord(5, 2))
	b.step(200*ms, memberDown(5))
	b.expect(300*ms, heartbeat(1, 2))
}

// A candidate in quorum mode does not count an observer's VOUCH as a
// pre-vote: with 1 and observer 3 granting, 2 of N=3 would be a majority.
func TestRoleObserverGrantsNoPrevote(t *testing.T) {
	n := newMachine(t, AlgorithmBully, key(2), keys(1), quorumOf(3), hardened)
	n.step(0, memberAs(key(3), RoleObserver))
	n.step(0, evStart)
	acts := n.step(n.b.deadline[TimerStartup], fire(TimerStartup)) // pre-vote: PROBE to all
	if !slices.ContainsFunc(acts, func(a Action) bool { return a.Msg.Type == wire.TypeProbe }) {
		t.Fatalf("no pre-vote: %q", actStrings(acts))
	}
	if acts := n.step(401*ms, vouch(3, 0, 0, 0)); hasKind(acts, ActBroadcast) {
		t.Fatalf("elected on an observer's grant: %q", actStrings(acts))
	}
	if acts := n.step(402*ms, vouch(1, 0, 0, 0)); !has(acts, "broadcast COORDINATOR to all (2) term=1") {
		t.Fatalf("no claim on a candidate's grant: %q", actStrings(acts))
	}
}

// Bully: a witness or observer with a larger key neither answers the
// ELECTION of a smaller candidate (it would silence it) nor is awaited by
// it: the candidate sends ELECTION only to the larger candidates, and
// with none it leads at once.
func TestRoleBullyLargerNonCandidate(t *testing.T) {
	for _, role := range []Role{RoleWitness, RoleObserver} {
		w := started(t, key(5), keys(1, 2, 3), quorumOf(3), roleOf(role))
		// No leader heard in the listen period: it waits for one.
		w.expect(tStartup, fire(TimerStartup))
		w.is(StateFollower, 0, noLeader)
		w.expect(310*ms, election(3, 0))
		w.is(StateFollower, 0, noLeader)

		n := newNode(t, key(3), keys(1, 2, 4))
		n.step(0, memberAs(key(5), role))
		n.step(0, evStart)
		n.expect(tStartup, fire(TimerStartup),
			"broadcast ELECTION to larger (1) term=0",
			"set-timer answer at 350ms")
		n.step(310*ms, memberDown(4))
		n.is(StateLeader, 1, 3)
		// 5 said it is a candidate after all: it is awaited again.
		n.step(320*ms, memberUp(key(5)))
		if got := n.b.largerCount(); got != 1 {
			t.Fatalf("%v: larger candidates %d after 5 became one, want 1", role, got)
		}
	}
}

// Ring: a witness passes the list on without its own number.
func TestRoleRingWitnessPassesOn(t *testing.T) {
	n := newMachine(t, AlgorithmRing, key(5), keys(1, 2, 3), quorumOf(3), roleOf(RoleWitness))
	n.step(0, evStart)
	ev := claim(wire.TypeRingElection, key(3), 1)
	ev.Msg.Origin, ev.Msg.List = 3, []wire.Member{{ID: 3, Priority: defPrio}}
	acts := n.step(310*ms, ev)
	got := strings.Join(actLines(acts), "\n")
	if !strings.Contains(got, "send RING_ELECTION to 1 term=1 origin=3 list=[3]") || !strings.Contains(got, "send RING_ACK to 3") {
		t.Fatalf("witness on the ring: %s", got)
	}
}

// A witness needs quorum mode; an observer may run with or without it;
// an unknown role is refused.
func TestRoleConfig(t *testing.T) {
	c := DefaultConfig(1)
	c.Role = RoleWitness
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "role witness") {
		t.Fatalf("witness without quorum: %v", err)
	}
	c.Quorum = 3
	if err := c.WithDefaults().Validate(); err != nil {
		t.Fatalf("witness with quorum: %v", err)
	}
	c = DefaultConfig(1)
	c.Role = RoleObserver
	if err := c.Validate(); err != nil {
		t.Fatalf("observer: %v", err)
	}
	c.Role = numRoles
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "role") {
		t.Fatalf("role %d: %v", numRoles, err)
	}
	for i, name := range Roles {
		if r, err := ParseRole(name); err != nil || r != Role(i) || r.String() != name {
			t.Fatalf("ParseRole(%q) = %v, %v", name, r, err)
		}
	}
	if _, err := ParseRole("leader"); err == nil || !strings.Contains(err.Error(), `unknown "leader"`) {
		t.Fatalf("ParseRole(leader): %v", err)
	}
}
