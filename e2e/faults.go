//go:build linux

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The network faults. Each is a rule in the input hook of a host's own
// nftables table (inet lanleader_faults, chain input), so it drops packets
// as they arrive from eth0: the fault is where the packet would be
// received, and nothing else of the host is touched (its loopback, where
// the observer reads /status, keeps working). Rules go with their
// namespace when the test bed is torn down; Heal removes them earlier.
//
// netem is not available in every kernel: loss is nftables' numgen
// random, partitions are drops by source address.

const faultTable = "lanleader_faults"

// RequireNFT skips the test when the nft command (nftables) is missing.
func RequireNFT(t TB) {
	t.Helper()
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("e2e: needs the nft command for network faults: install nftables (./test.sh does, as root: apt-get install nftables)")
	}
}

// nft runs an nft script in host i's namespace, bounded in time.
func (n *Net) nft(i int, script string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", n.hosts[i], "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("nft in %s: %v: %s\nscript:\n%s", n.hosts[i], err, strings.TrimSpace(stderr.String()), script)
	}
	return stdout.String(), nil
}

// faultRules adds rules (each a line of nft syntax for the input chain) at
// host i, creating its table on first use.
func (n *Net) faultRules(t TB, i int, rules ...string) {
	t.Helper()
	var b strings.Builder
	n.mu.Lock()
	if n.faults == nil {
		n.faults = make([]bool, len(n.hosts))
	}
	if !n.faults[i] {
		fmt.Fprintf(&b, "table inet %s {\n\tchain input {\n\t\ttype filter hook input priority -10; policy accept;\n\t}\n}\n", faultTable)
	}
	n.mu.Unlock()
	for _, r := range rules {
		fmt.Fprintf(&b, "add rule inet %s input %s\n", faultTable, r)
	}
	if _, err := n.nft(i, b.String()); err != nil {
		t.Fatalf("e2e: %v", err)
	}
	n.mu.Lock()
	n.faults[i] = true
	n.mu.Unlock()
}

func (n *Net) addrSet(hosts []int) string {
	addrs := make([]string, len(hosts))
	for k, h := range hosts {
		addrs[k] = n.Addr(h)
	}
	return "{ " + strings.Join(addrs, ", ") + " }"
}

// Cut drops, at every host of to, every packet that comes from a host of
// from: a one-way partition (from's packets do not reach to; to's still
// reach from). Unicast, multicast and memberlist's TCP alike.
func (n *Net) Cut(t TB, from, to []int) {
	t.Helper()
	RequireNFT(t)
	for _, j := range to {
		n.faultRules(t, j, fmt.Sprintf(`iifname "eth0" ip saddr %s counter drop comment "cut"`, n.addrSet(from)))
	}
}

// Partition cuts a and b apart both ways.
func (n *Net) Partition(t TB, a, b []int) {
	t.Helper()
	n.Cut(t, a, b)
	n.Cut(t, b, a)
}

// Loss drops percent % of the UDP and TCP packets (election, discovery and
// memberlist traffic) that every host of hosts receives, each packet drawn
// independently (nftables' numgen random). A packet between two hosts
// crosses one such rule, at its receiver.
func (n *Net) Loss(t TB, percent int, hosts ...int) {
	t.Helper()
	n.loss(t, "meta l4proto { udp, tcp }", percent, hosts)
}

func (n *Net) loss(t TB, match string, percent int, hosts []int) {
	t.Helper()
	RequireNFT(t)
	if percent < 0 || percent > 100 {
		t.Fatalf("loss: %d%%, want 0 to 100", percent)
	}
	for _, j := range hosts {
		n.faultRules(t, j, fmt.Sprintf(`iifname "eth0" %s numgen random mod 100 < %d counter drop comment "loss"`, match, percent))
	}
}

// LossAll is Loss for every IP packet (VRRP, protocol 112, included), so
// that lanleader and keepalived lose alike.
func (n *Net) LossAll(t TB, percent int, hosts ...int) {
	t.Helper()
	n.loss(t, "meta nfproto { ipv4, ipv6 }", percent, hosts)
}

// Heal removes every fault rule of every host.
func (n *Net) Heal(t TB) {
	t.Helper()
	n.mu.Lock()
	hosts := []int{}
	for i, ok := range n.faults {
		if ok {
			hosts = append(hosts, i)
		}
	}
	n.mu.Unlock()
	for _, i := range hosts {
		if _, err := n.nft(i, fmt.Sprintf("flush chain inet %s input\n", faultTable)); err != nil {
			t.Fatalf("e2e: %v", err)
		}
	}
}

var counterRE = regexp.MustCompile(`counter packets (\d+) bytes \d+`)

// Dropped is the number of packets the fault rules of host i have dropped
// since they were added (0 when it has none): it shows that a fault did
// bite.
func (n *Net) Dropped(i int) (uint64, error) {
	n.mu.Lock()
	has := n.faults != nil && n.faults[i]
	n.mu.Unlock()
	if !has {
		return 0, nil
	}
	out, err := n.nft(i, fmt.Sprintf("list chain inet %s input\n", faultTable))
	if err != nil {
		return 0, err
	}
	var sum uint64
	for _, m := range counterRE.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseUint(m[1], 10, 64)
		sum += v
	}
	return sum, nil
}

// PullCable pulls host i's cable out (pulled) or plugs it back in: the
// bridge's end of the host's veth pair goes down (or up), and the host's
// eth0 loses its carrier (NO-CARRIER: IFF_LOWER_UP clear) while it stays
// up (IFF_UP), as a NIC does whose cable is pulled or whose switch port
// goes down. (SetLink is the other thing: an admin's `ip link set eth0
// down` on the host.) Sends of a host whose cable is out may fail (its
// agent's runs showed a SndbufErrors or two per run of pulls): that is
// the fault the test made, not an overloaded host, so the bed's check of
// send failures only logs such a host's count.
func (n *Net) PullCable(t TB, i int, pulled bool) {
	t.Helper()
	state := "up"
	if pulled {
		state = "down"
	}
	n.mu.Lock()
	if n.pulled == nil {
		n.pulled = map[int]bool{}
	}
	n.pulled[i] = true
	n.mu.Unlock()
	if _, err := n.run(nil, "link", "set", n.hosts[i], state); err != nil {
		t.Fatalf("e2e: cable of host-%d: %v", i+1, err)
	}
}

// Carrier reads host i's eth0 flags: whether it is up (IFF_UP) and has
// carrier (LOWER_UP).
func (n *Net) Carrier(i int) (up, carrier bool, err error) {
	out, err := n.run(nil, "-n", n.hosts[i], "-o", "link", "show", "eth0")
	if err != nil {
		return false, false, err
	}
	open, end := strings.IndexByte(out, '<'), strings.IndexByte(out, '>')
	if open < 0 || end < open {
		return false, false, fmt.Errorf("host-%d: no flags in %q", i+1, out)
	}
	flags := strings.Split(out[open+1:end], ",")
	return slices.Contains(flags, "UP"), slices.Contains(flags, "LOWER_UP"), nil
}
