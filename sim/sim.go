package sim

import (
	"cmp"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/sim/job"
	"github.com/lanleader/lanleader/wire"
)

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
	// noticed: the lives of the jobs whose NOTICE this incarnation acted
	// on (invariant 9).
	noticed []int
}

// simJob is one node's job, alive across its agent's crash.
type simJob struct {
	node int
	j    job.Job
	life int    // its running life in Checker.Jobs, or -1
	term uint64 // the term of the leadership that wants it
	seq  uint64 // the generation of its pending evJob
	// notice: its crashed agent's NOTICE, sent once it is dead.
	notice *notice
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
	// noticeLives: the job each NOTICE sent covers (invariant 9).
	noticeLives map[noticeKey]int
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
	cfg.UpdateDelay = cmp.Or(cfg.UpdateDelay, 300*time.Millisecond)
	cfg.JobMetaDelay = cmp.Or(cfg.JobMetaDelay, 300*time.Millisecond)
	cfg.JobSyncDelay = cmp.Or(cfg.JobSyncDelay, 20*time.Millisecond)
	cfg.JobWaitMargin = cmp.Or(cfg.JobWaitMargin, 2*time.Second)
	s := &Sim{
		cfg:  cfg,
		rng:  rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		net:  cfg.Net,
		cut:  make(map[[2]int]bool),
		byID: make(map[election.NodeID]int),
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

// SocketBuffer is how many packets a paused node's socket holds; what
// arrives beyond is lost.
const SocketBuffer = 64

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

func (s *Sim) push(e *event) {
	s.seq++
	e.seq = s.seq
	s.q.push(qitem{at: e.at, seq: e.seq, e: e})
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
