package election

import (
	"github.com/lanleader/lanleader/wire"
)

// hirschbergSinclair is Hirschberg–Sinclair on a bidirectional ring, as
// the Czech text (shared/seeds 003) describes it, with the distances of
// the original paper and the hardening of textbook_ring.go:
//
//  1. The process that starts the election declares itself a candidate
//     and sends its candidacy to both neighbours (sendLR: HS_PROBE of
//     phase 0 to the right and to the left).
//  2. A probe of phase k travels 2^k hops. A process that receives a probe
//     compares its identifier with its own: a smaller one is dropped
//     (and a process not yet taking part starts as a candidate itself); a
//     larger one makes the process lose, and is passed on (pass) until it
//     has gone 2^k hops, where it is answered (respond: HS_REPLY back the
//     way it came).
//  3. A process that has lost only passes messages on.
//  4. A candidate that gets both replies of phase k goes on to phase k+1
//     with twice the distance.
//  5. The election ends when the winner receives its own probe: it went
//     all the way round, so no process is larger. O(n log n) messages, at
//     most 8n(log2 n + 1).
//  6. The winner, which alone knows, sends ELECTED once round (as
//     Chang–Roberts does: CR_ELECTED), and leads with the round's term.
//
// Each message costs a RING_ACK. Wire types: HS_PROBE, HS_REPLY,
// CR_ELECTED, RING_ACK, and the core's COORDINATOR, HEARTBEAT and RESIGN.
type hirschbergSinclair struct {
	ringCore
	// candidate: still competing in round roundTerm, in phase phase;
	// replies has bit 1<<dir set for each direction a reply of that phase
	// came back travelling in.
	candidate bool
	phase     uint8
	replies   uint8
	// passed: the probes and replies this node passed on (or answered) in
	// round roundTerm; for a probe, the node it came from, to which its
	// reply goes back.
	passed map[hsPassed]NodeID
}

type hsPassed struct {
	reply bool
	cand  NodeID
	phase uint8
	dir   uint8
}

// hsMaxPhase: 2^hsMaxPhase hops is more than any ring (wire.MaxMembers):
// a probe of that phase has gone round. A later phase is malformed.
const hsMaxPhase = 16

func newHirschbergSinclair(cfg Config) (*hirschbergSinclair, error) {
	r := &hirschbergSinclair{passed: make(map[hsPassed]NodeID)}
	return newRingMachine(cfg, AlgorithmHirschbergSinclair, r, &r.ringCore)
}

// lapFactor: phase k takes 2·2^k hops out and back, and the phase whose
// probe goes round has 2^k < 2n: at most 8n hops, then ELECTED once round.
func (r *hirschbergSinclair) lapFactor() int { return 9 }

// join makes round t this node's, not yet a candidate.
func (r *hirschbergSinclair) join(t uint64, origin Key) {
	r.newRound(t, origin)
	r.candidate, r.phase, r.replies = false, 0, 0
	clear(r.passed)
}

// elect is step 1.
func (r *hirschbergSinclair) elect() {
	if _, ok := r.next(wire.DirRight); !ok {
		r.alone()
		return
	}
	r.join(r.propose(), r.self)
	r.participate()
	r.candidate = true
	r.probe(0)
}

// probe sends this candidate's probes of phase k both ways (sendLR).
func (r *hirschbergSinclair) probe(k uint8) {
	r.phase, r.replies = k, 0
	for _, dir := range [...]uint8{wire.DirRight, wire.DirLeft} {
		m := r.msg(wire.TypeHSProbe, r.roundTerm)
		m.CandID, m.CandPrio, m.Phase, m.Hops, m.Dir = r.self.ID, r.self.Priority, k, 1, dir
		if !r.sendHop(m, dir) {
			r.alone()
			return
		}
	}
}

