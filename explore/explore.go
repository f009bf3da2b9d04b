package explore

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/ident"
	"github.com/lanleader/lanleader/sim"
	"github.com/lanleader/lanleader/sim/job"
	"github.com/lanleader/lanleader/wire"
)

// Node is one node of a Shape.
type Node struct {
	ID   election.NodeID
	Role election.Role
	// Down: the node starts crashed (a Restart brings it up).
	Down bool
}

// Shape is the cluster explored: its nodes (two with one ID are
// clones), the election timing, the job, and the driver's receive rule.
type Shape struct {
	Name  string
	Nodes []Node
	// Timing is every node's election configuration; ID and Role come
	// from Nodes, Quorum is set to the number of distinct IDs.
	Timing election.Config
	// Job is every node's job.
	Job job.Params
	// DriftPPM: node i's clock runs fast by DriftPPM parts per million
	// when i is even, slow when it is odd (at most
	// election.MaxClockDrift).
	DriftPPM int64
	// SelfByIncarnation is the driver's old receive rule: a packet with
	// our node_id and our incarnation is taken for our own (clones
	// started alike share the incarnation). Otherwise a packet with our
	// node_id that we did not send is a conflict (EvConflict).
	SelfByIncarnation bool
}

// Bounds bound the schedules explored: how many choice points of each
// kind a schedule may have, and how far in time it runs.
type Bounds struct {
	Reorder int // a packet delivered before the item that is due first
	Delay   int // a packet held to MaxDelay
	Loss    int // a packet lost
	Crash   int
	Restart int
	// CrashLeader: only a node that leads (holds a lease) may crash,
	// which narrows the search to the crashes that move leadership.
	CrashLeader bool
	MaxDelay    time.Duration // the longest one-way delay
	Horizon     time.Duration // the global time at which a schedule ends
	// MaxStates stops the search after this many states (0: no limit);
	// Result.Complete says whether it was reached.
	MaxStates int
}

// Result is what a search found.
type Result struct {
	States    int // states explored (successors computed)
	Distinct  int // distinct states (hashes) seen
	MaxDepth  int // the most events on one schedule
	Complete  bool
	Elapsed   time.Duration
	Violation string // the first invariant broken, "" when none
	Trace     string // how the schedule that broke it went
}

// timer is one armed timer of a node, on the global clock.
type timer struct {
	armed bool
	at    time.Duration
}

// msg is a packet in flight.
type msg struct {
	from, to int
	m        wire.Message
	sent     time.Duration
	due      time.Duration
	seq      uint64
}

// nodeState is one node in a state of the search.
type nodeState struct {
	m       election.Machine // nil while down
	gen     uint32
	voted   uint64
	seq     uint32
	timers  [election.NumTimers]timer
	tseq    [election.NumTimers]uint64 // the order in which timers were armed
	job     job.Job
	orphans []job.Job // the jobs of earlier incarnations, left to their guards
	drv     job.Driver
	// conflict: the driver has seen our node_id from another node.
	conflict bool
	// lastFrom: per node_id, the node last heard with it (clones).
	lastFrom map[election.NodeID]int
}

// state is one state of the search.
type state struct {
	now   time.Duration
	seq   uint64
	nodes []nodeState
	msgs  []msg
	lives job.Lives
	left  Bounds // choice points left
	depth int
	trace *step
	bad   string
}

// step is one line of a schedule's trace, linked to the one before.
type step struct {
	prev *step
	line string
}

// explorer runs one search.
type explorer struct {
	shape   Shape
	b       Bounds
	cfgs    []election.Config
	quorum  bool
	offsets []time.Duration
	seen    map[uint64]struct{}
	res     Result
	lines   []string // the lines of the step being taken
	copier  copier
	hasher  hasher
}

