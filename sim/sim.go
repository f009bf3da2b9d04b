package sim

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"slices"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/ident"
	"github.com/lanleader/lanleader/sim/job"
	"github.com/lanleader/lanleader/wire"
)

// Net is the behaviour of the simulated network at one moment. Every field
// may change during a run (a schedule's loss burst, say).
type Net struct {
	DelayMin time.Duration // smallest one-way delay of a packet
	DelayMax time.Duration // largest one-way delay; delays are uniform in [DelayMin, DelayMax]
	Loss     float64       // probability that a packet copy is lost
	Dup      float64       // probability that a packet copy is delivered twice
}

// Node describes one simulated node.
type Node struct {
	Key     election.Key
	Preempt bool
	// Role is what the node may do in the elections (the zero value:
	// a candidate); membership tells the others.
	Role election.Role
	// Job is how the node's job behaves (Config.Jobs).
	Job job.Params
}

// Config describes a simulated cluster.
type Config struct {
	Seed uint64
	// Algorithm is the election algorithm every node runs (one of
	// election.Algorithms); empty means Timing.Algorithm, itself bully
	// when empty.
	Algorithm string
	Nodes     []Node
	// Timing is the election configuration every node starts from; ID,
	// Priority and Preempt come from Nodes. Its zero Hardening runs the
	// seeds' algorithms; DefaultTiming is the agent's machine.
	Timing election.Config
	// Phi, when true, gives every node a phi-accrual detector instead of
	// the fixed timeout.
	Phi bool
	Net Net
	// MembershipDelay is how long the membership layer takes to tell the
	// others that a node crashed or came back (memberlist's SWIM takes
	// seconds). Default 2s.
	MembershipDelay time.Duration
	// UpdateDelay is how long a change of a node's priority takes to reach
	// the others through the membership layer's gossip. Default 300ms.
	UpdateDelay time.Duration
	// Unicast: broadcasts go out as one unicast packet to each member of
	// their scope in the sender's membership view (the agent's
	// --transport unicast), instead of one multicast packet to every node.
	Unicast bool
	// Trace, when set, receives one line per event: who got what, who sent
	// what, every change of role.
	Trace io.Writer
	// DriftPPM, when not 0, gives each incarnation of each node a clock
	// rate of its own, drawn uniformly within ±DriftPPM parts per million
	// of the global clock's (half of them at the bound), so that a machine
	// that counts on equal clock rates shows up. The election's quorum
	// mode assumes at most election.MaxClockDrift (500 ppm).
	DriftPPM int
	// Amnesia: a node restarted in quorum mode has lost its votes (its
	// driver keeps no Status().VotedTerm on stable storage), instead of
	// starting from the last one (Config.InitialTerm).
	Amnesia bool

	// Jobs: every node runs a job (Node.Job) under the agent's policy
	// (sim/job), and the Checker checks the jobs' lives (see Checker).
	Jobs bool
	// JobMetaDelay is how long a change of a node's job (started,
	// stopped) takes to reach the others in its membership metadata
	// (gossip). Default 300ms.
	JobMetaDelay time.Duration
	// JobSyncDelay: a takeover from a live leader exchanges state with
	// it at once; its metadata as it was this long after the wait began
	// is the first the new leader knows. Default 20ms.
	JobSyncDelay time.Duration
	// JobWaitMargin is added to a node's job grace for the longest wait
	// of a takeover (the agent's jobWaitMargin). Default 2s.
	JobWaitMargin time.Duration

	// UnsafeJobNoWait breaks the driver's policy on purpose, for the
	// checker's proof: a takeover from a live leader does not wait for
	// that leader's job to stop (it starts its own after the first state
	// exchange, JobSyncDelay). Never set it otherwise.
	UnsafeJobNoWait bool

	// Clones: nodes may share a node_id (cloned hosts). A unicast to a
	// shared id goes to the node the sender last heard with that id.
	Clones bool
	// SelfByIncarnation is the driver's old receive rule, for
	// planted-bug tests: a packet with this node's node_id and its
	// incarnation is taken for its own and dropped (clones started
	// alike share the incarnation). Otherwise a packet with this node's
	// id that it did not send is a node_id conflict (EvConflict).
	SelfByIncarnation bool
}

// event kinds of the simulator's queue.
type evKind uint8

const (
	evDeliver   evKind = iota // a packet reaches node
	evTimer                   // a node's timer comes due
	evMember                  // a membership notice reaches node
	evFunc                    // a scheduled fault or probe
	evInject                  // an event from outside the protocol (resign, priority) for node
	evMulticast               // the next copy of a multicast packet reaches its node
	evJob                     // a job's timed change (start, death, the guard's kill) may be due
)

