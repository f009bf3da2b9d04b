//go:build linux

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// What the user of a virtual address sees. The client host of
// NewNetWithClient runs vipclient (e2e/internal/vipclient), which asks
// the virtual address every millisecond; every agent host runs vipecho
// (e2e/internal/vipecho), which answers on any of its addresses with its
// host's name. So the client's record says, request by request, which
// host held the address and when the answer came; and the client's
// neighbour entry for the address says which host's MAC it sends to.
// The checkers (Outage, Interleavings, LongestGap) are pure functions of
// the record, so vip_test.go shows them on synthetic records without root.

const (
	// VIP is the virtual address of lanleader's VIP tests and benchmark
	// rows (keepalived's in the benchmark is 198.18.0.200): above every
	// host's and the client's address.
	VIP = "198.18.0.100"
	// VIPPrefix is VIP with its prefix: --vip's value.
	VIPPrefix = VIP + "/24"
	// EchoPort is vipecho's port, UDP and TCP.
	EchoPort = 7007
)

// VIPHostName is the name host i's vipecho answers with: host-<i+1>, the
// name the tests and the benchmark give host i's agent.
func VIPHostName(i int) string { return "host-" + strconv.Itoa(i+1) }

var (
	helperMu   sync.Mutex
	helperBins = map[string]string{} // name → path
)

