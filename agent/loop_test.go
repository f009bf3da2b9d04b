package agent

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

// The loop's timer and a packet received before its deadline come in the
// order they happened: a claimant whose ClaimWait has run out while the
// acknowledgement that gives it its majority waits in the queue (a loop
// that fell behind) leads, instead of giving the claim up. select picks
// at random among ready cases, and under a loaded 128-host start the
// claimant handled its timeouts before acknowledgements that had waited
// up to 2.8 s in its queue, claim after claim.
func TestQueuedPacketsBeforeTheTimer(t *testing.T) {
	for _, queued := range []bool{true, false} {
		cfg := testConfig("node-3", 3)
		cfg.Quorum = 3
		cfg.DeriveTimeouts()
		h := newHandLoop(t, cfg, []uint64{1, 2}, func(uint64) bool { return false })
		a, l := h.a, &h.a.loop
		a.step(0, election.Event{Kind: election.EvStart})
		// Its pre-vote, granted by node-1, then its claim.
		h.fire(func(election.Status) bool { return h.sink.sent[wire.TypeProbe] == 0 })
		h.now += time.Millisecond
		a.step(h.now, election.Event{Kind: election.EvMessage, Msg: wire.Message{Type: wire.TypeVouch, From: 1, Priority: 100, Age: wire.MaxAge}})
		h.fire(func(election.Status) bool { return h.sink.sent[wire.TypeCoordinator] == 0 })
		st := a.machine.Status()
		if st.State != election.StateCandidate || !l.armed[election.TimerLease] {
			t.Fatalf("node-3 claims: %+v, lease timer armed %v; want a candidate awaiting its majority", st, l.armed[election.TimerLease])
		}
		// It claims again every heartbeat, unanswered, until just before
		// the claim's end; then node-1's acknowledgement of its latest
		// claim comes, but waits in the queue while the loop's clock
		// passes the claim's end.
		claimEnd := l.deadline[election.TimerLease]
		h.fireBefore(claimEnd)
		if st := a.machine.Status(); st.State != election.StateCandidate || h.sink.claim < 2 {
			t.Fatalf("before the claim's end: %+v, %d claims; want a candidate that claimed again", st, h.sink.claim)
		}
		a.epoch = time.Now().Add(-claimEnd - time.Millisecond)
		if queued {
			a.pkts <- packet{msg: wire.Message{Type: wire.TypeHeartbeatAck, From: 1, Priority: 100, Term: st.Term, AckSeq: h.sink.claim}, at: claimEnd - time.Millisecond}
		}
		a.onTimer()
		st = a.machine.Status()
		switch {
		case queued && st.State != election.StateLeader:
			t.Errorf("node-1's acknowledgement, received before the claim's end, waited in the queue: node-3 is %v (term %d), want the leader", st.State, st.Term)
		case !queued && st.State == election.StateLeader:
			t.Errorf("no acknowledgement: node-3 leads (%+v)", st)
		}
	}
}
