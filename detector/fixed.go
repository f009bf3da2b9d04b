package detector

import (
	"fmt"
	"time"
)

// FixedConfig configures a [Fixed] detector.
type FixedConfig struct {
	// Timeout is how long after the last heartbeat's arrival the peer
	// becomes suspected: SuspectAt = last arrival + Timeout, exactly. It is
	// a duration on the caller's clock (nanosecond resolution) and must be
	// > 0. A usual choice is a small multiple of the heartbeat interval
	// (3× tolerates two consecutive lost heartbeats plus jitter).
	Timeout time.Duration
}

// Validate reports whether c can be used by [NewFixed].
func (c FixedConfig) Validate() error {
	if c.Timeout <= 0 {
		return fmt.Errorf("detector: FixedConfig.Timeout must be > 0, got %v", c.Timeout)
	}
	return nil
}

// Fixed is the classic fixed-timeout detector: the peer is suspected
// Timeout after the last heartbeat arrived. It implements [Detector].
type Fixed struct {
	timeout time.Duration
	last    time.Duration // latest recorded arrival, valid when started
	started bool
}

var _ Witnessed = (*Fixed)(nil)

// NewFixed returns a Fixed detector with no arrival recorded. It panics if
// cfg.Validate fails: check configuration that comes from users with
// Validate first.
func NewFixed(cfg FixedConfig) *Fixed {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	return &Fixed{timeout: cfg.Timeout}
}

// Observe implements [Detector.Observe].
func (f *Fixed) Observe(at time.Duration) {
	if f.started && at < f.last {
		return
	}
	f.last, f.started = at, true
}

// Alive implements [Witnessed]: for a fixed timeout, evidence that the
// peer was alive is as good as its heartbeat.
func (f *Fixed) Alive(at time.Duration) { f.Observe(at) }

// Reset implements [Detector.Reset].
func (f *Fixed) Reset() { f.last, f.started = 0, false }

// SuspectAt implements [Detector.SuspectAt]: the last arrival plus Timeout
// (saturating at the largest Duration).
func (f *Fixed) SuspectAt() (time.Duration, bool) {
	if !f.started {
		return 0, false
	}
	return addSat(f.last, f.timeout), true
}

// Suspect implements [Detector.Suspect].
func (f *Fixed) Suspect(now time.Duration) bool {
	at, ok := f.SuspectAt()
	return ok && now >= at
}

const maxDuration = time.Duration(1<<63 - 1)

// addSat returns a+b for b >= 0, saturating at the largest Duration.
func addSat(a, b time.Duration) time.Duration {
	if a > 0 && b > maxDuration-a {
		return maxDuration
	}
	return a + b
}
