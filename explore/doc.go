// Package explore is an exhaustive, bounded model checker of the real
// election machines (election.New) and the job model of sim/job, in the
// spirit of the P language's systematic testing and FoundationDB's
// simulation: where sim plays random schedules for breadth, explore
// plays every schedule within a bound, for depth, and checks the job
// invariants (sim/job; sim's Checker invariants 6 and 7 for quorum mode)
// in every state it reaches.
//
// A schedule is the default run — every event at its time, in the order
// it was scheduled: packets delivered at once, timers at their
// deadlines, jobs started and stopped after their latencies — changed at
// a bounded number of choice points (Bounds): a packet delivered before
// the others that are due, held to the longest delay (MaxDelay), or
// lost; a node crashed or restarted (a new machine, with the last
// VotedTerm as InitialTerm, as the agent keeps it). The explorer visits
// every schedule with at most that many changes of each kind, up to a
// time horizon, depth-first; a state it has seen before (a hash of every
// machine's whole internal state, the packets in flight, the timers, the
// jobs and the budget left) is not explored again. Machines are cloned
// at every choice point by a reflective deep copy (clone.go) rather than
// replayed from the start; a test checks that a clone steps exactly as
// its original.
//
// Time: one global clock; each node's monotonic clock runs at a fixed
// rate off it (Shape.DriftPPM, up to election.MaxClockDrift), and its
// timers fire exactly at their deadlines on that clock, never early. A
// packet takes between 0 and MaxDelay. Within those bounds the lease's
// safety argument (election/quorum.go, 5) holds, so an overlap found is
// a bug, not an artefact of the model.
//
// What this package must not do: read the wall clock or draw random
// numbers (a run is a pure function of its Shape and Bounds), or change
// the machines it checks: it drives them only through Step, as the agent
// does.
package explore
