package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/lanleader/lanleader/agent"
)

// statusUsage is the help of `lanleader status`, printed by -h/--help.
// TestStatusUsageExample keeps its example output true to printStatus.
const statusUsage = `usage: lanleader status [--http ADDR] [--json | --is-leader] [--timeout D]

Asks the lanleader agent running on this host (or at --http) for its view of
the cluster, by GET http://ADDR/status, and prints it: who this node is, its
state and term, which node leads, and every member of the cluster, this node
included, sorted by election key (priority, then node_id), the largest, which
wins elections, first.

The STATUS column shows this node's own state (leader, follower, candidate,
conflict or starting) on its own row, marked "(self)", and memberlist's view
(alive, suspect, dead or left) on the others. LEADER marks the node that this
node believes leads with "*". In state conflict, another node has this
node's node_id (or its name): this node does not lead until the clash is
gone.

Flags:
  --http ADDR
        the agent's HTTP listener, host:port or http://host:port
        (default 127.0.0.1:9947)
  --json
        print the /status document as the agent sent it (fields this
        version does not know included), indented by 2 spaces
  --is-leader
        ask GET /leader instead, print one line, and exit 0 when this
        node leads, 1 when it does not, 3 when the agent cannot be
        reached (for scripts; cron lines: lanleader exec-if-leader)
  --timeout D
        give up when the whole request takes longer than D, a Go
        duration such as 500ms or 5s (default 2s)
  -h, --help
        print this help

Exit status:
  0  the agent answered and its status was printed
  1  the agent could not be reached (it may not be running, or --http
     may be wrong), timed out, answered other than 200 OK, or sent a
     document that is not a /status document
  2  bad flags or arguments
  With --is-leader: 0 leader, 1 not the leader, 2 bad flags, 3 the
  agent could not be reached or sent no /leader document.

Example:
  $ lanleader status
  node     host-a (node_id 3, priority 150)
  state    leader, term 7
  leader   host-a (node_id 3) since 2025-01-02T03:04:05.678Z
  cluster  lanleader, transport multicast, algorithm bully

  NAME    NODE_ID  PRIORITY  ADDR             STATUS         LEADER
  host-a  3        150       192.0.2.11:7946  leader (self)  *
  host-c  5        100       192.0.2.13:7946  alive
  host-b  2        100       192.0.2.12:7946  dead
`

const (
	statusDefaultHTTP    = "127.0.0.1:9947"
	statusDefaultTimeout = 2 * time.Second
	// statusMaxBody bounds what is read of the agent's answer.
	statusMaxBody = 4 << 20
)

// agentFlags are the flags of the commands that talk to a running agent
// through its HTTP listener (status, resign).
type agentFlags struct {
	*flag.FlagSet
	name    string
	addr    *string
	timeout *time.Duration
}

// newAgentFlags declares --http and --timeout (default timeout) for
// `lanleader name`; the caller adds its own flags.
func newAgentFlags(name string, timeout time.Duration) *agentFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &agentFlags{FlagSet: fs, name: name,
		addr: fs.String("http", statusDefaultHTTP, ""), timeout: fs.Duration("timeout", timeout, "")}
}

// parse parses args and returns the URL of the agent's /status. done is
// true when the command must exit at once with code: 0 after --help
// (usage printed), 2 for bad flags or arguments (the reason printed).
func (f *agentFlags) parse(args []string, usage string, stdout, stderr io.Writer) (statusURL string, code int, done bool) {
	def := f.Lookup("timeout").DefValue
	if err := f.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return "", 0, true
		}
		fmt.Fprintf(stderr, "lanleader %s: %v (see lanleader %s --help)\n", f.name, err, f.name)
		return "", 2, true
	}
	if f.NArg() > 0 {
		fmt.Fprintf(stderr, "lanleader %s: unexpected argument %q (see lanleader %s --help)\n", f.name, f.Arg(0), f.name)
		return "", 2, true
	}
	if *f.timeout <= 0 {
		fmt.Fprintf(stderr, "lanleader %s: --timeout %v: want a positive duration such as %s\n", f.name, *f.timeout, def)
		return "", 2, true
	}
	statusURL, err := statusURLOf(*f.addr)
	if err != nil {
		fmt.Fprintf(stderr, "lanleader %s: --http %q: %v\n", f.name, *f.addr, err)
		return "", 2, true
	}
	return statusURL, 0, false
}

