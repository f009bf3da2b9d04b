// Command lanleader keeps exactly one host of a LAN the leader.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/lanleader/lanleader/agent"
	"github.com/lanleader/lanleader/wire"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `usage: lanleader <command> [flags]

Commands:
  run       run the agent on this host (see 'lanleader run -h')
  check-config
            validate the flags and --config file as run does, start nothing
  status    show the local agent's view: members, keys, who leads
  resign    make the local agent, if it leads, hand the leadership over
  exec-if-leader
            run a command (exec) only if the local agent leads
  demo      a local cluster of real agents on loopback that fails over
            every few seconds, with measured failover times
  sim       simulate a cluster: a scripted story, or a random fault
            schedule by seed with its invariants checked
  version   print the version

Run 'lanleader <command> -h' for the flags of a command.
`

func main() {
	oneProc(os.Getenv)
	// First: this process may be the guard of a job of an agent (this
	// program started again), which runs the job and exits.
	agent.Guard()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// oneProc runs Go code on one CPU at a time unless the environment's
// GOMAXPROCS says otherwise, as node_exporter does by default. The agent
// waits for packets and timers nearly all the time; with a P per CPU the
// Go scheduler wakes idle threads to look for work at every packet, which
// on a LAN of 128 agents made the leader's host spend 3 times the CPU and
// delayed the failover (see ENVIRONMENT in 'lanleader run -h').
func oneProc(getenv func(string) string) {
	if getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// run is main without the process: it returns the exit status.
// 0 success; 1 failure (a broken invariant in sim, an agent that fails
// while running, an unreachable agent for status, a demo that does not
// converge); 2 bad usage or config.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "run":
		return runRun(args[1:], stdout, stderr)
	case "status":
		return runStatus(args[1:], stdout, stderr)
	case "resign":
		return runResign(args[1:], stdout, stderr)
	case "exec-if-leader":
		return runExecIfLeader(args[1:], stdout, stderr)
	case "check-config":
		return runCheckConfig(args[1:], stdout, stderr)
	case "demo":
		return runDemo(args[1:], stdout, stderr)
	case "demo-job": // the demo's agents' job (demojob.go), not for users
		return runDemoJob(args[1:], stdout, stderr)
	case "sim":
		return runSim(args[1:], stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, versionString())
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "lanleader: unknown command %q\n\n%s", args[0], usage)
	return 2
}

// versionString is the line of 'lanleader version': the version, the
// commit when known, the Go release, and last "wire N", the election
// protocol's version (wire.Version): agents of different wire versions
// do not understand each other. The package's postinst reads that last
// field of the running agent's binary and of the new one, and restarts
// the agent on an upgrade only when they are the same.
func versionString() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (" + s.Value[:12] + ")"
			}
		}
		v += " " + bi.GoVersion
	}
	return fmt.Sprintf("lanleader %s wire %d", v, wire.Version)
}
