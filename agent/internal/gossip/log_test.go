package gossip

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// conflictLines is the lines of out that say "Conflicting address" (or
// the agent's own line about two other nodes with one name).
func conflictLines(out string, what string) []string {
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, what) {
			got = append(got, l)
		}
	}
	return got
}

// memberlist's "Conflicting address" line, which it logs at each
// exchange that carries a name claimed from two addresses (every few
// hundred milliseconds after a cloned host stopped), is logged once per
// pair of addresses per minute, the next line with the count of those
// held back; the others go to debug. Another pair is another key.
func TestConflictLogLimited(t *testing.T) {
	var buf bytes.Buffer
	w := NewLogWriter(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	w.conflicts.Now = clock.now
	line := func(theirs string) {
		fmt.Fprintf(w, "[ERR] memberlist: Conflicting address for node-3. Mine: 198.18.0.3:7946 Theirs: %s Old state: %d\n", theirs, clock.t.Unix()%3)
	}
	for range 10 {
		line("198.18.0.9:7946")
		clock.t = clock.t.Add(300 * time.Millisecond)
	}
	line("198.18.0.10:7946") // another address: its own line at once
	if got := conflictLines(buf.String(), "Conflicting address"); len(got) != 2 ||
		!strings.Contains(got[0], "Theirs: 198.18.0.9:7946") || !strings.Contains(got[1], "Theirs: 198.18.0.10:7946") {
		t.Fatalf("after 10 repeats of one pair and one of another, lines:\n%s\nwant one of each", strings.Join(got, "\n"))
	}
	clock.t = clock.t.Add(ConflictLogEvery)
	line("198.18.0.9:7946")
	got := conflictLines(buf.String(), "Conflicting address")
	if len(got) != 3 || !strings.Contains(got[2], "repeated=9") || !strings.Contains(got[2], "level=ERROR") {
		t.Fatalf("a minute later, lines:\n%s\nwant a third at error with repeated=9", strings.Join(got, "\n"))
	}
	// Other memberlist errors are not held back.
	for range 3 {
		fmt.Fprintf(w, "[ERR] memberlist: Failed to send ping: write: connection refused\n")
	}
	if n := len(conflictLines(buf.String(), "Failed to send ping")); n != 3 {
		t.Errorf("%d lines of another error, want 3", n)
	}
}

// memberlist's levels become slog's: its chatter (INFO, DEBUG) and the
// errors of its own shutdown are debug, its warnings and errors stay so;
// its "memberlist: " prefix goes.
func TestLogWriterLevels(t *testing.T) {
	var buf bytes.Buffer
	w := NewLogWriter(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	for _, c := range []struct{ line, want string }{
		{"[DEBUG] memberlist: Stream connection from=198.18.0.2:40000", `level=DEBUG msg="Stream connection from=198.18.0.2:40000"`},
		{"[INFO] memberlist: Suspect node-2 has failed", `level=DEBUG msg="Suspect node-2 has failed"`},
		{"[WARN] memberlist: Was able to connect to node-2 over TCP but UDP probes failed", `level=WARN msg="Was able to connect`},
		{"[ERR] memberlist: Failed to send ping: write: no route to host", `level=ERROR msg="Failed to send ping`},
		{"[ERROR] memberlist: Failed fallback ping: EOF", `level=ERROR msg="Failed fallback ping: EOF"`},
		{"[ERR] memberlist: Error accepting TCP connection: accept tcp 198.18.0.1:7946: use of closed network connection", `level=DEBUG msg="Error accepting TCP connection`},
		{"an unprefixed line", `level=DEBUG msg="an unprefixed line"`},
	} {
		buf.Reset()
		fmt.Fprintln(w, c.line)
		if !strings.Contains(buf.String(), c.want) {
			t.Errorf("%q: logged %q, want %q", c.line, buf.String(), c.want)
		}
	}
}

// A line about another key or cluster is an error with the hint at most
// once per auth.LogEvery; the others meanwhile are debug.
func TestLogWriterKeyHint(t *testing.T) {
	var buf bytes.Buffer
	w := NewLogWriter(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	for range 5 {
		fmt.Fprintln(w, "[ERR] memberlist: failed to receive and remove the stream label header: EOF")
		fmt.Fprintln(w, "[ERR] memberlist: Decrypt packet failed: No installed keys could decrypt the message")
	}
	got := conflictLines(buf.String(), "level=")
	if len(got) != 1 || !strings.Contains(got[0], "level=ERROR") || !strings.Contains(got[0], "another --key-file") {
		t.Fatalf("lines:\n%s\nwant one error with the hint", strings.Join(got, "\n"))
	}
}

// memberlist's refutation of a suspicion or a death of this node is
// expected within RefuteAfterStart of the start (the others still hold
// the previous run of a restarted agent as suspect or dead): info, in
// words. Later it is a real suspicion: a warning.
func TestLogWriterRefutation(t *testing.T) {
	var buf bytes.Buffer
	w := NewLogWriter(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	clock := &fakeClock{}
	w.now = clock.now
	for _, c := range []struct {
		after      time.Duration
		line, want string
	}{
		{2 * time.Second, "[WARN] memberlist: Refuting a suspect message (from: node-2)",
			`level=INFO msg="the other members suspected this node's previous run (it restarted); refuted" from=node-2`},
		{RefuteAfterStart - time.Second, "[WARN] memberlist: Refuting a dead message (from: node-3)",
			`level=INFO msg="the other members held this node's previous run dead (it restarted); refuted" from=node-3`},
		{RefuteAfterStart, "[WARN] memberlist: Refuting a suspect message (from: node-2)",
			`level=WARN msg="another member suspects this node (its probes went unanswered: lost packets, or a paused or overloaded host?); refuted" from=node-2`},
		{time.Hour, "[WARN] memberlist: Refuting a dead message (from: node-3)",
			`level=WARN msg="another member declared this node dead (its probes went unanswered: lost packets, or a paused or overloaded host?); refuted" from=node-3`},
		// A name claimed by another node: memberlist's own words, a warning.
		{2 * time.Second, "[WARN] memberlist: Refuting an alive message for 'node-1' (198.18.0.9:7946) meta:([] VS []), vsn:([] VS [])",
			`level=WARN msg="Refuting an alive message for 'node-1'`},
	} {
		buf.Reset()
		clock.t = w.start.Add(c.after)
		fmt.Fprintln(w, c.line)
		if got := strings.TrimSpace(buf.String()); !strings.Contains(got, c.want) || strings.Count(got, "\n") > 0 {
			t.Errorf("%v after the start, %q: logged %q, want one line with %q", c.after, c.line, got, c.want)
		}
	}
}
