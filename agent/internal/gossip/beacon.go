package gossip

import "time"

// The discovery beacons (a DISCOVER by multicast, --discover-interval):
// how often a node sends one, and whether it answers another's.

// BeaconResponders is how many members of a cluster join a newcomer's
// beacon, on average. One join is enough: the newcomer then gets every
// member from the joined node's state, and gossip tells the others of it.
const BeaconResponders = 3

// AnswersBeacon says whether a node whose memberlist lists members nodes
// (itself included) joins the sender of a beacon it does not know: always
// while it is alone or one of three; otherwise with a chance of
// BeaconResponders in members, drawn with draw (rand.IntN), so that a
// LAN of 128 agents does not open 127 state exchanges (TCP, each the
// whole member list) to every agent that starts. A newcomer beacons every
// discover interval while it is alone: when no member answered one
// beacon (a chance of about e⁻³, 5 %), the next one is answered.
func AnswersBeacon(members int, draw func(int) int) bool {
	return members <= BeaconResponders || draw(members) < BeaconResponders
}

// BeaconEvery is the beacon interval of a node whose memberlist lists
// members nodes (itself included): interval while it knows no peer; once
// it has peers, interval times the number of members, but at least ten
// times interval. The LAN as a whole then beacons about once per interval
// (enough for two halves that started apart to find each other within
// an interval), and each agent receives as many beacons at 128 members
// as at 10, instead of 12.8 a second (more than the leader's heartbeats)
// were every agent to beacon every interval.
// The factor stops at MaxBeaconFactor, within the replay windows' memory.
func BeaconEvery(interval time.Duration, members int) time.Duration {
	if members <= 1 {
		return interval
	}
	return interval * time.Duration(min(max(10, members), MaxBeaconFactor))
}

// MaxBeaconFactor bounds BeaconEvery's factor: at the default interval a
// beacon every 256 s at least, well within the replay windows' memory (agent/internal/auth.ReplayForget).
const MaxBeaconFactor = 256
