package agent

import (
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/metrics"
	"github.com/lanleader/lanleader/wire"
)

// Housekeeping: discovery beacons, memberlist's suspect states, pruning.
const (
	housekeepEvery = time.Second
	// deadRetention is how long a dead or departed member stays in /status.
	deadRetention = 10 * time.Minute
	// kickEvery bounds how often one beacon's address is joined.
	kickEvery = 5 * time.Second
	// conflictMemory is how long evidence of a node_id conflict that
	// memberlist does not list as a member (a packet with this node's
	// node_id from another address, another node with this node's name)
	// keeps the node in state conflict after it was last seen: the other
	// node renews it as long as it runs.
	conflictMemory = 30 * time.Second
)

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

// loopState is everything only the event loop goroutine touches.
type loopState struct {
	members map[string]*member       // by memberlist name, other than this node
	peers   map[uint64]peer          // who spoke to us, by node_id: the source of its last packet
	kicked  map[string]time.Duration // beacon address → when it was last joined
	// outsiders: node_ids of live members whose metadata keeps them out of
	// elections (another algorithm, a bad election address): their
	// election packets are dropped.
	outsiders map[uint64]bool

	armed    [election.NumTimers]bool
	deadline [election.NumTimers]time.Duration
	timer    *time.Timer

	buf  []byte
	seq  uint32
	mac  *wire.MAC // the signing key's, nil without a key
	memq []memberEvent

	prev       election.Status
	lastLeader uint64 // the last non-zero leader
	lost       bool   // the leader was lost, no new one yet; its last word was heard at lostAt
	lostAt     time.Duration
	heardFrom  uint64        // the leader whose last packet (or claim) was heard at heardAt
	heardAt    time.Duration // (the start of a failover: lanleader_failover_seconds)
	electing   bool          // this node ran an election that has not ended yet
	since      time.Time
	conflict   []string
	evidence   map[string]time.Duration // conflict evidence → when last seen
	fanned     map[uint64]bool          // fanOut's scratch: who has been sent to
	dirty      bool                     // the snapshot is out of date
	lastBeacon time.Duration
	beaconed   bool
	leaving    bool   // a graceful stop is under way: the election is over for this node
	savedTerm  uint64 // quorum mode: the voted term on stable storage (StateFile)
	leaseMono  int64  // quorum mode: the lease given to the job's guard, CLOCK_MONOTONIC ns; 0: none
	leaseGen   uint64 // the job's generation that lease is for

	leadState
}

// run is the event loop: the only goroutine that touches the machine.
func (a *Agent) run() {
	defer close(a.loopDone)
	l := &a.loop
	l.timer = time.NewTimer(time.Hour)
	defer l.timer.Stop()
	tick := time.NewTicker(housekeepEvery)
	defer tick.Stop()
	l.aux = time.NewTimer(time.Hour)
	defer l.aux.Stop()
	l.readyBy = a.now() + a.machine.Config().StartupWait + readyAfter

	l.prev = a.machine.Status()
	l.dirty = true
	a.step(a.now(), election.Event{Kind: election.EvStart})
	a.housekeep()
	a.rearmAux()
	for {
		select {
		case <-a.quit:
			return
		case p := <-a.pkts:
			if !l.leaving {
				a.onPacket(p)
			}
		case <-a.del.queue.signal:
			a.drainMembers()
		case <-l.timer.C:
			if !l.leaving {
				a.fire()
			}
		case f := <-a.cmds:
			f()
		case <-l.aux.C:
			a.onAux()
		case <-a.jobDirty:
			l.dirty = true
		case <-tick.C:
			a.housekeep()
		}
		a.publish()
	}
}

// step feeds one event to the machine and carries out its actions.
func (a *Agent) step(at time.Duration, ev election.Event) {
	if a.loop.leaving {
		// A node that is leaving takes no further part in elections:
		// membership events that arrive meanwhile (another node leaving at
		// the same time) must not make it claim a leadership it is about
		// to abandon.
		return
	}
	acts := a.machine.Step(at, ev)
	if !a.saveVote() {
		return
	}
	for _, act := range acts {
		a.do(act)
	}
	a.afterStep()
}

// fire steps every armed timer whose deadline has passed, earliest first.
func (a *Agent) fire() {
	l := &a.loop
	for {
		now := a.now()
		k := -1
		for i := range l.armed {
			if l.armed[i] && l.deadline[i] <= now && (k < 0 || l.deadline[i] < l.deadline[k]) {
				k = i
			}
		}
		if k < 0 {
			break
		}
		l.armed[k] = false
		a.step(now, election.Event{Kind: election.EvTimer, Timer: election.TimerKind(k)})
	}
	a.rearm()
}

