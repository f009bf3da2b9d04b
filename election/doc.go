// Package election decides who leads: the bully algorithm (and, later, the
// ring family) as pure, deterministic state machines.
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
// than any term it has seen; a higher term beats a lower one, and on equal
// terms the larger key wins.
//
// What this package must not do: read a clock, open a socket, start a
// goroutine, log, or draw randomness that is not passed in. A machine is not
// safe for concurrent use; its driver is its only caller.
package election
