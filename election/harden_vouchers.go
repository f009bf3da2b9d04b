package election

// A PROBE (harden_confirm.go) goes to all. Were every member that heard
// the leader more recently than the prober to answer it with a VOUCH,
// n−1 would answer a PROBE: 5n(n−1) packets when every follower confirms
// at once (a new leader some of them missed, a lost heartbeat under
// load), the storm that keeps a large cluster from hearing its leader.
// So, outside quorum mode, the leader answers, and so do about vouchers
// members picked for each prober (vouchesFor): about vouchers+1 answers a
// PROBE, whatever n. They are independent chances: with loss p on each packet,
// a round fails for all of them with probability (1−(1−p)²)^(vouchers+1),
// 1e-4 at p = 20 %. Quorum mode keeps every answer (a VOUCH there is also
// a pre-vote, and a pre-vote needs a majority), and so does the ring
// family (thinned).

// thinned reports whether the answers to PROBEs are thinned out (here and
// in harden_probeherd.go): with bully outside quorum mode. The ring family keeps
// every round and answer: its elections take a hop time per node, and the
// random schedules found an 11-node ring whose elections did not end
// with the herd rules.
func (c *core) thinned() bool { return c.cfg.Algorithm == AlgorithmBully && !c.q.on() }

// vouchers is how many members besides the leader vouch to one prober:
// as many as in a cluster of up to 9 nodes, where every member vouches
// (the stability schedules' clusters have 3 to 7).
const vouchers = 8

// vouchesFor reports whether this node is one of the vouchers of prober
// p: every member when there are at most vouchers, else a member in
// len(members)/vouchers, chosen by a hash of the pair so that each prober
// has its own (vouchers of them on average) and the choice costs O(1) per
// PROBE (a PROBE reaches every member: an O(n) choice made a 1,024-node
// failover cost seconds of CPU).
func (c *core) vouchesFor(p Key) bool {
	n := uint64(len(c.members))
	if n <= vouchers || !c.thinned() {
		return true
	}
	return mix64(c.self.ID, p.ID)%n < vouchers
}

// mix64 hashes a pair of node IDs (splitmix64's finalizer).
func mix64(a, b uint64) uint64 {
	x := a*0x9e3779b97f4a7c15 ^ b*0xc2b2ae3d27d4eb4f
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
