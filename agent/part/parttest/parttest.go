// Package parttest is a fake part.Host for the parts' tests.
package parttest

import (
	"bytes"
	"log/slog"
	"sync"
	"time"
)

// FakeHost is a part.Host for a part's tests: a clock the test moves, posts
// kept until the test runs them, a dirty flag, and the log in a buffer.
type FakeHost struct {
	mu    sync.Mutex
	now   time.Duration
	posts []func()
	dirty bool
	rearm int
	logs  bytes.Buffer
	log   *slog.Logger
}

// NewFakeHost is a FakeHost at time 0.
func NewFakeHost() *FakeHost {
	h := &FakeHost{}
	h.log = slog.New(slog.NewTextHandler(&syncWriter{h: h}, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	return h
}

// Now is the test's clock.
func (h *FakeHost) Now() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now
}

// Set moves the clock to t.
func (h *FakeHost) Set(t time.Duration) {
	h.mu.Lock()
	h.now = t
	h.mu.Unlock()
}

// Post keeps f for RunPosts.
func (h *FakeHost) Post(f func()) {
	h.mu.Lock()
	h.posts = append(h.posts, f)
	h.mu.Unlock()
}

// RunPosts runs what was posted, in order, as the loop would; it reports
// how many ran.
func (h *FakeHost) RunPosts() int {
	h.mu.Lock()
	ps := h.posts
	h.posts = nil
	h.mu.Unlock()
	for _, f := range ps {
		f()
	}
	return len(ps)
}

// Rearm counts the part's asks to set the timer again.
func (h *FakeHost) Rearm() {
	h.mu.Lock()
	h.rearm++
	h.mu.Unlock()
}

// Rearms is how many times the part asked to set the timer again.
func (h *FakeHost) Rearms() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rearm
}

// MarkDirty sets the dirty flag.
func (h *FakeHost) MarkDirty() {
	h.mu.Lock()
	h.dirty = true
	h.mu.Unlock()
}

// TakeDirty reports the dirty flag and clears it.
func (h *FakeHost) TakeDirty() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := h.dirty
	h.dirty = false
	return d
}

// Log writes to a buffer (LogText), without time stamps.
func (h *FakeHost) Log() *slog.Logger { return h.log }

// LogText is what was logged.
func (h *FakeHost) LogText() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.logs.String()
}

type syncWriter struct{ h *FakeHost }

func (w *syncWriter) Write(p []byte) (int, error) {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	return w.h.logs.Write(p)
}
