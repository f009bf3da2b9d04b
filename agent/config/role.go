package config

import (
	"github.com/lanleader/lanleader/election"
)

// The node's role (Config.Role): what it may do in the elections, which
// settings it needs, and which it makes pointless.

// ElectionRole is Config.Role as the election knows it (candidate when Role is
// not a role name: Validate refuses that).
func (c *Config) ElectionRole() election.Role {
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
		p.relation("role", "a witness only votes in quorum mode, and quorum is off: set %v to N (N counts the candidates and witnesses), or make this node an observer", Ref("quorum"))
	}
}

// RoleWarnings lists the settings that this node's role makes pointless:
// a witness or an observer never leads, so it never runs the job, the
// on_leader hook or the virtual addresses. They are warnings, not errors,
// so that one configuration file can serve every host of a cluster, the
// role given on each host's command line.
func (c *Config) RoleWarnings() []string {
	r := c.ElectionRole()
	if r.MayLead() {
		return nil
	}
	var w []string
	for _, s := range []struct {
		set  bool
		name string
	}{
		{len(c.Job) > 0, "the job never runs here"},
		{c.OnLeader != "", "the on_leader hook never runs here"},
		{len(c.VIPs) > 0, "the virtual addresses (--vip) are never held here"},
	} {
		if s.set {
			w = append(w, "role "+r.String()+": this node never leads, so "+s.name)
		}
	}
	return w
}