// rearm sets the loop's timer to the earliest armed deadline.
func (a *Agent) rearm() {
	l := &a.loop
	next := time.Duration(-1)
	for i := range l.armed {
		if l.armed[i] && (next < 0 || l.deadline[i] < next) {
			next = l.deadline[i]
		}
	}
	if next < 0 {
		l.timer.Stop()
		return
	}
	l.timer.Reset(max(next-a.now(), 0))
}

// do carries out one action of the machine.
func (a *Agent) do(act election.Action) {
	l := &a.loop
	switch act.Kind {
	case election.ActSend:
		dst, ok := a.electionAddr(act.To)
		if !ok {
			a.log.Debug("no address for node", "node_id", act.To, "type", act.Msg.Type.String())
			return
		}
		if b := a.encode(act.Msg); b != nil {
			a.sendTo(b, dst, act.Msg.Type)
			a.met.MessagesSent.WithLabelValues(act.Msg.Type.String()).Inc()
		}
	case election.ActBroadcast:
		if act.Msg.Type == wire.TypeElection {
			l.electing = true
		}
		b := a.encode(act.Msg)
		if b == nil {
			return
		}
		if a.tr.group.IsValid() {
			if err := a.tr.multicast(b); err != nil {
				a.log.Debug("multicast send", "type", act.Msg.Type.String(), "err", err)
			}
		} else {
			a.fanOut(b, act)
		}
		a.met.MessagesSent.WithLabelValues(act.Msg.Type.String()).Add(float64(act.Count))
	case election.ActSetTimer:
		l.armed[act.Timer], l.deadline[act.Timer] = true, act.At
		a.rearm()
	case election.ActCancelTimer:
		l.armed[act.Timer] = false
	case election.ActFollow:
		// The leader is lost; a new one may follow within the same step
		// (the node that suspects it may win at once), which afterStep
		// alone would not see.
		if act.Leader == 0 && l.prev.Leader != 0 && !l.lost {
			l.lost, l.lostAt = true, a.lastHeard(l.prev)
		}
		if act.Leader == 0 {
			l.leaderLost = true
		}
		if a.cfg.Quorum > 0 && l.prev.State == election.StateLeader {
			// Stepped down: a leadership ends here even when the same
			// step starts another (a node that is its own majority).
			l.steppedDown = true
		}
	case election.ActBecomeLeader:
		// Reported through afterStep, from the machine's status.
	}
}

// fanOut sends a one-to-all message by unicast to every live member in
// its scope, and to the nodes that spoke recently but that memberlist does
// not list yet.
func (a *Agent) fanOut(b []byte, act election.Action) {
	l := &a.loop
	self := a.machine.Status().Self
	inScope := func(k election.Key) bool {
		return k.ID != a.cfg.NodeID && (act.Scope != election.ScopeLarger || self.Less(k))
	}
	sent := l.fanned
	clear(sent)
	for _, m := range l.members {
		if !m.alive() || !m.metaOK || !inScope(election.Key{Priority: m.meta.Priority, ID: m.meta.NodeID}) {
			continue
		}
		sent[m.meta.NodeID] = true
		a.sendTo(b, m.meta.Election, act.Msg.Type)
	}
	now := a.now()
	for id, p := range l.peers {
		if sent[id] || now-p.seen > peerMemory || !inScope(p.key) {
			continue
		}
		a.sendTo(b, p.addr, act.Msg.Type)
	}
}

func (a *Agent) sendTo(b []byte, dst netip.AddrPort, t wire.Type) {
	if err := a.tr.send(b, dst); err != nil {
		a.log.Debug("send", "to", dst.String(), "type", t.String(), "err", err)
	}
}

// encode stamps a message with the cluster, incarnation and sequence and
// encodes it into the loop's buffer.
func (a *Agent) encode(m wire.Message) []byte {
	l := &a.loop
	l.seq++
	if l.seq == 0 {
		// The sequence has wrapped (after 4 billion packets): a new
		// incarnation keeps the receivers' windows moving forward.
		a.inc.Add(1)
		l.seq = 1
	}
	m.Cluster, m.Incarnation, m.Seq = a.cluster, a.inc.Load(), l.seq
	if l.mac != nil {
		m.Flags |= wire.FlagAuth
	}
	b, err := m.Append(l.buf[:0])
	if err != nil {
		a.log.Error("encode", "type", m.Type.String(), "err", err)
		return nil
	}
	if l.mac != nil {
		b = l.mac.Seal(b)
	}
	l.buf = b
	return b
}

