package agent

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/detector"
)

// --detector phi rings as early as the fixed detector's default where the
// alarm is confirmed outside quorum mode (threshold 1.64: 1.5 heartbeats
// on a quiet network) and keeps Akka's threshold 8 (2.31 heartbeats) in
// quorum mode, as the fixed detector keeps three heartbeats there.
func TestPhiDetectorThresholdFollowsTheMode(t *testing.T) {
	const hb = 100 * time.Millisecond
	for _, tc := range []struct {
		quorum    int
		threshold float64
		after     time.Duration // alarm after the last of steady heartbeats
	}{
		{0, detector.ConfirmedPhiThreshold, 150 * time.Millisecond},
		{3, 8, 231 * time.Millisecond},
	} {
		c := testConfig("a", 1)
		c.Priority, c.Detector, c.Heartbeat, c.Quorum = 1, config.DetectorPhi, hb, tc.quorum
		c.DeriveTimeouts()
		m, err := newMachine(&c, c.Priority, 0)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := m.Config().Detector.(*detector.Phi)
		if !ok {
			t.Fatalf("quorum %d: the machine's detector is %T, want *detector.Phi", tc.quorum, m.Config().Detector)
		}
		var at time.Duration
		for range 300 {
			at += hb
			p.Observe(at)
		}
		s, _ := p.SuspectAt()
		if got := (s - at).Round(time.Millisecond); got != tc.after {
			t.Errorf("quorum %d: the alarm rings %v after the last heartbeat, want %v (threshold %v)", tc.quorum, got, tc.after, tc.threshold)
		}
	}
}