// Explore searches every schedule of shape within b.
func Explore(shape Shape, b Bounds) Result {
	start := time.Now()
	e := &explorer{shape: shape, b: b, seen: make(map[uint64]struct{})}
	ids := map[election.NodeID]bool{}
	for _, n := range shape.Nodes {
		ids[n.ID] = true
	}
	e.quorum = shape.Timing.Quorum > 0
	for i, n := range shape.Nodes {
		c := shape.Timing
		c.ID, c.Role, c.Priority = n.ID, n.Role, 100
		if e.quorum {
			c.Quorum = len(ids)
		}
		e.cfgs = append(e.cfgs, c)
		// Each node's clock has its own origin, so that a machine that
		// compared times across nodes would show up.
		e.offsets = append(e.offsets, time.Duration(i+1)*17*time.Second)
	}
	s0 := &state{left: b, nodes: make([]nodeState, len(shape.Nodes))}
	for i := range s0.nodes {
		s0.nodes[i].job.P = shape.Job
		s0.nodes[i].drv = job.Driver{Quorum: e.quorum, WaitMax: shape.Job.Grace + 2*time.Second}
	}
	e.lines = e.lines[:0]
	for i, n := range shape.Nodes {
		if !n.Down {
			e.boot(s0, i)
		}
	}
	s0.trace = &step{line: "start: " + strings.Join(e.lines, "; ")}
	e.search(s0)
	e.res.Distinct = len(e.seen)
	e.res.Complete = e.b.MaxStates == 0 || e.res.States < e.b.MaxStates
	e.res.Elapsed = time.Since(start)
	return e.res
}

// search explores s and what follows it, depth first.
func (e *explorer) search(s *state) {
	if e.res.Violation != "" || e.b.MaxStates > 0 && e.res.States >= e.b.MaxStates {
		return
	}
	h := e.hash(s)
	if _, ok := e.seen[h]; ok {
		return
	}
	e.seen[h] = struct{}{}
	e.res.States++
	e.res.MaxDepth = max(e.res.MaxDepth, s.depth)
	for _, c := range e.choices(s) {
		n := e.clone(s)
		e.lines = e.lines[:0]
		c(n)
		n.depth++
		n.trace = &step{prev: s.trace, line: strings.Join(e.lines, "; ")}
		if n.bad == "" && n.now >= e.b.Horizon {
			e.finish(n)
		}
		if n.bad != "" {
			e.res.Violation = n.bad
			e.res.Trace = render(n.trace)
			return
		}
		if n.now < e.b.Horizon {
			e.search(n)
		}
		if e.res.Violation != "" {
			return
		}
	}
}

func render(t *step) string {
	var lines []string
	for ; t != nil; t = t.prev {
		lines = append(lines, t.line)
	}
	slices.Reverse(lines)
	return strings.Join(lines, "\n")
}

// item is something due: a packet, a timer, a job's change.
type item struct {
	at   time.Duration
	seq  uint64
	kind uint8 // 0 packet (msgs index k), 1 timer (node, timer k), 2 job (node; k 0: its job, k>0: orphan k-1)
	node int
	k    int
}

// agenda lists what is due, earliest first.
func (e *explorer) agenda(s *state) []item {
	var out []item
	for k, m := range s.msgs {
		out = append(out, item{at: m.due, seq: m.seq, kind: 0, k: k})
	}
	for i := range s.nodes {
		n := &s.nodes[i]
		if n.m != nil {
			for t, tm := range n.timers {
				if tm.armed {
					out = append(out, item{at: tm.at, seq: n.tseq[t], kind: 1, node: i, k: t})
				}
			}
		}
		if at, ok := n.job.Next(); ok {
			out = append(out, item{at: max(at, s.now), kind: 2, node: i, k: 0})
		}
		for k := range n.orphans {
			if at, ok := n.orphans[k].Next(); ok {
				out = append(out, item{at: max(at, s.now), kind: 2, node: i, k: k + 1})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b item) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		if a.kind != b.kind {
			// Deaths and starts of jobs first at one instant: the
			// outcome of what was already under way.
			return int(b.kind) - int(a.kind)
		}
		return int(a.seq - b.seq)
	})
	return out
}

