// Package election decides who leads: the bully algorithm and the ring
// family from the literature (ring with the list of live processes,
// Chang–Roberts, Hirschberg–Sinclair), as pure, deterministic state
// machines behind one interface, Machine. New builds the one that
// Config.Algorithm names.
//
// A machine takes one event at a time with the current time of its node's
// monotonic clock — a message arrived, a timer it set fired, membership
// changed, something outside suspects the leader, the operator asks for a
// resign, the node's priority changed — and returns the actions its driver
// must carry out: send a message to one node or to all, set or cancel a
// timer, became leader with a term, now follows a leader with a term. The
// same machine runs unchanged in the agent (the real driver: sockets,
// timers, memberlist) and in the simulator (sim/). This is the shape of
// etcd-io/raft's RawNode and Ready.
//
// The election key is (priority, node_id): the larger wins. Every
// leadership has a term that only grows: a new coordinator takes one more
// than any term it has seen (the ring family: the term its round
// proposed); a higher term beats a lower one, and on equal terms the
// larger key wins.
//
// The file names give the layer:
//   - textbook_*.go: the seeds' algorithms. The algorithms share
//     everything but the election; bully's election is textbook_bully.go;
//     the ring family's shared machinery (the logical ring of the live
//     members sorted by key, rounds with terms) is textbook_ring.go, its
//     acknowledged hops, skipped to the next live node after T,
//     textbook_ring_hop.go, and each algorithm has its file
//     (textbook_ring_list.go, textbook_changroberts.go,
//     textbook_hirschberg.go), whose comment numbers the steps of its
//     textbook description.
//   - core*.go: what every algorithm shares: the listen period after a
//     start, heartbeats and the failure detector, terms and the claims
//     that carry them (COORDINATOR, HEARTBEAT; core_claims.go), changes
//     of role, preemption, resign and its hold-off (core_transitions.go),
//     membership and node_id conflicts (core_membership.go).
//   - harden*.go: what a real LAN made us add, one switch a mechanism
//     (Hardening, harden.go; its zero value is the textbook, Hardened()
//     the agent's machine): a suspicion confirmed before anyone elects
//     (harden_confirm.go), by a few vouchers in a herd
//     (harden_vouchers.go, harden_probeherd.go), with waits that follow
//     the round trips (harden_rtt.go), and quorum mode's pre-vote
//     (harden_prevote.go).
//   - quorum*.go: quorum mode, below.
//   - scale_*.go: bully in O(n) messages (Hardening.ScaledElection).
//
// Quorum mode (Config.Quorum; quorum.go, quorum_ack.go for the
// followers' acknowledgements, and quorum_lease.go for the leader's side) adds split-brain safety to every algorithm through the
// core: a node leads only with the acknowledgements of a majority of the
// expected cluster size, under a lease that its followers' promises
// outlast by a margin for clock drift (MaxClockDrift, 500 ppm); a leader
// steps down when its lease runs out, checks it first thing on every step
// (a wake-up after a pause), and the term is the fencing token. Quorum 0
// is the textbook, unchanged.
//
// What this package must not do: read a clock, open a socket, start a
// goroutine, log, or draw randomness that is not passed in. A machine is not
// safe for concurrent use; its driver is its only caller.
package election
