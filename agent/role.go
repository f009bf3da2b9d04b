package agent

import (
	"github.com/lanleader/lanleader/election"
)

// checkVoters warns, once until it is no longer so, when more members
// that vote (candidates and witnesses, this node included) are alive
// than quorum mode's N: two disjoint majorities of N could then form, and
// elect two leaders. N must count every candidate and witness and no
// observer. roles counts the other alive members by role.
func (a *Agent) checkVoters(roles map[string]int) {
	l := &a.loop
	if a.cfg.Quorum == 0 {
		return
	}
	voters := roles[election.RoleCandidate.String()] + roles[election.RoleWitness.String()]
	if a.cfg.ElectionRole().Votes() {
		voters++
	}
	over := voters > a.cfg.Quorum
	if over && !l.tooManyVoters {
		a.log.Warn("more voting members are alive than --quorum counts: two majorities could elect two leaders; --quorum must count every candidate and witness (and no observer)",
			"quorum", a.cfg.Quorum, "voters", voters)
	}
	l.tooManyVoters = over
}
