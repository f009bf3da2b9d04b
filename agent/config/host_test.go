package config

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/lanleader/lanleader/internal/absentaddr"
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// TestVIPSubnetWarning: a virtual address outside every subnet of its
// interface's own addresses of its family is warned of, with them; one
// inside any of them is not.
func TestVIPSubnetWarning(t *testing.T) {
	for _, tc := range []struct {
		vip   string
		addrs []netip.Prefix
		want  string
	}{
		{"192.0.2.100/24", prefixes("192.0.2.5/24"), ""},
		{"192.0.2.100/32", prefixes("192.0.2.5/24"), ""},                    // a host route of the subnet
		{"192.0.2.100/24", prefixes("198.51.100.5/24", "192.0.2.5/25"), ""}, // the second address's subnet
		{"10.9.9.9/8", prefixes("198.51.100.5/24"),
			"vip 10.9.9.9/8: not in a subnet of eth0 (198.51.100.5/24): neighbours will not reach it by ARP unless routed"},
		{"192.0.2.200/24", prefixes("192.0.2.5/25", "2001:db8::5/64"),
			"vip 192.0.2.200/24: not in a subnet of eth0 (192.0.2.5/25): neighbours will not reach it by ARP unless routed"},
		{"192.0.2.100/24", prefixes("198.51.100.5/24", "198.51.100.6/24"),
			"vip 192.0.2.100/24: not in a subnet of eth0 (198.51.100.5/24, 198.51.100.6/24): neighbours will not reach it by ARP unless routed"},
		{"192.0.2.100/24", prefixes("2001:db8::5/64"),
			"vip 192.0.2.100/24: not in a subnet of eth0 (no IPv4 address): neighbours will not reach it by ARP unless routed"},
		// The address itself on the interface (held now) is not a subnet.
		{"192.0.2.100/24", prefixes("192.0.2.100/24", "198.51.100.5/24"),
			"vip 192.0.2.100/24: not in a subnet of eth0 (198.51.100.5/24): neighbours will not reach it by ARP unless routed"},
		{"2001:db8::100/64", prefixes("2001:db8::5/64", "fe80::1/64"), ""},
		{"2001:db8:1::100/64", prefixes("fe80::1/64", "192.0.2.5/24"),
			"vip 2001:db8:1::100/64: not in a subnet of eth0 (no global IPv6 address): neighbours will not reach it by neighbour discovery unless routed"},
	} {
		if got := VIPSubnetWarning(netip.MustParsePrefix(tc.vip), "eth0", tc.addrs); got != tc.want {
			t.Errorf("%s on %v: %q, want %q", tc.vip, tc.addrs, got, tc.want)
		}
	}
}

// TestVIPWarnings: the addresses go on their dev=, or on the bind
// address's interface; the loopback interface holds 127.0.0.1/8 only.
func TestVIPWarnings(t *testing.T) {
	lo := loopback(t)
	c := testConfig()
	c.Bind = "127.0.0.1:0"
	c.VIPs = []VIP{{Prefix: netip.MustParsePrefix("192.0.2.100/24")}, {Prefix: netip.MustParsePrefix("198.51.100.7/24"), Dev: lo}}
	got := c.VIPWarnings()
	want := []string{
		"vip 192.0.2.100/24: not in a subnet of " + lo + " (127.0.0.1/8): neighbours will not reach it by ARP unless routed",
		"vip 198.51.100.7/24: not in a subnet of " + lo + " (127.0.0.1/8): neighbours will not reach it by ARP unless routed",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings %q, want %q", got, want)
	}
	c.VIPs = nil
	if w := c.VIPWarnings(); w != nil {
		t.Errorf("no VIP: %q", w)
	}
}

// TestBindOnHost: loopback is on every host; an address of the
// documentation range that this host does not have is ErrNotOnHost.
func TestBindOnHost(t *testing.T) {
	c := testConfig()
	c.Bind = "127.0.0.1:0"
	if ip, ifi, err := c.BindOnHost(); err != nil || ip != netip.MustParseAddr("127.0.0.1") || ifi == nil {
		t.Errorf("loopback: %v %v %v", ip, ifi, err)
	}
	c.Bind = absentaddr.Get(t).String() + ":7946"
	if _, _, err := c.BindOnHost(); !errors.Is(err, ErrNotOnHost) {
		t.Errorf("bind %s: %v, want ErrNotOnHost", c.Bind, err)
	}
}

// loopback is the name of the loopback interface.
func loopback(t *testing.T) string {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback != 0 {
			return i.Name
		}
	}
	t.Skip("no loopback interface")
	return ""
}
