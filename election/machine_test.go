package election

import (
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// New builds the machine the configuration names; the empty name is
// bully, the default.
func TestNewSelectsTheAlgorithm(t *testing.T) {
	for _, name := range append([]string{""}, Algorithms...) {
		cfg := DefaultConfig(1)
		cfg.Algorithm = name
		m, err := New(cfg)
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		want := name
		if want == "" {
			want = AlgorithmBully
			if _, ok := m.(*Bully); !ok {
				t.Errorf("New(\"\") = %T, want *Bully", m)
			}
		}
		if m.Algorithm() != want || m.Config().Algorithm != want {
			t.Errorf("New(%q): Algorithm() = %q, Config().Algorithm = %q, want %q", name, m.Algorithm(), m.Config().Algorithm, want)
		}
	}
}

// An unknown name is refused, by Validate and by New, naming the key and
// the names it accepts; a ring name given to NewBully is refused too.
func TestUnknownAlgorithmIsRefused(t *testing.T) {
	cfg := DefaultConfig(1)
	cfg.Algorithm = "token-ring"
	for _, err := range []error{cfg.Validate(), func() error { _, err := New(cfg); return err }()} {
		if err == nil || !strings.Contains(err.Error(), `algorithm: unknown "token-ring"`) || !strings.Contains(err.Error(), "hirschberg-sinclair") {
			t.Errorf("err = %v, want it to name the algorithm and list the known ones", err)
		}
	}
	cfg.Algorithm = AlgorithmRing
	if _, err := NewBully(cfg); err == nil {
		t.Error("NewBully accepted algorithm ring")
	}
}

// RoundWait: bully waits for COORDINATOR; the ring family for its laps of
// n hops of T/2 each.
func TestRoundWait(t *testing.T) {
	for _, tc := range []struct {
		alg  string
		n    int
		want time.Duration
	}{
		{AlgorithmBully, 5, tCoord},
		{AlgorithmRing, 5, tCoord + 2*5*tAnswer/2},
		{AlgorithmChangRoberts, 5, tCoord + 3*5*tAnswer/2},
		{AlgorithmHirschbergSinclair, 8, tCoord + 9*8*tAnswer/2},
	} {
		cfg := DefaultConfig(1)
		cfg.Algorithm = tc.alg
		if got := RoundWait(cfg, tc.n); got != tc.want {
			t.Errorf("RoundWait(%s, %d) = %v, want %v", tc.alg, tc.n, got, tc.want)
		}
	}
}

// The ring order: by key (priority first), ascending by default;
// descending; or shuffled alike on every node.
func TestRingOrder(t *testing.T) {
	members := []Key{{100, 9}, {150, 1}, {100, 2}, {50, 7}}
	self := Key{100, 5}
	order := func(o RingOrder) []NodeID {
		n := newMachine(t, AlgorithmRing, self, members, func(c *Config) { c.RingOrder = o })
		r := n.m.(*ringList)
		r.rebuild()
		var ids []NodeID
		for _, k := range r.order {
			ids = append(ids, k.ID)
		}
		return ids
	}
	if got, want := order(RingOrder{}), []NodeID{7, 2, 5, 9, 1}; !equalIDs(got, want) {
		t.Errorf("by key: %v, want %v", got, want)
	}
	if got, want := order(RingOrder{Descending: true}), []NodeID{1, 9, 5, 2, 7}; !equalIDs(got, want) {
		t.Errorf("descending: %v, want %v", got, want)
	}
	a, b := order(RingOrder{Shuffle: 3}), order(RingOrder{Shuffle: 3})
	if !equalIDs(a, b) || equalIDs(a, order(RingOrder{})) && equalIDs(a, order(RingOrder{Shuffle: 4})) {
		t.Errorf("shuffled: %v and %v", a, b)
	}
}

func equalIDs(a, b []NodeID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzStepRing is FuzzStep for the ring family: arbitrary events,
// including the ring messages of every algorithm with any body, and what
// must hold after every step: no panic, the term never goes down, a leader
// leads itself, a candidate waits for its round's result, no message with
// a term beyond MaxTerm.
func FuzzStepRing(f *testing.F) {
	f.Add(uint8(0), []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add(uint8(1), []byte("\x01\x03\x05\x02\x04\x00\x07\x09\x11\x13\x21\x31\x41\x51"))
	f.Add(uint8(2), []byte{2, 0, 2, 0, 2, 0, 2, 0, 1, 2, 3, 1, 2, 3, 255, 255, 0, 0})
	f.Fuzz(func(t *testing.T, alg uint8, data []byte) {
		cfg := DefaultConfig(3)
		cfg.Algorithm = Algorithms[1+int(alg)%3]
		cfg.Preempt = len(data)%2 == 0
		m, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Duration(0)
		for id := NodeID(1); id <= 5; id++ {
			m.Step(now, memberUp(key(id)))
		}
		m.Step(now, Event{Kind: EvStart})
		var lastTerm uint64
		types := []wire.Type{wire.TypeRingElection, wire.TypeRingCoordinator, wire.TypeRingAck, wire.TypeCRElection,
			wire.TypeCRElected, wire.TypeHSProbe, wire.TypeHSReply, wire.TypeCoordinator, wire.TypeHeartbeat, wire.TypeResign}
		for i := 0; i+2 < len(data); i += 3 {
			op, arg, b := data[i], data[i+1], data[i+2]
			now += time.Duration(arg%64) * 5 * time.Millisecond
			var ev Event
			switch op % 8 {
			case 0, 1, 2, 3:
				msg := wire.Message{
					Type: types[int(op/8)%len(types)], From: NodeID(1 + arg%5),
					Priority: []uint16{100, 50, 150}[int(arg/5)%3],
					Term:     uint64(b % 8),
					CandID:   NodeID(b % 7), CandPrio: 100, Phase: b % 5, Hops: uint16(b % 9), Dir: b % 3,
					Origin: NodeID(arg % 6), AckSeq: uint32(b),
				}
				for k := range int(b % 6) {
					msg.List = append(msg.List, wire.Member{ID: NodeID((int(arg) + k) % 7), Priority: 100})
				}
				ev = Event{Kind: EvMessage, Msg: msg}
			case 4:
				ev = Event{Kind: EvTimer, Timer: TimerKind(arg % uint8(numTimers+1))}
			case 5:
				ev = Event{Kind: []EventKind{EvMemberUp, EvMemberDown}[b%2], Member: Key{Priority: []uint16{100, 50, 150}[arg%3], ID: NodeID(arg % 7)}}
			case 6:
				ev = Event{Kind: []EventKind{EvSuspectLeader, EvResign, EvStart}[arg%3]}
			case 7:
				if b%2 == 0 {
					ev = Event{Kind: EvSetPriority, Priority: uint16(arg)}
				} else {
					ev = Event{Kind: EvConflict, On: arg%2 == 0}
				}
			}
			acts := m.Step(now, ev)
			st := m.Status()
			if st.Term < lastTerm {
				t.Fatalf("step %d (%v): term went down from %d to %d", i/3, describe(ev), lastTerm, st.Term)
			}
			lastTerm = st.Term
			if st.State == StateLeader && st.Leader != st.Self.ID {
				t.Fatalf("step %d: leader state but leader=%d", i/3, st.Leader)
			}
			if st.Leader != 0 && st.LeaderKey.ID != st.Leader {
				t.Fatalf("step %d: leader %d with key %v", i/3, st.Leader, st.LeaderKey)
			}
			c := coreOf(m)
			if st.State == StateLeader && !c.armed[TimerHeartbeat] {
				t.Fatalf("step %d: a leader with no heartbeat timer", i/3)
			}
			if st.State == StateCandidate && !c.armed[TimerCoordinator] {
				t.Fatalf("step %d (%v): a candidate not waiting for its round", i/3, describe(ev))
			}
			for _, a := range acts {
				if (a.Kind == ActSend || a.Kind == ActBroadcast) && a.Msg.Term > MaxTerm {
					t.Fatalf("step %d: sends term %d", i/3, a.Msg.Term)
				}
				if _, err := a.Msg.Append(nil); a.Kind == ActSend && err != nil {
					t.Fatalf("step %d: sends a message that does not encode: %v", i/3, err)
				}
			}
		}
	})
}

// coreOf returns the shared core of a ring machine.
func coreOf(m Machine) *core {
	switch r := m.(type) {
	case *ringList:
		return &r.core
	case *changRoberts:
		return &r.core
	case *hirschbergSinclair:
		return &r.core
	case *Bully:
		return &r.core
	}
	return nil
}

// The core has none of an elector's optional parts: one would be promoted
// to every family, and the core would call itself for it.
func TestCoreHasNoOptionalElectorPart(t *testing.T) {
	var c any = &core{}
	if _, ok := c.(candidacyLeaver); ok {
		t.Error("core has left()")
	}
	if _, ok := c.(leaderLoser); ok {
		t.Error("core has leaderLost()")
	}
	if _, ok := c.(membersWatcher); ok {
		t.Error("core has membersChanged()")
	}
	for _, m := range []any{&ringList{}, &changRoberts{}, &hirschbergSinclair{}} {
		if _, ok := m.(candidacyLeaver); ok {
			t.Errorf("%T has left(), which only bully uses", m)
		}
		if _, ok := m.(leaderLoser); ok {
			t.Errorf("%T has leaderLost(), which only bully uses", m)
		}
	}
	if _, ok := any(&Bully{}).(membersWatcher); ok {
		t.Error("Bully has membersChanged(), which only the ring family uses")
	}
}
