package vips

import (
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

// reannounceEvery bounds the bursts for stale claims: a stale leader
// that cannot hear us claims every heartbeat.
const reannounceEvery = time.Second

// stale is the part's state for the stale claims.
type stale struct {
	reannouncedAt time.Duration // the last burst for a stale claim
	reannounced   bool
	stalePending  bool          // a stale claim's burst waits until staleDue
	staleDue      time.Duration // on the Host's clock
	staleTerm     uint64        // the term this node led when it heard the stale claim
}

// IsStaleClaim: m is another node's claim to lead (a COORDINATOR or a
// HEARTBEAT) that this leader outranks: a lower term, or its own term
// from a smaller key (the other side of a healed partition). A claim
// that outranks it is the machine's to follow, and may take a probe of
// the claimant first: no reason to announce.
func (v *VIPs) IsStaleClaim(m *wire.Message) bool {
	if m.Type != wire.TypeCoordinator && m.Type != wire.TypeHeartbeat || m.From == v.nodeID {
		return false
	}
	st := v.node.Status()
	return st.State == election.StateLeader &&
		(m.Term < st.Term || m.Term == st.Term && (election.Key{Priority: m.Priority, ID: m.From}).Less(st.Self))
}

// StaleClaim runs after the step of a stale claim m heard while this
// node held the addresses. The hosts that heard the stale leader may have
// learnt its MAC for them, so this leader announces them again, but only
// once it is clear that it stays the leader: a stale claimant with a
// larger key takes over when it hears this leader (a preemption, a healed
// partition's other side), and an announcement from here meanwhile would
// draw the traffic away from it and back. So the burst waits two
// heartbeats, by when a stale claimant that outranks this leader has
// heard it and claimed, and goes only if this node still leads in the
// same term (Due).
func (v *VIPs) StaleClaim(m *wire.Message) {
	if !v.held || v.stalePending {
		return
	}
	now := v.host.Now()
	if v.reannounced && now-v.reannouncedAt < reannounceEvery {
		return
	}
	v.stalePending, v.staleDue, v.staleTerm = true, now+v.confirm, v.node.Status().Term
	v.host.Log().Info("a stale leader claims: announcing the virtual addresses again if this node still leads", "from", m.From,
		"type", m.Type.String(), "term", m.Term, "in", v.confirm)
	v.host.Rearm()
}

// Next is when a stale claim's burst is due.
func (v *VIPs) Next() (time.Duration, bool) { return v.staleDue, v.stalePending }

// Due sends the burst StaleClaim deferred, if this node still holds the
// addresses as the leader of the same term.
func (v *VIPs) Due(now time.Duration) {
	if !v.stalePending || now < v.staleDue {
		return
	}
	v.stalePending = false
	st := v.node.Status()
	if !v.held || st.State != election.StateLeader || st.Term != v.staleTerm {
		v.host.Log().Info("no announcement for the stale claim: this node no longer leads in its term", "term", v.staleTerm)
		return
	}
	v.reannounced, v.reannouncedAt = true, now
	v.host.Log().Info("announcing the virtual addresses again after a stale claim", "term", st.Term)
	v.holder.Reannounce(false)
}