// choices lists the successors of s: the default first (the earliest
// item), then every change that the bounds left allow.
func (e *explorer) choices(s *state) []func(*state) {
	ag := e.agenda(s)
	var out []func(*state)
	if len(ag) > 0 {
		first := ag[0]
		out = append(out, func(n *state) { e.do(n, first) })
		// Another item due at the same instant first (a timer, or a
		// packet, at once).
		if s.left.Reorder > 0 {
			for _, it := range ag[1:] {
				if it.kind == 0 || it.at == first.at {
					it := it
					out = append(out, func(n *state) {
						n.left.Reorder--
						if it.kind == 0 {
							it.at = n.now
						}
						e.do(n, it)
					})
				}
			}
		}
	}
	for k, m := range s.msgs {
		k := k
		if s.left.Delay > 0 && m.due < m.sent+e.b.MaxDelay {
			out = append(out, func(n *state) {
				n.left.Delay--
				n.msgs[k].due = n.msgs[k].sent + e.b.MaxDelay
				e.linef("%v held until %v", e.describe(&n.msgs[k]), n.msgs[k].due)
			})
		}
		if s.left.Loss > 0 {
			out = append(out, func(n *state) {
				n.left.Loss--
				e.linef("%v lost", e.describe(&n.msgs[k]))
				n.msgs = slices.Delete(n.msgs, k, k+1)
			})
		}
	}
	// Crashes and restarts happen between instants: only where the
	// default item is later than now, so that each fault is tried once
	// at each instant rather than between every two events of it.
	if len(ag) == 0 || ag[0].at > s.now {
		for i := range s.nodes {
			i := i
			if s.nodes[i].m != nil && s.left.Crash > 0 && (!e.b.CrashLeader || s.nodes[i].m.Status().State == election.StateLeader) {
				out = append(out, func(n *state) { n.left.Crash--; e.crash(n, i) })
			}
			if s.nodes[i].m == nil && s.left.Restart > 0 {
				out = append(out, func(n *state) { n.left.Restart--; e.boot(n, i) })
			}
		}
	}
	return out
}

func (e *explorer) linef(format string, args ...any) {
	e.lines = append(e.lines, fmt.Sprintf(format, args...))
}

func (e *explorer) describe(m *msg) string {
	return fmt.Sprintf("%v n%d→n%d term=%d (sent %v)", m.m.Type, e.shape.Nodes[m.from].ID, e.shape.Nodes[m.to].ID, m.m.Term, m.sent)
}

// local is node i's clock at global time g.
func (e *explorer) local(i int, g time.Duration) time.Duration {
	return e.offsets[i] + g + time.Duration(int64(g)*e.ppm(i)/1_000_000)
}

// global is the first global time at which node i's clock reads l.
func (e *explorer) global(i int, l time.Duration) time.Duration {
	ppm := e.ppm(i)
	g := time.Duration(int64(l-e.offsets[i]) * 1_000_000 / (1_000_000 + ppm))
	for e.local(i, g) < l {
		g++
	}
	for g > 0 && e.local(i, g-1) >= l {
		g--
	}
	return g
}

func (e *explorer) ppm(i int) int64 {
	if i%2 == 0 {
		return e.shape.DriftPPM
	}
	return -e.shape.DriftPPM
}

// do carries out item it at its time.
func (e *explorer) do(s *state, it item) {
	s.now = max(s.now, it.at)
	switch it.kind {
	case 0:
		m := s.msgs[it.k]
		s.msgs = slices.Delete(s.msgs, it.k, it.k+1)
		e.deliver(s, m)
	case 1:
		n := &s.nodes[it.node]
		n.timers[it.k].armed = false
		e.linef("%v n%d timer %v", s.now, e.shape.Nodes[it.node].ID, election.TimerKind(it.k))
		e.step(s, it.node, election.Event{Kind: election.EvTimer, Timer: election.TimerKind(it.k)})
	case 2:
		n := &s.nodes[it.node]
		if it.k == 0 {
			since := n.job.Since
			if ch := n.job.Advance(s.now); ch.Died && n.m != nil {
				e.jobChanged(s, it.node, since, job.Change{Died: true})
				e.jobChanged(s, it.node, since, n.job.Set(s.now, n.drv.Run()))
			} else {
				e.jobChanged(s, it.node, since, ch)
			}
		} else {
			o := &n.orphans[it.k-1]
			e.jobChanged(s, it.node, o.Since, o.Advance(s.now))
			if !o.Alive() {
				n.orphans = slices.Delete(n.orphans, it.k-1, it.k)
			}
		}
	}
}

