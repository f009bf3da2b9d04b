// Package majority says why a quorum node has no leader when it hears
// too few voters. Such a node can neither lead nor see a leader elected:
// it sits at "starting" (or "candidate") with no leader, and /healthz
// answers "ok starting". Nothing else tells an operator why, so the
// node says it, at info: when it starts waiting, when the count of
// voters it hears changes while it waits, again every LogEvery while the
// count stays the same (never every heartbeat), and once when a majority
// is heard again.
package majority

import (
	"fmt"
	"log/slog"
	"time"
)

// LogEvery is how often the waiting line is repeated while the count of
// voters heard stays the same.
const LogEvery = time.Minute

// View is what the driver sees at a moment.
type View struct {
	Quorum int      // --quorum N; 0 is off
	Voters []string // the voters heard, this node included when it votes, sorted
	Leader string   // the leader known, "" when none
}

// Watch is what was last said about the majority.
type Watch struct {
	log      *slog.Logger
	waiting  bool          // the last judgement: too few voters heard, no leader known
	heard    int           // the voters heard then
	loggedAt time.Duration // when the waiting line was last logged
}

// New is a watch that logs to log.
func New(log *slog.Logger) *Watch { return &Watch{log: log} }

// Note judges v at now and logs what changed. The driver calls it only
// for a voting node in quorum mode, once the first election's startup
// wait is over (members that start together find each other within it,
// and their first count would only be noise).
func (w *Watch) Note(now time.Duration, v View) {
	q := v.Quorum
	need, heard := q/2+1, len(v.Voters)
	waiting := heard < need && v.Leader == ""
	switch {
	case waiting && (!w.waiting || heard != w.heard || now-w.loggedAt >= LogEvery):
		w.log.Info(fmt.Sprintf("waiting for a majority of %d (%d votes): %d heard", q, need, heard),
			"quorum", q, "majority", need, "heard", heard, "voters", v.Voters)
		w.loggedAt = now
	case !waiting && w.waiting && heard >= need:
		w.log.Info(fmt.Sprintf("a majority of %d (%d votes) is heard: %d; a leader can be elected", q, need, heard),
			"quorum", q, "majority", need, "heard", heard, "voters", v.Voters)
	case !waiting && w.waiting:
		w.log.Info(fmt.Sprintf("no longer waiting for a majority of %d (%d votes): a leader is known", q, need),
			"quorum", q, "majority", need, "heard", heard, "leader", v.Leader)
	}
	w.waiting, w.heard = waiting, heard
}
