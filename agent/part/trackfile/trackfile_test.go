package trackfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/part/parttest"
	"github.com/lanleader/lanleader/internal/waitfor"
)

// fixture: a watcher of two paths in a temporary directory, stat'ed every
// millisecond, on a fake host; changes counts the driver's callbacks.
type fixture struct {
	h       *parttest.FakeHost
	w       *Watcher
	a, b    string
	end     chan struct{}
	changes int
}

func newFixture(t *testing.T) *fixture {
	dir := t.TempDir()
	f := &fixture{h: parttest.NewFakeHost(), a: filepath.Join(dir, "a"), b: filepath.Join(dir, "sub", "b"), end: make(chan struct{})}
	f.w = New(f.h, []string{f.a, f.b}, time.Millisecond, f.end, func() { f.changes++ })
	t.Cleanup(func() { close(f.end) })
	return f
}

// loop runs the watcher's posts, as the event loop would, until present
// is what the watcher reports.
func (f *fixture) loop(t *testing.T, want ...string) {
	t.Helper()
	waitfor.Until(t, "track files "+strings.Join(want, ","), 5*time.Second, time.Millisecond, func() (bool, string) {
		f.h.RunPosts()
		return slices.Equal(f.w.Present(), want), strings.Join(f.w.Present(), ",")
	})
}

// A file present at the start puts the node in maintenance before the
// loop runs: First stats it and says so, without calling the driver (its
// loop judges the standby when it starts).
func TestFirst(t *testing.T) {
	f := newFixture(t)
	os.WriteFile(f.a, nil, 0o644)
	f.w.First()
	if got := f.w.Present(); !slices.Equal(got, []string{f.a}) {
		t.Fatalf("present %q", got)
	}
	if f.changes != 0 || !strings.Contains(f.h.LogText(), "a track file is present") {
		t.Errorf("changes %d, log %q", f.changes, f.h.LogText())
	}
	want := []Status{{Path: f.a, Present: true}, {Path: f.b, Present: false}}
	if got := f.w.Status(); !slices.Equal(got, want) {
		t.Errorf("status %+v, want %+v", got, want)
	}
}

// The watcher's goroutine reports each change of the set present to the
// loop (a post), and the driver hears of it once a change; a file in a
// directory that does not exist yet is absent, then present once made.
func TestWatch(t *testing.T) {
	f := newFixture(t)
	f.w.First()
	f.w.Start()
	os.MkdirAll(filepath.Dir(f.b), 0o755)
	os.WriteFile(f.b, nil, 0o644)
	f.loop(t, f.b)
	if f.changes != 1 || !f.h.TakeDirty() {
		t.Fatalf("after b appeared: %d changes, dirty false", f.changes)
	}
	os.WriteFile(f.a, nil, 0o644)
	f.loop(t, f.a, f.b)
	os.Remove(f.a)
	os.Remove(f.b)
	f.loop(t)
	if f.changes != 3 {
		t.Errorf("%d changes, want 3", f.changes)
	}
	if !strings.Contains(f.h.LogText(), "the track files are gone") {
		t.Errorf("log %q", f.h.LogText())
	}
}

// A reload that watches other paths stats them at once, and the old
// watcher's late reports are dropped: only the new paths count.
func TestReplace(t *testing.T) {
	f := newFixture(t)
	f.w.First()
	f.w.Start()
	c := filepath.Join(filepath.Dir(f.a), "c")
	os.WriteFile(c, nil, 0o644)
	if f.w.Replace([]string{f.a, f.b}) {
		t.Fatal("the same paths: replaced")
	}
	if !f.w.Replace([]string{c}) {
		t.Fatal("other paths: not replaced")
	}
	if got := f.w.Present(); !slices.Equal(got, []string{c}) || f.changes != 1 {
		t.Fatalf("after the reload: present %q, %d changes", got, f.changes)
	}
	// The old watcher, had it seen a, would have posted it; a report of
	// its generation is stale.
	f.w.report(f.w.gen-1, []string{f.a})
	if got := f.w.Present(); !slices.Equal(got, []string{c}) {
		t.Fatalf("a stale report counted: %q", got)
	}
	os.Remove(c)
	f.loop(t)
	if f.changes != 2 {
		t.Errorf("%d changes, want 2", f.changes)
	}
}

// Close ends the goroutine, and so does the agent's end.
func TestClose(t *testing.T) {
	for _, how := range []string{"Close", "the agent's end"} {
		f := &fixture{h: parttest.NewFakeHost(), a: filepath.Join(t.TempDir(), "a"), end: make(chan struct{})}
		f.w = New(f.h, []string{f.a}, time.Millisecond, f.end, func() {})
		f.w.Start()
		done := f.w.done
		if how == "Close" {
			f.w.Close()
		} else {
			close(f.end)
		}
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the watcher still runs 5s later", how)
		}
	}
}

// Reload watches the configuration's track files when they changed, and
// names the change "check", as the checks' (the driver judges the
// standby after either); the same files are no reload of theirs.
func TestReload(t *testing.T) {
	f := newFixture(t)
	f.w.First()
	c := filepath.Join(filepath.Dir(f.a), "c")
	os.WriteFile(c, nil, 0o644)
	old := config.DefaultConfig()
	old.TrackFiles = []string{f.a, f.b}
	same := old
	if got := f.w.Reload(&old, &same); got != nil {
		t.Fatalf("the same files: applied %q", got)
	}
	next := old
	next.TrackFiles = []string{c}
	if got := f.w.Reload(&old, &next); !slices.Equal(got, []string{"check"}) {
		t.Fatalf("other files: applied %q", got)
	}
	if got := f.w.Present(); !slices.Equal(got, []string{c}) || !slices.Equal(f.w.Files(), []string{c}) {
		t.Errorf("after the reload: present %q of %q", got, f.w.Files())
	}
}
