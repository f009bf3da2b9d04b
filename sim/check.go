package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/sim/job"
)

// maxViolations bounds how many violations a Checker keeps in full.
const maxViolations = 20

// Checker checks the safety invariants after every step of every node:
//
//  1. Leaderships are unique per term as far as the protocol can make
//     them: a node never recognises a second leader for a term it already
//     has a leader for unless the second has the larger key (so each node's
//     sequence of recognised leaderships grows strictly in (term, key));
//     and two nodes that become leader with the same term are counted in
//     DupTerms. Without a majority (quorum mode) a partition or a lost
//     ANSWER can make two sides pick the same next term, so DupTerms must
//     be 0 only where the textbook's assumptions hold (reliable channels,
//     bounded delays, no pauses); tests assert exactly that.
//
//  3. Terms never decrease at any node (within one incarnation: a node
//     that crashes and restarts has lost its memory).
//
//  4. Quorum mode (Timing.Quorum > 0): the lease intervals of two
//     leaderships never overlap on the global clock. A leadership's
//     interval runs from the step at which its node reports it leads to
//     the end of its lease (Status.LeaseUntil, read on the node's own
//     clock, drift included, and turned into global time), extended to
//     every later step at which the node still reports it leads, and cut
//     short where it steps down or crashes. Two leaderships with one term
//     are a violation too (DupTerms; the term is the fencing token).
//
//  5. Only a candidate leads: a witness or an observer never does.
//
// Invariant 2 (convergence after the last fault) is Converged.
type Checker struct {
	s          *Sim
	views      []view
	claims     map[uint64]claim // term -> first node that led with it
	Violations []string
	// Count of every violation, including those not kept in full.
	Count int
	// DupTerms counts leaderships that took a term another node had
	// already led with.
	DupTerms int
	// Leaderships counts every time a node became leader.
	Leaderships int
	// LeaseOverlaps counts the pairs of leaderships whose lease intervals
	// overlap (quorum mode).
	LeaseOverlaps int

	// Jobs holds the lives of the jobs (Config.Jobs) and counts their
	// overlaps; JobStarts counts the starts.
	Jobs      job.Lives
	JobStarts int
	// NoticesSent counts the crashed leaders' NOTICEs sent,
	// NoticesActed the deliveries that ended the leadership their
	// receiver followed.
	NoticesSent, NoticesActed int

	leases []lease // quorum mode: the intervals that may still meet another
	open   []int   // per node: its leadership's index in leases, or -1
}

// lease is one leadership's interval on the global clock.
type lease struct {
	node       int
	term       uint64
	start, end time.Duration
	open       bool
	reported   bool
}

type view struct {
	// The last leadership this incarnation recognised.
	term uint64
	lead election.NodeID
	key  election.Key
}

type claim struct {
	node election.NodeID
	at   time.Duration
}

func newChecker(s *Sim) *Checker {
	c := &Checker{s: s, views: make([]view, len(s.nodes)), claims: make(map[uint64]claim), open: make([]int, len(s.nodes))}
	for i := range c.open {
		c.open[i] = -1
	}
	return c
}

// nodeDown ends node i's leadership, if any, when it crashes.
func (c *Checker) nodeDown(i int) { c.closeLease(i) }

// closeLease ends node i's open leadership now, if its lease has not run
// out before.
func (c *Checker) closeLease(i int) {
	if k := c.open[i]; k >= 0 {
		l := &c.leases[k]
		l.end, l.open = min(l.end, c.s.now), false
		c.open[i] = -1
	}
}

