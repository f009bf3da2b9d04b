package sim

import (
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/sim/job"
)

// The job invariants (Config.Jobs), checked on the lives of the jobs —
// from a process's start to its death, on the global clock — rather than
// on leases or states:
//
//  6. Quorum mode: never two jobs alive at once, on any two nodes, across
//     preemption, crashes and restarts with lost state, pauses and
//     clones (a node's job left to its guard by a crash included).
//  7. No job starts on a node whose link is down, and an awake node
//     whose link goes down stops its job at once.
//  8. Default mode: a node that took the leadership over from a live
//     leader (a preemption: it followed that leader, or noted its claim
//     as a candidate, right up to its own leadership; the driver's From)
//     never starts its job while the displaced leader's job still runs,
//     when both are up, awake, with their links up and connected both
//     ways, and the displaced one knows it no longer leads; the
//     displaced job is one that ran when the takeover began.
//     (A leader lost to a crash, a suspicion or a cut is not waited for:
//     default mode runs one job per side while it lasts.)
//  9. Both modes: a crashed leader's NOTICE goes out only once the job of
//     the incarnation that crashed is dead, and a node that acted on it
//     (it followed that leader in that term) never starts its job while
//     that job still runs (job.CheckNotice, notice.go).
//
// Every overlap of two jobs is counted (JobOverlaps, with its length),
// in default mode too, where it is measured but not a violation.

// The checks themselves are sim/job's (Lives.CheckStart, CheckLinkDown),
// which the explorer runs too.

// jobStarted checks invariants 7 and 8 as node n's job starts, and
// records its life.
func (c *Checker) jobStarted(n *node, term uint64) int {
	s := c.s
	c.JobStarts++
	c.checkNoticed(n)
	for _, v := range c.Jobs.CheckStart(cluster{s}, n.idx, n.key.ID, &n.drv, s.cfg.Timing.Quorum > 0) {
		c.violate("%s", v)
	}
	return c.Jobs.Start(n.idx, n.key.ID, term, s.now)
}

// cluster is the simulator as the job checks see it.
type cluster struct{ s *Sim }

func (c cluster) Awake(i int) bool        { n := c.s.nodes[i]; return n.up && !n.paused }
func (c cluster) LinkDown(i int) bool     { return c.s.nodes[i].linkDown }
func (c cluster) Connected(i, j int) bool { return c.s.Connected(i, j) }
func (c cluster) Leads(i int) bool        { return c.s.nodes[i].m.Status().State == election.StateLeader }

// jobDied records the death of life k and checks invariant 6.
func (c *Checker) jobDied(k int) { c.overlaps(c.Jobs.End(k, c.s.now)) }

// jobsFinish counts the overlaps of the jobs still alive at the end of a
// run.
func (c *Checker) jobsFinish() { c.overlaps(c.Jobs.Finish(c.s.now)) }

func (c *Checker) overlaps(os []job.Overlap) {
	for _, o := range os {
		if c.s.cfg.Timing.Quorum > 0 {
			c.violate("invariant 6: jobs overlap: %v", o)
		} else {
			c.s.tracef("JOB-OVERLAP %v", o)
		}
	}
}
