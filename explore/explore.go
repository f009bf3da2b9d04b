package explore

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/sim/job"
	"github.com/lanleader/lanleader/wire"
)

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
	// cover: a NOTICE's job (node -1: none, or not a NOTICE).
	cover cover
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
	// notices: the NOTICEs of its crashed leaderships waiting for their
	// jobs to die; noticed: the jobs whose NOTICE this incarnation acted
	// on (invariant 9).
	notices []noticeWait
	noticed []cover
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
		b.PauseFor = []time.Duration{2 * shape.Timing.WithDefaults().LossWindow()}
	}
	if b.NoticeDup > 0 && b.NoticeLate == 0 {
		b.NoticeLate = 2 * shape.Timing.WithDefaults().LossWindow()
	}
	b.LinkFor = slices.Clone(b.LinkFor)
	if b.LinkDown > 0 && len(b.LinkFor) == 0 {
		b.LinkFor = []time.Duration{2 * shape.Timing.WithDefaults().LossWindow()}
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

func (e *explorer) linef(format string, args ...any) {
	e.lines = append(e.lines, fmt.Sprintf(format, args...))
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
			since := o.Since
			e.jobChanged(s, it.node, since, o.Advance(s.now))
			if !o.Alive() {
				n.orphans = slices.Delete(n.orphans, it.k-1, it.k)
				e.noticeJobDied(s, it.node, since)
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

// cluster is a state as sim/job's checks see it. The explorer cuts no
// links: its losses are of single packets.
type cluster struct{ s *state }

func (c cluster) Awake(i int) bool        { n := &c.s.nodes[i]; return n.m != nil && !n.paused }
func (c cluster) LinkDown(i int) bool     { return c.s.nodes[i].linkDown }
func (c cluster) Connected(i, j int) bool { return true }
func (c cluster) Leads(i int) bool {
	return c.s.nodes[i].m.Status().State == election.StateLeader
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
		h.u64(uint64(m.cover.node + 1))
		h.u64(uint64(m.cover.since))
		mm := m.m
		mm.Addr = netip.AddrPort{}
		hashValue(h, &mm)
	}
	hashValue(h, &s.lives.All)
	hashValue(h, &s.decide)
	hashValue(h, &s.left)
	return h.sum()
}
