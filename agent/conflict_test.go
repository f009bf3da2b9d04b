package agent

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/internal/gossip"
)

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
	now := time.Unix(1_800_000_000, 0)
	a.loop.conflictLog.Now = func() time.Time { return now }
	ev := memberEvent{kind: memberNameConflict, name: "node-3", addr: "198.18.0.3:7946", detail: "198.18.0.9:7946"}
	for range 10 {
		a.onMember(ev)
		now = now.Add(300 * time.Millisecond)
	}
	now = now.Add(gossip.ConflictLogEvery)
	a.onMember(ev)
	var got []string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, "two other nodes use one name") {
			got = append(got, l)
		}
	}
	if len(got) != 2 || !strings.Contains(got[0], "repeated=0") || !strings.Contains(got[1], "repeated=9") {
		t.Fatalf("lines:\n%s\nwant two, the second with repeated=9", strings.Join(got, "\n"))
	}
}