// Helper builds the test bed's helper command e2e/internal/<name>
// (vipecho, vipclient), once per process, next to the lanleader build
// (removed with it by Main or RemoveBinary), and returns its path.
func Helper(name string) (string, error) {
	helperMu.Lock()
	defer helperMu.Unlock()
	if bin, ok := helperBins[name]; ok {
		return bin, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	dir, err := binDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	if err := goBuild(root, "./e2e/internal/"+name, bin); err != nil {
		return "", err
	}
	helperBins[name] = bin
	return bin, nil
}

func mustHelper(t TB, name string) string {
	t.Helper()
	bin, err := Helper(name)
	if err != nil {
		t.Fatalf("e2e: %v", err)
	}
	return bin
}

// StartResponders starts vipecho on every agent host (host i answers with
// VIPHostName(i)) on EchoPort, and waits until each listens.
func (n *Net) StartResponders(t TB) []*Proc {
	t.Helper()
	bin := mustHelper(t, "vipecho")
	procs := make([]*Proc, n.Hosts())
	for i := range procs {
		procs[i] = n.StartProgram(t, i, bin, "-name", VIPHostName(i), "-port", strconv.Itoa(EchoPort))
	}
	for i, p := range procs {
		for try := 0; !strings.Contains(p.Log(), "vipecho: "+VIPHostName(i)+" on port"); try++ {
			if try >= 200 || p.Exited() {
				t.Fatalf("host-%d: vipecho did not start:\n%s", i+1, p.Log())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return procs
}

// Answer is one answer the client heard.
type Answer struct {
	Seq  uint64
	Sent time.Time // the request's send time
	Recv time.Time // the answer's receive time
	From string    // the answering host's name (VIPHostName)
}

// ClientSummary is the last line of a record: the client's totals.
type ClientSummary struct {
	Sent       uint64
	Answers    uint64
	SendErrors uint64
	First      time.Time // the first request's send time
	Last       time.Time
}

// VIPClient is a vipclient running on the client host.
type VIPClient struct {
	Proc *Proc
	Path string // the record

	mu      sync.Mutex
	off     int64
	answers []Answer
	summary *ClientSummary
	bad     []string
}

// StartVIPClient starts vipclient on the client host: it asks
// addr:EchoPort every `every` for at most `run` (then it stops by itself;
// Stop stops it earlier). It is killed at the end of the test if still
// running. addr must be in 198.18.0.0/15.
func (n *Net) StartVIPClient(t TB, addr string, every, run time.Duration) *VIPClient {
	t.Helper()
	c := n.Client()
	if c < 0 {
		t.Fatalf("StartVIPClient: the test bed has no client host (NewNetWithClient makes one)")
	}
	if a, err := netip.ParseAddr(addr); err != nil || !a.Is4() || !benchNet.Contains(a) {
		t.Fatalf("StartVIPClient: %q: the test bed asks only 198.18.0.0/15", addr)
	}
	bin := mustHelper(t, "vipclient")
	path := filepath.Join(t.TempDir(), "answers.jsonl")
	p := n.StartProgram(t, c, bin, "-to", net.JoinHostPort(addr, strconv.Itoa(EchoPort)), "-out", path,
		"-every", every.String(), "-for", run.String())
	return &VIPClient{Proc: p, Path: path}
}

// Answers is every answer recorded so far (the file is read as it grows;
// the client flushes it every 20 ms).
func (c *VIPClient) Answers() []Answer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.read()
	return slices.Clone(c.answers)
}

// AnswersSince is the answers received at or after t, read as Answers
// reads: cheaper than Answers on a long record (the record is in receive
// order: one reader takes the stamps).
func (c *VIPClient) AnswersSince(t time.Time) []Answer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.read()
	k, _ := slices.BinarySearchFunc(c.answers, t, func(a Answer, t time.Time) int { return a.Recv.Compare(t) })
	return slices.Clone(c.answers[k:])
}

// Stop ends the client (SIGTERM), waits for it, and returns its summary
// with every answer.
func (c *VIPClient) Stop() (ClientSummary, []Answer, error) {
	c.Proc.Signal(syscall.SIGTERM)
	if code, err := c.Proc.Wait(10 * time.Second); err != nil || code != 0 {
		return ClientSummary{}, c.Answers(), fmt.Errorf("vipclient: exit %d, %v:\n%s", code, err, tail(c.Proc.Log(), 2048))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.read()
	if c.summary == nil {
		return ClientSummary{}, slices.Clone(c.answers), fmt.Errorf("vipclient: no summary in %s", c.Path)
	}
	if len(c.bad) > 0 {
		return *c.summary, slices.Clone(c.answers), fmt.Errorf("vipclient: %d lines of %s are neither answers nor the summary, the first: %q", len(c.bad), c.Path, c.bad[0])
	}
	return *c.summary, slices.Clone(c.answers), nil
}

// read reads the lines added since the last call. c.mu is held.
func (c *VIPClient) read() {
	readNewLines(c.Path, &c.off, func(line string) {
		a, s, ok := parseClientLine(line)
		switch {
		case !ok:
			c.bad = append(c.bad, line)
		case s != nil:
			c.summary = s
		default:
			c.answers = append(c.answers, a)
		}
	})
}

// ReadClientRecord reads a whole record file: its answers and, when the
// client ended, its summary (nil before).
func ReadClientRecord(path string) ([]Answer, *ClientSummary, error) {
	c := &VIPClient{Path: path}
	if _, err := os.Stat(path); err != nil {
		return nil, nil, err
	}
	c.read()
	if len(c.bad) > 0 {
		return c.answers, c.summary, fmt.Errorf("%s: %d bad lines, the first: %q", path, len(c.bad), c.bad[0])
	}
	return c.answers, c.summary, nil
}

// parseClientLine reads one line of a record: an answer, or the summary
// (s non-nil).
func parseClientLine(line string) (a Answer, s *ClientSummary, ok bool) {
	var v struct {
		Seq     *uint64 `json:"seq"`
		Sent    int64   `json:"sent"`
		Recv    int64   `json:"recv"`
		From    string  `json:"from"`
		Summary *struct {
			Sent       uint64 `json:"sent"`
			Answers    uint64 `json:"answers"`
			SendErrors uint64 `json:"send_errors"`
			First      int64  `json:"first"`
			Last       int64  `json:"last"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(line), &v); err != nil {
		return Answer{}, nil, false
	}
	if v.Summary != nil {
		x := v.Summary
		return Answer{}, &ClientSummary{Sent: x.Sent, Answers: x.Answers, SendErrors: x.SendErrors,
			First: time.Unix(0, x.First), Last: time.Unix(0, x.Last)}, true
	}
	if v.Seq == nil || v.From == "" || v.Sent == 0 || v.Recv == 0 {
		return Answer{}, nil, false
	}
	return Answer{Seq: *v.Seq, Sent: time.Unix(0, v.Sent), Recv: time.Unix(0, v.Recv), From: v.From}, nil, true
}

// byRecv is answers sorted by receive time (the file's order is the
// order of the reads already; sorting makes the checkers take any input).
func byRecv(answers []Answer) []Answer {
	s := slices.Clone(answers)
	slices.SortStableFunc(s, func(a, b Answer) int { return a.Recv.Compare(b.Recv) })
	return s
}

// SentSince is the answers to requests sent at or after t. A host that
// was frozen (SIGSTOP) answers, once thawed, the requests queued in its
// socket before the freeze; those answers say where the address was, not
// where it is, and a move is judged without them.
func SentSince(answers []Answer, t time.Time) []Answer {
	var out []Answer
	for _, a := range answers {
		if !a.Sent.Before(t) {
			out = append(out, a)
		}
	}
	return out
}

// Outage is the time from t0 (a fault) to the first answer from holder
// (the new holder of the address) received after t0; ok is false when
// holder has not answered since.
func Outage(answers []Answer, t0 time.Time, holder string) (d time.Duration, ok bool) {
	for _, a := range byRecv(answers) {
		if a.From == holder && !a.Recv.Before(t0) {
			return a.Recv.Sub(t0), true
		}
	}
	return 0, false
}

// LastAnswer is the last answer from host received before t.
func LastAnswer(answers []Answer, host string, t time.Time) (Answer, bool) {
	var last Answer
	found := false
	for _, a := range byRecv(answers) {
		if !a.Recv.Before(t) {
			break
		}
		if a.From == host {
			last, found = a, true
		}
	}
	return last, found
}

// LongestGap is the longest time in [from, to] without an answer (from
// anyone): the client's longest silence. The edges count: from to the
// first answer, the last answer to to.
func LongestGap(answers []Answer, from, to time.Time) time.Duration {
	prev := from
	var gap time.Duration
	for _, a := range byRecv(answers) {
		if a.Recv.Before(from) {
			continue
		}
		if a.Recv.After(to) {
			break
		}
		gap = max(gap, a.Recv.Sub(prev))
		prev = a.Recv
	}
	return max(gap, to.Sub(prev))
}

// AnswersBy counts the answers received in [from, to) by host name.
func AnswersBy(answers []Answer, from, to time.Time) map[string]int {
	out := map[string]int{}
	for _, a := range answers {
		if !a.Recv.Before(from) && a.Recv.Before(to) {
			out[a.From]++
		}
	}
	return out
}

// Interleavings lists every return to a host after another host answered,
// among the answers received at or after from: the holders' sequence must
// be a run of one host, then a run of the next, and so on (A A B B is a
// move; A B A has the address answered from two hosts at once, or moved
// back and forth). Each entry names the host that returned, when, and the
// host that had answered in between.
func Interleavings(answers []Answer, from time.Time) []string {
	var out []string
	seen := map[string]bool{}
	cur := ""
	for _, a := range byRecv(answers) {
		if a.Recv.Before(from) || a.From == cur {
			continue
		}
		if seen[a.From] && len(out) < maxViolations {
			out = append(out, fmt.Sprintf("%s answered again (seq %d, received %s) after %s had answered",
				a.From, a.Seq, a.Recv.Format("15:04:05.000000"), cur))
		}
		seen[a.From] = true
		cur = a.From
	}
	return out
}

// Holders is the hosts (of hosts; every agent host when none is given)
// whose eth0 has addr, read with `ip -4 -o addr show dev eth0` in each.
func (n *Net) Holders(addr string, hosts ...int) ([]int, error) {
	if len(hosts) == 0 {
		hosts = n.All()
	}
	var out []int
	for _, i := range hosts {
		has, err := n.HasAddr(i, addr)
		if err != nil {
			return out, err
		}
		if has {
			out = append(out, i)
		}
	}
	return out, nil
}

// HasAddr says whether host i's eth0 has addr (any prefix length). It
// asks the kernel from inside the namespace (no process is started: the
// VIP tests' watcher asks every host ten times a second).
func (n *Net) HasAddr(i int, addr string) (bool, error) {
	want, err := netip.ParseAddr(addr)
	if err != nil {
		return false, err
	}
	has := false
	err = inNamespace(n.hosts[i], func() error {
		ifi, err := net.InterfaceByName("eth0")
		if err != nil {
			return err
		}
		addrs, err := ifi.Addrs()
		has = containsAddr(addrs, want)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("%s: %v", n.hosts[i], err)
	}
	return has, nil
}

func containsAddr(addrs []net.Addr, want netip.Addr) bool {
	for _, a := range addrs {
		if p, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(p.IP); ok && ip.Unmap() == want {
				return true
			}
		}
	}
	return false
}

// AddrsOn is every namespace of the test bed (the client's included)
// with addr on any of its interfaces: what a test checks is not left
// behind.
func (n *Net) AddrsOn(addr string) ([]string, error) {
	want, err := netip.ParseAddr(addr)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ns := range n.hosts {
		has := false
		err := inNamespace(ns, func() error {
			addrs, err := net.InterfaceAddrs()
			has = containsAddr(addrs, want)
			return err
		})
		if err != nil {
			return out, fmt.Errorf("%s: %v", ns, err)
		}
		if has {
			out = append(out, ns)
		}
	}
	return out, nil
}

// MAC is host i's eth0 MAC address, as ip prints it (lower case).
func (n *Net) MAC(i int) (string, error) {
	out, err := n.Exec(i, "cat", "/sys/class/net/eth0/address")
	return strings.ToLower(strings.TrimSpace(out)), err
}

// Neighbour is host i's neighbour entry for addr on eth0 (ip neigh show
// ADDR dev eth0): its MAC ("" when it has none, e.g. INCOMPLETE or
// FAILED) and its state (REACHABLE, STALE, …; "" when there is no entry).
func (n *Net) Neighbour(i int, addr string) (mac, state string, err error) {
	out, err := n.run(nil, "-n", n.hosts[i], "-4", "neigh", "show", addr, "dev", "eth0")
	if err != nil {
		return "", "", err
	}
	return parseNeigh(out)
}

// parseNeigh reads ip neigh show's line for one address:
// "198.18.0.100 lladdr 02:..:01 REACHABLE" (with dev given, no "dev").
func parseNeigh(out string) (mac, state string, err error) {
	line := strings.TrimSpace(out)
	if line == "" {
		return "", "", nil
	}
	if strings.Contains(line, "\n") {
		return "", "", fmt.Errorf("ip neigh: more than one entry: %q", out)
	}
	f := strings.Fields(line)
	for k := 0; k < len(f); k++ {
		if f[k] == "lladdr" && k+1 < len(f) {
			mac = strings.ToLower(f[k+1])
			k++
		}
	}
	// The state is the last word, after flags such as "router".
	state = f[len(f)-1]
	return mac, state, nil
}

// NeighbourHost is the agent host whose eth0 has the MAC of host i's
// neighbour entry for addr: -1 when the entry has no MAC or another host's
// (the client's own, say), with the MAC and state.
func (n *Net) NeighbourHost(i int, addr string) (host int, mac, state string, err error) {
	mac, state, err = n.Neighbour(i, addr)
	if err != nil || mac == "" {
		return -1, mac, state, err
	}
	for h := range n.Hosts() {
		m, err := n.MAC(h)
		if err != nil {
			return -1, mac, state, err
		}
		if m == mac {
			return h, mac, state, nil
		}
	}
	return -1, mac, state, nil
}

// AskTCP connects from host i to addr:EchoPort, reads vipecho's line and
// returns it (the answering host's name): the address answers TCP too.
// Only 198.18.0.0/15 is asked.
func (n *Net) AskTCP(i int, addr string) (string, error) {
	a, err := netip.ParseAddr(addr)
	if err != nil || !a.Is4() || !benchNet.Contains(a) {
		return "", fmt.Errorf("AskTCP %q: the test bed asks only 198.18.0.0/15", addr)
	}
	var line string
	err = inNamespace(n.hosts[i], func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp4", net.JoinHostPort(addr, strconv.Itoa(EchoPort)))
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		line, err = bufio.NewReader(c).ReadString('\n')
		return err
	})
	return strings.TrimSpace(line), err
}

// NamespacePids is the processes in host i's namespace (ip netns pids).
func (n *Net) NamespacePids(i int) ([]int, error) {
	out, err := n.run(nil, "netns", "pids", n.hosts[i])
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(out) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// Freeze stops host i as a whole: every process of its namespace gets
// SIGSTOP (by pid) and its bridge port goes down, so nothing it had
// queued leaves and nothing reaches it. Thaw undoes it; the test bed's
// cleanup kills the frozen processes anyway (SIGKILL ends a stopped
// process). It returns the pids it stopped.
func (n *Net) Freeze(t TB, i int) []int {
	t.Helper()
	pids, err := n.NamespacePids(i)
	if err != nil {
		t.Fatalf("e2e: %v", err)
	}
	for _, pid := range pids {
		if pid > 1 && pid != os.Getpid() {
			syscall.Kill(pid, syscall.SIGSTOP)
		}
	}
	n.ip(t, "link", "set", n.hosts[i], "down")
	return pids
}

// Thaw brings host i back from Freeze: its bridge port up, then SIGCONT
// to every process of its namespace.
func (n *Net) Thaw(t TB, i int) {
	t.Helper()
	n.ip(t, "link", "set", n.hosts[i], "up")
	pids, err := n.NamespacePids(i)
	if err != nil {
		t.Fatalf("e2e: %v", err)
	}
	for _, pid := range pids {
		if pid > 1 && pid != os.Getpid() {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	}
}

// SetLink sets host i's eth0 up or down, from inside its namespace (the
// agent sees its interface lose its link).
func (n *Net) SetLink(t TB, i int, up bool) {
	t.Helper()
	state := "down"
	if up {
		state = "up"
	}
	n.ip(t, "-n", n.hosts[i], "link", "set", "eth0", state)
}

// VIPFlagSupported says whether the lanleader binary at bin knows --vip:
// `run --vip VIPPrefix -h` prints the help (exit 0) when it does, and
// "unknown flag --vip" (exit 2) when it does not. Nothing is started.
func VIPFlagSupported(bin string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "run", "--vip", VIPPrefix, "-h").CombinedOutput()
	if strings.Contains(string(out), "unknown flag --vip") {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s run --vip %s -h: %v: %s", bin, VIPPrefix, err, tail(string(out), 512))
	}
	return true, nil
}

// ErrNoVIPFlag is what a test or benchmark row reports when the lanleader
// under test has no --vip.
var ErrNoVIPFlag = errors.New("lanleader has no --vip: the built binary's run does not know the flag (the VIP tests and rows wait for it)")

// RequireVIP skips the test when the lanleader under test has no --vip.
func RequireVIP(t TB) {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatalf("e2e: %v", err)
	}
	ok, err := VIPFlagSupported(bin)
	if err != nil {
		t.Fatalf("e2e: %v", err)
	}
	if !ok {
		t.Skip("e2e: " + ErrNoVIPFlag.Error())
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
