package agent

import (
	"github.com/lanleader/lanleader/election"
)

// This file is the node's role (Config.Role): what it may do in the
// elections, which settings it needs, and which it makes pointless.

// role is Config.Role as the election knows it (candidate when Role is
// not a role name: Validate refuses that).
func (c *Config) role() election.Role {
	r, _ := election.ParseRole(c.Role)
	return r
}

// checkRole refuses a role this node cannot have: an unknown name, or a
// witness outside quorum mode (it would have no vote to give).
func (c *Config) checkRole(p *problems) {
	r, err := election.ParseRole(c.Role)
	switch {
	case err != nil:
		p.setting("role", "%q is not %s", c.Role, orList(election.Roles))
	case r == election.RoleWitness && c.Quorum == 0:
		p.relation("role: a witness only votes in quorum mode, and quorum is off: set --quorum N (N counts the candidates and witnesses), or make this node an observer (--role observer)")
	}
}

// RoleWarnings lists the settings that this node's role makes pointless:
// a witness or an observer never leads, so it never runs the job, the
// on_leader hook or the virtual addresses. They are warnings, not errors,
// so that one configuration file can serve every host of a cluster, the
// role given on each host's command line.
func (c *Config) RoleWarnings() []string {
	r := c.role()
	if r.MayLead() {
		return nil
	}
	var w []string
	for _, s := range []struct {
		set  bool
		name string
	}{
		{len(c.Job) > 0, "the job"},
		{c.OnLeader != "", "the on_leader hook"},
		{len(c.VIPs) > 0, "the virtual addresses (--vip)"},
	} {
		if s.set {
			w = append(w, "role "+r.String()+": this node never leads, so "+s.name+" never runs here")
		}
	}
	return w
}

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
	if a.cfg.role().Votes() {
		voters++
	}
	over := voters > a.cfg.Quorum
	if over && !l.tooManyVoters {
		a.log.Warn("more voting members are alive than --quorum counts: two majorities could elect two leaders; --quorum must count every candidate and witness (and no observer)",
			"quorum", a.cfg.Quorum, "voters", voters)
	}
	l.tooManyVoters = over
}
