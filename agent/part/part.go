// Package part is the contract between the agent's driver (package agent:
// the event loop, transport, membership, gossip, status and HTTP) and its
// parts, the concerns around the election that an operator configures
// (systemd's notifications, the track files, the health checks, the
// carrier of the links, the virtual addresses; the job, the leader gate
// and realtime as they move out of the driver).
//
// A part lives in a package of its own below agent/part and is given a
// Host, never the agent: what it owns, the compiler keeps it owning, and
// a part is tested with a fake Host, without sockets. The driver keeps a
// list of parts and, on its one goroutine, tells each of every change of
// the node's state (Changed), asks each for its next deadline (Next) and
// hands it that deadline when it comes (Due), hands each a reload's
// configuration (Reload), and closes it at the end. Nothing of a part
// runs concurrently with the loop unless the part starts it, and then it
// comes back to the loop through Host.Post.
//
// In a reload, every part applies the settings that are its own and
// names them; the driver keeps its copy of the configuration, does what
// follows from the names (the priority and the standby after the checks,
// the links' watch after the addresses) and applies the settings that
// are its own (the log's level, the election's, the hooks' and the
// job's).
package part

import (
	"log/slog"
	"time"

	"github.com/lanleader/lanleader/agent/config"
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
	// Rearm says the part's deadline (Next) moved outside Due, in one of
	// its own methods the driver called: the driver asks every part's
	// Next again and sets its timer to the earliest. After Due the driver
	// does so by itself.
	Rearm()
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
	// Reload: a reload's configuration cfg was accepted (old is the one
	// running until now); the part applies what of it is its own and
	// names the settings it applied, by their flags as config.Settings
	// spells them (nil: none). A setting that needs a restart is not its
	// to apply: it keeps what it was given at the start.
	Reload(old, cfg *config.Config) (applied []string)
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
