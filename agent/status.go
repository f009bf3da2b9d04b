package agent

// Status is the /status document. The fields of the contract (name …
// members, as in the README) stay; fields may be added after them.
type Status struct {
	Name       string   `json:"name"`
	NodeID     uint64   `json:"node_id"`
	Priority   uint16   `json:"priority"`
	State      string   `json:"state"` // leader, follower, candidate, conflict or starting
	Term       uint64   `json:"term"`
	LeaderID   uint64   `json:"leader_id"`   // 0 while no leader is known
	LeaderName string   `json:"leader_name"` // empty while no leader is known, or when its name is not known yet
	Algorithm  string   `json:"algorithm"`
	Members    []Member `json:"members"` // the other members memberlist knows, alive or not, sorted by name

	Cluster      string `json:"cluster"`
	Transport    string `json:"transport"`     // multicast or unicast
	GossipAddr   string `json:"gossip_addr"`   // this node's memberlist address
	ElectionAddr string `json:"election_addr"` // this node's election socket
	// Conflict names the members that have this node's node_id; set only
	// in state conflict.
	Conflict []string `json:"conflict,omitempty"`
	// LeaderSince is when this node last saw the leadership change, RFC
	// 3339 with milliseconds; empty before the first leader.
	LeaderSince string `json:"leader_since,omitempty"`
	Version     string `json:"version"`

	// BasePriority is the configured priority; Priority above is the
	// effective one: less the weights of the failing checks, or 1 while
	// the node is penalised for a failing job (until PenaltyUntil).
	BasePriority uint16        `json:"base_priority"`
	Checks       []CheckStatus `json:"checks,omitempty"`
	PenaltyUntil string        `json:"penalty_until,omitempty"`
	// Quorum is --quorum (omitted when 0). In quorum mode a leader is
	// shown only while it holds a lease of a majority: the minority side
	// of a partition shows leader_id 0. VotedTerm is the last term this
	// node voted in (kept in --state-file).
	Quorum    int    `json:"quorum,omitempty"`
	VotedTerm uint64 `json:"voted_term,omitempty"`
	// Job is set when the agent has a job.
	Job *JobStatus `json:"job,omitempty"`
}

// Member is one other member of the cluster as memberlist sees it.
type Member struct {
	Name         string `json:"name"`
	NodeID       uint64 `json:"node_id"`
	Priority     uint16 `json:"priority"`
	Addr         string `json:"addr"` // memberlist address
	Alive        bool   `json:"alive"`
	ElectionAddr string `json:"election_addr"`
	// Status is memberlist's view: alive, suspect, dead or left.
	Status string `json:"status"`
}