type event struct {
	at   time.Duration
	seq  uint64
	kind evKind
	node int
	gen  uint64 // the node's incarnation the event belongs to
	// evDeliver
	pkt []byte
	// evTimer
	timer    election.TimerKind
	timerGen uint64
	// evMember
	up       bool
	about    int    // the node the notice is about
	aboutGen uint64 // its incarnation when the notice was sent
	// evFunc
	fn func()
	// evInject
	ev *election.Event
	// evMulticast
	mc *multicast
	// evDeliver: the sending node
	from int
	// evJob
	jb *simJob
}

// multicast is one multicast packet on its way to every other node. Its
// copies, in the order of delivery, share one entry of the queue (keyed
// by the next copy's time and reserved sequence), so that a 1,024-node
// cluster's multicasts do not fill the heap with a million events; the
// order of deliveries is the same as with one event a copy.
type multicast struct {
	pkt    []byte // encoded once; each copy has its own sequence number
	from   int    // the sending node
	copies []mcopy
	next   int
}

type mcopy struct {
	at   time.Duration
	seq  uint64 // the queue's order, taken when the copy was sent
	node int
	gen  uint64
	pseq uint32 // the packet's sequence number
}

// queue is the simulator's event queue, a 4-ary min-heap by (at, seq).
// The sort key is kept beside the pointer, so that comparisons do not
// chase pointers (a 1,024-node multicast run holds hundreds of thousands
// of events), and the heap is written out rather than behind
// container/heap's interface.
type queue []qitem

type qitem struct {
	at  time.Duration
	seq uint64
	e   *event
}

func (a qitem) before(b qitem) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// push adds it.
func (q *queue) push(it qitem) {
	h := append(*q, it)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !it.before(h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = it
	*q = h
}

// pop removes and returns the first item; the queue must not be empty.
func (q *queue) pop() qitem {
	h := *q
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h[n] = qitem{}
	h = h[:n]
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < c+4 && k < n; k++ {
			if h[k].before(h[m]) {
				m = k
			}
		}
		if !h[m].before(last) {
			break
		}
		h[i] = h[m]
		i = m
	}
	if n > 0 {
		h[i] = last
	}
	*q = h
	return top
}

// node is the simulator's record of one node.
type node struct {
	idx     int
	key     election.Key
	preempt bool
	role    election.Role
	m       election.Machine
	up      bool
	paused  bool
	gen     uint64 // incarnation: grows at each restart
	offset  time.Duration
	ppm     int64  // clock-rate error of this incarnation, parts per million
	voted   uint64 // quorum mode: the VotedTerm kept across restarts (its stable storage)
	seq     uint32
	timers  [election.NumTimers]uint64 // generation of each timer kind
	pending []*event                   // what came due or arrived while paused, in order
	backlog int                        // packets among pending

	// Config.Jobs: the job of this incarnation (its earlier ones,
	// orphaned by crashes, live on in Sim.jobs) and the driver's policy.
	job      *simJob
	drv      job.Driver
	linkDown bool // the node's link is down: it sends and receives nothing
	conflict bool // the driver has seen our node_id from another node
	// lastFrom (Config.Clones): per shared node_id, the node last heard
	// with it, where unicasts to that id go.
	lastFrom map[election.NodeID]int
}

// simJob is one node's job, alive across its agent's crash.
type simJob struct {
	node int
	j    job.Job
	life int    // its running life in Checker.Jobs, or -1
	term uint64 // the term of the leadership that wants it
	seq  uint64 // the generation of its pending evJob
}

// Sim is a deterministic simulated cluster: N election machines (all of
// one algorithm), a virtual clock and a seeded network. The same Config gives the same run, byte for
// byte.
type Sim struct {
	cfg   Config
	rng   *rand.Rand
	now   time.Duration
	q     queue
	seq   uint64
	nodes []*node
	byID  map[election.NodeID]int
	net   Net
	cut   map[[2]int]bool // cut[{a,b}]: packets from a to b are dropped
	buf   []byte
	msg   wire.Message
	view  []election.Key
	// events counts the events processed.
	events int
	// version grows whenever a node's status, or whether it is up or
	// awake, changes; conv caches convergence for one version.
	version uint64
	conv    struct {
		version     uint64
		largestWins bool
		result      string
		valid       bool
	}

	// Stats counts what went over the network.
	Stats Stats
	// Check holds the invariant checker's findings.
	Check *Checker
}

