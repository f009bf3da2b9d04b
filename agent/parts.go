package agent

import (
	"log/slog"
	"time"

	"github.com/lanleader/lanleader/agent/part"
)

// loopHost is the part.Host the driver lends its parts: the loop's clock,
// a post to the loop, the status's dirty flag and the agent's logger, and
// nothing else of the agent.
type loopHost struct{ a *Agent }

func (h loopHost) Now() time.Duration { return h.a.now() }
func (h loopHost) Log() *slog.Logger  { return h.a.log }

// Rearm runs on the loop, as every method of a part does.
func (h loopHost) Rearm() { h.a.rearmAux() }

// MarkDirty runs on the loop, as every method of a part does.
func (h loopHost) MarkDirty() { h.a.loop.dirty = true }

// Post hands f to the loop without waiting for it to run; from the loop
// goroutine itself it would wait for good: a part calls it from its own
// goroutines only. After the loop ended it does nothing.
func (h loopHost) Post(f func()) {
	select {
	case h.a.cmds <- f:
	case <-h.a.loopDone:
	}
}

// onAux hands the deadlines that came to their parts.
func (a *Agent) onAux() {
	now := a.now()
	part.RunDue(a.parts, now)
	a.rearmAux()
}

// rearmAux sets the aux timer to the earliest deadline of the parts.
func (a *Agent) rearmAux() {
	l := &a.loop
	if l.aux == nil {
		return
	}
	next, ok := part.Earliest(a.parts)
	if !ok {
		l.aux.Stop()
		return
	}
	l.aux.Reset(max(next-a.now(), 0))
}
