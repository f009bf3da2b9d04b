package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/lanleader/lanleader/agent"
	"github.com/lanleader/lanleader/agent/config"
)

// loadRunConfig is what `lanleader run` and `lanleader check-config`
// check before anything starts: the flags, the --config file and the
// job's program. It returns flag.ErrHelp after -h (the manual printed).
func loadRunConfig(args []string, stdout, stderr io.Writer) (agent.Config, error) {
	cfg, _, err := loadRun(args, stdout, stderr)
	return cfg, err
}

// loadRun is loadRunConfig with run's --once flags.
func loadRun(args []string, stdout, stderr io.Writer) (agent.Config, onceFlags, error) {
	cfg, job, once, err := parseRunOnce(args, stdout, stderr)
	if err != nil {
		return cfg, once, err
	}
	if len(job) > 0 && cfg.ElectionRole().MayLead() {
		// Refused now rather than at the first leadership: a job that
		// cannot start would make every node fail it in turn. A node
		// that never leads never runs it (its start warns), so that the
		// candidates' file serves it too.
		if _, err := exec.LookPath(job[0]); err != nil {
			return cfg, once, fmt.Errorf("job: %s", lookPathMessage(job[0], err))
		}
	}
	cfg.Version = version
	return cfg, once, nil
}

// runCheckConfig is `lanleader check-config [--config FILE] [flags] [--
// JOB]`: run's checks, and nothing started (keepalived's -t). Exit 0 with
// one line that sums the config up, 2 with the errors, 3 (with the line)
// when the bind address is not on this host now (checkConfigUsage says
// why), and the warnings run's start logs on stderr.
func runCheckConfig(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprint(stdout, checkConfigUsage)
		return 0
	}
	cfg, err := loadRunConfig(args, io.Discard, stderr)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, checkConfigUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "lanleader check-config: %s\n", oneLineErr(err))
		return 2
	}
	if _, err := agent.New(cfg); err != nil {
		fmt.Fprintf(stderr, "lanleader check-config: %s\n", oneLineErr(err))
		return 2
	}
	_, _, hostErr := cfg.BindOnHost()
	if hostErr != nil && !errors.Is(hostErr, config.ErrNotOnHost) {
		// The start refuses it at once, as run exits 2.
		fmt.Fprintf(stderr, "lanleader check-config: %s\n", oneLineErr(hostErr))
		return exitConfig
	}
	job := "no job"
	if len(cfg.Job) > 0 {
		job = "job " + strings.Join(cfg.Job, " ")
	}
	fmt.Fprintf(stdout, "config OK: node %s (node_id %d), priority %d, cluster %s, bind %s, algorithm %s, %s\n",
		cfg.Name, cfg.NodeID, cfg.Priority, cfg.Cluster, cfg.Bind, cfg.Algorithm, job)
	for _, w := range append(cfg.RoleWarnings(), cfg.VIPWarnings()...) {
		fmt.Fprintf(stderr, "lanleader check-config: warning: %s\n", w)
	}
	if hostErr != nil {
		wait := "would wait --start-timeout (" + config.DurationText(cfg.StartTimeout) + ") for it, then exit 3"
		if cfg.StartTimeout == 0 {
			wait = "would exit 3 at once (--start-timeout 0)"
		}
		fmt.Fprintf(stderr, "lanleader check-config: not ready now: %s; run %s\n", oneLineErr(hostErr), wait)
		return exitNotReady
	}
	return 0
}

const checkConfigUsage = `usage: lanleader check-config [--config FILE] [flags] [-- JOB...]

Checks the flags and the --config file exactly as 'lanleader run' does
(every flag of run is accepted), and starts nothing: no socket is opened,
no job or hook runs (keepalived's -t). Run it before a reload
(systemctl reload lanleader) or a restart.

The warnings run's start would log go to stderr, each after "warning: ",
and leave the exit status as it is: a setting the node's role makes
pointless, a virtual address outside every subnet of its interface
(the neighbours reach it only through a router that routes it there).

Exit status:
  0  the configuration is valid: one line on stdout sums it up
  2  it is not: the errors on stderr, naming the flag or the file's line
  3  it is valid (the line on stdout), but the bind address is not on
     this host now: run would wait --start-timeout for it, then exit 3
     as well. Not 2: an address that comes later (DHCP, a link or a
     VRRP address that comes up) is a host not ready yet, not a bad
     configuration; not 0: a restart now would wait, then fail.
`
