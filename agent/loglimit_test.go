package agent

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
	w := newSlogWriter(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	w.conflicts.now = clock.now
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
	clock.t = clock.t.Add(conflictLogEvery)
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

// The agent's own line about two other nodes with one name, which comes
// with memberlist's at each exchange, is limited alike.
func TestTwoOthersOneNameLogLimited(t *testing.T) {
	var buf logs
	cfg := testConfig("node-1", 1)
	cfg.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	a.loop.conflictLog.now = clock.now
	ev := memberEvent{kind: memberNameConflict, name: "node-3", addr: "198.18.0.3:7946", detail: "198.18.0.9:7946"}
	for range 10 {
		a.onMember(ev)
		clock.t = clock.t.Add(300 * time.Millisecond)
	}
	clock.t = clock.t.Add(conflictLogEvery)
	a.onMember(ev)
	got := conflictLines(buf.String(), "two other nodes use one name")
	if len(got) != 2 || !strings.Contains(got[0], "repeated=0") || !strings.Contains(got[1], "repeated=9") {
		t.Fatalf("lines:\n%s\nwant two, the second with repeated=9", strings.Join(got, "\n"))
	}
}