// Stats counts messages (the algorithm's view: a broadcast to k members
// counts k) and packets (the wire's view: a multicast counts once) by type.
type Stats struct {
	Messages  [wire.NumTypes]int
	Packets   [wire.NumTypes]int
	Unicast   [wire.NumTypes]int // packets had every broadcast been a unicast fan-out
	Dropped   int
	Delivered int
}

// New builds a simulated cluster. Nodes are not started: call Start.
func New(cfg Config) (*Sim, error) {
	if len(cfg.Nodes) == 0 {
		return nil, fmt.Errorf("sim: no nodes")
	}
	cfg.MembershipDelay = cfg.membershipDelay()
	if cfg.UpdateDelay == 0 {
		cfg.UpdateDelay = 300 * time.Millisecond
	}
	s := &Sim{
		cfg:  cfg,
		rng:  rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		net:  cfg.Net,
		cut:  make(map[[2]int]bool),
		byID: make(map[election.NodeID]int),
	}
	if cfg.JobMetaDelay == 0 {
		cfg.JobMetaDelay = 300 * time.Millisecond
	}
	if cfg.JobSyncDelay == 0 {
		cfg.JobSyncDelay = 20 * time.Millisecond
	}
	if cfg.JobWaitMargin == 0 {
		cfg.JobWaitMargin = 2 * time.Second
	}
	s.cfg = cfg
	seen := map[election.NodeID]bool{}
	for i, nc := range cfg.Nodes {
		if seen[nc.Key.ID] {
			if !cfg.Clones {
				return nil, fmt.Errorf("sim: node id %d used twice", nc.Key.ID)
			}
			continue
		}
		seen[nc.Key.ID] = true
		s.byID[nc.Key.ID] = i
	}
	for i, nc := range cfg.Nodes {
		s.nodes = append(s.nodes, &node{idx: i, key: nc.Key, preempt: nc.Preempt, role: nc.Role})
	}
	s.Check = newChecker(s)
	return s, nil
}

// membershipDelay is MembershipDelay with its default.
func (c Config) membershipDelay() time.Duration {
	if c.MembershipDelay == 0 {
		return 2 * time.Second
	}
	return c.MembershipDelay
}

// Now is the simulator's global clock.
func (s *Sim) Now() time.Duration { return s.now }

// Rand is the simulator's seeded random source, for schedules.
func (s *Sim) Rand() *rand.Rand { return s.rng }

// N is the number of nodes.
func (s *Sim) N() int { return len(s.nodes) }

// Key returns node i's key.
func (s *Sim) Key(i int) election.Key { return s.nodes[i].key }

// Up reports whether node i is running (not crashed; it may be paused).
func (s *Sim) Up(i int) bool { return s.nodes[i].up }

// Paused reports whether node i is paused.
func (s *Sim) Paused(i int) bool { return s.nodes[i].paused }

// Status returns node i's view, or ok=false when it is down.
func (s *Sim) Status(i int) (election.Status, bool) {
	n := s.nodes[i]
	if !n.up {
		return election.Status{}, false
	}
	return n.m.Status(), true
}

// SetNet changes the network's behaviour from now on.
func (s *Sim) SetNet(n Net) {
	s.net = n
	s.tracef("net delay=%v..%v loss=%.2f dup=%.2f", n.DelayMin, n.DelayMax, n.Loss, n.Dup)
}

// Net returns the network's current behaviour.
func (s *Sim) Net() Net { return s.net }

// At schedules fn at time at (global clock).
func (s *Sim) At(at time.Duration, fn func()) {
	s.push(&event{at: at, kind: evFunc, fn: fn})
}

// Start starts every node at the current time, each knowing every other as
// a member (the textbook's "all processes know each other's ids").
func (s *Sim) Start() {
	for i := range s.nodes {
		s.boot(i, true)
	}
}

// Crash stops node i at once: it loses its memory; the others hear of it
// from the membership layer after MembershipDelay.
func (s *Sim) Crash(i int) {
	n := s.nodes[i]
	if !n.up {
		return
	}
	n.up, n.paused, n.pending, n.backlog = false, false, nil, 0
	n.m = nil
	s.Check.nodeDown(i)
	if sj := n.job; sj != nil {
		// The agent is gone; its job is left to the guard.
		n.job = nil
		n.drv.Crashed()
		if sj.life >= 0 {
			s.Check.Jobs.All[sj.life].Orphan = true
		}
		s.jobChanged(sj, sj.j.Orphaned(s.now))
	}
	s.version++
	s.tracef("n%d crash", n.key.ID)
	s.notifyOthers(i, false, s.cfg.MembershipDelay)
}

