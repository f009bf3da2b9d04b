package agent

// Membership as the event loop sees it: memberlist's events applied to
// the members map and the election, node_id and name conflicts, discovery
// beacons, and the once-a-second housekeeping.

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/lanleader/lanleader/agent/internal/gossip"
	"github.com/lanleader/lanleader/agent/internal/meta"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

// member is another member as the loop knows it.
type member struct {
	name     string
	addr     string // memberlist address
	status   string // alive, suspect, dead, left
	meta     meta.Meta
	metaOK   bool
	changed  time.Duration
	warnedMD bool
}

func (m *member) alive() bool { return m.status == "alive" || m.status == "suspect" }

// Housekeeping: discovery beacons, memberlist's suspect states, pruning.
const (
	housekeepEvery = time.Second
	// deadRetention is how long a dead or departed member stays in /status.
	deadRetention = 10 * time.Minute
	// kickEvery bounds how often one process's beacon address is joined
	// (a newcomer beacons every second until it has a peer); a process
	// that says it is alone (wire.FlagAlone) is joined again after
	// aloneKickEvery, and a new process at the address (another
	// incarnation: it restarted) at once.
	kickEvery      = 5 * time.Second
	aloneKickEvery = time.Second
	// conflictMemory is how long evidence of a node_id conflict that
	// memberlist does not list as a member (a packet with this node's
	// node_id from another address, another node with this node's name)
	// keeps the node in state conflict after it was last seen. The other
	// node renews it as long as it runs, in conflict too: every
	// housekeeping round (noticeClones), so that ten rounds lost in a row
	// would be needed for a conflict to lapse while both run. It is also
	// how long the survivor stays in conflict after the other has stopped
	// (unless memberlist lists the other, which says when it goes).
	conflictMemory = 10 * time.Second
)

// kick is the join of a beacon's address: when, and the incarnation of
// the process whose beacon it answered.
type kick struct {
	at  time.Duration
	inc uint32
}

// peer is a node known from its packets: while membership converges
// (gossip takes a few hundred milliseconds to spread a join) a node may
// speak before memberlist lists it.
type peer struct {
	addr netip.AddrPort
	key  election.Key
	seen time.Duration
}

// peerMemory is how long a node known only from its packets is still
// sent to.
const peerMemory = 10 * time.Second

// drainMembers applies the membership changes memberlist has queued.
func (a *Agent) drainMembers() {
	l := &a.loop
	l.memq = a.del.queue.drain(l.memq[:0])
	for _, ev := range l.memq {
		a.onMember(ev)
	}
	a.updateNotice(true)
}

// syncEvery bounds how often an unlisted sender makes this node sync its
// member list.
const syncEvery = 5 * time.Second

// syncUnlisted: an election packet came from a node that memberlist has
// not listed here. memberlist passes a join on by gossip, each message a
// bounded number of times to random members, and repairs what that
// missed only by a state exchange every 30 s: in a 5-node test a node
// that joined through the same seed as three others stayed unaware of
// them for more than 10 s, and followed a leader it could not name. So
// this node exchanges state with a member it knows (a join of its gossip
// address), at once, at most every syncEvery.
func (a *Agent) syncUnlisted(id uint64) {
	l := &a.loop
	if id == 0 || id == a.cfg.NodeID || l.listed[id] {
		return
	}
	var via []string
	for _, m := range l.members {
		if m.metaOK && m.meta.NodeID == id && m.alive() {
			l.listed[id] = true
			return
		}
		if m.alive() && len(via) == 0 {
			via = append(via, m.addr)
		}
	}
	now := a.now()
	if len(via) == 0 || l.synced && now-l.syncedAt < syncEvery {
		return
	}
	l.synced, l.syncedAt = true, now
	a.log.Info("an election packet from a node memberlist has not listed here: exchanging the member list with a member", "node_id", id, "via", via[0])
	a.joiner.Kick(via) // not while a join is under way
}

