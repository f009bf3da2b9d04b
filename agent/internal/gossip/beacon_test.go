package gossip

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestBeaconEvery: alone, the interval; with peers, one beacon per
// interval for the whole cluster (n× the interval for n members), never
// less than 10× (small clusters as before) nor more than 256×.
func TestBeaconEvery(t *testing.T) {
	for _, c := range []struct {
		members int
		want    time.Duration
	}{{0, time.Second}, {1, time.Second}, {2, 10 * time.Second}, {10, 10 * time.Second},
		{11, 11 * time.Second}, {128, 128 * time.Second}, {256, 256 * time.Second}, {1024, 256 * time.Second}} {
		if got := BeaconEvery(time.Second, c.members); got != c.want {
			t.Errorf("BeaconEvery(1s, %d) = %v, want %v", c.members, got, c.want)
		}
	}
	if got := BeaconEvery(100*time.Millisecond, 64); got != 6400*time.Millisecond {
		t.Errorf("BeaconEvery(100ms, 64) = %v, want 6.4s", got)
	}
}

// TestAnswersBeacon: alone or in a cluster of up to three a node always
// joins a newcomer; in bigger clusters BeaconResponders of the members
// do, on average, whatever the cluster's size (a seeded draw, counted
// exactly over many beacons).
func TestAnswersBeacon(t *testing.T) {
	never := func(int) int { t.Fatal("a small cluster drew"); return 0 }
	for _, m := range []int{0, 1, 2, 3} {
		if !AnswersBeacon(m, never) {
			t.Errorf("AnswersBeacon(%d) = false: a node alone or among three always answers", m)
		}
	}
	for _, members := range []int{4, 32, 128, 1024} {
		rng := rand.New(rand.NewPCG(uint64(members), 1))
		const beacons = 2000
		joins := 0
		for range beacons {
			for range members - 1 { // every member but the newcomer hears it
				if AnswersBeacon(members, rng.IntN) {
					joins++
				}
			}
		}
		want := float64(BeaconResponders) * float64(members-1) / float64(members)
		if got := float64(joins) / beacons; got < want*0.9 || got > want*1.1 {
			t.Errorf("%d members: %.2f joins per beacon on average, want %.2f", members, got, want)
		}
	}
}
