package agent

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/internal/gossip"
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
	a.loop.conflictLog.Now = clock.now
	ev := memberEvent{kind: memberNameConflict, name: "node-3", addr: "198.18.0.3:7946", detail: "198.18.0.9:7946"}
	for range 10 {
		a.onMember(ev)
		clock.t = clock.t.Add(300 * time.Millisecond)
	}
	clock.t = clock.t.Add(gossip.ConflictLogEvery)
	a.onMember(ev)
	got := conflictLines(buf.String(), "two other nodes use one name")
	if len(got) != 2 || !strings.Contains(got[0], "repeated=0") || !strings.Contains(got[1], "repeated=9") {
		t.Fatalf("lines:\n%s\nwant two, the second with repeated=9", strings.Join(got, "\n"))
	}
}
