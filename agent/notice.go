package agent

// The crashed leader's notice (wire.TypeNotice): while this node leads,
// its notice guard (proc.Notifier, a child told of the agent's death)
// holds a NOTICE of the current term, built and signed here, and where to
// send it: the multicast group, or every member's election address. If
// the agent dies (SIGKILL, a panic, the OOM killer), the guard sends it
// once no process of the job is left and the address keeper has removed
// the virtual addresses (it holds the guard's pipe: vips.go, Node.Hold),
// and the others elect at once, as after a RESIGN, instead of waiting for
// their failure detector.
//
// Why a packet signed beforehand rather than the key in the guard: the
// guard never holds the cluster's key, so a guard (or its memory, or its
// environment) gives nothing that signs anything else; what it holds
// says only "the leadership of this node in this term is over", which is
// true once it is sent, and harmless if replayed (a receiver acts on it
// only while it follows this node in exactly that term, and takes it once
// per sender, incarnation and term: agent/internal/auth, CheckNotice).
// Its sequence number is not used; the price is a rebuild at each new
// term and each change of the destinations, a few per leadership.
//
// With --job-unit there is no notice guard: systemd, not a guard of
// ours, stops the unit when the agent dies, and nothing here could tell
// when it has stopped; the others' detector finds the crash as before.
// Witnesses and observers never lead and have none either.

import (
	"net/netip"
	"slices"

	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/agent/internal/udp"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

// noticeState is the loop's record of what the notice guard holds.
type noticeState struct {
	set  bool // it holds a notice
	term uint64
	inc  uint32
	prio uint16
	dsts []netip.AddrPort
}

// startNotifier starts the notice guard, when this node may lead and runs
// no job unit, and gives the job's guards its pipe. A guard that cannot
// start costs the fast failover only.
func (a *Agent) startNotifier(iface string) {
	if a.cfg.JobUnit != "" || !a.cfg.ElectionRole().MayLead() {
		return
	}
	n, err := proc.StartNotifier(a.tr.Local, iface)
	if err != nil {
		a.log.Warn("no notice guard: if this agent crashes while it leads, the others find it by their failure detector", "err", err)
		return
	}
	a.notice = n
	if a.procs.sup != nil {
		a.procs.sup.SetHold(n.Hold())
	}
}

// stopNotifier ends the notice guard without a notice: a graceful stop
// (the agent resigns itself), or a crash in a process that lives on.
func (a *Agent) stopNotifier() {
	if a.notice != nil {
		a.notice.Stop()
	}
}

// updateNotice gives the notice guard the notice of this leadership, or
// takes it back when this node no longer leads. dsts: the destinations
// are looked at again (a membership change); otherwise only a change of
// the term, the incarnation or the priority rebuilds the notice.
func (a *Agent) updateNotice(dsts bool) {
	n := &a.loop.notice
	if a.notice == nil {
		return
	}
	st := a.machine.Status()
	if st.State != election.StateLeader || a.loop.leaving {
		if n.set {
			a.notice.Clear()
			n.set = false
		}
		return
	}
	inc := a.inc.Load()
	same := n.set && n.term == st.Term && n.inc == inc && n.prio == st.Self.Priority
	if same && !dsts {
		return
	}
	to := a.noticeDsts()
	if same && slices.Equal(to, n.dsts) {
		return
	}
	m := wire.Message{Type: wire.TypeNotice, Cluster: a.cluster, From: a.cfg.NodeID, Priority: st.Self.Priority,
		Term: st.Term, Incarnation: inc}
	if a.loop.mac != nil {
		m.Flags |= wire.FlagAuth
	}
	b, err := m.Append(nil)
	if err != nil {
		a.log.Error("encode", "type", m.Type.String(), "err", err)
		return
	}
	if a.loop.mac != nil {
		b = a.loop.mac.Seal(b)
	}
	a.notice.Set(b, to)
	*n = noticeState{set: true, term: st.Term, inc: inc, prio: st.Self.Priority, dsts: to}
}

// noticeDsts is where this node's election broadcasts go now: the group,
// or every live member and recent peer (as fanOut), sorted.
func (a *Agent) noticeDsts() []netip.AddrPort {
	if a.tr.Group.IsValid() {
		return []netip.AddrPort{a.tr.Group}
	}
	l := &a.loop
	var to []netip.AddrPort
	seen := map[uint64]bool{a.cfg.NodeID: true}
	for _, m := range l.members {
		if m.alive() && m.metaOK && !seen[m.meta.NodeID] {
			seen[m.meta.NodeID] = true
			to = append(to, m.meta.Election)
		}
	}
	now := a.now()
	for id, p := range l.peers {
		if !seen[id] && now-p.seen <= peerMemory {
			seen[id] = true
			to = append(to, p.addr)
		}
	}
	slices.SortFunc(to, func(x, y netip.AddrPort) int { return x.Compare(y) })
	return slices.Compact(to)
}

// noticeSend is how a notice guard of this program sends.
var noticeSend proc.NoticeSend = udp.SendFrom