// checkLease applies invariant 4 after a step of node i.
func (c *Checker) checkLease(i int, before, after election.Status) {
	if after.State != election.StateLeader {
		if before.State == election.StateLeader {
			c.closeLease(i)
		}
		return
	}
	// The node acted as leader at this instant, and holds its lease to
	// its end (on its clock).
	n := c.s.nodes[i]
	end := max(n.global(after.LeaseUntil), c.s.now+1)
	k := c.open[i]
	if k >= 0 && c.leases[k].term != after.Term {
		c.closeLease(i)
		k = -1
	}
	if k < 0 {
		c.prune()
		c.leases = append(c.leases, lease{node: i, term: after.Term, start: c.s.now, end: end, open: true})
		k = len(c.leases) - 1
		c.open[i] = k
	} else if end > c.leases[k].end {
		c.leases[k].end = end
	} else {
		return
	}
	l := &c.leases[k]
	for j := range c.leases {
		o := &c.leases[j]
		if o.node == l.node || o.reported && l.reported || !(o.start < l.end && l.start < o.end) {
			continue
		}
		l.reported, o.reported = true, true
		c.LeaseOverlaps++
		c.violate("invariant 4: leases overlap: n%d term %d [%v, %v] and n%d term %d [%v, %v]",
			c.s.nodes[l.node].key.ID, l.term, l.start, l.end, c.s.nodes[o.node].key.ID, o.term, o.start, o.end)
	}
}

// prune forgets the closed intervals that end before every open one
// starts: nothing can meet them any more.
func (c *Checker) prune() {
	horizon := c.s.now
	for _, k := range c.open {
		if k >= 0 {
			horizon = min(horizon, c.leases[k].start)
		}
	}
	kept := c.leases[:0]
	for _, l := range c.leases {
		if l.open || l.end > horizon {
			kept = append(kept, l)
		}
	}
	c.leases = kept
	for i := range c.open {
		c.open[i] = -1
	}
	for k, l := range c.leases {
		if l.open {
			c.open[l.node] = k
		}
	}
}

func (c *Checker) violate(format string, args ...any) {
	c.Count++
	if len(c.Violations) < maxViolations {
		c.Violations = append(c.Violations, fmt.Sprintf("t=%v ", c.s.now)+fmt.Sprintf(format, args...))
	}
	c.s.tracef("VIOLATION "+format, args...)
}

// nodeUp starts a new incarnation's view: a restarted node lost its memory.
func (c *Checker) nodeUp(i int) { c.views[i] = view{} }

// afterStep checks one node's transition from before to after.
func (c *Checker) afterStep(i int, before, after election.Status) {
	id := c.s.nodes[i].key.ID
	if after.Term < before.Term {
		c.violate("invariant 3: n%d term went down from %d to %d", id, before.Term, after.Term)
	}
	if c.s.cfg.Timing.Quorum > 0 {
		c.checkLease(i, before, after)
	}
	v := &c.views[i]
	if after.Leader != 0 && after.Leader == v.lead && after.Term == v.term {
		// The same leadership; its key may have changed (a health check).
		v.key = after.LeaderKey
	}
	if after.Leader != 0 && (after.Leader != before.Leader || after.Term != before.Term) {
		ok := after.Term > v.term ||
			after.Term == v.term && (after.Leader == v.lead || v.key.Less(after.LeaderKey))
		if v.lead != 0 && !ok {
			c.violate("invariant 1: n%d recognised n%d (key %v) for term %d after n%d (key %v) for term %d",
				id, after.Leader, after.LeaderKey, after.Term, v.lead, v.key, v.term)
		}
		v.term, v.lead, v.key = after.Term, after.Leader, after.LeaderKey
	}
	if after.State == election.StateLeader && (before.State != election.StateLeader || before.Term != after.Term) {
		if r := c.s.nodes[i].role; !r.MayLead() {
			c.violate("invariant 5: n%d, a %v, leads with term %d", id, r, after.Term)
		}
		c.Leaderships++
		if prev, ok := c.claims[after.Term]; ok && prev.node != id {
			c.DupTerms++
			c.s.tracef("DUP-TERM n%d leads with term %d, as n%d did at %v", id, after.Term, prev.node, prev.at)
		} else if !ok {
			c.claims[after.Term] = claim{node: id, at: c.s.now}
		}
	}
}

