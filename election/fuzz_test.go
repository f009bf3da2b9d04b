package election

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// FuzzStep drives one machine with an arbitrary event sequence decoded
// from the fuzzer's bytes — messages of every type from five peers with
// any term, timers, membership changes, suspicions, resigns, priority
// changes, conflicts, with time moving forward — and checks after every
// step what must hold whatever arrives: no panic, the term never goes
// down, a leader leads itself, a known leader's key is its key, the
// machine's timers are consistent with its state.
func FuzzStep(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte("\x01\x03\x05\x02\x04\x00\x07\x09\x11\x13\x21\x31\x41\x51"))
	f.Add([]byte{2, 0, 2, 0, 2, 0, 2, 0, 1, 2, 3, 1, 2, 3, 255, 255, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := DefaultConfig(3)
		cfg.Preempt = len(data)%2 == 0
		if len(data)%3 == 0 {
			cfg.PreemptDelay = 150 * time.Millisecond
		}
		if len(data)%5 == 0 {
			cfg.Quorum = 5
		}
		b, err := NewBully(cfg)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Duration(0)
		b.Step(now, Event{Kind: EvStart})
		var lastTerm uint64
		types := []wire.Type{wire.TypeElection, wire.TypeAnswer, wire.TypeCoordinator, wire.TypeHeartbeat, wire.TypeResign, wire.TypeHeartbeatAck}
		terms := []uint64{0, 1, 2, 3, 5, 8, MaxTerm, 1<<64 - 1}
		for i := 0; i+1 < len(data); i += 2 {
			op, arg := data[i], data[i+1]
			now += time.Duration(arg%64) * 5 * time.Millisecond
			var ev Event
			switch op % 9 {
			case 0, 1, 2:
				from := NodeID(1 + arg%5) // 1..5, 3 is itself
				ev = Event{Kind: EvMessage, Msg: wire.Message{
					Type: types[int(op/9)%len(types)], From: from,
					Priority: []uint16{100, 50, 150}[int(arg/5)%3],
					Term:     terms[int(op/3)%len(terms)] + uint64(arg%3),
					Seq:      uint32(i / 4), AckSeq: uint32(arg % 7),
				}}
			case 3:
				ev = Event{Kind: EvTimer, Timer: TimerKind(arg % uint8(numTimers+1))}
			case 4:
				ev = Event{Kind: EvMemberUp, Member: Key{Priority: []uint16{100, 50, 150}[arg%3], ID: NodeID(arg % 6)}}
			case 5:
				ev = Event{Kind: EvMemberDown, Member: Key{ID: NodeID(arg % 6)}}
			case 6:
				ev = Event{Kind: []EventKind{EvSuspectLeader, EvResign, EvStart}[arg%3]}
			case 7:
				ev = Event{Kind: EvSetPriority, Priority: uint16(arg)}
			case 8:
				ev = Event{Kind: EvConflict, On: arg%2 == 0}
			}
			acts := b.Step(now, ev)
			st := b.Status()
			if st.Term < lastTerm {
				t.Fatalf("step %d (%v): term went down from %d to %d", i/2, describe(ev), lastTerm, st.Term)
			}
			lastTerm = st.Term
			if st.State == StateLeader && st.Leader != st.Self.ID {
				t.Fatalf("step %d: leader state but leader=%d", i/2, st.Leader)
			}
			if st.Leader != 0 && st.LeaderKey.ID != st.Leader {
				t.Fatalf("step %d: leader %d with key %v", i/2, st.Leader, st.LeaderKey)
			}
			if st.Leader == 0 && st.LeaderKey != (Key{}) {
				t.Fatalf("step %d: no leader but key %v", i/2, st.LeaderKey)
			}
			if st.State == StateLeader && !b.armed[TimerHeartbeat] {
				t.Fatalf("step %d: a leader with no heartbeat timer", i/2)
			}
			if cfg.Quorum > 0 && st.State == StateLeader && now >= st.LeaseUntil {
				t.Fatalf("step %d: leads at %v with a lease until %v", i/2, now, st.LeaseUntil)
			}
			if st.State == StateCandidate && !b.armed[TimerAnswer] && !b.armed[TimerCoordinator] && !(cfg.Quorum > 0 && b.armed[TimerLease]) {
				t.Fatalf("step %d: a candidate waiting for nothing (phase %d)", i/2, b.phase)
			}
			for _, a := range acts {
				if (a.Kind == ActSend || a.Kind == ActBroadcast) && a.Msg.Term > MaxTerm {
					t.Fatalf("step %d: sends term %d", i/2, a.Msg.Term)
				}
			}
		}
	})
}
