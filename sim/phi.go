package sim

import (
	"time"

	"github.com/lanleader/lanleader/detector"
	"github.com/lanleader/lanleader/election"
)

// newPhi is the phi-accrual detector a simulated node uses when Config.Phi
// is set, as the agent makes it for its heartbeat interval: for a
// confirmed alarm (detector.ConfirmedPhiConfig) when the machine confirms
// its suspicions outside quorum mode, the defaults otherwise (quorum
// mode's failover waits for the lease, and its alarm stays late, as the
// fixed detector's three heartbeats there).
func newPhi(c election.Config) detector.Detector {
	hb := c.HeartbeatInterval
	if hb == 0 {
		hb = election.DefaultConfig(1).HeartbeatInterval
	}
	if c.ConfirmSuspicion && c.Quorum == 0 {
		return detector.NewPhi(detector.ConfirmedPhiConfig(hb))
	}
	return detector.NewPhi(detector.DefaultPhiConfig(hb))
}

// phiWorstDetection is how long after the last heartbeat a phi detector
// may take to suspect once a loss burst has filled its window with long,
// uneven gaps: here every gap from 1 to 6 heartbeat intervals, in turn.
func phiWorstDetection(c election.Config) time.Duration {
	d := newPhi(c)
	at := time.Duration(0)
	d.Observe(at)
	for i := range 200 {
		at += time.Duration(1+i%6) * c.HeartbeatInterval
		d.Observe(at)
	}
	s, _ := d.SuspectAt()
	return s - at
}