// electionAddr is where node id's election socket is: from its metadata,
// or else from the source of its last packet.
func (a *Agent) electionAddr(id uint64) (netip.AddrPort, bool) {
	for _, m := range a.loop.members {
		if m.metaOK && m.meta.NodeID == id && m.alive() {
			return m.meta.Election, true
		}
	}
	p, ok := a.loop.peers[id]
	return p.addr, ok
}

// onPacket handles one accepted packet.
func (a *Agent) onPacket(p packet) {
	l := &a.loop
	if p.conflict {
		l.evidence["node_id "+strconv.FormatUint(p.msg.From, 10)+" at "+p.src.String()] = p.at
		a.checkConflict()
		return
	}
	if p.msg.Type == wire.TypeDiscover {
		a.onBeacon(p)
		return
	}
	if l.outsiders[p.msg.From] {
		// A member whose metadata keeps it out of elections (another
		// algorithm): its claims, probes and answers would mislead ours.
		a.met.PacketsDropped.WithLabelValues("outsider").Inc()
		return
	}
	if p.src.IsValid() {
		if _, known := l.peers[p.msg.From]; known || len(l.peers) < 4*wire.MaxMembers {
			l.peers[p.msg.From] = peer{addr: p.src, key: election.Key{Priority: p.msg.Priority, ID: p.msg.From}, seen: p.at}
		}
	}
	if p.msg.From == l.prev.Leader {
		l.heardFrom, l.heardAt = p.msg.From, p.at
	}
	a.step(p.at, election.Event{Kind: election.EvMessage, Msg: p.msg})
}

// lastHeard is when this node last heard the leader of st: its last
// packet, or when it learnt of it; now when it was this node itself.
func (a *Agent) lastHeard(st election.Status) time.Duration {
	l := &a.loop
	if st.Leader == st.Self.ID || st.Leader != l.heardFrom {
		return a.now()
	}
	return l.heardAt
}

// drainMembers applies the membership changes memberlist has queued.
func (a *Agent) drainMembers() {
	l := &a.loop
	l.memq = a.del.queue.drain(l.memq[:0])
	for _, ev := range l.memq {
		a.onMember(ev)
	}
}

// onBeacon joins the memberlist address a discovery beacon announces,
// unless it is a member already.
func (a *Agent) onBeacon(p packet) {
	l := &a.loop
	addr := p.msg.Addr.String()
	if !p.msg.Addr.IsValid() || p.msg.Addr == a.gossip {
		return
	}
	for _, m := range l.members {
		if m.addr == addr && m.alive() {
			return
		}
	}
	now := a.now()
	if at, ok := l.kicked[addr]; ok && now-at < kickEvery {
		return
	}
	l.kicked[addr] = now
	a.log.Debug("discovered a peer by beacon", "addr", addr, "node_id", p.msg.From)
	select {
	case a.joiner.kick <- []string{addr}:
	default: // a join is under way; the next beacon tries again
	}
}

