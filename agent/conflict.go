package agent

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/lanleader/lanleader/agent/internal/gossip"
	"github.com/lanleader/lanleader/agent/internal/meta"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

// Node_id conflicts: a cloned host (the same /etc/machine-id, so the same
// default node_id, and often the same name) is told apart from this node
// by its source address; both go to state conflict and neither leads
// while the evidence is fresh (conflictMemory).

// onNameConflict: memberlist found two nodes with one name; with this
// node's, another node is a clone whose election address is noted.
func (a *Agent) onNameConflict(ev memberEvent) {
	l := &a.loop
	now := a.now()
	if ev.name != a.cfg.Name {
		// Reported with memberlist's own line at each exchange that
		// carries it: once a minute, as that line (gossip.LogWriter).
		if ok, held := l.conflictLog.Allow(ev.name + " " + ev.addr + " " + ev.detail); ok {
			a.log.Error("two other nodes use one name; names must be unique", "name", ev.name, "addr", ev.addr, "other_addr", ev.detail,
				"repeated", held, "over", gossip.ConflictLogEvery)
		}
		return
	}
	// Another node has this node's name (a cloned host?): memberlist
	// cannot list it, so the election would not know of it.
	if _, seen := l.evidence["name "+ev.name+" at "+ev.detail]; !seen {
		a.log.Error("another node uses this node's name; names must be unique", "name", ev.name, "other_addr", ev.detail)
	}
	l.evidence["name "+ev.name+" at "+ev.detail] = now
	// Its metadata says where its election socket is: that is where
	// noticeClones keeps this evidence fresh at the other node
	// (memberlist itself repeats the conflict only at its state
	// exchanges, every 30 s or more).
	if md, err := meta.Decode(ev.meta); err == nil && md.Election.IsValid() && onGossipAddr(md.Election, ev.detail) {
		l.clones[md.Election] = now
	}
	a.checkConflict()
}

// cloneEvidence names the evidence of a packet with this node's node_id
// id from src, in /status's conflict list.
func cloneEvidence(id uint64, src netip.AddrPort) string {
	return "node_id " + strconv.FormatUint(id, 10) + " at " + src.String()
}

// onClonePacket: a packet with this node's node_id came from another
// address than this node's (ident.Conflict): another live node uses this
// node's node_id. It puts this node in state conflict for conflictMemory
// after the last such packet, and says at error level where the other is.
func (a *Agent) onClonePacket(p packet) {
	l := &a.loop
	what := cloneEvidence(p.msg.From, p.src)
	if _, seen := l.evidence[what]; !seen {
		a.log.Error("another node sends election packets with this node's node_id (a cloned host?); node_ids must be unique",
			"node_id", p.msg.From, "other_addr", p.src.String(), "type", p.msg.Type.String())
	}
	l.evidence[what] = p.at
	_, known := l.clones[p.src]
	was := len(l.conflict) > 0
	if p.src.IsValid() {
		l.clones[p.src] = p.at
	}
	a.checkConflict()
	if !known && was && p.src.IsValid() {
		// A node with this node_id not heard of before, while this one
		// is in conflict already (entering it told every one known):
		// it learns of the conflict now, not at the next housekeeping
		// round. It may have started after this node's last packet, and
		// lead meanwhile. (It answers at most once: this node is then
		// known to it.)
		a.sendNotice(p.src)
	}
}

// noticeClones: a node in conflict claims nothing and sends no
// heartbeats, so the evidence it gave the others with its node_id would
// age out after conflictMemory, and both would lead again, hear each
// other, and go back to conflict: a flap of leaderships every
// conflictMemory. So while in conflict it sends every node it knows to
// use its node_id or its name a beacon (DISCOVER), by unicast to its
// election address, every housekeeping round. A beacon because it moves
// no election: to a node with this node_id it is evidence, dropped
// before anything reads it; to a node with this name it renews the name
// evidence (renewsName); to a node that has since taken that address, it
// announces this node's gossip address, which it may join.
func (a *Agent) noticeClones() {
	l := &a.loop
	if len(l.conflict) == 0 || l.leaving {
		return
	}
	to := make([]netip.AddrPort, 0, len(l.clones)+1)
	for addr := range l.clones {
		to = append(to, addr)
	}
	for _, m := range l.members {
		if m.alive() && m.metaOK && m.meta.NodeID == a.cfg.NodeID && !slices.Contains(to, m.meta.Election) {
			to = append(to, m.meta.Election)
		}
	}
	a.sendNotice(to...)
}

// sendNotice sends the beacon of noticeClones to each of to.
func (a *Agent) sendNotice(to ...netip.AddrPort) {
	if len(to) == 0 {
		return
	}
	b := a.encode(a.discoverMsg())
	if b == nil {
		return
	}
	for _, dst := range to {
		a.sendTo(b, dst, wire.TypeDiscover)
		a.met.MessagesSent.WithLabelValues(wire.TypeDiscover.String()).Inc()
	}
}

// renewsName: a beacon from the gossip address of a node that memberlist
// reported to use this node's name (a node in conflict sends one every
// housekeeping round, noticeClones) renews that evidence, and is not
// joined: memberlist would only report the conflict again.
func (a *Agent) renewsName(p packet) bool {
	l := &a.loop
	what := "name " + a.cfg.Name + " at " + p.msg.Addr.String()
	if _, ok := l.evidence[what]; !ok {
		return false
	}
	l.evidence[what] = p.at
	return true
}

// checkConflict: a live member with this node's node_id puts the node in
// state conflict until it is gone.
func (a *Agent) checkConflict() {
	l := &a.loop
	var names []string
	for _, m := range l.members {
		if m.alive() && m.metaOK && m.meta.NodeID == a.cfg.NodeID {
			names = append(names, m.name)
		}
	}
	now, memory := a.now(), conflictMemory
	if a.seams.conflictMemory > 0 {
		memory = a.seams.conflictMemory
	}
	for what, at := range l.evidence {
		if now-at > memory {
			delete(l.evidence, what)
			continue
		}
		names = append(names, what)
	}
	for addr, at := range l.clones {
		if now-at > memory {
			delete(l.clones, addr)
		}
	}
	slices.Sort(names)
	if slices.Equal(names, l.conflict) {
		return
	}
	was := len(l.conflict) > 0
	l.conflict = names
	switch {
	case len(names) > 0 && !was:
		a.log.Error("node_id conflict: another live member has this node's node_id; neither leads until it is fixed (set --node-id)",
			"node_id", a.cfg.NodeID, "name", a.cfg.Name, "others", strings.Join(names, ","))
		a.step(a.now(), election.Event{Kind: election.EvConflict, On: true})
		// The others with this node_id learn of it now rather than at
		// the next housekeeping round.
		a.noticeClones()
	case len(names) == 0 && was:
		a.log.Info("node_id conflict resolved", "node_id", a.cfg.NodeID)
		a.step(a.now(), election.Event{Kind: election.EvConflict, On: false})
	}
	l.dirty = true
}
