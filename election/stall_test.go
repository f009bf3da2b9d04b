package election

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/detector"
)

// A follower that stood still (paused) past its alarm wakes to its dead
// leader's heartbeat, which waited in its socket: the gap that heartbeat
// ends is the follower's own pause, and a phi detector that learnt it
// (two seconds among heartbeats 100ms apart) put the next alarm 4.4s off.
// The ring family's stickiness ignores a smaller claimant's later term
// without asking the leader, so the node stayed with the dead leader,
// deaf to the new one (the simulator's ring seed 8954). The detector
// starts afresh from such an arrival: the alarm rings about 2.3
// heartbeats later, nobody vouches for the dead leader, and the node
// follows the new one.
func TestStalledFollowerDoesNotLearnItsPause(t *testing.T) {
	for _, alg := range Algorithms {
		t.Run(alg, func(t *testing.T) {
			phi := func(c *Config) {
				hardened(c)
				c.Detector = detector.NewPhi(detector.DefaultPhiConfig(c.HeartbeatInterval))
			}
			// Nodes 1 to 5; node 2 follows 5, the largest key.
			n := newMachine(t, alg, key(2), keys(1, 3, 4, 5), phi)
			n.step(0, evStart)
			n.step(10*ms, coord(5, 1))
			n.is(StateFollower, 1, 5)
			// Ten heartbeats, 100ms apart, are the phi window's samples.
			at := 10 * ms
			for range 10 {
				at += tHB
				n.step(at, heartbeat(5, 1))
			}
			// Node 2 stands still from 1.02s to 3.02s; node 5 sends one
			// more heartbeat at 1.11s and dies. Its alarm, due at about
			// 1.24s, has not been handled when the heartbeat that
			// waited in the socket is, at 3.02s.
			wake := 3020 * ms
			acts := n.step(wake, heartbeat(5, 1))
			alarm, ok := suspectDeadline(acts)
			if !ok {
				t.Fatalf("the late heartbeat at %v: %q, want the alarm re-armed", wake, actLines(acts))
			}
			if alarm-wake > 3*tHB {
				t.Fatalf("after a 2s pause the alarm is re-armed for %v, %v after the late heartbeat; want within 3 heartbeats (%v): the detector learnt the pause", alarm, alarm-wake, 3*tHB)
			}
			// Node 4 was elected meanwhile (term 3): a smaller key than
			// the leader the node still hears, ignored for now.
			n.step(wake+10*ms, coord(4, 3))
			n.is(StateFollower, 1, 5)
			// The alarm rings, nobody vouches for 5; the node elects,
			// and takes node 4's next heartbeat.
			now := alarm
			acts = n.step(now, fire(TimerSuspect))
			for i := 0; i < 100 && n.m.Status().Leader == 5; i++ {
				now += ms
				acts = n.step(now, fire(TimerConfirm))
			}
			if st := n.m.Status(); st.Leader == 5 {
				t.Fatalf("at %v still follows the dead leader 5: %q", now, actLines(acts))
			}
			n.step(now+tHB, heartbeat(4, 3))
			n.is(StateFollower, 3, 4)
		})
	}
}

// suspectDeadline is the time acts arm the suspicion's timer for.
func suspectDeadline(acts []Action) (time.Duration, bool) {
	for _, a := range acts {
		if a.Kind == ActSetTimer && a.Timer == TimerSuspect {
			return a.At, true
		}
	}
	return 0, false
}
