package udp

// This host's addresses and interfaces: which interface holds the bind
// address, and which address to announce when bound to 0.0.0.0.

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
)

// InterfaceOf returns the interface that holds addr (the loopback
// interface for any address of 127.0.0.0/8, which Linux routes there).
func InterfaceOf(addr netip.Addr) (*net.Interface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	for i := range ifs {
		if addr.Unmap().Is4() && addr.IsLoopback() && ifs[i].Flags&net.FlagLoopback != 0 {
			return &ifs[i], nil
		}
		as, err := ifs[i].Addrs()
		if err != nil {
			continue
		}
		for _, a := range as {
			if p, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(p.IP); ok && ip.Unmap() == addr.Unmap() {
					return &ifs[i], nil
				}
			}
		}
	}
	return nil, nil
}

// HostAddrs lists the addresses of this host, for error messages.
func HostAddrs() []string {
	var out []string
	as, _ := net.InterfaceAddrs()
	for _, a := range as {
		if p, ok := a.(*net.IPNet); ok {
			out = append(out, p.IP.String())
		}
	}
	return out
}

// AdvertiseAddr picks the address an agent bound to all addresses
// announces: an IPv4 address of the interface of the default route, or
// else of the first up, running, multicast-capable, non-loopback
// interface, preferring private ranges.
func AdvertiseAddr() (netip.Addr, *net.Interface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return netip.Addr{}, nil, err
	}
	def := defaultRouteInterface()
	var best netip.Addr
	var bestIf *net.Interface
	rank := func(ifi *net.Interface, ip netip.Addr) int {
		r := 0
		if ifi.Name == def {
			r += 2
		}
		if ip.IsPrivate() {
			r++
		}
		return r
	}
	for i := range ifs {
		f := ifs[i].Flags
		if f&net.FlagUp == 0 || f&net.FlagRunning == 0 || f&net.FlagLoopback != 0 || f&net.FlagMulticast == 0 {
			continue
		}
		as, _ := ifs[i].Addrs()
		for _, a := range as {
			p, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(p.IP)
			if !ok || !ip.Unmap().Is4() || !ip.IsGlobalUnicast() {
				continue
			}
			ip = ip.Unmap()
			if !best.IsValid() || rank(&ifs[i], ip) > rank(bestIf, best) {
				best, bestIf = ip, &ifs[i]
			}
		}
	}
	if !best.IsValid() {
		return best, nil, errors.New("bind: this host has no IPv4 address on an up, multicast-capable interface to announce; set --bind")
	}
	return best, bestIf, nil
}

// defaultRouteInterface is the interface of the IPv4 default route, from
// /proc/net/route ("" when there is none).
func defaultRouteInterface() string {
	b, err := os.ReadFile("/proc/net/route")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 2 && f[1] == "00000000" {
			return f[0]
		}
	}
	return ""
}

// ErrNotOnHost: the bind address is on none of this host's interfaces.
// It may be soon (DHCP, a link that comes up): the agent retries.
var ErrNotOnHost = errors.New("address not on this host")

// ElectionAddr is the address of the election socket and the interface of
// the multicast group, for memberlist's bind address: the bind address
// itself, or with 0.0.0.0 an IPv4 address of the default route's
// interface. An address this host does not have (yet) is ErrNotOnHost.
func ElectionAddr(bind netip.AddrPort) (netip.Addr, *net.Interface, error) {
	ip := bind.Addr().Unmap()
	switch {
	case ip.IsUnspecified() && ip.Is6():
		return ip, nil, fmt.Errorf("bind %v: give an IPv6 agent its address (the IPv4 one is found by itself)", bind.Addr())
	case ip.IsLinkLocalUnicast() && ip.Is6():
		return ip, nil, fmt.Errorf("bind %v: link-local IPv6 addresses are not supported; use a global or unique-local (fd00::/8) address", bind.Addr())
	case ip.IsUnspecified():
		return AdvertiseAddr()
	}
	ifi, err := InterfaceOf(ip)
	if err != nil {
		return ip, nil, fmt.Errorf("bind %v: %w", bind.Addr(), err)
	}
	if ifi == nil {
		return ip, nil, fmt.Errorf("bind %v: %w (it has %s)", bind.Addr(), ErrNotOnHost, strings.Join(HostAddrs(), ", "))
	}
	return ip, ifi, nil
}
