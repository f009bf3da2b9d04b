package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestRoleCollector(t *testing.T) {
	const help = `
# HELP lanleader_role Role of this node in the elections (candidate, witness, observer): 1 for its role, 0 for the others.
# TYPE lanleader_role gauge
# HELP lanleader_member_roles Number of other alive cluster members by the role they announce (candidate, witness, observer).
# TYPE lanleader_member_roles gauge
`
	view := View{State: "follower", Role: "witness", MemberRoles: map[string]int{"candidate": 2, "observer": 5, "role(7)": 1}}
	want := help + `
lanleader_role{role="candidate"} 0
lanleader_role{role="observer"} 0
lanleader_role{role="witness"} 1
lanleader_member_roles{role="candidate"} 2
lanleader_member_roles{role="observer"} 5
lanleader_member_roles{role="witness"} 0
`
	if err := testutil.CollectAndCompare(newStateCollector(fixedView(view)), strings.NewReader(want), "lanleader_role", "lanleader_member_roles"); err != nil {
		t.Error(err)
	}
	reg, _ := newTestRegistry(t, "test", fixedView(view))
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "lanleader_role", "lanleader_member_roles"); err != nil {
		t.Error(err)
	}
}
