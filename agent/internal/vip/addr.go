package vip

import (
	"fmt"
	"net/netip"
	"strings"
)

// Addr is one virtual address: an address with its prefix length, on an
// interface.
type Addr struct {
	Prefix netip.Prefix // 192.0.2.100/24, 2001:db8::100/64; the address itself, not masked
	Dev    string       // the interface's name; "" until resolved (see Parse)
}

// String is the flag's form, ADDR/PREFIX,dev=IFACE (ADDR/PREFIX while Dev
// is "").
func (a Addr) String() string {
	if a.Dev == "" {
		return a.Prefix.String()
	}
	return a.Prefix.String() + ",dev=" + a.Dev
}

// maxDevLen is the longest interface name Linux takes (IFNAMSIZ-1).
const maxDevLen = 15

// Parse parses the flag's (and the YAML list's) form,
// ADDR/PREFIX[,dev=IFACE]. Without dev=, Dev is "" and the caller sets the
// bind address's interface. The prefix keeps the address as written
// (192.0.2.100/24, not 192.0.2.0/24). The address must be one a host can
// hold: not a network or broadcast address of its IPv4 prefix (shorter
// than /31, or the subnet-router anycast address of its IPv6 prefix), not
// multicast, loopback, unspecified or link-local. The error
// names what is wrong (not the flag).
func Parse(s string) (Addr, error) {
	if strings.TrimSpace(s) == "" {
		return Addr{}, fmt.Errorf("vip: empty address (want ADDR/PREFIX[,dev=IFACE])")
	}
	head, opts, _ := strings.Cut(s, ",")
	var a Addr
	if opts != "" || strings.HasSuffix(s, ",") {
		for _, o := range strings.Split(opts, ",") {
			k, v, ok := strings.Cut(o, "=")
			switch {
			case !ok || k != "dev":
				return Addr{}, fmt.Errorf("vip: %q: unknown option %q (only dev=IFACE)", s, o)
			case a.Dev != "":
				return Addr{}, fmt.Errorf("vip: %q: dev= given twice", s)
			case v == "":
				return Addr{}, fmt.Errorf("vip: %q: empty dev=", s)
			case len(v) > maxDevLen || strings.ContainsAny(v, "/ \t\n:"):
				return Addr{}, fmt.Errorf("vip: %q: %q is not an interface name", s, v)
			}
			a.Dev = v
		}
	}
	as, bs, ok := strings.Cut(head, "/")
	if !ok {
		return Addr{}, fmt.Errorf("vip: %q: no prefix length (want ADDR/PREFIX, e.g. 192.0.2.100/24)", s)
	}
	ip, err := netip.ParseAddr(as)
	if err != nil {
		return Addr{}, fmt.Errorf("vip: %q: %q is not an IP address", s, as)
	}
	if ip.Zone() != "" {
		return Addr{}, fmt.Errorf("vip: %q: an address with a zone is link-local: not for a virtual address", s)
	}
	if ip.Is4In6() {
		return Addr{}, fmt.Errorf("vip: %q: an IPv4-mapped IPv6 address: write the IPv4 address", s)
	}
	bits, ok := parseBits(bs)
	if !ok || bits < 1 || bits > ip.BitLen() {
		return Addr{}, fmt.Errorf("vip: %q: bad prefix length %q (1 to %d for IPv%d)", s, bs, ip.BitLen(), family(ip))
	}
	p := netip.PrefixFrom(ip, bits)
	if why := notHost(p); why != "" {
		return Addr{}, fmt.Errorf("vip: %q: %s, not a host's address", s, why)
	}
	a.Prefix = p
	return a, nil
}

// parseBits reads a prefix length: decimal digits only, no sign, no
// leading zero.
func parseBits(s string) (int, bool) {
	if s == "" || len(s) > 3 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func family(ip netip.Addr) int {
	if ip.Is4() {
		return 4
	}
	return 6
}

// notHost says why p's address cannot be a host's unicast address, or ""
// when it can.
func notHost(p netip.Prefix) string {
	ip := p.Addr()
	switch {
	case ip.IsUnspecified():
		return "the unspecified address"
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsMulticast():
		return "a multicast address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address"
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "the broadcast address"
	}
	if ip.Is4() && p.Bits() < 31 {
		if ip == p.Masked().Addr() {
			return fmt.Sprintf("the network address of %s", p.Masked())
		}
		if ip == lastAddr(p) {
			return fmt.Sprintf("the broadcast address of %s", p.Masked())
		}
	}
	if ip.Is6() && p.Bits() < 127 && ip == p.Masked().Addr() {
		return fmt.Sprintf("the subnet-router anycast address of %s", p.Masked())
	}
	return ""
}

// lastAddr is the highest address of the IPv4 prefix p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]) | host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