// onBeacon joins the memberlist address a discovery beacon announces,
// unless it is a member already and its sender does not say it is alone
// (wire.FlagAlone). An agent restarted at once (Restart=) is alone at an
// address the others still list: they declare the old process dead only
// when its probes go unanswered, and the new one answers them, being of
// the same name. Unjoined, it followed its leader unlisted, and a
// preferred node, which takes over only from a leader it lists, stayed a
// follower for the 30 s to a minute until memberlist's next state
// exchange with it (64 hosts).
func (a *Agent) onBeacon(p packet) {
	l := &a.loop
	addr := p.msg.Addr.String()
	if !p.msg.Addr.IsValid() || p.msg.Addr == a.gossip {
		return
	}
	if p.msg.Flags&wire.FlagAlone == 0 {
		for _, m := range l.members {
			if m.addr == addr && m.alive() {
				return
			}
		}
	}
	if !gossip.AnswersBeacon(a.ml.NumMembers(), rand.IntN) {
		return
	}
	now := a.now()
	limit := kickEvery
	if p.msg.Flags&wire.FlagAlone != 0 {
		limit = aloneKickEvery
	}
	if k, ok := l.kicked[addr]; ok && k.inc == p.msg.Incarnation && now-k.at < limit {
		return
	}
	l.kicked[addr] = kick{at: now, inc: p.msg.Incarnation}
	a.log.Debug("discovered a peer by beacon", "addr", addr, "node_id", p.msg.From)
	a.joiner.Kick([]string{addr}) // not while a join is under way: the next beacon tries again
}

// onMember applies one membership change.
func (a *Agent) onMember(ev memberEvent) {
	l := &a.loop
	if ev.name == a.cfg.Name && ev.kind != memberNameConflict {
		return
	}
	l.dirty = true
	clear(l.listed)
	switch ev.kind {
	case memberNameConflict:
		a.onNameConflict(ev)
	case memberJoin, memberUpdate:
		a.onMemberUp(ev)
	case memberLeave:
		a.onMemberLeave(ev)
	}
}

// onMemberUp: a member joined or its metadata changed; the election hears
// of it when its metadata lets it take part.
func (a *Agent) onMemberUp(ev memberEvent) {
	l := &a.loop
	now := a.now()
	m := l.members[ev.name]
	isNew := m == nil || !m.alive()
	if m == nil {
		m = &member{name: ev.name}
		l.members[ev.name] = m
	}
	old, oldOK := m.meta, m.metaOK
	m.addr, m.status, m.changed = ev.addr, memberStatus(ev.state), now
	md, err := meta.Decode(ev.meta)
	if err == nil {
		// Election packets go where a member's metadata says; that is
		// on its own gossip address, never elsewhere.
		if !onGossipAddr(md.Election, ev.addr) {
			err = fmt.Errorf("its election address %v is not on its gossip address %v", md.Election, ev.addr)
		}
	}
	if err == nil && md.Algorithm != a.cfg.Algorithm {
		err = fmt.Errorf("it elects with --algorithm %s, this node with %s: every member must run the same", md.Algorithm, a.cfg.Algorithm)
	}
	m.meta, m.metaOK = md, err == nil
	if oldOK || old.NodeID != 0 {
		delete(l.outsiders, old.NodeID)
	}
	if err != nil && md.NodeID != 0 && md.NodeID != a.cfg.NodeID {
		l.outsiders[md.NodeID] = true
	}
	if err != nil {
		if !m.warnedMD {
			a.log.Warn("member takes no part in elections", "name", ev.name, "addr", ev.addr, "err", err)
			m.warnedMD = true
		}
	}
	if isNew {
		a.log.Info("member joined", "name", ev.name, "node_id", md.NodeID, "priority", md.Priority, "addr", ev.addr)
	}
	if oldOK && (!m.metaOK || old.NodeID != md.NodeID) {
		a.memberDown(old.NodeID)
	}
	if m.metaOK && md.NodeID != a.cfg.NodeID {
		a.step(now, election.Event{Kind: election.EvMemberUp, Member: election.Key{Priority: md.Priority, ID: md.NodeID}, Role: md.Role})
		a.lead.Joined(ev.name)
	}
	a.lead.MemberChanged(ev.name)
	a.checkConflict()
}

// onMemberLeave: a member left or failed.
func (a *Agent) onMemberLeave(ev memberEvent) {
	l := &a.loop
	now := a.now()
	m := l.members[ev.name]
	if m == nil {
		return
	}
	// memberlist's leave event does not say whether the node left or
	// failed (its Node.State is stale there): a node that leaves
	// gracefully says so in its metadata first.
	m.status, m.changed = "dead", now
	delete(l.outsiders, m.meta.NodeID)
	// Its next beacon is a restart (Restart= brings an agent back in
	// a second or less): joined at once, not kickEvery after the join
	// of its previous life. Until it is listed, a preferred node
	// cannot preempt (election's mayPreempt).
	delete(l.kicked, ev.addr)
	verb := "member failed"
	if m.metaOK && m.meta.Leaving {
		m.status, verb = "left", "member left"
	}
	a.log.Info(verb, "name", ev.name, "node_id", m.meta.NodeID, "addr", ev.addr)
	if m.metaOK {
		a.memberDown(m.meta.NodeID)
		if m.meta.NodeID == a.cfg.NodeID {
			// A node with this node's node_id is gone: its packets
			// are no evidence any longer (new ones would be again).
			delete(l.evidence, cloneEvidence(m.meta.NodeID, m.meta.Election))
			delete(l.clones, m.meta.Election)
		}
	}
	a.lead.MemberChanged(ev.name)
	a.checkConflict()
}

