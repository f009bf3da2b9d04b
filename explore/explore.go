package explore

import (
	"cmp"
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
	// from Nodes. With Quorum > 0 the shape runs in quorum mode, with
	// Quorum set to the number of distinct IDs; with 0 in default mode.
	Timing election.Config
	// Job is every node's job.
	Job job.Params
	// Stops are the stop latencies tried at every SIGTERM, each a
	// choice point of its own (a job that an agent stops, or whose guard
	// stops it after a crash): a latency of at least Job.Grace is a job
	// that ignores SIGTERM and dies at the SIGKILL that follows it, or
	// at the guard's kill at its lease's end. Empty: Job's own stop
	// only.
	Stops []time.Duration
	// JobMetaDelay (default mode) is how long after a job's death the
	// other nodes' view of it (gossip) says it stopped; JobSyncDelay is
	// how long after a takeover from a live leader begins its first
	// state exchange with that leader reads the leader's job. Defaults:
	// the simulator's, 300ms and 20ms.
	JobMetaDelay, JobSyncDelay time.Duration
	// UnsafeJobNoWait breaks the driver's policy on purpose (default
	// mode), as sim.Config's does: a takeover from a live leader does
	// not wait for that leader's job to stop.
	UnsafeJobNoWait bool
	// UnsafeLinkIgnored breaks the driver on purpose: it does not act on
	// its link's loss (no standby for the machine, no stop of the job).
	UnsafeLinkIgnored bool
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
	// CrashLeader: only a node that leads may crash, which narrows the
	// search to the crashes that move leadership.
	CrashLeader bool
	// LinkDown: a node's link goes down (it loses its carrier) for one
	// of LinkFor (default: twice the timing's SuspectAfter, so that the
	// others elect meanwhile).
	LinkDown int
	LinkFor  []time.Duration
	// Pause: a node's process is frozen for one of PauseFor (default:
	// twice the timing's SuspectAfter, so that the others elect
	// meanwhile).
	Pause    int
	PauseFor []time.Duration
	MaxDelay time.Duration // the longest one-way delay
	Horizon  time.Duration // the global time at which a schedule ends
	// MaxStates stops the search after this many states (0: no limit);
	// Result.Complete says whether it was reached.
	MaxStates int
}

