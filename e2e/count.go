//go:build linux

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// Packets counts the frames that enter the test bed's bridge from its
// hosts, each once however many hosts it is then flooded to: what was on
// the wire. The counts are of one nftables table of the bridge family in
// this process's namespace (the bridge's), named after the bridge.
type Packets struct {
	Election  uint64 // to the election port (7947), but heartbeats and beacons: ELECTION, ANSWER, COORDINATOR, RESIGN, …
	Heartbeat uint64 // HEARTBEAT (type 4) to the election port
	Discover  uint64 // DISCOVER beacons (type 7) to the election port
	Gossip    uint64 // memberlist, UDP and TCP, to or from port 7946
	VRRP      uint64 // VRRP (IP protocol 112): keepalived's, for the benchmark's comparison
}

// Sub is p − q, counter by counter.
func (p Packets) Sub(q Packets) Packets {
	return Packets{p.Election - q.Election, p.Heartbeat - q.Heartbeat, p.Discover - q.Discover, p.Gossip - q.Gossip, p.VRRP - q.VRRP}
}

var packetCounters = []string{"election", "heartbeat", "discover", "gossip", "vrrp"}

func (n *Net) countTable() string { return strings.ReplaceAll(n.bridge, "-", "_") }

// CountPackets starts counting the packets on the bridge (see Packets);
// the counters go when the test bed is torn down.
func (n *Net) CountPackets(t TB) {
	t.Helper()
	RequireNFT(t)
	tbl := n.countTable()
	// The type is the 4th byte of an election packet (wire/message.go),
	// after the 8-byte UDP header: bits 88 to 95 of the transport header.
	script := fmt.Sprintf(`table bridge %s {
	counter election {}
	counter heartbeat {}
	counter discover {}
	counter gossip {}
	counter vrrp {}
	chain pre {
		type filter hook prerouting priority 0; policy accept;
		udp dport 7947 @th,88,8 4 counter name "heartbeat" accept
		udp dport 7947 @th,88,8 7 counter name "discover" accept
		udp dport 7947 counter name "election" accept
		meta l4proto { udp, tcp } th dport 7946 counter name "gossip" accept
		meta l4proto { udp, tcp } th sport 7946 counter name "gossip" accept
		ip protocol vrrp counter name "vrrp" accept
	}
}
`, tbl)
	if _, err := rootNFT(script); err != nil {
		t.Fatalf("e2e: %v", err)
	}
	n.mu.Lock()
	n.counting = true
	n.mu.Unlock()
}

var namedCounterRE = regexp.MustCompile(`counter (\w+) \{\s*packets (\d+) bytes \d+`)

// Packets reads the counters CountPackets set up.
func (n *Net) Packets() (Packets, error) {
	out, err := rootNFT(fmt.Sprintf("list counters table bridge %s\n", n.countTable()))
	if err != nil {
		return Packets{}, err
	}
	var p Packets
	found := 0
	for _, m := range namedCounterRE.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseUint(m[2], 10, 64)
		switch m[1] {
		case "election":
			p.Election = v
		case "heartbeat":
			p.Heartbeat = v
		case "discover":
			p.Discover = v
		case "gossip":
			p.Gossip = v
		case "vrrp":
			p.VRRP = v
		default:
			continue
		}
		found++
	}
	if found != len(packetCounters) {
		return p, fmt.Errorf("nft list counters of %s: %d counters, want %d:\n%s", n.countTable(), found, len(packetCounters), out)
	}
	return p, nil
}

// deleteCountTable removes the bridge's counters, if any.
func deleteCountTable(table string) error {
	out, err := rootNFT("list tables bridge\n")
	if err != nil || !strings.Contains(out, "table bridge "+table+"\n") {
		return err
	}
	_, err = rootNFT(fmt.Sprintf("delete table bridge %s\n", table))
	return err
}

// rootNFT runs an nft script in this process's namespace, bounded in
// time.
func rootNFT(script string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("nft: %v: %s\nscript:\n%s", err, strings.TrimSpace(stderr.String()), script)
	}
	return stdout.String(), nil
}

// staleCountTables is the tables of bridge counters that test processes
// which no longer run left behind.
func staleCountTables() []string {
	if _, err := exec.LookPath("nft"); err != nil {
		return nil
	}
	out, err := rootNFT("list tables bridge\n")
	if err != nil {
		return nil
	}
	var left []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l) // "table bridge llt_br1234a"
		if len(f) == 3 && stale(strings.ReplaceAll(f[2], "_", "-")) {
			left = append(left, f[2])
		}
	}
	return left
}

// CountLines counts the lines of the file at path for which keep is true
// (every line with a nil keep): a job's record of its starts, say. A file
// that does not exist has none.
func CountLines(path string, keep func(line string) bool) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	for s := bufio.NewScanner(f); s.Scan(); {
		if keep == nil || keep(s.Text()) {
			n++
		}
	}
	return n
}
