package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lanleader/lanleader/agent"
	"github.com/lanleader/lanleader/agent/api"
)

// resignUsage is the help of `lanleader resign`.
const resignUsage = `usage: lanleader resign [--http ADDR] [--key-file FILE] [--timeout D]

Asks the lanleader agent on this host to hand the leadership over, e.g.
before maintenance, without stopping the agent: by POST http://ADDR/resign,
which the agent accepts only from this host. The agent stops its job first
(SIGTERM to the job's process group, SIGKILL after --job-grace), then sends
RESIGN, so that the other agents elect a new leader at once, and it stays
out of elections for its hold-off: ten heartbeats (1s), and never less than
its --preempt-delay. With preemption on (the default), a node with the
largest key takes the leadership back when the hold-off ends: give it a
--preempt-delay as long as the maintenance, or run it with --preempt=false,
to keep it away.

resign then waits until the agent names another node leader and prints it.

Flags:
  --http ADDR
        the agent's HTTP listener, host:port or http://host:port
        (default 127.0.0.1:9947)
  --key-file FILE
        the agent's --key-file: an agent with a key accepts a resign only
        with a token derived from it (default: none)
  --timeout D
        give up waiting for another leader after D (default 30s: the job's
        default grace period of 10s and some)
  -h, --help
        print this help

Exit status:
  0  this node led, handed over, and another node leads now
  1  the agent could not be reached, does not lead, or no other leader
     was named within --timeout
  2  bad flags or arguments
`

const resignDefaultTimeout = 30 * time.Second

// runResign is `lanleader resign [--http ADDR] [--timeout D]`.
func runResign(args []string, stdout, stderr io.Writer) int {
	fs := newAgentFlags("resign", resignDefaultTimeout)
	keyFile := fs.String("key-file", "", "")
	statusURL, code, done := fs.parse(args, resignUsage, stdout, stderr)
	if done {
		return code
	}
	timeout := fs.timeout
	resignURL := strings.TrimSuffix(statusURL, "/status") + "/resign"
	token := ""
	if *keyFile != "" {
		key, err := agent.LoadKeyFile(*keyFile)
		if err != nil {
			fmt.Fprintf(stderr, "lanleader resign: --key-file: %v\n", err)
			return 2
		}
		token = agent.ResignToken(key)
	}

	start := time.Now()
	ans, err := postResign(resignURL, token)
	if err != nil {
		fmt.Fprintf(stderr, "lanleader resign: %v\n", err)
		return 1
	}
	if !ans.Resigned {
		fmt.Fprintf(stderr, "lanleader resign: %s\n", ans.Error)
		return 1
	}
	fmt.Fprintf(stdout, "node %d resigns (term %d): its job stops, then RESIGN; it stays out of elections for %s\n",
		ans.NodeID, ans.Term, ans.HoldOff)
	deadline := start.Add(*timeout)
	why := ""
	for try := 0; ; try++ {
		_, st, err := fetchStatus(statusURL, min(2*time.Second, max(time.Until(deadline), time.Millisecond)))
		switch {
		case err != nil:
			why = err.Error()
		case st.LeaderID != 0 && st.LeaderID != ans.NodeID:
			name := st.LeaderName
			if name == "" {
				name = "?"
			}
			fmt.Fprintf(stdout, "%s (node %d) leads now, term %d, %s after the request\n",
				name, st.LeaderID, st.Term, sinceText(time.Since(start)))
			return 0
		default:
			why = fmt.Sprintf("this node is %s, leader %d", st.State, st.LeaderID)
		}
		if time.Now().After(deadline) || try > int(*timeout/(20*time.Millisecond))+1 {
			fmt.Fprintf(stderr, "lanleader resign: no other leader within %v (%s)\n", *timeout, why)
			return 1
		}
		time.Sleep(20 * time.Millisecond) // polling the agent's /status
	}
}

// sinceText is how long the hand-over took, as resign says it: in
// milliseconds with a tenth (a hand-over on one host can take less than
// one: rounded to the millisecond it read "0s"), in seconds from 10s.
func sinceText(d time.Duration) string {
	if d >= 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
}

func postResign(resignURL, token string) (api.ResignAnswer, error) {
	var ans api.ResignAnswer
	req, err := http.NewRequest(http.MethodPost, resignURL, nil)
	if err != nil {
		return ans, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := askAgent(req, 5*time.Second, 1<<16)
	if err != nil {
		return ans, err
	}
	body := resp.body
	if err := json.Unmarshal(body, &ans); err != nil {
		msg := fmt.Sprintf("the agent at %s answered %s", resignURL, resp.Status)
		if line := firstLine(body, 200); line != "" {
			msg += ": " + line
		}
		return ans, errors.New(msg)
	}
	if resp.StatusCode != http.StatusOK && ans.Error == "" {
		ans.Error = fmt.Sprintf("the agent at %s answered %s", resignURL, resp.Status)
	}
	return ans, nil
}
