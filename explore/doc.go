// Package explore is an exhaustive, bounded model checker of the real
// election machines (election.New) and the job model of sim/job, in the
// spirit of the P language's systematic testing and FoundationDB's
// simulation: where sim plays random schedules for breadth, explore
// plays every schedule within a bound, for depth, and checks the job
// invariants in every state it reaches, with sim/job's own checks (the
// numbers are sim's Checker's):
//
//   - 6 (quorum mode): never two jobs alive at once, on any two nodes,
//     across preemption, crashes, restarts with lost state, pauses and
//     clones (Lives' overlaps);
//   - 7 (both modes): no job starts on a node whose link is down, and an
//     awake node whose link goes down stops its job at once
//     (Lives.CheckStart, CheckLinkDown);
//   - 8 (default mode): a node that took the leadership over from a live
//     leader never starts its job while the displaced leader's job still
//     runs, when both are awake, linked, and the displaced one knows
//     (Lives.CheckStart). Default mode lets a new leader's job run beside
//     one whose agent crashed, or that is cut off: that is documented,
//     and not checked.
//   - 9 (both modes): a crashed leader's NOTICE goes out only once its
//     job is dead, and a node that acted on it never starts its job while
//     that job still runs (job.CheckNotice).
//
// A schedule is the default run — every event at its time, in the order
// it was scheduled: packets delivered at once, timers at their
// deadlines, jobs started and stopped after their latencies — changed at
// a bounded number of choice points (Bounds): a packet delivered before
// the others that are due, held to the longest delay (MaxDelay), or
// lost; a node crashed (any node, or only a leader: CrashLeader) or
// restarted (a new machine, with the last VotedTerm as InitialTerm, as
// the agent keeps it); a node's link lost for one of LinkFor; a node's
// process paused for one of PauseFor; a leader's crash that is its
// agent's alone (Notice), whose NOTICE goes out to every other node once
// its job is dead, each copy a packet like the others, and a NOTICE that
// arrives a second time NoticeLate after it was sent (NoticeDup: after
// a new term, at nodes of another term). The explorer visits every
// schedule with at most that many changes of each kind, up to a time
// horizon, depth-first; a state it has seen before (a hash of every
// machine's whole internal state, the packets in flight, the timers, the
// jobs and the budget left) is not explored again.
//
// A pulled cable is the simulator's (sim.LinkDown) and the agent's: the
// node sends and receives nothing; its driver takes it out of the
// elections (EvStandby) and a leader stops its job at once; when the
// link comes back the driver listens for the leader for StartupWait
// before the node takes part again (the agent's carrierListen). A pause
// is SIGSTOP: the node handles nothing, its timers that come due and the
// packets that arrive (up to sim.SocketBuffer) wait, and when it wakes
// it handles them in the order they happened; its job's process and its
// guard run on. A driver that has not yet acted on its link when it
// would start its job (it was paused) acts on the link first, as the
// simulator's does.
//
// Stop latencies are a choice at every SIGTERM (Shape.Stops: in the
// tests at once, shorter than the lease, and ignoring SIGTERM until the
// SIGKILL or the guard's kill), rather than one per shape searched in a
// loop: the invariants depend on how one stop relates to the events
// around it (a preemption's state exchange, gossip's news of the stop,
// the lease's end), and a schedule with two stops may need them to
// differ, which a per-shape latency never tries. The choice costs a
// branch only where a job is stopped, which is rare next to packets and
// timers.
//
// Default mode's takeover waits as the agent's and the simulator's do:
// it looks at the displaced leader's job at its first state exchange
// with it (JobSyncDelay after the wait began) and learns of the job's
// death JobMetaDelay after it (gossip), or gives up after the grace and
// the agent's margin.
//
// States are copied for each successor and hashed by plans compiled
// once per type from reflection (clone.go), which move and hash the
// bytes of pointer-free runs and follow only pointers, slices, maps and
// interfaces; a test checks that a clone steps exactly as its original
// and shares no memory with it.
//
// Time: one global clock; each node's monotonic clock runs at a fixed
// rate off it (Shape.DriftPPM, up to election.MaxClockDrift), and its
// timers fire exactly at their deadlines on that clock, never early. A
// packet takes between 0 and MaxDelay. Within those bounds the lease's
// safety argument (election/quorum.go, 5) holds, so an overlap found is
// a bug, not an artefact of the model. Membership's notices are not
// modelled: the machines learn of a crash from the silence of its
// heartbeats.
//
// What this package must not do: read the wall clock or draw random
// numbers (a run is a pure function of its Shape and Bounds), or change
// the machines it checks: it drives them only through Step, as the agent
// does.
package explore