// onMember applies one membership change.
func (a *Agent) onMember(ev memberEvent) {
	l := &a.loop
	if ev.name == a.cfg.Name && ev.kind != memberNameConflict {
		return
	}
	now := a.now()
	l.dirty = true
	switch ev.kind {
	case memberNameConflict:
		if ev.name != a.cfg.Name {
			a.log.Error("two other nodes use one name; names must be unique", "name", ev.name, "addr", ev.addr, "other_addr", ev.detail)
			return
		}
		// Another node has this node's name (a cloned host?): memberlist
		// cannot list it, so the election would not know of it.
		if _, seen := l.evidence["name "+ev.name+" at "+ev.detail]; !seen {
			a.log.Error("another node uses this node's name; names must be unique", "name", ev.name, "other_addr", ev.detail)
		}
		l.evidence["name "+ev.name+" at "+ev.detail] = now
	case memberJoin, memberUpdate:
		m := l.members[ev.name]
		isNew := m == nil || !m.alive()
		if m == nil {
			m = &member{name: ev.name}
			l.members[ev.name] = m
		}
		old, oldOK := m.meta, m.metaOK
		m.addr, m.status, m.changed = ev.addr, memberStatus(ev.state), now
		md, err := decodeMeta(ev.meta)
		if err == nil {
			// Election packets go where a member's metadata says; that is
			// on its own gossip address, never elsewhere.
			if ga, perr := netip.ParseAddrPort(ev.addr); perr == nil && ga.Addr().Unmap() != md.Election.Addr() {
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
			a.step(now, election.Event{Kind: election.EvMemberUp, Member: election.Key{Priority: md.Priority, ID: md.NodeID}})
		}
		a.onMemberChanged(ev.name)
	case memberLeave:
		m := l.members[ev.name]
		if m == nil {
			return
		}
		// memberlist's leave event does not say whether the node left or
		// failed (its Node.State is stale there): a node that leaves
		// gracefully says so in its metadata first.
		m.status, m.changed = "dead", now
		delete(l.outsiders, m.meta.NodeID)
		verb := "member failed"
		if m.metaOK && m.meta.Leaving {
			m.status, verb = "left", "member left"
		}
		a.log.Info(verb, "name", ev.name, "node_id", m.meta.NodeID, "addr", ev.addr)
		if m.metaOK {
			a.memberDown(m.meta.NodeID)
		}
		a.onMemberChanged(ev.name)
	}
	a.checkConflict()
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
	now := a.now()
	for what, at := range l.evidence {
		if now-at > conflictMemory {
			delete(l.evidence, what)
			continue
		}
		names = append(names, what)
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
	case len(names) == 0 && was:
		a.log.Info("node_id conflict resolved", "node_id", a.cfg.NodeID)
		a.step(a.now(), election.Event{Kind: election.EvConflict, On: false})
	}
	l.dirty = true
}

// afterStep logs and counts what changed in the machine's status.
func (a *Agent) afterStep() {
	l := &a.loop
	st := a.machine.Status()
	prev := l.prev
	// After the job's want (updateJob): the lease is for its generation.
	defer a.updateLease(st)
	stepped := l.steppedDown
	defer func() { l.steppedDown = false }()
	if same := st; !stepped {
		// A renewed lease alone is not a change worth publishing.
		same.LeaseUntil = prev.LeaseUntil
		if same == prev {
			l.prev = st
			return
		}
	}
	l.prev = st
	l.dirty = true
	now := a.now()

	if st.State == election.StateCandidate {
		// An election of this node's own (bully's ELECTION broadcast says
		// so too; the ring family's elections start with a unicast hop).
		l.electing = true
	}
	if st.State == election.StateLeader && (prev.State != election.StateLeader || stepped) {
		a.met.Elections.WithLabelValues("won").Inc()
		l.electing = false
	} else if l.electing && st.State == election.StateFollower && st.Leader != 0 && st.Leader != a.cfg.NodeID {
		a.met.Elections.WithLabelValues("lost").Inc()
		l.electing = false
	}
	if st.State == election.StateConflict {
		l.electing = false
	}

	// A failover runs from the last word of the old leader heard here (its
	// last heartbeat, or its RESIGN) to a new leader known here: how long
	// the cluster went without a leader, as this node saw it. A new leader
	// may come after this node lost the old one, or at once, by a smaller
	// node's claim heard before this node suspected anything. A larger
	// node taking over (a preemption) is not a failover.
	var failover time.Duration
	switch {
	case st.Leader == 0 && prev.Leader != 0 && !l.lost:
		l.lost, l.lostAt = true, a.lastHeard(prev)
	case st.Leader != 0 && l.lost:
		failover = max(now-l.lostAt, 0)
		l.lost = false
		a.met.Failover.Observe(failover.Seconds())
	case st.Leader != 0 && prev.Leader != 0 && st.Leader != prev.Leader && st.LeaderKey.Less(prev.LeaderKey):
		failover = max(now-a.lastHeard(prev), 0)
		a.met.Failover.Observe(failover.Seconds())
	}
	if st.Leader != 0 && st.Leader != prev.Leader {
		l.heardFrom, l.heardAt = st.Leader, now
	}
	if st.Leader != 0 && st.Leader != l.lastLeader {
		l.lastLeader = st.Leader
		l.since = time.Now()
		a.met.LeaderChanges.Inc()
	}

	if st.State == prev.State && st.Leader == prev.Leader && st.Self == prev.Self && !stepped {
		// A new term of the same leadership: not worth a line at info.
		a.log.Debug("term", "term", st.Term, "leader_id", st.Leader)
		a.leadershipChanged(prev, st, false)
		return
	}
	defer a.leadershipChanged(prev, st, st.State != prev.State || st.Leader != prev.Leader || stepped)
	attrs := []any{"state", st.State.String(), "term", st.Term, "leader", a.nameOf(st.Leader), "leader_id", st.Leader}
	if failover > 0 {
		attrs = append(attrs, "failover", failover.Round(time.Millisecond))
	}
	if stepped && now >= prev.LeaseUntil {
		// No majority acknowledged in time (or this node was paused).
		attrs = append(attrs, "lease_lost", true)
	}
	msg := "state"
	switch {
	case st.State == election.StateLeader:
		msg = "became leader"
	case st.State == election.StateFollower && st.Leader != 0:
		msg = "following"
	case st.State == election.StateFollower:
		msg = "no leader"
	case st.State == election.StateCandidate:
		msg = "electing"
	case st.State == election.StateConflict:
		msg = "not leading: node_id conflict"
	}
	a.log.Log(nil, slog.LevelInfo, msg, attrs...)
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
	for id, p := range l.peers {
		if now-p.seen > peerMemory {
			delete(l.peers, id)
		}
	}
	for addr, at := range l.kicked {
		if now-at > kickEvery {
			delete(l.kicked, addr)
		}
	}
	if !l.leaving {
		a.beacon(now)
	}
}

// beacon multicasts a DISCOVER with this node's memberlist address: every
// DiscoverInterval while it knows no peer, ten times less often after.
func (a *Agent) beacon(now time.Duration) {
	l := &a.loop
	if !a.tr.group.IsValid() || a.cfg.DiscoverInterval < 0 {
		return
	}
	every := a.cfg.DiscoverInterval
	if a.ml.NumMembers() > 1 {
		every *= 10
	}
	if l.beaconed && now-l.lastBeacon < every {
		return
	}
	l.beaconed, l.lastBeacon = true, now
	st := a.machine.Status()
	b := a.encode(wire.Message{Type: wire.TypeDiscover, From: a.cfg.NodeID, Priority: st.Self.Priority, Term: st.Term, Addr: a.gossip})
	if b == nil {
		return
	}
	if err := a.tr.multicast(b); err != nil {
		a.log.Debug("beacon", "err", err)
		return
	}
	a.met.MessagesSent.WithLabelValues(wire.TypeDiscover.String()).Inc()
}

// publish rebuilds the /status snapshot and the metrics view when
// something changed.
func (a *Agent) publish() {
	l := &a.loop
	if !l.dirty {
		return
	}
	l.dirty = false
	st := a.machine.Status()
	s := &Status{
		Name: a.cfg.Name, NodeID: a.cfg.NodeID, Priority: st.Self.Priority, State: st.State.String(),
		Term: st.Term, LeaderID: st.Leader, LeaderName: a.nameOf(st.Leader), Algorithm: a.cfg.Algorithm,
		Members: make([]Member, 0, len(l.members)), Cluster: a.cfg.Cluster, Transport: a.cfg.Transport,
		GossipAddr: a.gossip.String(), ElectionAddr: a.tr.local.String(), Version: a.cfg.Version,
	}
	if len(l.conflict) > 0 {
		s.Conflict = slices.Clone(l.conflict)
	}
	if !l.since.IsZero() {
		s.LeaderSince = l.since.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	counts := map[string]int{}
	for _, m := range l.members {
		mm := Member{Name: m.name, Addr: m.addr, Alive: m.alive(), Status: m.status}
		if m.metaOK {
			mm.NodeID, mm.Priority, mm.ElectionAddr = m.meta.NodeID, m.meta.Priority, m.meta.Election.String()
		}
		s.Members = append(s.Members, mm)
		counts[m.status]++
	}
	slices.SortFunc(s.Members, func(x, y Member) int { return strings.Compare(x.Name, y.Name) })
	s.BasePriority = a.cfg.Priority
	s.Quorum, s.VotedTerm = a.cfg.Quorum, st.VotedTerm
	if len(l.checks) > 0 {
		s.Checks = slices.Clone(l.checks)
	}
	if l.penalised {
		s.PenaltyUntil = time.Now().Add(l.penaltyUntil - a.now()).UTC().Format(timeFormat)
	}
	if a.sup != nil {
		js := *a.sup.Status()
		if l.jobWait != "" && js.State == "stopped" {
			js.State = "waiting"
		}
		s.Job = &js
	}
	a.snap.Store(s)
	a.view.Store(&metrics.View{State: s.State, Term: s.Term, LeaderID: s.LeaderID, LeaderName: s.LeaderName, Members: counts,
		Priority: s.Priority, ChecksFailing: a.checksFailing()})
	a.notifyStatus(s)
}