// onGossipAddr says whether election address e is on the IP of gossip
// address g (memberlist's "host:port"); an unreadable g does not say
// otherwise.
func onGossipAddr(e netip.AddrPort, g string) bool {
	ga, err := netip.ParseAddrPort(g)
	return err != nil || ga.Addr().Unmap() == e.Addr()
}

// discoverMsg is this node's DISCOVER: its gossip address, and whether
// its membership lists no other node (wire.FlagAlone).
func (a *Agent) discoverMsg() wire.Message {
	st := a.machine.Status()
	m := wire.Message{Type: wire.TypeDiscover, From: a.cfg.NodeID, Priority: st.Self.Priority, Term: st.Term, Addr: a.gossip}
	if a.ml.NumMembers() <= 1 {
		m.Flags = wire.FlagAlone
	}
	return m
}

// memberDown tells the machine id is gone, unless another live member has
// that id (a conflict between two others).
func (a *Agent) memberDown(id uint64) {
	if id == a.cfg.NodeID {
		return
	}
	for _, m := range a.loop.members {
		if m.alive() && m.metaOK && m.meta.NodeID == id {
			return
		}
	}
	a.step(a.now(), election.Event{Kind: election.EvMemberDown, Member: election.Key{ID: id}})
}

// nameOf is the name of node id ("" when unknown).
func (a *Agent) nameOf(id uint64) string {
	if id == 0 {
		return ""
	}
	if id == a.cfg.NodeID {
		return a.cfg.Name
	}
	name := ""
	for _, m := range a.loop.members {
		if m.metaOK && m.meta.NodeID == id && (name == "" || m.alive()) {
			name = m.name
		}
	}
	return name
}

// housekeep runs every second: discovery beacons, memberlist's suspect
// states, pruning of long-dead members.
func (a *Agent) housekeep() {
	l := &a.loop
	now := a.now()
	defer a.updateNotice(true)
	if a.vips.On() {
		// The addresses' presence is read when /status is built: an
		// operator may have removed one by hand.
		l.dirty = true
	}
	// memberlist has no event for "suspect"; read it.
	for _, n := range a.ml.Members() {
		if m := l.members[n.Name]; m != nil && m.alive() {
			if s := memberStatus(n.State); s != m.status && (s == "alive" || s == "suspect") {
				m.status, l.dirty = s, true
			}
		}
	}
	for name, m := range l.members {
		if !m.alive() && now-m.changed > deadRetention {
			delete(l.members, name)
			l.dirty = true
		}
	}
	a.checkConflict()
	a.noticeClones()
	for id, p := range l.peers {
		if now-p.seen > peerMemory {
			delete(l.peers, id)
		}
	}
	for addr, k := range l.kicked {
		if now-k.at > kickEvery {
			delete(l.kicked, addr)
		}
	}
	if !l.leaving {
		a.beacon(now)
	}
	a.noteMajority(now) // its reminder, while nothing changes
}

// beacon multicasts a DISCOVER with this node's memberlist address, as
// often as gossip.BeaconEvery says.
func (a *Agent) beacon(now time.Duration) {
	l := &a.loop
	if !a.tr.Group.IsValid() || a.cfg.DiscoverInterval < 0 {
		return
	}
	every := gossip.BeaconEvery(a.cfg.DiscoverInterval, a.ml.NumMembers())
	if l.beaconed && now-l.lastBeacon < every {
		return
	}
	l.beaconed, l.lastBeacon = true, now
	b := a.encode(a.discoverMsg())
	if b == nil {
		return
	}
	if err := a.tr.Multicast(b); err != nil {
		a.sent1(err, a.tr.Group, wire.TypeDiscover)
		return
	}
	a.met.MessagesSent.WithLabelValues(wire.TypeDiscover.String()).Inc()
}
