// Package api holds the documents the agent serves over HTTP: /status,
// the answer of POST /resign and the body of GET /leader. They are the
// contract of `lanleader status`, of load balancers' health checks and of
// dashboards (DESIGN.md's /status contract): a released field stays, and
// new fields come after the contract's. Package agent builds them; a
// client decodes them with encoding/json.
package api

import (
	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/agent/part/checks"
	"github.com/lanleader/lanleader/agent/part/trackfile"
	"github.com/lanleader/lanleader/agent/part/vips"
)

// Status is the /status document. The fields of the contract (name …
// members, as in docs/commands.md) stay; fields may be added after them.
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
	BasePriority uint16          `json:"base_priority"`
	Checks       []checks.Status `json:"checks,omitempty"`
	PenaltyUntil string          `json:"penalty_until,omitempty"`
	// Quorum is --quorum (omitted when 0). In quorum mode a leader is
	// shown only while it holds a lease of a majority: the minority side
	// of a partition shows leader_id 0. VotedTerm is the last term this
	// node voted in (kept in --state-file).
	Quorum    int    `json:"quorum,omitempty"`
	VotedTerm uint64 `json:"voted_term,omitempty"`
	// Job is set when the agent has a job.
	Job *proc.JobStatus `json:"job,omitempty"`
	// VIPs are the virtual addresses (--vip) and whether each is on this
	// host now; LinksDown the interfaces of theirs that are down, which
	// keep this node out of elections (--vip-track-link).
	VIPs      []vips.Status `json:"vips,omitempty"`
	LinksDown []string      `json:"links_down,omitempty"`
	// LogLevel is the log's level when a reload can change it.
	LogLevel string `json:"log_level,omitempty"`
	// LastReload is the last reload of the configuration (SIGHUP).
	LastReload *ReloadStatus `json:"last_reload,omitempty"`
	// TrackFiles are the track files (--track-file) and whether each is
	// present; Fault says why this node takes no part in elections now
	// (a failed check of weight 0, a track file, a link down), empty when
	// it does.
	TrackFiles []trackfile.Status `json:"track_files,omitempty"`
	Fault      []string           `json:"fault,omitempty"`
	// Role is this node's role: candidate, witness or observer.
	Role string `json:"role"`
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
	// Role is the member's role as its metadata says (candidate for an
	// agent too old to say; empty while its metadata is unreadable).
	Role string `json:"role,omitempty"`
}

// ReloadStatus is the last reload in /status.
type ReloadStatus struct {
	At     string `json:"at"`     // RFC 3339 with milliseconds
	Result string `json:"result"` // ok or error, as lanleader_config_reloads_total's label
	// Applied are the settings that changed and took effect.
	Applied []string `json:"applied,omitempty"`
	// NeedRestart are the settings that changed but keep their running
	// value until the agent restarts.
	NeedRestart []string `json:"need_restart,omitempty"`
	// Error says why the new configuration was refused (result error).
	Error string `json:"error,omitempty"`
}

// ResignAnswer is the answer of POST /resign (lanleader resign decodes it).
type ResignAnswer struct {
	// Resigned: this node led and hands over (its job stops first, then
	// it sends RESIGN).
	Resigned bool   `json:"resigned"`
	State    string `json:"state"`
	Term     uint64 `json:"term"`
	NodeID   uint64 `json:"node_id"`
	// HoldOff is how long it stays out of elections after its RESIGN (at
	// least --preempt-delay): it does not take the leadership back before.
	HoldOff string `json:"hold_off"`
	Error   string `json:"error,omitempty"`
}

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