// Restart starts node i again with a fresh memory.
func (s *Sim) Restart(i int) {
	if s.nodes[i].up {
		return
	}
	s.tracef("n%d restart", s.nodes[i].key.ID)
	s.boot(i, false)
	s.notifyOthers(i, true, s.cfg.MembershipDelay)
}

// SocketBuffer is how many packets a paused node's socket holds; what
// arrives beyond is lost.
const SocketBuffer = 64

// Pause freezes node i, as SIGSTOP would: it handles nothing and sends
// nothing; its timers that come due, and up to SocketBuffer packets that
// arrive, wait for Resume.
func (s *Sim) Pause(i int) {
	n := s.nodes[i]
	if !n.up || n.paused {
		return
	}
	n.paused = true
	s.version++
	s.tracef("n%d pause", n.key.ID)
}

// Resume wakes node i: the packets that arrived and the timers that came
// due are handled now, in the order they happened, on its stale state.
func (s *Sim) Resume(i int) {
	n := s.nodes[i]
	if !n.up || !n.paused {
		return
	}
	n.paused = false
	n.backlog = 0
	s.version++
	s.tracef("n%d resume", n.key.ID)
	for _, e := range n.pending {
		e.at = s.now
		s.push(e)
	}
	n.pending = nil
}

// Cut drops every packet from a to b (a one-way partition). Heal undoes it.
func (s *Sim) Cut(a, b int) { s.cut[[2]int{a, b}] = true }

// Partition cuts both ways between every node of side and every other.
func (s *Sim) Partition(side []int) {
	in := make([]bool, len(s.nodes))
	for _, i := range side {
		in[i] = true
	}
	for a := range s.nodes {
		for b := range s.nodes {
			if in[a] != in[b] {
				s.Cut(a, b)
			}
		}
	}
	s.tracef("partition %v", s.ids(side))
}

// OneWay cuts the packets from every node of from to every node of to.
func (s *Sim) OneWay(from, to []int) {
	for _, a := range from {
		for _, b := range to {
			if a != b {
				s.Cut(a, b)
			}
		}
	}
	s.tracef("one-way %v -> %v", s.ids(from), s.ids(to))
}

// Heal removes every cut.
func (s *Sim) Heal() {
	clear(s.cut)
	s.tracef("heal")
}

// Connected reports whether packets flow both ways between a and b.
func (s *Sim) Connected(a, b int) bool { return !s.cut[[2]int{a, b}] && !s.cut[[2]int{b, a}] }

// Resign asks node i to hand over (it does so only if it leads). With
// Config.Jobs the driver first stops the job, as the agent does, and
// gives the machine EvResign once it has died.
func (s *Sim) Resign(i int) {
	n := s.nodes[i]
	if n.job == nil || !n.up {
		s.inject(i, election.Event{Kind: election.EvResign})
		return
	}
	if n.paused {
		s.At(s.now+waitPoll, func() { s.Resign(i) })
		return
	}
	if n.drv.Resign() {
		s.updateJob(n)
	}
}

// Suspect tells node i that its leader is suspected (as membership would).
func (s *Sim) Suspect(i int) { s.inject(i, election.Event{Kind: election.EvSuspectLeader}) }

// SetPriority changes node i's priority (as a health check would).
func (s *Sim) SetPriority(i int, p uint16) {
	n := s.nodes[i]
	n.key.Priority = p
	s.version++
	if !n.up {
		return
	}
	s.inject(i, election.Event{Kind: election.EvSetPriority, Priority: p})
	s.notifyOthers(i, true, s.cfg.UpdateDelay)
}

// inject feeds an event to a running node now, or when it resumes if it
// is paused.
func (s *Sim) inject(i int, ev election.Event) {
	n := s.nodes[i]
	if !n.up {
		return
	}
	s.dispatch(&event{at: s.now, kind: evInject, node: i, gen: n.gen, ev: &ev})
}

// RunUntil processes events up to and including time t, then sets the
// clock to t.
func (s *Sim) RunUntil(t time.Duration) {
	s.RunWhile(t, func() bool { return true })
}

// RunWhile processes events while cond holds, up to time limit; it
// reports whether cond turned false.
//
// A run that exceeds MaxEvents stops and records a violation: a message
// storm is a bug too.
func (s *Sim) RunWhile(limit time.Duration, cond func() bool) bool {
	for cond() {
		if len(s.q) == 0 || s.q[0].at > limit {
			s.now = limit
			return !cond()
		}
		if s.events >= MaxEvents {
			if s.events == MaxEvents {
				s.events++
				s.Check.violate("more than %d events: a message storm", MaxEvents)
			}
			s.now = limit
			return !cond()
		}
		it := s.q.pop()
		s.now = it.at
		s.events++
		s.dispatch(it.e)
	}
	return true
}

