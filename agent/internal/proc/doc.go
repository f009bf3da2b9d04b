// Package proc runs the agent's child processes: the job under its
// supervisor and guard, the hooks, and the health checks, each through
// one shell runner (sh -c in a process group of its own).
//
// It is the mechanism, not the policy: it starts, stops, restarts and
// kills processes as its caller asks (Supervisor.Set), with the timings
// and crash-loop rules it is configured with, and reports what happened
// through callbacks. When the job should run, with which term, in which
// order a leader resigns, and what the lease is worth are decided by the
// agent (its policy's part, agent/part/lead), never here.
//
// What it must not do: hold or call an agent, open sockets, read the
// election's state, or use a clock other than Go's monotonic time and
// CLOCK_MONOTONIC (the lease shared with the guard, MonoNow).
//
// The job guard: the supervisor does not start the job itself but its own
// executable again, as the leader of the job's process group (see
// guard.go). A program that runs jobs must therefore call Guard first
// thing in main, and every test binary whose tests start jobs first thing
// in TestMain, as docker's pkg/reexec asks of its users; a supervisor in
// a program that did not refuses to start the job, with an error that
// says so, rather than run the program's main again.
package proc
