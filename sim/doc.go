// Package sim is a deterministic network simulator for the election
// machines: N machines of one algorithm (election.New: bully or one of the
// ring family), one virtual clock, and a seeded
// network that loses, delays, duplicates and reorders packets, cuts links
// one way or both ways and heals them, crashes nodes (a restarted node has
// lost its memory) and pauses them (a paused node receives nothing and
// sends nothing, and resumes with its stale state and its timers overdue).
// Every packet goes through the wire codec, so the simulator also checks
// that what the machines build encodes and decodes.
//
// Generate turns a seed into a random fault schedule (GenerateFor, for an
// algorithm); Run plays it and checks the invariants after every event
// (see Checker and Converged). The same seed gives the same run, byte for
// byte, on one architecture (the phi detector's floating point may be
// fused differently on another): a failing seed is replayed with
// `go run ./cmd/lanleader sim [-algorithm A] -seed N -trace`.
//
// GenerateQuorum makes the quorum-mode twin of a schedule (election's
// Config.Quorum, every node's clock rate off by up to 500 ppm: Config.
// DriftPPM, and a pause of the leader longer than its lease in half of
// them); the Checker then also checks that the lease intervals of two
// leaderships never overlap on the global clock.
//
// With Config.Jobs every node runs a job (sim/job: a start latency,
// SIGTERM, the job grace, SIGKILL, and in quorum mode the guard's kill at
// the lease's end, which outlives a crashed or paused agent) under the
// agent's policy, and the Checker checks the one-job-at-a-time promise
// where it lives, on the jobs' lives (invariants 6 to 9, jobcheck.go).
// Nodes may share a node_id (Config.Clones) and lose their link
// (LinkDown: the driver takes the node out of the elections). The random
// schedules draw job parameters and pulled cables.
//
// A crash may be an agent's alone, its host alive (CrashWithNotice, a
// FaultCrash with Notice: half the random schedules' crashes): a leader's
// notice guard then multicasts the NOTICE of its term once its job is
// dead, through the network's faults of the moment (notice.go). A host's
// death (Crash) sends none.
//
// Measure counts the messages and packets of one election (bench/msgcount
// and bench/complexity print them next to the textbooks' counts).
//
// What this package must not do: read the wall clock or any randomness not
// derived from the seed, or depend on map iteration order for anything that
// reaches the trace or the result.
package sim
