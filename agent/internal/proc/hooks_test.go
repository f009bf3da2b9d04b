package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// counts records a hook runner's outcomes.
type counts struct {
	mu  sync.Mutex
	got []string
}

func (c *counts) count(hook, outcome string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, hook+":"+outcome)
}

func (c *counts) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.got)
}

// TestHookRunner: hooks run one at a time in their order, with their
// environment; each outcome is counted; one that hangs is killed at the
// timeout; after Stop the queued hooks still run, then Done closes.
func TestHookRunner(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	var c counts
	log := &logBuffer{}
	const timeout = 300 * time.Millisecond
	h := NewHookRunner(timeout, log.logger(), c.count)
	h.Add(Hook{Name: "on_leader", Command: `echo "leader $X" >> ` + out, Env: []string{"X=1"}})
	h.Add(Hook{Name: "on_change", Command: `echo change >> ` + out + `; sleep 30`})
	h.Add(Hook{Name: "on_follower", Command: `echo follower >> ` + out + `; echo bye; exit 4`})
	go h.Run()
	h.Stop()
	select {
	case <-h.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("hooks still running; counted %q", c.list())
	}
	if want := []string{"on_leader:ok", "on_change:timeout", "on_follower:failed"}; !slices.Equal(c.list(), want) {
		t.Errorf("outcomes %q, want %q", c.list(), want)
	}
	b, _ := os.ReadFile(out)
	if got := strings.Fields(strings.ReplaceAll(string(b), " ", "_")); !slices.Equal(got, []string{"leader_1", "change", "follower"}) {
		t.Errorf("hooks ran as %q", got)
	}
	for _, want := range []string{"hook timed out: killed", `hook=on_follower`, `line=bye`, `status="exit status 4"`} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
}

// TestHookQueueDropsOldest: a full queue drops its oldest hooks, counted.
func TestHookQueueDropsOldest(t *testing.T) {
	var c counts
	h := NewHookRunner(time.Second, (&logBuffer{}).logger(), c.count)
	for i := range hookQueueMax + 2 {
		h.Add(Hook{Name: fmt.Sprint("h", i), Command: "true"})
	}
	if want := []string{"h0:dropped", "h1:dropped"}; !slices.Equal(c.list(), want) {
		t.Fatalf("before running: %q, want %q", c.list(), want)
	}
	go h.Run()
	h.Stop()
	<-h.Done()
	got := c.list()
	if len(got) != hookQueueMax+2 || got[2] != "h2:ok" || got[len(got)-1] != fmt.Sprintf("h%d:ok", hookQueueMax+1) {
		t.Errorf("ran %d hooks: first %q last %q", len(got), got[2], got[len(got)-1])
	}
}
