package agent

import (
	"encoding/json"
	"net/http"
)

// LeaderAnswer is the body of GET /leader, the leader gate of load
// balancers and of `lanleader status --is-leader` and `lanleader
// exec-if-leader`: 200 OK on the leader, 503 elsewhere.
type LeaderAnswer struct {
	Node     string `json:"node"`      // this node's name
	NodeID   uint64 `json:"node_id"`   // this node's node_id
	Leader   bool   `json:"leader"`    // this node leads now
	State    string `json:"state"`     // as in /status
	Term     uint64 `json:"term"`      // the term (the job's fencing token)
	LeaderID uint64 `json:"leader_id"` // the leader this node knows, 0: none
}

// serveLeader is GET /leader. It reads the loop's latest snapshot, like
// /status: in quorum mode a leader is a leader only while it holds its
// lease.
func (a *Agent) serveLeader(w http.ResponseWriter, r *http.Request) {
	s := a.Status()
	ans := LeaderAnswer{Node: s.Name, NodeID: s.NodeID, Leader: s.State == "leader", State: s.State,
		Term: s.Term, LeaderID: s.LeaderID}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !ans.Leader {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	json.NewEncoder(w).Encode(&ans)
}
