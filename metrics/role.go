package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lanleader/lanleader/election"
)

// Roles lists the values of the role label of lanleader_role and
// lanleader_member_roles: the election's role names.
var Roles = election.Roles

// roleDescs are the role metrics of the state collector: this node's
// role (lanleader_role) and the other members' (lanleader_member_roles).
type roleDescs struct{ role, members *prometheus.Desc }

func newRoleDescs() roleDescs {
	return roleDescs{role: specRole.desc(), members: specMemberRoles.desc()}
}

func (d roleDescs) describe(ch chan<- *prometheus.Desc) {
	ch <- d.role
	ch <- d.members
}

// collect emits one series per role of each metric from v; roles outside
// Roles (a newer agent's) are not exported.
func (d roleDescs) collect(ch chan<- prometheus.Metric, v *View) {
	for _, r := range Roles {
		ch <- gauge(d.role, boolValue(v.Role == r), r)
	}
	for _, r := range Roles {
		ch <- gauge(d.members, float64(v.MemberRoles[r]), r)
	}
}