// MaxEvents bounds the events of one simulated run.
const MaxEvents = 20_000_000

func (s *Sim) dispatch(e *event) {
	switch e.kind {
	case evFunc:
		e.fn()
		return
	case evMulticast:
		s.dispatchMulticast(e)
		return
	case evJob:
		s.dispatchJob(e)
		return
	}
	n := s.nodes[e.node]
	if !n.up || e.gen != n.gen {
		return // the node crashed or restarted since
	}
	switch e.kind {
	case evDeliver:
		if n.linkDown {
			s.Stats.Dropped++
			return
		}
		if n.paused {
			s.hold(n, e)
			return
		}
		s.deliver(n, e.pkt, 0, e.from)
	case evTimer:
		if e.timerGen != n.timers[e.timer] {
			return // re-armed or cancelled since
		}
		if n.paused {
			n.pending = append(n.pending, e)
			return
		}
		if s.cfg.Trace != nil {
			s.tracef("n%d timer %v", n.key.ID, e.timer)
		}
		s.step(n, election.Event{Kind: election.EvTimer, Timer: e.timer})
	case evInject:
		if n.paused {
			n.pending = append(n.pending, e)
			return
		}
		s.step(n, *e.ev)
	case evMember:
		s.dispatchMember(n, e)
	}
}

// dispatchMulticast delivers the next copy of a multicast, and queues the
// one after it.
func (s *Sim) dispatchMulticast(e *event) {
	mc := e.mc
	c := mc.copies[mc.next]
	mc.next++
	if mc.next < len(mc.copies) {
		nx := mc.copies[mc.next]
		s.q.push(qitem{at: nx.at, seq: nx.seq, e: e})
	}
	n := s.nodes[c.node]
	if !n.up || c.gen != n.gen {
		return
	}
	if n.linkDown {
		s.Stats.Dropped++
		return
	}
	if n.paused {
		pkt := slices.Clone(mc.pkt)
		binary.BigEndian.PutUint32(pkt[32:], c.pseq)
		s.hold(n, &event{at: c.at, kind: evDeliver, node: c.node, gen: c.gen, pkt: pkt, from: mc.from})
		return
	}
	s.deliver(n, mc.pkt, c.pseq, mc.from)
}

// dispatchJob moves a job on to its next phase, unless a later change
// superseded the event.
func (s *Sim) dispatchJob(e *event) {
	if e.timerGen != e.jb.seq {
		return
	}
	if n := s.nodes[e.jb.node]; n.job == e.jb && e.jb.j.Phase == job.Starting {
		// A start is the agent's doing (its supervisor forks the
		// guard): a paused agent starts nothing, and one whose link
		// went down acts on that first.
		if n.paused {
			n.pending = append(n.pending, e)
			return
		}
		if n.linkDown != n.drv.Standby {
			s.updateJob(n)
			if e.timerGen != e.jb.seq {
				return
			}
		}
	}
	s.jobChanged(e.jb, e.jb.j.Advance(s.now))
}

// dispatchMember tells node n what membership says of a member.
func (s *Sim) dispatchMember(n *node, e *event) {
	if n.paused {
		n.pending = append(n.pending, e)
		return
	}
	// Like memberlist, membership does not report a node dead once it
	// has come back, nor alive once it has died again.
	if e.aboutGen != s.nodes[e.about].gen {
		return
	}
	kind := election.EvMemberDown
	if e.up {
		kind = election.EvMemberUp
	}
	// Membership hands out what it knows now: the member's current key.
	s.step(n, election.Event{Kind: kind, Member: s.nodes[e.about].key, Role: s.nodes[e.about].role})
}

// hold keeps packet delivery e for paused node n: a stopped process's
// socket keeps what arrives, up to its buffer; it reads the backlog when
// it wakes.
func (s *Sim) hold(n *node, e *event) {
	if n.backlog < SocketBuffer {
		n.backlog++
		n.pending = append(n.pending, e)
	} else {
		s.Stats.Dropped++
	}
}

