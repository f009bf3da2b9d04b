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
// its warnings and errors stay warnings and errors.
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
}

// ConflictLogEvery is the period of the lines about one name claimed from
// two addresses: memberlist's and the agent's own.
const ConflictLogEvery = time.Minute

// NewLogWriter returns the writer of memberlist's (or net/http's) log
// lines to l.
func NewLogWriter(l *slog.Logger) *LogWriter {
	return &LogWriter{l: l, conflicts: loglimit.New(ConflictLogEvery)}
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
