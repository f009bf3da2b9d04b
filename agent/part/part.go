// Package part is the contract between the agent's driver (package agent:
// the event loop, transport, membership, gossip, status and HTTP) and its
// parts, the concerns around the election that an operator configures
// (systemd's notifications now; the job, the addresses, health, the
// leader gate, reload and realtime as they move out of the driver).
//
// A part lives in a package of its own below agent/part and is given a
// Host, never the agent: what it owns, the compiler keeps it owning, and
// a part is tested with a fake Host, without sockets. The driver keeps a
// list of parts and, on its one goroutine, tells each of every change of
// the node's state (Changed), asks each for its next deadline (Next) and
// hands it that deadline when it comes (Due), and closes it at the end.
// Nothing of a part runs concurrently with the loop unless the part
// starts it, and then it comes back to the loop through Host.Post.
package part

import (
	"log/slog"
	"time"
)

// Host is what the driver lends a part.
type Host interface {
	// Now is the agent's monotonic clock, the loop's time.
	Now() time.Duration
	// Post runs f on the event loop; it may be called from any
	// goroutine, and does nothing once the loop has ended.
	Post(f func())
	// MarkDirty says the node's status must be published again (what a
	// part adds to it changed).
	MarkDirty()
	// Log is the agent's logger, with its node attribute.
	Log() *slog.Logger
}

// View is what a part sees of the node after a change, as /status
// reports it.
type View struct {
	NodeID       uint64
	State        string // election.State's name: starting, follower, candidate, leader, conflict
	Term         uint64
	LeaderID     uint64
	LeaderName   string
	Priority     uint16 // the election priority now
	BasePriority uint16 // the configured one
	JobState     string // the job's state ("" without a job)
	JobPid       int
}

// Part is one concern of the agent, driven by the event loop. Every
// method runs on the loop goroutine.
type Part interface {
	// Changed: the node's status was published anew.
	Changed(v *View)
	// Next is the earliest deadline the part waits for, on the Host's
	// clock; ok is false when it waits for none.
	Next() (at time.Duration, ok bool)
	// Due: the loop's clock reached the deadline Next gave (or later).
	Due(now time.Duration)
	// Close: the agent stops; the part lets go of what it holds.
	Close()
}

// Earliest is the earliest deadline of parts, ok false when none waits.
func Earliest(parts []Part) (at time.Duration, ok bool) {
	for _, p := range parts {
		if d, due := p.Next(); due && (!ok || d < at) {
			at, ok = d, true
		}
	}
	return at, ok
}

// RunDue hands every part whose deadline has come its Due.
func RunDue(parts []Part, now time.Duration) {
	for _, p := range parts {
		if d, due := p.Next(); due && now >= d {
			p.Due(now)
		}
	}
}
