package proc

import "time"

// Limits are the settings of a job that a reload of the agent's config
// changes while the job runs: they apply from the next stop or failure.
type Limits struct {
	Grace         time.Duration
	MaxFailures   int
	FailureWindow time.Duration
}

// SetLimits replaces the limits of Config. Any goroutine may call it; it
// never blocks.
func (s *Supervisor) SetLimits(l Limits) {
	s.mu.Lock()
	s.cfg.Grace, s.cfg.MaxFailures, s.cfg.FailureWindow = l.Grace, l.MaxFailures, l.FailureWindow
	s.mu.Unlock()
	s.poke()
}

// limits are the current limits.
func (s *Supervisor) limits() Limits {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Limits{Grace: s.cfg.Grace, MaxFailures: s.cfg.MaxFailures, FailureWindow: s.cfg.FailureWindow}
}
