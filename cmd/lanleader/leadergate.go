package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lanleader/lanleader/agent/api"
)

// Exit statuses of the leader gate (status --is-leader, exec-if-leader).
const (
	gateLeader      = 0 // this node leads
	gateNotLeader   = 1 // status --is-leader: the agent answered, another node leads (or none)
	gateBadUsage    = 2 // bad flags or arguments
	gateUnreachable = 3 // the agent could not be reached, or its answer is not a /leader document
	gateNotFound    = 127
)

const execIfLeaderUsage = `usage: lanleader exec-if-leader [--http ADDR] [--timeout D] [--verbose] -- CMD [ARG...]

Asks the lanleader agent of this host (GET http://ADDR/leader) whether this
node leads. On the leader it replaces itself with CMD (exec: CMD's exit
status and signals are its own) with LANLEADER_TERM, LANLEADER_NODE_ID,
LANLEADER_LEADER_ID and LANLEADER_NAME in its environment, as the job has
them. Elsewhere it exits 0 without running CMD, so that a cron line on every
host runs CMD on the leader only and stays quiet on the others:

  */5 * * * * lanleader exec-if-leader -- /usr/local/bin/report

Flags:
  --http ADDR
        the agent's HTTP listener, host:port or http://host:port
        (default 127.0.0.1:9947)
  --timeout D
        give up when the request takes longer than D (default 2s)
  --verbose
        say on stderr why CMD was not run
  -h, --help
        print this help

Exit status:
  CMD's  on the leader
  0      not the leader: CMD was not run
  2      bad flags or arguments
  3      the agent could not be reached, timed out, or did not answer
         as an agent's /leader does
  127    CMD was not found
`

// leaderURLOf is the URL of /leader of the agent whose /status is at
// statusURL.
func leaderURLOf(statusURL string) string {
	return strings.TrimSuffix(statusURL, "/status") + "/leader"
}

// fetchLeader asks GET /leader. Its error is one line naming the URL: the
// agent could not be reached, or answered other than 200 or 503 with a
// /leader document.
func fetchLeader(leaderURL string, timeout time.Duration) (api.LeaderAnswer, error) {
	var ans api.LeaderAnswer
	resp, err := getAgent(leaderURL, timeout, 64<<10)
	if err != nil {
		return ans, err
	}
	body := resp.body
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
		return ans, fmt.Errorf("the agent at %s answered %s: %s", leaderURL, resp.Status, firstLine(body, 200))
	}
	if err := json.Unmarshal(body, &ans); err != nil || ans.State == "" {
		return ans, fmt.Errorf("the agent at %s sent no /leader document: %q", leaderURL, firstLine(body, 60))
	}
	if ans.Leader != (resp.StatusCode == http.StatusOK) {
		return ans, fmt.Errorf("the agent at %s answered %s with leader %v", leaderURL, resp.Status, ans.Leader)
	}
	return ans, nil
}

// runIsLeader is `lanleader status --is-leader`: 0 leader, 1 not the
// leader, 3 unreachable; one line on stdout says which.
func runIsLeader(statusURL string, timeout time.Duration, stdout, stderr io.Writer) int {
	ans, err := fetchLeader(leaderURLOf(statusURL), timeout)
	if err != nil {
		fmt.Fprintf(stderr, "lanleader status: %v\n", err)
		return gateUnreachable
	}
	if ans.Leader {
		fmt.Fprintf(stdout, "leader, term %d\n", ans.Term)
		return gateLeader
	}
	fmt.Fprintf(stdout, "not the leader: %s, term %d, leader_id %d\n", ans.State, ans.Term, ans.LeaderID)
	return gateNotLeader
}

// execve replaces the process with a command; tests keep it.
var execve = syscall.Exec

// runExecIfLeader is `lanleader exec-if-leader [flags] -- CMD`.
func runExecIfLeader(args []string, stdout, stderr io.Writer) int {
	fs := newAgentFlags("exec-if-leader", statusDefaultTimeout)
	verbose := fs.Bool("verbose", false, "")
	var argv []string
	for i, a := range args {
		if a == "--" {
			args, argv = args[:i], args[i+1:]
			break
		}
	}
	statusURL, code, done := fs.parse(args, execIfLeaderUsage, stdout, stderr)
	if done {
		return code
	}
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "lanleader exec-if-leader: no command: give it after -- (see lanleader exec-if-leader --help)")
		return gateBadUsage
	}
	ans, err := fetchLeader(leaderURLOf(statusURL), *fs.timeout)
	if err != nil {
		fmt.Fprintf(stderr, "lanleader exec-if-leader: %v\n", err)
		return gateUnreachable
	}
	if !ans.Leader {
		if *verbose {
			fmt.Fprintf(stderr, "lanleader exec-if-leader: not the leader (%s, term %d, leader_id %d): %s not run\n",
				ans.State, ans.Term, ans.LeaderID, argv[0])
		}
		return 0
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(stderr, "lanleader exec-if-leader: %s\n", lookPathMessage(argv[0], err))
		return gateNotFound
	}
	env := append(os.Environ(), "LANLEADER_TERM="+strconv.FormatUint(ans.Term, 10),
		"LANLEADER_NODE_ID="+strconv.FormatUint(ans.NodeID, 10),
		"LANLEADER_LEADER_ID="+strconv.FormatUint(ans.LeaderID, 10), "LANLEADER_NAME="+ans.Node)
	err = execve(path, argv, env)
	fmt.Fprintf(stderr, "lanleader exec-if-leader: exec %s: %v\n", path, err)
	return 1
}