// deliver hands packet pkt, sent by node from, to node n, with sequence
// number pseq when not 0.
func (s *Sim) deliver(n *node, pkt []byte, pseq uint32, from int) {
	if err := wire.Decode(pkt, &s.msg); err != nil {
		panic(fmt.Sprintf("sim: a packet the machines built does not decode: %v", err))
	}
	if pseq != 0 {
		s.msg.Seq = pseq
	}
	// The agent's receive rule (internal/ident): a packet with our
	// node_id is our own only from our own address. The old rule
	// (SelfByIncarnation) did not look at the source: one with our
	// incarnation was taken for our own.
	src := NodeAddr(from)
	if s.cfg.SelfByIncarnation {
		src = netip.AddrPort{}
	}
	switch ident.Classify(ident.Self{NodeID: n.key.ID, Addr: NodeAddr(n.idx), Incarnation: uint32(n.gen)},
		ident.Packet{From: s.msg.From, Incarnation: s.msg.Incarnation, Src: src}) {
	case ident.Own:
		s.Stats.Dropped++
		return
	case ident.Conflict:
		if !n.conflict {
			n.conflict = true
			s.tracef("n%d hears its node_id from another node: conflict", n.key.ID)
			s.step(n, election.Event{Kind: election.EvConflict, On: true})
		}
		return
	}
	if s.cfg.Clones {
		if n.lastFrom == nil {
			n.lastFrom = make(map[election.NodeID]int)
		}
		n.lastFrom[s.msg.From] = from
	}
	s.Stats.Delivered++
	if s.cfg.Trace != nil {
		s.tracef("n%d recv %s from n%d term=%d%s", n.key.ID, s.msg.Type, s.msg.From, s.msg.Term, s.msg.AppendBody(nil, "n"))
	}
	s.step(n, election.Event{Kind: election.EvMessage, Msg: s.msg})
}

// boot creates node i's machine and starts it.
func (s *Sim) boot(i int, first bool) {
	n := s.nodes[i]
	cfg := s.cfg.Timing
	cfg.ID, cfg.Priority, cfg.Preempt, cfg.Role = n.key.ID, n.key.Priority, n.preempt, n.role
	if !s.cfg.Amnesia {
		cfg.InitialTerm = n.voted
	}
	if s.cfg.Algorithm != "" {
		cfg.Algorithm = s.cfg.Algorithm
	}
	if s.cfg.Phi {
		cfg.Detector = newPhi(cfg)
	}
	m, err := election.New(cfg)
	if err != nil {
		panic(fmt.Sprintf("sim: node %d: %v", n.key.ID, err))
	}
	n.m, n.up, n.paused, n.pending, n.backlog = m, true, false, nil, 0
	s.version++
	n.gen++
	n.seq = 0
	// Each incarnation's monotonic clock has its own origin, so that a
	// machine comparing times across nodes would show up.
	n.offset = time.Duration(s.rng.Int64N(int64(time.Hour)))
	n.ppm = 0
	if d := int64(s.cfg.DriftPPM); d > 0 {
		n.ppm = s.rng.Int64N(2*d+1) - d
		if s.rng.IntN(2) == 0 {
			n.ppm = d
			if s.rng.IntN(2) == 0 {
				n.ppm = -d
			}
		}
	}
	s.Check.nodeUp(i)
	n.conflict, n.lastFrom = false, nil
	if s.cfg.Jobs {
		p := s.cfg.Nodes[i].Job
		n.job = &simJob{node: i, j: job.Job{P: p}, life: -1}
		n.drv = job.Driver{Quorum: s.cfg.Timing.Quorum > 0, WaitMax: p.Grace + s.cfg.JobWaitMargin, Standby: n.linkDown}
		if s.cfg.UnsafeJobNoWait {
			n.drv.WaitMax = 0
		}
	}
	for j, o := range s.nodes {
		if j != i && (first || o.up) {
			if o.key.ID == n.key.ID {
				continue // membership has one member per node_id
			}
			s.step(n, election.Event{Kind: election.EvMemberUp, Member: o.key, Role: o.role})
		}
	}
	s.step(n, election.Event{Kind: election.EvStart})
	if n.linkDown {
		s.step(n, election.Event{Kind: election.EvStandby, On: true})
	}
	if s.cfg.Clones {
		for _, o := range s.nodes {
			if o != n && o.key.ID == n.key.ID && o.up {
				// Membership lists two members with one node_id: each
				// sees the other in the metadata (agent/membership.go
				// checkConflict), MembershipDelay later.
				s.At(s.now+s.cfg.MembershipDelay, func() { s.memberConflict(n.key.ID) })
				break
			}
		}
	}
}

