package detector

import "time"

// Detector judges one monitored peer (the leader) from the arrival times of
// its heartbeats. Times are durations on the caller's own monotonic clock
// (for example time elapsed since the agent started, or a simulator's
// virtual clock). Implementations are pure: no goroutines, no clock reads,
// no randomness; the same arrival series always gives the same answers.
//
// Concurrency: not safe for concurrent use; the owner (an election machine)
// calls it from one goroutine.
type Detector interface {
	// Observe records a heartbeat that arrived at time at. Arrivals are
	// given in non-decreasing order; an earlier one (at before the latest
	// recorded arrival) is ignored. An arrival equal to the latest one is
	// recorded.
	Observe(at time.Duration)
	// Reset forgets every arrival (a new leader is being monitored). The
	// detector is then as it was when newly made.
	Reset()
	// SuspectAt returns the earliest time at which the peer is suspected
	// if no further heartbeat arrives. The time is on the same clock as
	// the arrivals given to Observe (it is not relative to the last
	// arrival). ok is false before the first Observe after New or Reset
	// (nothing to judge yet).
	SuspectAt() (at time.Duration, ok bool)
	// Suspect reports whether the peer is suspected at now. It is exactly
	// ok && now >= SuspectAt().
	Suspect(now time.Duration) bool
}

// Witnessed is a [Detector] that tells a heartbeat's arrival from other
// evidence that the peer was alive: an answer to a question its owner
// asked, or another member's word. Alive records such evidence: the
// suspicion counts from it as from an arrival, but a detector that learns
// from the heartbeats' rhythm (Phi) learns nothing from it, since its
// time is the question's, not the peer's. An owner with such evidence
// gives it to Alive when its detector is Witnessed, to Observe otherwise.
type Witnessed interface {
	Detector
	// Alive records that the peer was alive at time at. Evidence older
	// than the latest recorded changes nothing.
	Alive(at time.Duration)
}
