//go:build linux

package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// SendFailures is, by host, how many UDP sends its kernel dropped for want
// of a buffer since its namespace was made: the Udp SndbufErrors counter
// of the namespace's /proc/net/snmp. Such a send returns no error to the
// agent (UDP reports ENOBUFS only to sockets with IP_RECVERR), so a full
// neighbour table (see neigh.go) or a flooded queue shows only here. A
// bed is healthy when every count is 0: the test bed checks it when it is
// torn down and fails the test otherwise.
func (n *Net) SendFailures() ([]uint64, error) {
	out := make([]uint64, len(n.hosts))
	for i, ns := range n.hosts {
		err := inNamespace(ns, func() error {
			b, err := os.ReadFile("/proc/thread-self/net/snmp")
			if err != nil {
				return err
			}
			out[i], err = sndbufErrors(string(b))
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("host-%d: %v", i+1, err)
		}
	}
	return out, nil
}

// sndbufErrors reads the Udp SndbufErrors counter of a /proc/net/snmp:
// a line of names, then one of values, both starting "Udp:".
func sndbufErrors(snmp string) (uint64, error) {
	var names []string
	for _, line := range strings.Split(snmp, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "Udp:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		for k, name := range names {
			if name == "SndbufErrors" && k < len(f) {
				return strconv.ParseUint(f[k], 10, 64)
			}
		}
		break
	}
	return 0, fmt.Errorf("/proc/net/snmp: no Udp SndbufErrors counter")
}

// checkSendFailures fails the test when a host's sends failed (see
// SendFailures), naming the hosts and counts; a host whose cable the test
// pulled (PullCable) is only logged.
func (n *Net) checkSendFailures() {
	counts, err := n.SendFailures()
	if err != nil { // a bed whose making failed: the test failed already
		n.t.Logf("e2e: reading the hosts' send failures: %v", err)
		return
	}
	n.mu.Lock()
	for i := range counts {
		if n.pulled[i] && counts[i] > 0 {
			n.t.Logf("e2e: host-%d, whose cable was pulled, had %d UDP sends dropped (SndbufErrors)", i+1, counts[i])
			counts[i] = 0
		}
	}
	n.mu.Unlock()
	if bad := sendFailureText(counts); bad != "" {
		n.t.Errorf("e2e: the kernel dropped UDP sends of the test bed for want of buffers (SndbufErrors: %s): "+
			"a full neighbour table (net.ipv4.neigh.default.gc_thresh3) or an overloaded host; the bed's results are not valid", bad)
	}
}

// sendFailureText lists the hosts whose count is not 0 ("host-3 12,
// host-7 1"), "" when none.
func sendFailureText(counts []uint64) string {
	var bad []string
	for i, c := range counts {
		if c > 0 {
			bad = append(bad, fmt.Sprintf("host-%d %d", i+1, c))
		}
	}
	return strings.Join(bad, ", ")
}