// memberConflict: membership tells every live node with node_id id of
// another live member with that id.
func (s *Sim) memberConflict(id election.NodeID) {
	var live []*node
	for _, n := range s.nodes {
		if n.key.ID == id && n.up {
			live = append(live, n)
		}
	}
	if len(live) < 2 {
		return
	}
	for _, n := range live {
		if !n.conflict {
			n.conflict = true
			s.tracef("n%d: membership lists another member with its node_id: conflict", n.key.ID)
			s.inject(n.idx, election.Event{Kind: election.EvConflict, On: true})
		}
	}
}

// notifyOthers delivers a membership notice about node i (its current
// key) to every other node after delay.
func (s *Sim) notifyOthers(i int, up bool, delay time.Duration) {
	for j, o := range s.nodes {
		if j == i || !o.up || o.key.ID == s.nodes[i].key.ID {
			continue
		}
		s.push(&event{at: s.now + delay, kind: evMember, node: j, gen: o.gen, up: up, about: i, aboutGen: s.nodes[i].gen})
	}
}

// step feeds one event to node n's machine and carries out its actions.
func (s *Sim) step(n *node, ev election.Event) {
	local := n.local(s.now)
	before := n.m.Status()
	if ev.Kind == election.EvStandby {
		// The driver acts on the link as it is when it gets to it (a
		// notice queued while the node was paused may be stale).
		ev.On = n.linkDown
		n.drv.Standby = ev.On
	}
	acts := n.m.Step(local, ev)
	for i := range acts {
		a := &acts[i]
		switch a.Kind {
		case election.ActSend:
			s.Stats.Messages[a.Msg.Type] += a.Count
			s.Stats.Packets[a.Msg.Type]++
			s.Stats.Unicast[a.Msg.Type]++
			if s.cfg.Trace != nil {
				s.tracef("n%d send %s to n%d term=%d%s", n.key.ID, a.Msg.Type, a.To, a.Msg.Term, a.Msg.AppendBody(nil, "n"))
			}
			if j := s.route(n, a.To); j >= 0 {
				s.transmit(n, j, &a.Msg, nil)
			}
		case election.ActBroadcast:
			s.broadcast(n, a)
		case election.ActSetTimer:
			n.timers[a.Timer]++
			s.push(&event{at: max(n.global(a.At), s.now), kind: evTimer, node: n.idx, gen: n.gen, timer: a.Timer, timerGen: n.timers[a.Timer]})
		case election.ActCancelTimer:
			n.timers[a.Timer]++
		case election.ActBecomeLeader:
			s.tracef("n%d LEADER term=%d", n.key.ID, a.Term)
		case election.ActFollow:
			if a.Leader == 0 {
				s.tracef("n%d has no leader (term=%d)", n.key.ID, a.Term)
			} else {
				s.tracef("n%d follows n%d term=%d", n.key.ID, a.Leader, a.Term)
			}
		}
	}
	after := n.m.Status()
	n.voted = max(n.voted, after.VotedTerm)
	if after != before {
		s.version++
	}
	s.Check.afterStep(n.idx, before, after)
	if n.job != nil {
		s.afterJobStep(n, ev, before, after, acts)
	}
}

// broadcast carries out a's one-to-all send: one multicast packet that
// every node receives, or with the unicast transport one packet to each
// member of the scope in the sender's view.
func (s *Sim) broadcast(n *node, a *election.Action) {
	s.Stats.Messages[a.Msg.Type] += a.Count
	s.Stats.Unicast[a.Msg.Type] += a.Count
	if !s.cfg.Unicast {
		s.Stats.Packets[a.Msg.Type]++
		if a.Msg.Type != wire.TypeHeartbeat {
			s.tracef("n%d multicast %s to %v(%d) term=%d", n.key.ID, a.Msg.Type, a.Scope, a.Count, a.Msg.Term)
		}
		// One multicast packet reaches every node; receivers
		// filter by key.
		mc := &multicast{from: n.idx}
		for j := range s.nodes {
			if j != n.idx {
				s.transmit(n, j, &a.Msg, mc)
			}
		}
		if len(mc.copies) > 0 {
			slices.SortFunc(mc.copies, func(x, y mcopy) int {
				if x.at != y.at {
					return cmp.Compare(x.at, y.at)
				}
				return cmp.Compare(x.seq, y.seq)
			})
			c := mc.copies[0]
			s.q.push(qitem{at: c.at, seq: c.seq, e: &event{kind: evMulticast, mc: mc}})
		}
		return
	}
	// Unicast fan-out: one packet to each member of the scope in
	// the sender's view, as the agent's --transport unicast does.
	s.view = n.m.Members(s.view[:0])
	slices.SortFunc(s.view, func(x, y election.Key) int { return cmp.Compare(x.ID, y.ID) })
	self, sent := n.m.Status().Self, 0
	for _, k := range s.view {
		if a.Scope == election.ScopeLarger && !self.Less(k) {
			continue
		}
		if j := s.route(n, k.ID); j >= 0 {
			s.transmit(n, j, &a.Msg, nil)
			sent++
		}
	}
	s.Stats.Packets[a.Msg.Type] += sent
	if a.Msg.Type != wire.TypeHeartbeat {
		s.tracef("n%d unicast %s to %v(%d packets) term=%d", n.key.ID, a.Msg.Type, a.Scope, sent, a.Msg.Term)
	}
}

