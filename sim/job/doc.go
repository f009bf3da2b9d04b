// Package job models lanleader's job where the one-job-at-a-time promise
// lives: its life on one node (a start latency; SIGTERM, the job grace
// and the SIGKILL that follows it; in quorum mode the guard's kill at the
// lease's end, which outlives a crashed or paused agent), the driver's
// policy that decides when the job should run (agent/part/lead: start it
// when the machine leads, in quorum mode while it holds a lease; stop it
// when that ends; in default mode a takeover from a live leader waits for
// that leader's job to stop; a node whose link is down takes no part and
// stops its job at once), and the check of the invariants on the lives
// of the jobs, measured on the global clock.
//
// The simulator (sim) and the exhaustive explorer (explore) both drive
// this package, so that both check the same model.
//
// What this package must not do: read the wall clock, hold randomness,
// or know about the network: time and what the driver learned come in as
// arguments.
package job
