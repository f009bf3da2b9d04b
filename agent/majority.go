package agent

import (
	"fmt"
	"slices"
	"time"
)

// A quorum node that hears too few voters can neither lead nor see a
// leader elected: it sits at "starting" (or "candidate") with no leader,
// and /healthz answers "ok starting". Nothing else tells an operator why,
// so the loop says it, at info: when the node starts waiting, when the
// count of voters it hears changes while it waits, again every
// majorityLogEvery while the count stays the same (never every
// heartbeat), and once when a majority is heard again.

// majorityLogEvery is how often the waiting line is repeated while the
// count of voters heard stays the same.
const majorityLogEvery = time.Minute

// majorityWait is what the loop last said about the majority.
type majorityWait struct {
	waiting  bool          // the last judgement: too few voters heard, no leader known
	heard    int           // the voters heard then
	loggedAt time.Duration // when the waiting line was last logged
}

// votersHeard returns the voters this node hears, itself included when it
// votes: the candidates and witnesses that the membership (gossip) lists
// alive, by name, sorted.
func (a *Agent) votersHeard() []string {
	var names []string
	if a.cfg.ElectionRole().Votes() {
		names = append(names, a.cfg.Name)
	}
	for _, m := range a.loop.members {
		if m.alive() && m.metaOK && m.meta.Role.Votes() {
			names = append(names, m.name)
		}
	}
	slices.Sort(names)
	return names
}

// noteMajority judges at now whether this quorum node waits for a
// majority, and logs what changed (see majorityWait). It judges only once
// the first election's startup wait is over: members that start together
// find each other within it, and their first count would only be noise.
// An observer does not vote and waits for nobody.
func (a *Agent) noteMajority(now time.Duration) {
	q := a.cfg.Quorum
	if q == 0 || !a.cfg.ElectionRole().Votes() || a.loop.leaving || now < a.machine.Config().StartupWait {
		return
	}
	w := &a.loop.majority
	st := a.machine.Status()
	voters := a.votersHeard()
	need, heard := q/2+1, len(voters)
	waiting := heard < need && st.Leader == 0
	switch {
	case waiting && (!w.waiting || heard != w.heard || now-w.loggedAt >= majorityLogEvery):
		a.log.Info(fmt.Sprintf("waiting for a majority of %d (%d votes): %d heard", q, need, heard),
			"quorum", q, "majority", need, "heard", heard, "voters", voters)
		w.loggedAt = now
	case !waiting && w.waiting && heard >= need:
		a.log.Info(fmt.Sprintf("a majority of %d (%d votes) is heard: %d; a leader can be elected", q, need, heard),
			"quorum", q, "majority", need, "heard", heard, "voters", voters)
	case !waiting && w.waiting:
		a.log.Info(fmt.Sprintf("no longer waiting for a majority of %d (%d votes): a leader is known", q, need),
			"quorum", q, "majority", need, "heard", heard, "leader", a.nameOf(st.Leader))
	}
	w.waiting, w.heard = waiting, heard
}
