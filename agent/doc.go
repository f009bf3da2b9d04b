// Package agent is lanleader's runtime: the only package with goroutines,
// sockets, clocks and child processes.
//
// An Agent joins the cluster's membership (hashicorp/memberlist, with
// multicast discovery beacons), sends and receives election messages on
// its own UDP socket (multicast through golang.org/x/net/ipv4 and ipv6, or
// a unicast fan-out), and runs one event loop: the only goroutine that
// touches the election machine. Packets, timers and membership events are
// fed to the machine there, in arrival order, and its actions (send, set a
// timer, became leader, follow) are carried out there. Everything else
// (the HTTP endpoints, metrics at scrape time) reads an immutable snapshot
// the loop publishes after each step.
//
// The child processes (the job, its guard, the hooks and the checks) are
// run by agent/internal/proc; the policy's part (agent/part/lead) decides
// when, with which term and lease. The job runs under a guard that is this
// program started again: a program that runs an agent with a job calls
// Guard first thing in main, and so does TestMain in tests that do.
//
// What this package must not do: decide who leads (election/ does),
// encode bytes by hand (wire/ does), or register metrics on a global
// registry. (The random draws, the incarnation number at start and whether
// to answer a discovery beacon, come from math/rand/v2's randomly seeded
// source; nothing depends on them being reproducible.)
package agent
