package vip

import (
	"net/netip"
	"testing"
)

func TestParse(t *testing.T) {
	good := []struct {
		in   string
		want Addr
	}{
		{"198.18.0.100/24", Addr{Prefix: netip.MustParsePrefix("198.18.0.100/24")}},
		{"198.18.0.100/24,dev=eth0", Addr{Prefix: netip.MustParsePrefix("198.18.0.100/24"), Dev: "eth0"}},
		{"198.18.0.1/32,dev=br-lan.20", Addr{Prefix: netip.MustParsePrefix("198.18.0.1/32"), Dev: "br-lan.20"}},
		{"198.18.0.0/31", Addr{Prefix: netip.MustParsePrefix("198.18.0.0/31")}}, // RFC 3021: both are hosts
		{"198.18.0.1/31", Addr{Prefix: netip.MustParsePrefix("198.18.0.1/31")}},
		{"198.19.255.254/15", Addr{Prefix: netip.MustParsePrefix("198.19.255.254/15")}},
		{"2001:db8::100/64,dev=veth0", Addr{Prefix: netip.MustParsePrefix("2001:db8::100/64"), Dev: "veth0"}},
		{"2001:db8::1/128", Addr{Prefix: netip.MustParsePrefix("2001:db8::1/128")}},
		{"2001:DB8::A/64", Addr{Prefix: netip.MustParsePrefix("2001:db8::a/64")}},
	}
	for _, c := range good {
		got, err := Parse(c.in)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		if got.Prefix != c.want.Prefix || got.Prefix.Addr() != c.want.Prefix.Addr() {
			t.Errorf("Parse(%q): the prefix lost its address: %v", c.in, got.Prefix)
		}
	}

	bad := []struct{ in, err string }{
		{"", `vip: empty address (want ADDR/PREFIX[,dev=IFACE])`},
		{"198.18.0.100", `vip: "198.18.0.100": no prefix length (want ADDR/PREFIX, e.g. 192.0.2.100/24)`},
		{"198.18.0.100,dev=eth0", `vip: "198.18.0.100,dev=eth0": no prefix length (want ADDR/PREFIX, e.g. 192.0.2.100/24)`},
		{"198.18.0.100/", `vip: "198.18.0.100/": bad prefix length "" (1 to 32 for IPv4)`},
		{"198.18.0.100/33", `vip: "198.18.0.100/33": bad prefix length "33" (1 to 32 for IPv4)`},
		{"198.18.0.100/0", `vip: "198.18.0.100/0": bad prefix length "0" (1 to 32 for IPv4)`},
		{"198.18.0.100/024", `vip: "198.18.0.100/024": bad prefix length "024" (1 to 32 for IPv4)`},
		{"198.18.0.100/+24", `vip: "198.18.0.100/+24": bad prefix length "+24" (1 to 32 for IPv4)`},
		{"198.18.0.100/255.255.255.0", `vip: "198.18.0.100/255.255.255.0": bad prefix length "255.255.255.0" (1 to 32 for IPv4)`},
		{"2001:db8::1/129", `vip: "2001:db8::1/129": bad prefix length "129" (1 to 128 for IPv6)`},
		{"198.18.0.x/24", `vip: "198.18.0.x/24": "198.18.0.x" is not an IP address`},
		{"host-a/24", `vip: "host-a/24": "host-a" is not an IP address`},
		{"198.18.0.0/24", `vip: "198.18.0.0/24": the network address of 198.18.0.0/24, not a host's address`},
		{"198.18.0.255/24", `vip: "198.18.0.255/24": the broadcast address of 198.18.0.0/24, not a host's address`},
		{"198.18.0.127/25", `vip: "198.18.0.127/25": the broadcast address of 198.18.0.0/25, not a host's address`},
		{"198.18.0.0/30", `vip: "198.18.0.0/30": the network address of 198.18.0.0/30, not a host's address`},
		{"255.255.255.255/32", `vip: "255.255.255.255/32": the broadcast address, not a host's address`},
		{"224.0.0.18/32", `vip: "224.0.0.18/32": a multicast address, not a host's address`},
		{"239.255.0.1/16", `vip: "239.255.0.1/16": a multicast address, not a host's address`},
		{"127.0.0.2/8", `vip: "127.0.0.2/8": a loopback address, not a host's address`},
		{"0.0.0.0/8", `vip: "0.0.0.0/8": the unspecified address, not a host's address`},
		{"169.254.1.1/16", `vip: "169.254.1.1/16": a link-local address, not a host's address`},
		{"::/64", `vip: "::/64": the unspecified address, not a host's address`},
		{"::1/128", `vip: "::1/128": a loopback address, not a host's address`},
		{"ff02::1/64", `vip: "ff02::1/64": a multicast address, not a host's address`},
		{"fe80::1/64", `vip: "fe80::1/64": a link-local address, not a host's address`},
		{"2001:db8::/64", `vip: "2001:db8::/64": the subnet-router anycast address of 2001:db8::/64, not a host's address`},
		{"fe80::1%eth0/64", `vip: "fe80::1%eth0/64": an address with a zone is link-local: not for a virtual address`},
		{"::ffff:198.18.0.1/120", `vip: "::ffff:198.18.0.1/120": an IPv4-mapped IPv6 address: write the IPv4 address`},
		{"198.18.0.100/24,", `vip: "198.18.0.100/24,": unknown option "" (only dev=IFACE)`},
		{"198.18.0.100/24,dev", `vip: "198.18.0.100/24,dev": unknown option "dev" (only dev=IFACE)`},
		{"198.18.0.100/24,iface=eth0", `vip: "198.18.0.100/24,iface=eth0": unknown option "iface=eth0" (only dev=IFACE)`},
		{"198.18.0.100/24,dev=eth0,label=x", `vip: "198.18.0.100/24,dev=eth0,label=x": unknown option "label=x" (only dev=IFACE)`},
		{"198.18.0.100/24,dev=", `vip: "198.18.0.100/24,dev=": empty dev=`},
		{"198.18.0.100/24,dev=a,dev=b", `vip: "198.18.0.100/24,dev=a,dev=b": dev= given twice`},
		{"198.18.0.100/24,dev=averyverylongname", `vip: "198.18.0.100/24,dev=averyverylongname": "averyverylongname" is not an interface name`},
		{"198.18.0.100/24,dev=eth 0", `vip: "198.18.0.100/24,dev=eth 0": "eth 0" is not an interface name`},
	}
	for _, c := range bad {
		got, err := Parse(c.in)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want the error %s", c.in, got, c.err)
			continue
		}
		if err.Error() != c.err {
			t.Errorf("Parse(%q):\n got %s\nwant %s", c.in, err, c.err)
		}
	}
}

func TestAddrString(t *testing.T) {
	for _, s := range []string{"198.18.0.100/24,dev=eth0", "2001:db8::100/64,dev=veth0", "198.18.0.100/24"} {
		a, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if a.String() != s {
			t.Errorf("Parse(%q).String() = %q", s, a.String())
		}
		b, err := Parse(a.String())
		if err != nil || b != a {
			t.Errorf("Parse(%q) = %v, %v; want %v", a.String(), b, err, a)
		}
	}
}