func (r *hirschbergSinclair) onMessage(m *wire.Message, from Key) {
	switch m.Type {
	case wire.TypeRingAck:
		r.onAck(m)
	case wire.TypeHSProbe, wire.TypeHSReply:
		if !r.receive(m, from) {
			return
		}
		if m.CandID == 0 || m.Dir > wire.DirRight || m.Phase > hsMaxPhase || r.stale(m.Term) {
			return
		}
		if m.Type == wire.TypeHSProbe {
			r.onProbe(m)
		} else {
			r.onReply(m)
		}
	case wire.TypeCRElected:
		if r.receive(m, from) {
			r.onElected(m)
		}
	}
}

// onProbe is steps 2, 3 and 5.
func (r *hirschbergSinclair) onProbe(m *wire.Message) {
	j, t := Key{Priority: m.CandPrio, ID: m.CandID}, m.Term
	joined := t > r.roundTerm
	if joined {
		r.join(t, j)
	}
	switch {
	case j.ID == r.self.ID:
		// Step 5: its own probe came back round the ring.
		r.candidate = false
		r.lead(t, false)
		r.announce(t) // step 6
	case r.state == StateLeader && j.Less(r.self):
		// A smaller node suspects this leader: see textbook_ring.go.
		r.reassert()
	case j.Less(r.self) && !r.passive():
		// Step 2: dropped. A process that was not taking part starts as a
		// candidate.
		if joined {
			r.candidate = true
			r.participate()
			r.probe(0)
		}
	default:
		// Step 3: a larger identifier (or any, in a resign hold-off or
		// as a witness or observer): this process has lost, and passes
		// the probe on or answers it.
		if r.self.Less(j) {
			r.candidate = false
		}
		r.see(j)
		if joined && !r.passive() {
			r.participate()
		}
		if !r.mark(hsPassed{cand: j.ID, phase: m.Phase, dir: m.Dir}, m.From) {
			return
		}
		if m.Hops < 1<<m.Phase {
			fwd := r.relay(m)
			fwd.Hops++
			r.forward(fwd)
			return
		}
		// respond: the reply goes back to the neighbour the probe came
		// from (which, if it skipped a node, is not this node's
		// neighbour on its own ring).
		reply := r.relay(m)
		reply.Type, reply.Dir = wire.TypeHSReply, reverse(m.Dir)
		r.sendHopTo(m.From, reply, reply.Dir)
	}
}

// onReply is steps 3 and 4.
func (r *hirschbergSinclair) onReply(m *wire.Message) {
	if m.Term > r.roundTerm {
		return // the reply of a round this node never saw
	}
	if m.CandID != r.self.ID {
		if r.mark(hsPassed{reply: true, cand: m.CandID, phase: m.Phase, dir: m.Dir}, m.From) {
			// Back the way the probe came, to the node it came from.
			if from, ok := r.passed[hsPassed{cand: m.CandID, phase: m.Phase, dir: reverse(m.Dir)}]; ok {
				r.sendHopTo(from, r.relay(m), m.Dir)
			} else {
				r.forward(r.relay(m))
			}
		}
		return
	}
	if !r.candidate || m.Phase != r.phase {
		return
	}
	r.replies |= 1 << m.Dir
	if r.replies == 1<<wire.DirLeft|1<<wire.DirRight && r.phase < hsMaxPhase {
		r.probe(r.phase + 1) // step 4
	}
}

// mark records that this node passes on the message of key p, which came
// from node from, in this round; false if it already did.
func (r *hirschbergSinclair) mark(p hsPassed, from NodeID) bool {
	if _, ok := r.passed[p]; ok {
		return false
	}
	r.passed[p] = from
	return true
}

// forward sends m on in its direction of travel.
func (r *hirschbergSinclair) forward(m wire.Message) {
	if !r.sendHop(m, m.Dir) && r.state == StateCandidate {
		r.alone()
	}
}

// stop: the round is over for this node once it recognises a leadership
// at least as late.
func (r *hirschbergSinclair) stop() {
	r.ringCore.stop()
	if !r.open {
		r.candidate = false
	}
}
