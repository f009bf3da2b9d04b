package election

// A PROBE (stability.go) goes to all, and outside quorum mode every member
// that heard the leader more recently than the prober used to answer it
// with a VOUCH: n−1 answers a PROBE, 5n(n−1) packets when every follower
// confirms at once (a new leader some of them missed, a lost heartbeat
// under load), the storm that keeps a large cluster from hearing its
// leader. Now the leader answers, and so do only the vouchers members that
// follow the prober in the order of keys (round the end): at most
// vouchers+1 answers a PROBE, whatever n. They are independent chances as
// before: with loss p on each packet, a round fails for all of them with
// probability (1−(1−p)²)^(vouchers+1), 1e-4 at p = 20 %. Quorum
// mode keeps every answer: a VOUCH there is also a pre-vote, and a
// pre-vote needs a majority.

// vouchers is how many members besides the leader vouch to one prober:
// as many as in a cluster of up to 9 nodes, where everyone still vouches
// as before (the stability schedules' clusters have 3 to 7).
const vouchers = 8

// vouchesFor reports whether this node is one of the vouchers of prober
// p in its view: fewer than vouchers members lie between p and this node
// going up the order of keys.
func (c *core) vouchesFor(p Key) bool {
	if len(c.members) <= vouchers {
		return true
	}
	d := 0
	for _, k := range c.members {
		if k.ID != p.ID && between(p, k, c.self) {
			if d++; d >= vouchers {
				return false
			}
		}
	}
	return true
}

// between reports whether k lies strictly after a and strictly before b
// going up the order of keys, round the end.
func between(a, k, b Key) bool {
	if a.Less(b) {
		return a.Less(k) && k.Less(b)
	}
	return a.Less(k) || k.Less(b)
}