func (e *explorer) deliver(s *state, m msg) {
	n := &s.nodes[m.to]
	id := e.shape.Nodes[m.to].ID
	if n.m == nil {
		e.linef("%v %v dropped: n%d is down", s.now, e.describe(&m), id)
		return
	}
	e.linef("%v %v delivered", s.now, e.describe(&m))
	// The agent's receive rule (internal/ident); the old one
	// (SelfByIncarnation) did not look at the source address.
	src := sim.NodeAddr(m.from)
	if e.shape.SelfByIncarnation {
		src = netip.AddrPort{}
	}
	switch ident.Classify(ident.Self{NodeID: id, Addr: sim.NodeAddr(m.to), Incarnation: n.gen},
		ident.Packet{From: m.m.From, Incarnation: m.m.Incarnation, Src: src}) {
	case ident.Own:
		e.linef("taken for its own")
		return
	case ident.Conflict:
		if !n.conflict {
			n.conflict = true
			e.linef("n%d: our node_id from another node: conflict", id)
			e.step(s, m.to, election.Event{Kind: election.EvConflict, On: true})
		}
		return
	}
	if n.lastFrom == nil {
		n.lastFrom = make(map[election.NodeID]int)
	}
	n.lastFrom[m.m.From] = m.from
	e.step(s, m.to, election.Event{Kind: election.EvMessage, Msg: m.m})
}

// boot starts node i: a new machine, which knows every other node as a
// member, with the last term it voted in.
func (e *explorer) boot(s *state, i int) {
	n := &s.nodes[i]
	cfg := e.cfgs[i]
	cfg.InitialTerm = n.voted
	m, err := election.New(cfg)
	if err != nil {
		panic(fmt.Sprintf("explore: node %d: %v", cfg.ID, err))
	}
	n.m, n.gen, n.seq, n.conflict, n.lastFrom = m, n.gen+1, 0, false, nil
	n.timers = [election.NumTimers]timer{}
	n.drv = job.Driver{Quorum: e.quorum, WaitMax: n.drv.WaitMax}
	n.job = job.Job{P: e.shape.Job}
	e.linef("%v n%d starts (incarnation %d, initial term %d)", s.now, cfg.ID, n.gen, n.voted)
	for j, o := range e.shape.Nodes {
		if j != i && o.ID != cfg.ID {
			e.step(s, i, election.Event{Kind: election.EvMemberUp, Member: election.Key{Priority: 100, ID: o.ID}, Role: o.Role})
		}
	}
	e.step(s, i, election.Event{Kind: election.EvStart})
}

// crash stops node i: its machine is gone, its job left to the guard.
func (e *explorer) crash(s *state, i int) {
	n := &s.nodes[i]
	e.linef("%v n%d crashes", s.now, e.shape.Nodes[i].ID)
	n.m = nil
	j := n.job
	n.job = job.Job{P: e.shape.Job}
	if j.Alive() {
		for k := range s.lives.All {
			if l := &s.lives.All[k]; l.Node == i && l.Open && l.Start == j.Since {
				l.Orphan = true
			}
		}
		ch := j.Orphaned(s.now)
		e.jobChanged(s, i, j.Since, ch)
		if j.Alive() {
			n.orphans = append(n.orphans, j)
		}
	}
}

