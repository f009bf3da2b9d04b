package agent

import (
	"encoding/json"
	"testing"

	"github.com/lanleader/lanleader/agent/api"
)

// TestLeaderGate: GET /leader is 200 with leader true on the leader, 503
// with leader false on a follower, and names the node and the term.
func TestLeaderGate(t *testing.T) {
	l := startLocal(t, LocalOptions{Nodes: 2, HTTP: true})
	ag := waitLeader(t, l, electBound, 1)
	for i, want := range []struct {
		code   int
		leader bool
		state  string
	}{{503, false, "follower"}, {200, true, "leader"}} {
		code, body := get(t, "http://"+l.Agents[i].HTTPAddr()+"/leader")
		var ans api.LeaderAnswer
		if err := json.Unmarshal([]byte(body), &ans); err != nil {
			t.Fatalf("node-%d /leader is not JSON: %v\n%s", i+1, err, body)
		}
		wantAns := api.LeaderAnswer{Node: l.Agents[i].Config().Name, NodeID: uint64(i + 1), Leader: want.leader,
			State: want.state, Term: ag.Term, LeaderID: 2}
		if code != want.code || ans != wantAns {
			t.Errorf("node-%d /leader: %d %+v, want %d %+v", i+1, code, ans, want.code, wantAns)
		}
	}
}