// local is node n's monotonic clock at global time g: its origin, and its
// rate off by n.ppm.
func (n *node) local(g time.Duration) time.Duration {
	return n.offset + g + time.Duration(int64(g)*n.ppm/1_000_000)
}

// global is the first global time at which node n's clock reads local or
// more.
func (n *node) global(local time.Duration) time.Duration {
	if n.ppm == 0 {
		return local - n.offset
	}
	g := time.Duration(int64(local-n.offset) * 1_000_000 / (1_000_000 + n.ppm))
	for n.local(g) < local {
		g++
	}
	for n.local(g-1) >= local {
		g--
	}
	return g
}

// transmit sends one copy of m from n to node j through the network: as
// an event of its own, or as one of the copies of multicast mc.
func (s *Sim) transmit(n *node, j int, m *wire.Message, mc *multicast) {
	n.seq++
	m.Seq, m.Incarnation = n.seq, uint32(n.gen)
	if mc == nil || mc.pkt == nil {
		var err error
		s.buf, err = m.Append(s.buf[:0])
		if err != nil {
			panic(fmt.Sprintf("sim: machine built a message that does not encode: %v", err))
		}
		if mc != nil {
			mc.pkt = slices.Clone(s.buf)
		}
	}
	if s.cut[[2]int{n.idx, j}] || n.linkDown || s.nodes[j].linkDown {
		s.Stats.Dropped++
		return
	}
	copies := 1
	if s.net.Loss > 0 && s.rng.Float64() < s.net.Loss {
		copies = 0
	} else if s.net.Dup > 0 && s.rng.Float64() < s.net.Dup {
		copies = 2
	}
	if copies == 0 {
		s.Stats.Dropped++
	}
	to := s.nodes[j]
	for range copies {
		d := s.net.DelayMin
		if s.net.DelayMax > s.net.DelayMin {
			d += time.Duration(s.rng.Int64N(int64(s.net.DelayMax - s.net.DelayMin + 1)))
		}
		if mc != nil {
			s.seq++
			mc.copies = append(mc.copies, mcopy{at: s.now + d, seq: s.seq, node: j, gen: to.gen, pseq: n.seq})
			continue
		}
		s.push(&event{at: s.now + d, kind: evDeliver, node: j, gen: to.gen, pkt: slices.Clone(s.buf), from: n.idx})
	}
}

func (s *Sim) push(e *event) {
	s.seq++
	e.seq = s.seq
	s.q.push(qitem{at: e.at, seq: e.seq, e: e})
}

// route is the node a unicast of n to id reaches: with clones, the one n
// last heard with that id (as the agent sends to the address it last
// heard a node_id from).
func (s *Sim) route(n *node, id election.NodeID) int {
	if j, ok := n.lastFrom[id]; ok {
		return j
	}
	return s.index(id)
}

func (s *Sim) index(id election.NodeID) int {
	if i, ok := s.byID[id]; ok {
		return i
	}
	return -1
}

func (s *Sim) ids(idx []int) []election.NodeID {
	out := make([]election.NodeID, len(idx))
	for k, i := range idx {
		out[k] = s.nodes[i].key.ID
	}
	return out
}

func (s *Sim) tracef(format string, args ...any) {
	if s.cfg.Trace == nil {
		return
	}
	fmt.Fprintf(s.cfg.Trace, "%12.6f ", s.now.Seconds())
	fmt.Fprintf(s.cfg.Trace, format, args...)
	io.WriteString(s.cfg.Trace, "\n")
}

// Config returns the simulator's configuration, with the election timing's
// defaults filled in.
func (s *Sim) Config() Config {
	c := s.cfg
	c.Timing = c.Timing.WithDefaults()
	return c
}

// NodeAddr is node i's election address on the simulated LAN, the
// source of every packet it sends.
func NodeAddr(i int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i + 1)}), 7947)
}