// step feeds ev to node i's machine and carries out its actions.
func (e *explorer) step(s *state, i int, ev election.Event) {
	n := &s.nodes[i]
	before := n.m.Status()
	acts := n.m.Step(e.local(i, s.now), ev)
	id := e.shape.Nodes[i].ID
	for _, a := range acts {
		switch a.Kind {
		case election.ActSend:
			if j := e.route(n, a.To); j >= 0 {
				e.send(s, i, j, a.Msg)
			}
		case election.ActBroadcast:
			for j := range e.shape.Nodes {
				if j != i {
					e.send(s, i, j, a.Msg)
				}
			}
		case election.ActSetTimer:
			s.seq++
			n.timers[a.Timer] = timer{armed: true, at: max(e.global(i, a.At), s.now)}
			n.tseq[a.Timer] = s.seq
		case election.ActCancelTimer:
			n.timers[a.Timer].armed = false
		}
	}
	after := n.m.Status()
	n.voted = max(n.voted, after.VotedTerm)
	if after.State != before.State || after.Leader != before.Leader || after.Term != before.Term {
		e.linef("n%d %v leader=n%d term=%d", id, after.State, after.Leader, after.Term)
	}
	n.drv.AfterStep(s.now, before, after, acts)
	if e.quorum && after.State == election.StateLeader && after.LeaseUntil > 0 {
		n.job.SetLease(e.global(i, after.LeaseUntil))
	}
	since := n.job.Since
	e.jobChanged(s, i, since, n.job.Set(s.now, n.drv.Run()))
}

// route is the node a unicast to id reaches: with clones, the one last
// heard with that id.
func (e *explorer) route(n *nodeState, id election.NodeID) int {
	if j, ok := n.lastFrom[id]; ok {
		return j
	}
	for j, o := range e.shape.Nodes {
		if o.ID == id {
			return j
		}
	}
	return -1
}

func (e *explorer) send(s *state, from, to int, m wire.Message) {
	n := &s.nodes[from]
	n.seq++
	m.Seq, m.Incarnation = n.seq, n.gen
	m.List = slices.Clone(m.List)
	s.seq++
	s.msgs = append(s.msgs, msg{from: from, to: to, m: m, sent: s.now, due: s.now, seq: s.seq})
}

// jobChanged records a job's start or death and checks the invariants:
// in quorum mode no two jobs alive at once.
func (e *explorer) jobChanged(s *state, i int, since time.Duration, ch job.Change) {
	id := e.shape.Nodes[i].ID
	if ch.Died {
		for k, l := range s.lives.All {
			if l.Node == i && l.Start == since && l.Open {
				e.linef("%v n%d job dies", s.now, id)
				for _, o := range s.lives.End(k, s.now) {
					e.overlap(s, o)
				}
				break
			}
		}
		// Ended lives are checked: keep the open ones only.
		s.lives.All = slices.DeleteFunc(s.lives.All, func(l job.Life) bool { return !l.Open })
	}
	if ch.Started {
		st := s.nodes[i].m.Status()
		e.linef("%v n%d job starts (term %d)", s.now, id, st.Term)
		s.lives.Start(i, id, st.Term, s.now)
	}
}

func (e *explorer) overlap(s *state, o job.Overlap) {
	if e.quorum && s.bad == "" {
		s.bad = "invariant 6: jobs overlap: " + o.String()
		e.linef("VIOLATION %s", s.bad)
	}
}

// finish checks the jobs still alive at the horizon.
func (e *explorer) finish(s *state) {
	for _, o := range s.lives.Finish(s.now) {
		e.overlap(s, o)
	}
}

// clone copies s for a successor.
func (e *explorer) clone(s *state) *state {
	n := &state{now: s.now, seq: s.seq, left: s.left, depth: s.depth, trace: s.trace}
	n.nodes = copyWith(&e.copier, s.nodes)
	n.msgs = slices.Clone(s.msgs)
	n.lives.All = slices.Clone(s.lives.All)
	return n
}

// hash is the state's identity for the search: everything that decides
// what follows, and the choice points left.
func (e *explorer) hash(s *state) uint64 {
	h := &e.hasher
	h.reset()
	h.u64(uint64(s.now))
	for i := range s.nodes {
		hashValue(h, &s.nodes[i])
	}
	// Packets in flight, in the order of their sequence (which decides
	// the default order).
	for _, m := range s.msgs {
		h.u64(uint64(m.from))
		h.u64(uint64(m.to))
		h.u64(uint64(m.sent))
		h.u64(uint64(m.due))
		mm := m.m
		mm.Addr = netip.AddrPort{}
		hashValue(h, &mm)
	}
	for _, l := range s.lives.All {
		h.u64(uint64(l.Node))
		h.u64(uint64(l.Start))
		h.u64(uint64(l.Term))
	}
	hashValue(h, &s.left)
	return h.sum()
}