// runStatus is `lanleader status [--http ADDR] [--json] [--timeout D]`.
func runStatus(args []string, stdout, stderr io.Writer) int {
	fs := newAgentFlags("status", statusDefaultTimeout)
	asJSON := fs.Bool("json", false, "")
	isLeader := fs.Bool("is-leader", false, "")
	statusURL, code, done := fs.parse(args, statusUsage, stdout, stderr)
	if done {
		return code
	}
	timeout := fs.timeout
	if *isLeader {
		return runIsLeader(statusURL, *timeout, stdout, stderr)
	}

	raw, st, err := fetchStatus(statusURL, *timeout)
	if err != nil {
		fmt.Fprintf(stderr, "lanleader status: %v\n", err)
		return 1
	}
	if *asJSON {
		var b bytes.Buffer
		if err := json.Indent(&b, bytes.TrimSpace(raw), "", "  "); err != nil { // cannot fail: raw was decoded
			fmt.Fprintf(stderr, "lanleader status: the agent at %s sent bad JSON: %v\n", statusURL, err)
			return 1
		}
		b.WriteByte('\n')
		stdout.Write(b.Bytes())
		return 0
	}
	printStatus(stdout, st)
	return 0
}

// statusURLOf turns --http (host:port, or an http:// or https:// URL of the
// listener) into the URL of /status.
func statusURLOf(addr string) (string, error) {
	const want = "want host:port or http://host:port"
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return "", errors.New("empty address; " + want)
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return "", errors.New(want)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("scheme %q; %s", u.Scheme, want)
	}
	if u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" ||
		(u.Path != "" && u.Path != "/") {
		return "", errors.New(want)
	}
	if u.Port() == "" {
		return "", errors.New("no port; " + want)
	}
	return u.Scheme + "://" + u.Host + "/status", nil
}

// fetchStatus gets statusURL and returns the document as received and
// decoded. Its errors are one line that names the URL.
func fetchStatus(statusURL string, timeout time.Duration) ([]byte, agent.Status, error) {
	var st agent.Status
	resp, err := getAgent(statusURL, timeout, statusMaxBody+1)
	if err != nil {
		return nil, st, err
	}
	body := resp.body
	if resp.StatusCode != http.StatusOK {
		msg := fmt.Sprintf("the agent at %s answered %s", statusURL, resp.Status)
		if line := firstLine(body, 200); line != "" {
			msg += ": " + line
		}
		return nil, st, errors.New(msg)
	}
	if resp.readErr != nil {
		return nil, st, fmt.Errorf("cannot read the answer of the agent at %s: %v", statusURL, resp.readErr)
	}
	if len(body) > statusMaxBody {
		return nil, st, fmt.Errorf("the agent at %s sent more than %d bytes: not a /status document", statusURL, statusMaxBody)
	}
	if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
		return nil, st, fmt.Errorf("the agent at %s sent bad JSON: not an object: %q", statusURL, firstLine(body, 60))
	}
	// Unknown fields are ignored: the contract lets the agent add some.
	if err := json.Unmarshal(body, &st); err != nil {
		return nil, st, fmt.Errorf("the agent at %s sent bad JSON: %v", statusURL, err)
	}
	if st.State == "" {
		return nil, st, fmt.Errorf("the agent at %s sent JSON without \"state\": not a /status document", statusURL)
	}
	return body, st, nil
}

// firstLine is the first line of b, trimmed and cut to at most n bytes.
func firstLine(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) > n {
		s = s[:n] + "…"
	}
	if strings.ContainsFunc(s, unicode.IsControl) {
		s = strconv.Quote(s)
	}
	return s
}

// statusRow is one row of the members table.
type statusRow struct {
	name     string
	nodeID   uint64
	priority uint16
	addr     string
	status   string
	self     bool
}

