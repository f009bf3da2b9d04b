package sim

import (
	"io"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/sim/job"
)

// What a run is made of: the network, the nodes and the timing.

// Net is the behaviour of the simulated network at one moment. Every field
// may change during a run (a schedule's loss burst, say).
type Net struct {
	DelayMin time.Duration // smallest one-way delay of a packet
	DelayMax time.Duration // largest one-way delay; delays are uniform in [DelayMin, DelayMax]
	Loss     float64       // probability that a packet copy is lost
	Dup      float64       // probability that a packet copy is delivered twice
}

// Node describes one simulated node.
type Node struct {
	Key     election.Key
	Preempt bool
	// Role is what the node may do in the elections (the zero value:
	// a candidate); membership tells the others.
	Role election.Role
	// Job is how the node's job behaves (Config.Jobs).
	Job job.Params
}

// Config describes a simulated cluster.
type Config struct {
	Seed uint64
	// Algorithm is the election algorithm every node runs (one of
	// election.Algorithms); empty means Timing.Algorithm, itself bully
	// when empty.
	Algorithm string
	Nodes     []Node
	// Timing is the election configuration every node starts from; ID,
	// Priority and Preempt come from Nodes. Its zero Hardening runs the
	// seeds' algorithms; DefaultTiming is the agent's machine.
	Timing election.Config
	// Phi, when true, gives every node a phi-accrual detector instead of
	// the fixed timeout.
	Phi bool
	Net Net
	// MembershipDelay is how long the membership layer takes to tell the
	// others that a node crashed or came back (memberlist's SWIM takes
	// seconds). Default 2s.
	MembershipDelay time.Duration
	// UpdateDelay is how long a change of a node's priority takes to reach
	// the others through the membership layer's gossip. Default 300ms.
	UpdateDelay time.Duration
	// Unicast: broadcasts go out as one unicast packet to each member of
	// their scope in the sender's membership view (the agent's
	// --transport unicast), instead of one multicast packet to every node.
	Unicast bool
	// Trace, when set, receives one line per event: who got what, who sent
	// what, every change of role.
	Trace io.Writer
	// DriftPPM, when not 0, gives each incarnation of each node a clock
	// rate of its own, drawn uniformly within ±DriftPPM parts per million
	// of the global clock's (half of them at the bound), so that a machine
	// that counts on equal clock rates shows up. The election's quorum
	// mode assumes at most election.MaxClockDrift (500 ppm).
	DriftPPM int
	// Amnesia: a node restarted in quorum mode has lost its votes (its
	// driver keeps no Status().VotedTerm on stable storage), instead of
	// starting from the last one (Config.InitialTerm).
	Amnesia bool

	// Jobs: every node runs a job (Node.Job) under the agent's policy
	// (sim/job), and the Checker checks the jobs' lives (see Checker).
	Jobs bool
	// JobMetaDelay is how long a change of a node's job (started,
	// stopped) takes to reach the others in its membership metadata
	// (gossip). Default 300ms.
	JobMetaDelay time.Duration
	// JobSyncDelay: a takeover from a live leader exchanges state with
	// it at once; its metadata as it was this long after the wait began
	// is the first the new leader knows. Default 20ms.
	JobSyncDelay time.Duration
	// JobWaitMargin is added to a node's job grace for the longest wait
	// of a takeover (the agent's jobWaitMargin). Default 2s.
	JobWaitMargin time.Duration

	// UnsafeJobNoWait breaks the driver's policy on purpose, for the
	// checker's proof: a takeover from a live leader does not wait for
	// that leader's job to stop (it starts its own after the first state
	// exchange, JobSyncDelay). Never set it otherwise.
	UnsafeJobNoWait bool

	// Clones: nodes may share a node_id (cloned hosts). A unicast to a
	// shared id goes to the node the sender last heard with that id.
	Clones bool
	// SelfByIncarnation is the driver's old receive rule, for
	// planted-bug tests: a packet with this node's node_id and its
	// incarnation is taken for its own and dropped (clones started
	// alike share the incarnation). Otherwise a packet with this node's
	// id that it did not send is a node_id conflict (EvConflict).
	SelfByIncarnation bool
}

// membershipDelay is MembershipDelay with its default.
func (c Config) membershipDelay() time.Duration {
	if c.MembershipDelay == 0 {
		return 2 * time.Second
	}
	return c.MembershipDelay
}