// Result is what a search found.
type Result struct {
	States    int // states reached, repeats included
	Distinct  int // distinct states (hashes): those explored further
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
	// linkDown: its link is down until linkUp: it sends and receives
	// nothing.
	linkDown bool
	linkUp   time.Duration
	// listen: its link came back; its driver keeps it out of the
	// elections until then, listening for the leader as a starting node
	// does (the agent's carrierListen); 0: not listening.
	listen time.Duration
	// paused: its process is frozen until wake; held is what came in
	// meanwhile (its timers that come due wait where they are).
	paused  bool
	wake    time.Duration
	held    []held
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

// held is what a paused node will handle when it wakes: a packet its
// socket kept, or the news that its link changed.
type held struct {
	at    time.Duration
	seq   uint64
	link  bool // the link changed
	timer int  // 1 + the timer that came due (wake's own list), 0: none
	m     msg  // a packet, when neither
}

// stop is a job that has just been sent SIGTERM and whose stop latency
// is still to be chosen: node's job (orphan -1) or its orphan.
type stop struct{ node, orphan int }

// state is one state of the search.
type state struct {
	now   time.Duration
	seq   uint64
	nodes []nodeState
	msgs  []msg
	lives job.Lives
	// decide: stop latencies to choose before anything else happens.
	decide []stop
	left   Bounds // choice points left
	depth  int
	trace  *step
	bad    string
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
	meta    time.Duration // Shape.JobMetaDelay
	sync    time.Duration // Shape.JobSyncDelay
}

// Explore searches every schedule of shape within b.
func Explore(shape Shape, b Bounds) Result {
	start := time.Now()
	e := newExplorer(shape, b)
	e.search(e.start())
	e.res.Distinct = len(e.seen)
	e.res.Complete = e.b.MaxStates == 0 || e.res.States < e.b.MaxStates
	e.res.Elapsed = time.Since(start)
	return e.res
}

func newExplorer(shape Shape, b Bounds) *explorer {
	b.PauseFor = slices.Clone(b.PauseFor)
	if b.Pause > 0 && len(b.PauseFor) == 0 {
		b.PauseFor = []time.Duration{2 * shape.Timing.WithDefaults().SuspectAfter}
	}
	b.LinkFor = slices.Clone(b.LinkFor)
	if b.LinkDown > 0 && len(b.LinkFor) == 0 {
		b.LinkFor = []time.Duration{2 * shape.Timing.WithDefaults().SuspectAfter}
	}
	e := &explorer{shape: shape, b: b, seen: make(map[uint64]struct{})}
	ids := map[election.NodeID]bool{}
	for _, n := range shape.Nodes {
		ids[n.ID] = true
	}
	e.quorum = shape.Timing.Quorum > 0
	e.meta, e.sync = cmp.Or(shape.JobMetaDelay, 300*time.Millisecond), cmp.Or(shape.JobSyncDelay, 20*time.Millisecond)
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
	return e
}

// start is the first state: every node that is not Down starts at 0.
func (e *explorer) start() *state {
	s0 := &state{left: e.b, nodes: make([]nodeState, len(e.shape.Nodes))}
	for i := range s0.nodes {
		s0.nodes[i].job.P = e.shape.Job
	}
	e.lines = e.lines[:0]
	for i, n := range e.shape.Nodes {
		if !n.Down {
			e.boot(s0, i)
		}
	}
	s0.trace = &step{line: "start: " + strings.Join(e.lines, "; ")}
	return s0
}

// search explores s and what follows it, depth first.
func (e *explorer) search(s *state) {
	if e.res.Violation != "" || e.b.MaxStates > 0 && e.res.States >= e.b.MaxStates {
		return
	}
	e.res.States++
	e.prune(s)
	h := e.hash(s)
	if _, ok := e.seen[h]; ok {
		return
	}
	e.seen[h] = struct{}{}
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

// item is something due.
type item struct {
	at   time.Duration
	seq  uint64
	kind uint8
	node int
	k    int
}

// The kinds of item.
const (
	itPacket = iota // a packet (msgs index k) arrives
	itTimer         // node's timer k fires
	itJob           // node's job changes (k 0: its job, k>0: orphan k-1)
	itWait          // node's takeover looks at the previous leader's job
	itWake          // node's pause ends
	itListen        // node's listen after its link came back ends
	itLinkUp        // node's link comes back
)

// rank orders the items due at one instant: the outcome of what was
// already under way (a job's death or start) first, then the end of an
// outage, of a pause, of a listen, a takeover's look, timers, packets.
var rank = [...]int{itJob: 0, itLinkUp: 1, itWake: 2, itListen: 3, itWait: 4, itTimer: 5, itPacket: 6}

// agenda lists what is due, earliest first. A paused node's timers,
// takeover and job start wait for it to wake.
func (e *explorer) agenda(s *state) []item {
	var out []item
	for k, m := range s.msgs {
		out = append(out, item{at: m.due, seq: m.seq, kind: itPacket, k: k})
	}
	for i := range s.nodes {
		n := &s.nodes[i]
		if n.m != nil && !n.paused {
			for t, tm := range n.timers {
				if tm.armed {
					out = append(out, item{at: tm.at, seq: n.tseq[t], kind: itTimer, node: i, k: t})
				}
			}
			if n.drv.Wait != 0 {
				out = append(out, item{at: max(e.waitAt(s, n), s.now), kind: itWait, node: i})
			}
			if n.listen > 0 {
				out = append(out, item{at: max(n.listen, s.now), kind: itListen, node: i})
			}
		}
		if n.m != nil && n.paused {
			out = append(out, item{at: max(n.wake, s.now), kind: itWake, node: i})
		}
		if n.linkDown {
			out = append(out, item{at: max(n.linkUp, s.now), kind: itLinkUp, node: i})
		}
		if at, ok := n.job.Next(); ok && !(n.paused && n.job.Phase == job.Starting) {
			out = append(out, item{at: max(at, s.now), kind: itJob, node: i, k: 0})
		}
		for k := range n.orphans {
			if at, ok := n.orphans[k].Next(); ok {
				out = append(out, item{at: max(at, s.now), kind: itJob, node: i, k: k + 1})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b item) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		if a.kind != b.kind {
			return rank[a.kind] - rank[b.kind]
		}
		return cmp.Compare(a.seq, b.seq)
	})
	return out
}

// choices lists the successors of s: the default first (the earliest
// item), then every change that the bounds left allow. A stop latency
// still to be chosen is chosen first, before anything else happens.
func (e *explorer) choices(s *state) []func(*state) {
	var out []func(*state)
	if len(s.decide) > 0 {
		for _, d := range e.shape.Stops {
			out = append(out, func(n *state) { e.decideStop(n, d) })
		}
		return out
	}
	ag := e.agenda(s)
	if len(ag) > 0 {
		first := ag[0]
		out = append(out, func(n *state) { e.do(n, first) })
		// Another item due at the same instant first (a timer, or a
		// packet, at once).
		if s.left.Reorder > 0 {
			for _, it := range ag[1:] {
				if it.kind == itPacket || it.at == first.at {
					out = append(out, func(n *state) {
						n.left.Reorder--
						if it.kind == itPacket {
							it.at = n.now
						}
						e.do(n, it)
					})
				}
			}
		}
	}
	for k, m := range s.msgs {
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
	// Faults happen between instants: only where the default item is
	// later than now, so that each fault is tried once at each instant
	// rather than between every two events of it.
	if len(ag) == 0 || ag[0].at > s.now {
		for i := range s.nodes {
			n := &s.nodes[i]
			if n.m != nil && s.left.Crash > 0 && (!e.b.CrashLeader || n.m.Status().State == election.StateLeader) {
				out = append(out, func(n *state) { n.left.Crash--; e.crash(n, i) })
			}
			if n.m == nil && s.left.Restart > 0 {
				out = append(out, func(n *state) { n.left.Restart--; e.boot(n, i) })
			}
			if n.m != nil && !n.linkDown && s.left.LinkDown > 0 {
				for _, d := range e.b.LinkFor {
					out = append(out, func(n *state) { n.left.LinkDown--; e.setLink(n, i, true, d) })
				}
			}
			if n.m != nil && !n.paused && s.left.Pause > 0 {
				for _, d := range e.b.PauseFor {
					out = append(out, func(n *state) { n.left.Pause--; e.pause(n, i, d) })
				}
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
	case itPacket:
		m := s.msgs[it.k]
		s.msgs = slices.Delete(s.msgs, it.k, it.k+1)
		e.deliver(s, m)
	case itTimer:
		e.fire(s, it.node, it.k)
	case itJob:
		n := &s.nodes[it.node]
		if it.k == 0 {
			since := n.job.Since
			if ch := n.job.Advance(s.now); ch.Died && n.m != nil && !n.paused {
				// The driver starts it again if it is still wanted.
				e.jobChanged(s, it.node, since, job.Change{Died: true})
				e.setJob(s, it.node)
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
	case itWait:
		e.resolve(s, it.node)
	case itWake:
		e.wake(s, it.node)
	case itLinkUp:
		e.setLink(s, it.node, false, 0)
	case itListen:
		s.nodes[it.node].listen = 0
		e.linef("%v n%d has listened for the leader since its link came back", s.now, e.shape.Nodes[it.node].ID)
		e.standby(s, it.node)
	}
}

func (e *explorer) fire(s *state, i, t int) {
	n := &s.nodes[i]
	n.timers[t].armed = false
	e.linef("%v n%d timer %v", s.now, e.shape.Nodes[i].ID, election.TimerKind(t))
	e.step(s, i, election.Event{Kind: election.EvTimer, Timer: election.TimerKind(t)})
}

func (e *explorer) deliver(s *state, m msg) {
	n := &s.nodes[m.to]
	id := e.shape.Nodes[m.to].ID
	switch {
	case n.m == nil:
		e.linef("%v %v dropped: n%d is down", s.now, e.describe(&m), id)
		return
	case n.linkDown:
		e.linef("%v %v dropped: n%d's link is down", s.now, e.describe(&m), id)
		return
	case n.paused:
		// A stopped process's socket keeps what arrives, up to its
		// buffer.
		if len(n.held) >= sim.SocketBuffer {
			e.linef("%v %v dropped: n%d is paused, its socket full", s.now, e.describe(&m), id)
			return
		}
		e.linef("%v %v held: n%d is paused", s.now, e.describe(&m), id)
		n.held = append(n.held, held{at: s.now, seq: m.seq, m: m})
		return
	}
	e.linef("%v %v delivered", s.now, e.describe(&m))
	e.receive(s, m)
}

// receive hands packet m to its node's driver and machine.
func (e *explorer) receive(s *state, m msg) {
	n := &s.nodes[m.to]
	id := e.shape.Nodes[m.to].ID
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
	n.paused, n.wake, n.held = false, 0, nil
	n.timers = [election.NumTimers]timer{}
	n.drv = job.Driver{Quorum: e.quorum, WaitMax: e.shape.Job.Grace + 2*time.Second}
	if e.shape.UnsafeJobNoWait {
		n.drv.WaitMax = 0
	}
	n.job = job.Job{P: e.shape.Job}
	e.linef("%v n%d starts (incarnation %d, initial term %d)", s.now, cfg.ID, n.gen, n.voted)
	for j, o := range e.shape.Nodes {
		if j != i && o.ID != cfg.ID {
			e.step(s, i, election.Event{Kind: election.EvMemberUp, Member: election.Key{Priority: 100, ID: o.ID}, Role: o.Role})
		}
	}
	e.step(s, i, election.Event{Kind: election.EvStart})
	if n.linkDown {
		e.standby(s, i)
	}
}

// crash stops node i: its machine is gone, its job left to the guard.
func (e *explorer) crash(s *state, i int) {
	n := &s.nodes[i]
	e.linef("%v n%d crashes", s.now, e.shape.Nodes[i].ID)
	n.m = nil
	n.paused, n.wake, n.held, n.listen = false, 0, nil, 0
	j := n.job
	n.job = job.Job{P: e.shape.Job}
	if j.Alive() {
		for k := range s.lives.All {
			if l := &s.lives.All[k]; l.Node == i && l.Open && l.Start == j.Since {
				l.Orphan = true
			}
		}
		running := j.Phase == job.Running
		ch := j.Orphaned(s.now)
		e.jobChanged(s, i, j.Since, ch)
		if j.Alive() {
			n.orphans = append(n.orphans, j)
			if running {
				e.sigterm(s, i, len(n.orphans)-1)
			}
		}
	}
}

// setLink takes node i's link down for d, or brings it back. Down, the driver
// takes the node out of the elections (EvStandby) and a leader stops its
// job at once; back, the driver listens for the leader for StartupWait
// before the node takes part again (the agent's onLinks). A paused
// node's driver does so when it wakes.
func (e *explorer) setLink(s *state, i int, down bool, d time.Duration) {
	n := &s.nodes[i]
	n.linkDown, n.linkUp = down, 0
	if down {
		n.linkUp = s.now + d
	}
	n.listen = 0
	if !down && n.m != nil && n.drv.Standby {
		n.listen = s.now + e.cfgs[i].WithDefaults().StartupWait
	}
	e.linef("%v n%d link %s", s.now, e.shape.Nodes[i].ID, map[bool]string{true: "down", false: "up"}[down])
	switch {
	case n.m == nil:
	case n.paused:
		s.seq++
		n.held = append(n.held, held{at: s.now, seq: s.seq, link: true})
	default:
		e.standby(s, i)
	}
}

// standby gives node i's awake driver and machine the link's state, and
// checks that a node whose link is down runs no job.
func (e *explorer) standby(s *state, i int) {
	n := &s.nodes[i]
	if want := n.linkDown || n.listen > 0; !e.shape.UnsafeLinkIgnored && n.drv.Standby != want {
		n.drv.Standby = want
		e.step(s, i, election.Event{Kind: election.EvStandby, On: want})
	}
	e.checkLink(s, i)
}

func (e *explorer) checkLink(s *state, i int) {
	if n := &s.nodes[i]; n.linkDown {
		if v := job.CheckLinkDown(e.shape.Nodes[i].ID, &n.job); v != "" {
			e.violate(s, v)
		}
	}
}

// pause freezes node i for d.
func (e *explorer) pause(s *state, i int, d time.Duration) {
	n := &s.nodes[i]
	n.paused, n.wake = true, s.now+d
	e.linef("%v n%d pauses until %v", s.now, e.shape.Nodes[i].ID, n.wake)
}

// wake ends node i's pause: what came in and the timers that came due
// are handled now, in the order they happened, on its stale state; then
// its driver looks at its job.
func (e *explorer) wake(s *state, i int) {
	n := &s.nodes[i]
	n.paused = false
	e.linef("%v n%d wakes", s.now, e.shape.Nodes[i].ID)
	backlog := n.held
	n.held = nil
	for t, tm := range n.timers {
		if tm.armed && tm.at <= s.now {
			backlog = append(backlog, held{at: tm.at, seq: n.tseq[t], timer: 1 + t})
		}
	}
	slices.SortStableFunc(backlog, func(a, b held) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return cmp.Compare(a.seq, b.seq)
	})
	for _, h := range backlog {
		if n.m == nil {
			return
		}
		switch {
		case h.link:
			e.standby(s, i)
		case h.timer > 0:
			t := h.timer - 1
			if tm := n.timers[t]; tm.armed && n.tseq[t] == h.seq && tm.at <= s.now {
				e.fire(s, i, t)
			}
		default:
			e.receive(s, h.m)
		}
	}
	e.setJob(s, i)
	e.checkLink(s, i)
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
	wait := n.drv.Wait
	n.drv.AfterStep(s.now, before, after, acts)
	if x := job.Claimant(ev, id); x != 0 && n.drv.HeardClaim(s.now, x) && n.drv.Wait == wait {
		e.linef("n%d waits for n%d's job until %v: it claimed again", id, x, n.drv.WaitUntil)
	}
	if n.drv.Wait != 0 && n.drv.Wait != wait {
		e.linef("n%d waits for n%d's job to stop", id, n.drv.Wait)
	}
	if e.quorum && after.State == election.StateLeader && after.LeaseUntil > 0 {
		n.job.SetLease(e.global(i, after.LeaseUntil))
	}
	e.setJob(s, i)
}

// setJob tells node i's job what its driver wants now. The driver reads
// the link before it starts anything, as the simulator's does: a change
// it has not acted on (it was paused) takes the node out of the
// elections first, which comes back here.
func (e *explorer) setJob(s *state, i int) {
	n := &s.nodes[i]
	if n.linkDown && !n.drv.Standby && !e.shape.UnsafeLinkIgnored {
		e.standby(s, i)
		return
	}
	since, running := n.job.Since, n.job.Phase == job.Running
	e.jobChanged(s, i, since, n.job.Set(s.now, n.drv.Run()))
	if running && n.job.Phase == job.Stopping {
		e.sigterm(s, i, -1)
	}
}

// sigterm: node i's job (orphan -1) or its orphan has just been sent
// SIGTERM: its stop latency is the next choice, when the shape lists
// some.
func (e *explorer) sigterm(s *state, i, orphan int) {
	if len(e.shape.Stops) > 0 {
		s.decide = append(s.decide, stop{i, orphan})
	}
}

// decideStop gives the first job of s.decide stop latency d.
func (e *explorer) decideStop(s *state, d time.Duration) {
	r := s.decide[0]
	s.decide = slices.Delete(slices.Clone(s.decide), 0, 1)
	j := &s.nodes[r.node].job
	if r.orphan >= 0 {
		j = &s.nodes[r.node].orphans[r.orphan]
	}
	id := e.shape.Nodes[r.node].ID
	if d >= j.P.Grace {
		j.Due = s.now + j.P.Grace
		e.linef("n%d's job ignores SIGTERM: SIGKILL at %v", id, j.Due)
	} else {
		j.Due = s.now + d
		e.linef("n%d's job stops in %v", id, d)
	}
}

// waitAt is when node n's takeover next looks at the previous leader's
// job: its first state exchange with that leader (JobSyncDelay after the
// wait began), or when gossip says that job has stopped (JobMetaDelay
// after its death), or the wait's end, whichever is later than the
// exchange and comes first.
func (e *explorer) waitAt(s *state, n *nodeState) time.Duration {
	d := &n.drv
	first := d.WaitSince + e.sync
	known := d.WaitUntil
	open, last := false, time.Duration(-1)
	for _, l := range s.lives.All {
		if l.ID == d.Wait {
			if l.Open {
				open = true
			} else {
				last = max(last, l.End)
			}
		}
	}
	if !open {
		if last >= 0 {
			known = min(known, last+e.meta)
		} else {
			known = min(known, first)
		}
	}
	return max(first, known)
}

// resolve: node i's takeover looks at its view of the previous leader's
// job (as of its first state exchange, or as gossip has brought it since,
// as the simulator's pollWait does), and starts its own job once that
// one has stopped.
func (e *explorer) resolve(s *state, i int) {
	n := &s.nodes[i]
	seen := max(n.drv.WaitSince+e.sync, s.now-e.meta)
	n.drv.Resolve(s.now, !s.lives.AliveAt(n.drv.Wait, seen))
	id := e.shape.Nodes[i].ID
	if n.drv.Wait != 0 {
		if e.waitAt(s, n) <= s.now {
			panic(fmt.Sprintf("explore: n%d's wait for n%d neither ends nor has a later look", id, n.drv.Wait))
		}
		return
	}
	e.linef("%v n%d's wait for the previous leader's job is over", s.now, id)
	e.setJob(s, i)
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
	if n.linkDown || s.nodes[to].linkDown {
		return // it never reaches the wire, or the wire never reaches it
	}
	s.seq++
	s.msgs = append(s.msgs, msg{from: from, to: to, m: m, sent: s.now, due: s.now, seq: s.seq})
}

// jobChanged records a job's start or death and checks the
// invariants: at a start the link's and the takeover's (sim/job's
// CheckStart), in quorum mode no two jobs alive at once.
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
	}
	if ch.Started {
		n := &s.nodes[i]
		for _, v := range s.lives.CheckStart(cluster{s}, i, id, &n.drv, e.quorum) {
			e.violate(s, v)
		}
		st := n.m.Status()
		e.linef("%v n%d job starts (term %d)", s.now, id, st.Term)
		s.lives.Start(i, id, st.Term, s.now)
	}
}

// cluster is a state as sim/job's checks see it. The explorer cuts no
// links: its losses are of single packets.
type cluster struct{ s *state }

func (c cluster) Awake(i int) bool        { n := &c.s.nodes[i]; return n.m != nil && !n.paused }
func (c cluster) LinkDown(i int) bool     { return c.s.nodes[i].linkDown }
func (c cluster) Connected(i, j int) bool { return true }
func (c cluster) Leads(i int) bool {
	return c.s.nodes[i].m.Status().State == election.StateLeader
}

func (e *explorer) overlap(s *state, o job.Overlap) {
	if e.quorum {
		e.violate(s, "invariant 6: jobs overlap: "+o.String())
	}
}

func (e *explorer) violate(s *state, v string) {
	if s.bad == "" {
		s.bad = v
		e.linef("VIOLATION %s", v)
	}
}

// prune forgets the lives that no longer matter: in quorum mode those
// that ended (their overlaps are counted), in default mode those that
// ended before any takeover's view (JobMetaDelay) can reach.
func (e *explorer) prune(s *state) {
	s.lives.All = slices.DeleteFunc(s.lives.All, func(l job.Life) bool {
		return !l.Open && (e.quorum || l.End+e.meta <= s.now)
	})
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
	n.decide = slices.Clone(s.decide)
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
	hashValue(h, &s.lives.All)
	hashValue(h, &s.decide)
	hashValue(h, &s.left)
	return h.sum()
}
