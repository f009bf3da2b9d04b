package election

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/detector"
	"github.com/lanleader/lanleader/wire"
)

// A follower whose phi detector (threshold 1.64, the confirmed alarm's)
// read a backlog of heartbeats at once after a pause has a window of
// gaps of 0: its alarm rings within the next heartbeat's interval, and
// its live leader answers the PROBEs. Those VOUCHes are evidence that the
// leader lives, not heartbeats: learnt as arrivals (one a PROBE, sent
// 125µs apart before the first answer came back), their gaps of a tenth
// of a millisecond kept the mean short, the alarm rang again 55ms after
// every heartbeat for as long as the node ran, and the first
// confirmation whose answers came late made it elect against its live
// leader (the simulator's bully seed 3715). Learnt as no sample, the
// window fills with the leader's rhythm and the alarm falls silent.
func TestPhiLearnsNoVouchAsAHeartbeat(t *testing.T) {
	const rtt = 3 * ms // a PROBE's round trip to the leader
	phi := func(c *Config) {
		earlyAlarm(c)
		c.Detector = detector.NewPhi(detector.ConfirmedPhiConfig(c.HeartbeatInterval))
	}
	n := newNode(t, key(2), keys(1, 3), phi)
	n.step(0, evStart)
	n.step(10*ms, coord(3, 1))
	n.is(StateFollower, 1, 3)
	hb := 10 * ms
	for range 10 {
		hb += tHB
		n.step(hb, heartbeat(3, 1))
	}
	// Node 2 stands still from 1.02s to 3.02s and then reads the twenty
	// heartbeats that waited in its socket, one after the other.
	wake := 3020 * ms
	for range 20 {
		hb += tHB
		n.step(wake, heartbeat(3, 1))
	}
	// The leader's heartbeats come on every 100ms; an alarm is answered
	// by a VOUCH to each PROBE, a round trip later.
	alarms := make([]int, 0, 30)
	for range 30 {
		hb += tHB
		rang := 0
		if n.b.armed[TimerSuspect] && n.b.deadline[TimerSuspect] < hb {
			rang = 1
			now := n.b.deadline[TimerSuspect]
			var probes []time.Duration
			count := func(acts []Action) {
				for _, a := range acts {
					if a.Kind == ActBroadcast && a.Msg.Type == wire.TypeProbe {
						probes = append(probes, now)
					}
				}
			}
			count(n.step(now, fire(TimerSuspect)))
			for v := 0; v < len(probes) || n.b.armed[TimerConfirm]; {
				due := time.Duration(1<<62 - 1)
				if v < len(probes) {
					due = probes[v] + rtt
				}
				if n.b.armed[TimerConfirm] && n.b.deadline[TimerConfirm] < due {
					now = n.b.deadline[TimerConfirm]
					count(n.step(now, fire(TimerConfirm)))
					continue
				}
				now = due
				n.step(now, vouch(3, 1, 3, 0))
				v++
			}
			n.is(StateFollower, 1, 3)
		}
		alarms = append(alarms, rang)
		n.step(hb, heartbeat(3, 1))
	}
	// A few alarms (three) while the gaps of 0 weigh in the window; none once
	// the leader's heartbeats are.
	late := 0
	for _, a := range alarms[5:] {
		late += a
	}
	if late != 0 {
		t.Errorf("alarms within each heartbeat's interval after the backlog (1 = it rang before the next heartbeat): %v; want none after the first five", alarms)
	}
}
