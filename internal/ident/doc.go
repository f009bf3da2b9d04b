// Package ident tells, for an election packet that has passed the wire's
// and the key's checks, who sent it as far as this node's identity goes:
// this node itself, another live node that uses this node's node_id (a
// configuration error, typically two hosts made from one image), or
// another node. It is a pure function of the packet's sender fields and
// this node's identity: no I/O, no clock, so that the agent's receive
// path and a model checker share one definition of "own packet".
//
// It must not decide anything else: replays, authentication and the
// election's view of the sender are the agent's and the machine's.
package ident
