package gossip

import (
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/lanleader/lanleader/agent/internal/auth"
	"github.com/lanleader/lanleader/agent/internal/loglimit"
)

// LogWriter turns memberlist's log lines ("[DEBUG] memberlist: …") into
// slog records of the matching level: memberlist's own chatter is debug,
// its warnings and errors stay warnings and errors, but for the
// refutation that follows a restart (info, in words: refuting).
type LogWriter struct {
	l     *slog.Logger
	peers auth.Log // rate of the lines about another key or cluster
	// conflicts: memberlist logs a node's name claimed from two
	// addresses ("Conflicting address") at each exchange that carries
	// it, every few hundred milliseconds while it lasts (after a cloned
	// host stopped, its old address and the other's keep meeting). One
	// line per pair of addresses per ConflictLogEvery, with the count of
	// those held back; the rest at debug.
	conflicts *loglimit.Limit
	// start is when the writer was made (memberlist's start); now is the
	// clock, which a test may replace: see refuting.
	start time.Time
	now   func() time.Time
}

// ConflictLogEvery is the period of the lines about one name claimed from
// two addresses: memberlist's and the agent's own.
const ConflictLogEvery = time.Minute

// NewLogWriter returns the writer of memberlist's (or net/http's) log
// lines to l.
func NewLogWriter(l *slog.Logger) *LogWriter {
	return &LogWriter{l: l, conflicts: loglimit.New(ConflictLogEvery), start: time.Now(), now: time.Now}
}

// RefuteAfterStart is how long after the start memberlist's refutations
// of a suspicion or a death of this node are expected: see refuting.
const RefuteAfterStart = time.Minute

// refuting turns memberlist's "Refuting a suspect message (from: X)" and
// "Refuting a dead message (from: X)" into words, at a level that says
// whether they are expected. memberlist keeps a member's state by name:
// when an agent restarts, the others still hold its previous run as
// suspect (its probes failed while it was down) or dead, and tell the new
// run so as it joins, which refutes it with a higher incarnation. That
// is part of every restart, within seconds of the join: within
// RefuteAfterStart of the start it is logged at info. Later the
// suspicion is of this run: its probes went unanswered (lost packets, a
// paused or overloaded host), which an operator should see: a warning.
// (A join delayed beyond RefuteAfterStart, all seeds down, logs the
// restart's refutation as a warning too.) ok is false for other lines.
func (w *LogWriter) refuting(s string) (ok bool) {
	rest, ok := strings.CutPrefix(s, "Refuting a ")
	if !ok {
		return false
	}
	kind, from, ok := strings.Cut(rest, " message (from: ")
	if !ok || kind != "suspect" && kind != "dead" {
		return false
	}
	from = strings.TrimSuffix(from, ")")
	if w.now().Sub(w.start) < RefuteAfterStart {
		w.l.Info(map[string]string{
			"suspect": "the other members suspected this node's previous run (it restarted); refuted",
			"dead":    "the other members held this node's previous run dead (it restarted); refuted",
		}[kind], "from", from)
		return true
	}
	w.l.Warn(map[string]string{
		"suspect": "another member suspects this node (its probes went unanswered: lost packets, or a paused or overloaded host?); refuted",
		"dead":    "another member declared this node dead (its probes went unanswered: lost packets, or a paused or overloaded host?); refuted",
	}[kind], "from", from)
	return true
}

// keyHint follows memberlist's lines about encryption and labels: what an
// operator must fix.
const keyHint = "a peer has another --key-file (or none where this agent has one, or one where it has none) or another --cluster: every agent of a cluster needs the same key file and cluster name"

func (w *LogWriter) Write(p []byte) (int, error) {
	s := strings.TrimSpace(string(p))
	lvl := slog.LevelDebug
	for _, x := range []struct {
		tag string
		lvl slog.Level
	}{{"[ERR]", slog.LevelError}, {"[ERROR]", slog.LevelError}, {"[WARN]", slog.LevelWarn}, {"[INFO]", slog.LevelDebug}, {"[DEBUG]", slog.LevelDebug}} {
		if rest, ok := strings.CutPrefix(s, x.tag); ok {
			s, lvl = strings.TrimSpace(rest), x.lvl
			break
		}
	}
	s = strings.TrimPrefix(s, "memberlist: ")
	if strings.Contains(s, "use of closed network connection") {
		lvl = slog.LevelDebug // memberlist's goroutines racing its own shutdown
	}
	if lvl == slog.LevelWarn && w.refuting(s) {
		return len(p), nil
	}
	if rest, ok := strings.CutPrefix(s, "Conflicting address for "); ok && lvl > slog.LevelDebug {
		// The pair of addresses, without the state that follows it.
		key, _, _ := strings.Cut(rest, " Old state:")
		ok, held := w.conflicts.Allow(key)
		switch {
		case !ok:
			lvl = slog.LevelDebug
		case held > 0:
			w.l.Log(nil, lvl, s, "repeated", held, "over", ConflictLogEvery)
			return len(p), nil
		}
	}
	if ls := strings.ToLower(s); strings.Contains(ls, "crypt") || strings.Contains(ls, "label") {
		// Another key or cluster: one line at error per 10 s (a flood of
		// junk on the gossip port must not flood the log), the rest at debug.
		if w.peers.Due() {
			w.l.Log(nil, slog.LevelError, s, "hint", keyHint)
			return len(p), nil
		}
		lvl = slog.LevelDebug
	}
	w.l.Log(nil, lvl, s)
	return len(p), nil
}

var _ io.Writer = (*LogWriter)(nil)
