// Package trackfile is the part of the agent that watches the track
// files (keepalived's track_file, for maintenance): a file whose presence
// puts the node in fault. A goroutine stats them every interval and tells
// the loop, through the Host, when the set present changes; a missing
// directory, like any error of stat but for the file being there, is an
// absent file. The driver asks Present for the standby's reasons.
package trackfile

import (
	"os"
	"slices"
	"time"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/part"
)

// Every is how often the track files are stat'ed.
const Every = time.Second

// Status is one track file in /status.
type Status struct {
	Path    string `json:"path"`
	Present bool   `json:"present"` // the node is in fault while it is
}

// Watcher is the part. Every method runs on the event loop.
type Watcher struct {
	host     part.Host
	every    time.Duration
	end      <-chan struct{} // closed when the agent ends
	onChange func()          // the set present changed: the driver judges its standby again
	files    []string        // the paths watched
	present  []string        // those present, in files' order
	gen      uint64          // the watcher's generation: a stale one's reports are dropped
	quit     chan struct{}   // ends the watcher; nil without one
	done     chan struct{}   // closed when the watcher's goroutine has ended
}

// New is the part for paths, stat'ed every interval once started. end
// ends the goroutine with the agent, and onChange runs on the loop after
// each change of the set present.
func New(h part.Host, paths []string, every time.Duration, end <-chan struct{}, onChange func()) *Watcher {
	return &Watcher{host: h, every: every, end: end, onChange: onChange, files: slices.Clone(paths)}
}

// First stats the files before anything opens, so that a node started in
// maintenance never takes part in an election; the driver judges its
// standby when its loop starts.
func (w *Watcher) First() {
	w.present = presentFiles(w.files)
	if len(w.present) > 0 {
		w.host.Log().Warn("a track file is present: this node takes no part in elections until it is removed", "files", w.present)
	}
}

// presentFiles are the paths that exist now, in order.
func presentFiles(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// Start starts the goroutine that watches the files, if there are any.
func (w *Watcher) Start() {
	if len(w.files) == 0 {
		return
	}
	w.gen++
	w.quit, w.done = make(chan struct{}), make(chan struct{})
	go w.watch(w.gen, slices.Clone(w.files), slices.Clone(w.present), w.quit, w.done)
}

// watch stats paths every interval until quit (or the agent's end), and
// posts each change of those present (prev at first) to the loop.
func (w *Watcher) watch(gen uint64, paths, prev []string, quit, done chan struct{}) {
	defer close(done)
	tick := time.NewTicker(w.every)
	defer tick.Stop()
	for {
		select {
		case <-quit:
			return
		case <-w.end:
			return
		case <-tick.C:
		}
		now := presentFiles(paths)
		if !slices.Equal(now, prev) {
			prev = now
			w.host.Post(func() { w.report(gen, now) })
		}
	}
}

// report is the watcher's news, on the loop; a stale watcher's is dropped.
func (w *Watcher) report(gen uint64, present []string) {
	if gen == w.gen {
		w.set(present)
	}
}

// set records the files present, logs the change and tells the driver.
func (w *Watcher) set(present []string) {
	if slices.Equal(present, w.present) {
		return
	}
	if len(present) > 0 {
		w.host.Log().Warn("a track file is present: this node takes no part in elections until it is removed", "files", present)
	} else {
		w.host.Log().Info("the track files are gone: this node takes part in elections again")
	}
	w.present = present
	w.host.MarkDirty()
	w.onChange()
}

// Replace watches paths instead (a reload); it reports whether they
// differ from those watched.
func (w *Watcher) Replace(paths []string) bool {
	if slices.Equal(paths, w.files) {
		return false
	}
	w.stop()
	w.files = slices.Clone(paths)
	w.gen++ // the old watcher's reports are stale
	w.set(presentFiles(paths))
	w.Start()
	return true
}

// Reload watches cfg's track files instead when they changed (Replace).
// The change is named "check", as the checks' is: the standby follows
// both, and the driver judges it again after either.
func (w *Watcher) Reload(_, cfg *config.Config) []string {
	if !w.Replace(cfg.TrackFiles) {
		return nil
	}
	return []string{"check"}
}

// Present are the track files present, in the order given.
func (w *Watcher) Present() []string { return w.present }

// Files are the paths watched.
func (w *Watcher) Files() []string { return w.files }

// Status is the track files' part of /status.
func (w *Watcher) Status() []Status {
	var out []Status
	for _, p := range w.files {
		out = append(out, Status{Path: p, Present: slices.Contains(w.present, p)})
	}
	return out
}

func (w *Watcher) stop() {
	if w.quit != nil {
		close(w.quit)
		w.quit = nil
	}
}

// Changed does nothing: the files do not depend on the node's state.
func (w *Watcher) Changed(*part.View) {}

// Next: the watcher keeps no deadline of the loop's.
func (w *Watcher) Next() (time.Duration, bool) { return 0, false }

// Due is never called (Next has none).
func (w *Watcher) Due(time.Duration) {}

// Close ends the watcher's goroutine.
func (w *Watcher) Close() { w.stop() }

var _ part.Part = (*Watcher)(nil)