// Converged checks invariant 2 now: the live, awake nodes have exactly one
// leader, every other one follows it with its term, and no live node that
// preempts (every node, when largestWins) has a larger key. It returns nil
// or an error that lists every node's view.
func (s *Sim) Converged(largestWins bool) error {
	if s.converged(largestWins) {
		return nil
	}
	return s.convergedError(largestWins)
}

// converged is Converged without the report, cheap enough to run after
// every event.
func (s *Sim) converged(largestWins bool) bool {
	c := &s.conv
	if !c.valid || c.version != s.version || c.largestWins != largestWins {
		c.result, c.version, c.largestWins, c.valid = s.convergence(largestWins), s.version, largestWins, true
	}
	return c.result == ""
}

func (s *Sim) convergedError(largestWins bool) error {
	return fmt.Errorf("not converged: %s; %s", s.convergence(largestWins), s.Describe())
}

// convergence returns "" when the live, awake nodes have converged, or
// what is still wrong: the leader must be the only one; every other live
// node must be a follower of it with its term; and no live candidate that
// preempts may have a larger key than the leader's (it would take over).
// With largestWins every candidate counts as preempting. Witnesses and
// observers follow; with no candidate up, or in quorum mode without a
// majority of voters (candidates and witnesses) up, nobody leads.
func (s *Sim) convergence(largestWins bool) string {
	var leader *node
	var leaders int
	var preempting *node // the largest live candidate that preempts
	live, voters, candidates := 0, 0, 0
	for _, n := range s.nodes {
		if !n.up || n.paused || n.m.Status().State == election.StateConflict {
			continue
		}
		live++
		if n.role.Votes() {
			voters++
		}
		if !n.role.MayLead() {
			continue
		}
		candidates++
		if (largestWins || n.preempt) && (preempting == nil || preempting.key.Less(n.key)) {
			preempting = n
		}
		if n.m.Status().State == election.StateLeader {
			leaders++
			leader = n
		}
	}
	switch {
	case live == 0:
		return ""
	case s.cfg.Timing.Quorum > 0 && voters < s.cfg.Timing.Quorum/2+1 || candidates == 0:
		// Quorum mode: no majority of voters is up; or no candidate is
		// up: no node may lead.
		if leaders != 0 {
			return fmt.Sprintf("%d leaders without a majority or a candidate up", leaders)
		}
		return ""
	case leaders != 1:
		return fmt.Sprintf("%d leaders", leaders)
	case preempting != nil && leader.key.Less(preempting.key):
		return fmt.Sprintf("leader n%d is smaller than n%d, which preempts", leader.key.ID, preempting.key.ID)
	}
	ls := leader.m.Status()
	for _, n := range s.nodes {
		if !n.up || n.paused || n == leader || n.m.Status().State == election.StateConflict {
			continue
		}
		if st := n.m.Status(); st.State != election.StateFollower || st.Leader != ls.Self.ID || st.Term != ls.Term {
			return fmt.Sprintf("n%d is %v of n%d term %d, not a follower of n%d term %d", st.Self.ID, st.State, st.Leader, st.Term, ls.Self.ID, ls.Term)
		}
	}
	return ""
}

// Describe lists every node's view on one line.
func (s *Sim) Describe() string {
	var b strings.Builder
	for i, n := range s.nodes {
		if i > 0 {
			b.WriteString(", ")
		}
		switch {
		case !n.up:
			fmt.Fprintf(&b, "n%d down", n.key.ID)
		default:
			st := n.m.Status()
			fmt.Fprintf(&b, "n%d(%v) %v leader=n%d term=%d", n.key.ID, n.key, st.State, st.Leader, st.Term)
			if n.paused {
				b.WriteString(" paused")
			}
		}
	}
	return b.String()
}

// LiveLeaders returns the ids of the nodes that are up and think they lead,
// sorted.
func (s *Sim) LiveLeaders() []election.NodeID {
	var out []election.NodeID
	for _, n := range s.nodes {
		if n.up && n.m.Status().State == election.StateLeader {
			out = append(out, n.key.ID)
		}
	}
	slices.Sort(out)
	return out
}
