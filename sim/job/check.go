package job

import (
	"fmt"

	"github.com/lanleader/lanleader/election"
)

// The invariants of a job's start and of a pulled cable, which the
// simulator's Checker and the explorer both check (their numbers are the
// Checker's, sim/jobcheck.go). Invariant 6, the quorum mode's one job at
// a time, is the overlaps that Lives reports.

// Cluster is what the checks need to know of the cluster at the moment
// they check, by node index.
type Cluster interface {
	// Awake reports whether node i's agent runs: up, not crashed, not
	// paused.
	Awake(i int) bool
	// LinkDown reports whether node i's link is down.
	LinkDown(i int) bool
	// Connected reports whether packets flow both ways between i and j
	// (their links aside).
	Connected(i, j int) bool
	// Leads reports whether node i's machine says it leads (only asked
	// of an awake node).
	Leads(i int) bool
}

// CheckStart checks invariants 7 and 8 as the job of node (index node,
// node_id id, driver d) starts, before Lives records it, and returns the
// violations:
//
//  7. No job starts on a node whose link is down.
//  8. Default mode (quorum false): a node that took the leadership over
//     from a live leader (d.From: it followed that leader right up to its
//     own leadership) never starts its job while the displaced leader's
//     job still runs, when both are awake, with their links up and
//     connected both ways, and the displaced one knows it no longer
//     leads; the displaced job is one that ran when the takeover began
//     (d.WaitSince), not one its guard stops after a crash.
func (ls *Lives) CheckStart(c Cluster, node int, id election.NodeID, d *Driver, quorum bool) []string {
	var out []string
	if c.LinkDown(node) {
		out = append(out, fmt.Sprintf("invariant 7: n%d started its job with its link down", id))
	}
	if quorum || d.From == 0 {
		return out
	}
	for k := range ls.All {
		l := &ls.All[k]
		if !l.Open || l.ID != d.From || l.Start > d.WaitSince || l.Orphan || l.Node == node ||
			!c.Awake(l.Node) || c.LinkDown(l.Node) || c.LinkDown(node) || !c.Connected(node, l.Node) {
			continue
		}
		if c.Leads(l.Node) {
			continue // it does not know yet: two leaders, not a preemption
		}
		out = append(out, fmt.Sprintf("invariant 8: n%d took over from n%d and started its job while n%d's job (started %v) still runs",
			id, l.ID, l.ID, l.Start))
	}
	return out
}

// CheckLinkDown checks the other half of invariant 7 on a node whose
// link has gone down, once its awake driver has acted on that: a leader
// stops its job at once, so its job is not wanted, and is stopping
// (SIGTERM sent) or gone. It returns the violation, "" when none.
func CheckLinkDown(id election.NodeID, j *Job) string {
	if j.Want || j.Phase == Starting || j.Phase == Running {
		return fmt.Sprintf("invariant 7: n%d's job is %v (wanted: %v) after its link went down", id, j.Phase, j.Want)
	}
	return ""
}

// CheckNotice checks invariant 9 on the job l that a crashed leader's
// NOTICE (wire.TypeNotice) covers — the job of the incarnation that
// crashed — at the notice's sending (to 0) and when a node that acted on
// it (to) starts its own job:
//
//  9. Both modes: a NOTICE goes out only once the crashed leader's job
//     is dead, so a node that elects on it never starts its job while
//     that job could still run. (The job's guard, the address keeper
//     and the notice guard ensure it on a real host: the notice guard
//     sends once every job guard has ended its job.)
//
// It returns the violation, "" when none.
func CheckNotice(l Life, to election.NodeID) string {
	if !l.Open {
		return ""
	}
	if to == 0 {
		return fmt.Sprintf("invariant 9: n%d's NOTICE of term %d went out while its job (%v) still runs", l.ID, l.Term, l)
	}
	return fmt.Sprintf("invariant 9: n%d acted on n%d's NOTICE of term %d and started its job while that job (%v) still runs", to, l.ID, l.Term, l)
}