// printStatus writes the human view of st: a header block, a blank line,
// and the members table, this node included.
func printStatus(w io.Writer, st agent.Status) {
	var head bytes.Buffer
	tw := tabwriter.NewWriter(&head, 0, 0, 2, ' ', 0)
	printHead(tw, st)
	tw.Flush()

	var table bytes.Buffer
	tw = tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tNODE_ID\tPRIORITY\tADDR\tSTATUS\tLEADER")
	for _, r := range memberRows(st) {
		mark := ""
		if st.LeaderID != 0 && r.nodeID == st.LeaderID {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", cell(r.name), r.nodeID, r.priority, cell(r.addr), cell(r.status), mark)
	}
	tw.Flush()

	var out bytes.Buffer
	out.Write(trimLines(head.Bytes()))
	out.WriteByte('\n')
	out.Write(trimLines(table.Bytes()))
	w.Write(out.Bytes())
}

// printHead writes the header's lines: this node, its state, the leader,
// the cluster, and what applies: quorum, addresses, links, checks, track
// files, fault, conflict.
func printHead(tw io.Writer, st agent.Status) {
	fmt.Fprintf(tw, "node\t%s (node_id %d, priority %d)\n", cell(st.Name), st.NodeID, st.Priority)
	fmt.Fprintf(tw, "state\t%s, term %d\n", cell(st.State), st.Term)
	fmt.Fprintf(tw, "leader\t%s\n", leaderText(st))
	if what, ok := roleTexts[st.Role]; ok {
		fmt.Fprintf(tw, "role\t%s: %s\n", st.Role, what)
	}
	var parts []string
	if st.Cluster != "" {
		parts = append(parts, cell(st.Cluster))
	}
	if st.Transport != "" {
		parts = append(parts, "transport "+cell(st.Transport))
	}
	if st.Algorithm != "" {
		parts = append(parts, "algorithm "+cell(st.Algorithm))
	}
	if len(parts) > 0 {
		fmt.Fprintf(tw, "cluster\t%s\n", strings.Join(parts, ", "))
	}
	if st.Quorum > 0 {
		fmt.Fprintf(tw, "quorum\t%d (a leader needs %d), voted term %d\n", st.Quorum, st.Quorum/2+1, st.VotedTerm)
	}
	if st.Job != nil {
		fmt.Fprintf(tw, "job\t%s\n", jobText(st.Job))
	}
	for _, v := range st.VIPs {
		where := "not on this host"
		if v.Up {
			where = "up on this host"
		}
		fmt.Fprintf(tw, "vip\t%s dev %s, %s\n", cell(v.Address), cell(v.Dev), where)
	}
	if len(st.LinksDown) > 0 {
		fmt.Fprintf(tw, "links down\t%s: this node takes no part in elections until they are up\n", cells(st.LinksDown))
	}
	printChecks(tw, st)
	if st.State == "conflict" {
		who := "another member"
		if len(st.Conflict) > 0 {
			who = cells(st.Conflict)
		}
		fmt.Fprintf(tw, "conflict\t%s: the same node_id %d (or name) as this node, which does not lead until every node_id and name is unique\n",
			who, st.NodeID)
	}
}

// cells is names, each made safe for the terminal, comma-separated.
func cells(names []string) string {
	c := make([]string, len(names))
	for i, n := range names {
		c[i] = cell(n)
	}
	return strings.Join(c, ", ")
}

// memberRows are this node and its members, by election key (priority,
// node_id), largest first; the same key (a conflict) by name, this node
// first.
func memberRows(st agent.Status) []statusRow {
	rows := make([]statusRow, 0, len(st.Members)+1)
	rows = append(rows, statusRow{
		name: st.Name, nodeID: st.NodeID, priority: st.Priority,
		addr: st.GossipAddr, status: withRole(st.State+" (self)", st.Role), self: true,
	})
	for _, m := range st.Members {
		s := m.Status
		if s == "" {
			s = "dead"
			if m.Alive {
				s = "alive"
			}
		}
		rows = append(rows, statusRow{
			name: m.Name, nodeID: m.NodeID, priority: m.Priority, addr: m.Addr, status: withRole(s, m.Role),
		})
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.priority != b.priority {
			return a.priority > b.priority
		}
		if a.nodeID != b.nodeID {
			return a.nodeID > b.nodeID
		}
		if a.self != b.self {
			return a.self
		}
		return a.name < b.name
	})
	return rows
}

// roleTexts say what the roles other than candidate (the default,
// which the header leaves out) mean.
var roleTexts = map[string]string{
	"witness":  "votes in quorum mode, never leads",
	"observer": "follows only, no vote",
}

// withRole adds a role other than candidate to a member's status cell.
func withRole(status, role string) string {
	if role == "" || role == "candidate" {
		return status
	}
	return status + ", " + role
}

// leaderText is the value of the header's leader line.
func leaderText(st agent.Status) string {
	if st.LeaderID == 0 {
		return "none known"
	}
	name := st.LeaderName
	if name == "" && st.LeaderID == st.NodeID {
		name = st.Name
	}
	for _, m := range st.Members {
		if name == "" && m.NodeID == st.LeaderID {
			name = m.Name
		}
	}
	var s string
	if name == "" {
		s = fmt.Sprintf("node_id %d (name not known yet)", st.LeaderID)
	} else {
		s = fmt.Sprintf("%s (node_id %d)", cell(name), st.LeaderID)
	}
	if st.LeaderSince != "" {
		s += " since " + cell(st.LeaderSince)
	}
	return s
}

// cell makes s safe for one cell of a table: "-" when empty, quoted when it
// holds control characters (a tab or newline would break the layout).
func cell(s string) string {
	if s == "" {
		return "-"
	}
	if strings.ContainsFunc(s, unicode.IsControl) {
		return strconv.Quote(s)
	}
	return s
}

// trimLines removes the trailing blanks tabwriter leaves when the last
// cells of a line are empty.
func trimLines(b []byte) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	var out bytes.Buffer
	for _, l := range lines {
		nl := bytes.HasSuffix(l, []byte("\n"))
		out.Write(bytes.TrimRight(l, " \n"))
		if nl {
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}
