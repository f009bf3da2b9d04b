package agent

import (
	"os"
	"slices"
	"time"
)

// Track files (keepalived's track_file, for maintenance): a file whose
// presence puts the node in fault. A goroutine stats them every
// TrackFileEvery and tells the loop when the set present changes; a
// missing directory, like any error of stat but for the file being there,
// is an absent file.

// TrackFileStatus is one track file in /status.
type TrackFileStatus struct {
	Path    string `json:"path"`
	Present bool   `json:"present"` // the node is in fault while it is
}

// trackState is the part of loopState the track files own.
type trackState struct {
	trackFiles   []string      // the paths watched
	trackPresent []string      // those present, in trackFiles' order
	trackGen     uint64        // the watcher's generation: a stale one's reports are dropped
	trackQuit    chan struct{} // ends the watcher; nil without one
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

// firstTrackFiles stats the track files before anything opens: a node
// started in maintenance never takes part in an election.
func (a *Agent) firstTrackFiles() {
	l := &a.loop
	l.trackFiles = slices.Clone(a.cfg.TrackFiles)
	l.trackPresent = presentFiles(l.trackFiles)
	if len(l.trackPresent) > 0 {
		a.log.Warn("a track file is present: this node takes no part in elections until it is removed", "files", l.trackPresent)
	}
}

// startTrackFiles starts the watcher of the loop's track files, if any.
func (a *Agent) startTrackFiles() {
	l := &a.loop
	if len(l.trackFiles) == 0 {
		return
	}
	l.trackGen++
	l.trackQuit = make(chan struct{})
	go a.watchTrackFiles(l.trackGen, slices.Clone(l.trackFiles), slices.Clone(l.trackPresent), l.trackQuit)
}

// watchTrackFiles stats paths every TrackFileEvery until quit (or the
// agent's end), and reports each change of those present (prev at first).
func (a *Agent) watchTrackFiles(gen uint64, paths, prev []string, quit chan struct{}) {
	tick := time.NewTicker(TrackFileEvery)
	defer tick.Stop()
	for {
		select {
		case <-quit:
			return
		case <-a.quit:
			return
		case <-tick.C:
		}
		now := presentFiles(paths)
		if !slices.Equal(now, prev) {
			prev = now
			a.call(func() { a.onTrackFiles(gen, now) })
		}
	}
}

// onTrackFiles is the watcher's report, on the loop.
func (a *Agent) onTrackFiles(gen uint64, present []string) {
	l := &a.loop
	if gen != l.trackGen {
		return
	}
	a.setTrackPresent(present)
}

// setTrackPresent records the track files present, logs the change and
// applies the standby.
func (a *Agent) setTrackPresent(present []string) {
	l := &a.loop
	if slices.Equal(present, l.trackPresent) {
		return
	}
	switch {
	case len(present) > 0:
		a.log.Warn("a track file is present: this node takes no part in elections until it is removed", "files", present)
	default:
		a.log.Info("the track files are gone: this node takes part in elections again")
	}
	l.trackPresent, l.dirty = present, true
	a.applyStandby()
}

// replaceTrackFiles watches paths instead (replaceChecks), on the loop.
func (a *Agent) replaceTrackFiles(paths []string) {
	l := &a.loop
	if slices.Equal(paths, l.trackFiles) {
		return
	}
	if l.trackQuit != nil {
		close(l.trackQuit)
		l.trackQuit = nil
	}
	l.trackFiles = slices.Clone(paths)
	a.setConfig(func(c *Config) { c.TrackFiles = slices.Clone(paths) })
	l.trackGen++ // the old watcher's reports are stale
	a.setTrackPresent(presentFiles(paths))
	a.startTrackFiles()
}

// trackStatus is the track files' part of /status.
func (a *Agent) trackStatus() []TrackFileStatus {
	l := &a.loop
	var out []TrackFileStatus
	for _, p := range l.trackFiles {
		out = append(out, TrackFileStatus{Path: p, Present: slices.Contains(l.trackPresent, p)})
	}
	return out
}
