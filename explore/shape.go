package explore

import (
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/sim/job"
)

// What is explored: the cluster's shape, the bounds of the search, and
// what it found.

// Node is one node of a Shape.
type Node struct {
	ID   election.NodeID
	Role election.Role
	// Down: the node starts crashed (a Restart brings it up).
	Down bool
}

// Shape is the cluster explored: its nodes (two with one ID are
// clones), the election timing, the job, and the driver's receive rule.
type Shape struct {
	Name  string
	Nodes []Node
	// Timing is every node's election configuration; ID and Role come
	// from Nodes. With Quorum > 0 the shape runs in quorum mode, with
	// Quorum set to the number of distinct IDs; with 0 in default mode.
	Timing election.Config
	// Job is every node's job.
	Job job.Params
	// Stops are the stop latencies tried at every SIGTERM, each a
	// choice point of its own (a job that an agent stops, or whose guard
	// stops it after a crash): a latency of at least Job.Grace is a job
	// that ignores SIGTERM and dies at the SIGKILL that follows it, or
	// at the guard's kill at its lease's end. Empty: Job's own stop
	// only.
	Stops []time.Duration
	// JobMetaDelay (default mode) is how long after a job's death the
	// other nodes' view of it (gossip) says it stopped; JobSyncDelay is
	// how long after a takeover from a live leader begins its first
	// state exchange with that leader reads the leader's job. Defaults:
	// the simulator's, 300ms and 20ms.
	JobMetaDelay, JobSyncDelay time.Duration
	// UnsafeJobNoWait breaks the driver's policy on purpose (default
	// mode), as sim.Config's does: a takeover from a live leader does
	// not wait for that leader's job to stop.
	UnsafeJobNoWait bool
	// UnsafeLinkIgnored breaks the driver on purpose: it does not act on
	// its link's loss (no standby for the machine, no stop of the job).
	UnsafeLinkIgnored bool
	// DriftPPM: node i's clock runs fast by DriftPPM parts per million
	// when i is even, slow when it is odd (at most
	// election.MaxClockDrift).
	DriftPPM int64
	// SelfByIncarnation is the driver's old receive rule: a packet with
	// our node_id and our incarnation is taken for our own (clones
	// started alike share the incarnation). Otherwise a packet with our
	// node_id that we did not send is a conflict (EvConflict).
	SelfByIncarnation bool
	// UnsafeNoticeEarly breaks the notice guard on purpose: it sends a
	// crashed leader's NOTICE at the crash, without waiting for its job
	// to die.
	UnsafeNoticeEarly bool
}

// Bounds bound the schedules explored: how many choice points of each
// kind a schedule may have, and how far in time it runs.
type Bounds struct {
	Reorder int // a packet delivered before the item that is due first
	Delay   int // a packet held to MaxDelay
	Loss    int // a packet lost
	Crash   int
	Restart int
	// CrashLeader: only a node that leads may crash, which narrows the
	// search to the crashes that move leadership.
	CrashLeader bool
	// LinkDown: a node's link goes down (it loses its carrier) for one
	// of LinkFor (default: twice the timing's LossWindow, so that the
	// others elect meanwhile).
	LinkDown int
	LinkFor  []time.Duration
	// Pause: a node's process is frozen for one of PauseFor (default:
	// twice the timing's LossWindow, so that the others elect
	// meanwhile).
	Pause    int
	PauseFor []time.Duration
	MaxDelay time.Duration // the longest one-way delay
	Horizon  time.Duration // the global time at which a schedule ends
	// Notice: a crash of a leader may be its agent's alone, its host
	// alive, whose notice guard sends the NOTICE of its term once its job
	// is dead (each such crash counts against Crash too). NoticeDup: a
	// NOTICE packet arrives a second time, NoticeLate after it was sent
	// (default: twice the timing's LossWindow, after a new term).
	Notice     int
	NoticeDup  int
	NoticeLate time.Duration
	// MaxStates stops the search after this many states (0: no limit);
	// Result.Complete says whether it was reached.
	MaxStates int
}

// Result is what a search found.
type Result struct {
	States    int // states reached, repeats included
	Distinct  int // distinct states (hashes): those explored further
	MaxDepth  int // the most events on one schedule
	Complete  bool
	Elapsed   time.Duration
	Violation string // the first invariant broken, "" when none
	// NoticesActed counts the NOTICE deliveries that ended the
	// leadership their receiver followed, over every state explored.
	NoticesActed int
	Trace        string // how the schedule that broke it went
}
