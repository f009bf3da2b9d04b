package config

// What this host says of a configuration that Validate accepts: whether
// the bind address is on it now, and whether each virtual address falls
// in a subnet of the interface it goes on. Validate reads neither (a
// configuration is checked before its host is ready); `lanleader
// check-config` and the start of `lanleader run` ask these. They read the
// interfaces' addresses and send nothing.

import (
	"cmp"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/lanleader/lanleader/agent/internal/udp"
)

// ErrNotOnHost is in the chain of BindOnHost's error when the bind
// address is on none of this host's interfaces (yet): the agent's start
// waits StartTimeout for it (a DHCP lease, a link coming up), then fails
// with agent.ErrNotReady.
var ErrNotOnHost = udp.ErrNotOnHost

// BindOnHost is the address the election socket would bind and its
// interface: the bind address, or with 0.0.0.0 the IPv4 address the agent
// announces. Its error has ErrNotOnHost in its chain when the address is
// not on this host now; another error is one the start refuses at once.
func (c *Config) BindOnHost() (netip.Addr, *net.Interface, error) {
	bind, err := c.BindAddrPort()
	if err != nil {
		return netip.Addr{}, nil, err
	}
	return udp.ElectionAddr(bind)
}

// VIPWarnings are the warnings of the virtual addresses outside every
// subnet of the interface they go on (dev=, or the bind address's
// interface, as the agent's start picks it): see VIPSubnetWarning. An
// interface that cannot be read is left to the start, which says why.
func (c *Config) VIPWarnings() []string {
	if len(c.VIPs) == 0 {
		return nil
	}
	dev := ""
	if _, ifi, err := c.BindOnHost(); err == nil && ifi != nil {
		dev = ifi.Name
	}
	var w []string
	for _, v := range c.VIPs {
		name := cmp.Or(v.Dev, dev)
		if name == "" {
			continue
		}
		ifi, err := net.InterfaceByName(name)
		if err != nil {
			continue
		}
		as, err := ifi.Addrs()
		if err != nil {
			continue
		}
		var own []netip.Prefix
		for _, a := range as {
			if n, ok := a.(*net.IPNet); ok {
				ip, _ := netip.AddrFromSlice(n.IP)
				ones, _ := n.Mask.Size()
				p := netip.PrefixFrom(ip.Unmap(), ones)
				// A virtual address held now (or left by an earlier
				// run) is not the interface's own.
				if !slices.ContainsFunc(c.VIPs, func(v VIP) bool { return v.Prefix.Addr() == p.Addr() }) {
					own = append(own, p)
				}
			}
		}
		if s := VIPSubnetWarning(v.Prefix, name, own); s != "" {
			w = append(w, s)
		}
	}
	return w
}

// VIPSubnetWarning is the warning of the virtual address vip on the
// interface dev whose addresses are ifAddrs, "" when vip is in the subnet
// of one of them (of its IP family; IPv6 link-local ones do not count).
// Outside every subnet the neighbours do not ask for it (ARP, neighbour
// discovery): they send to their router, which reaches it only if it
// routes that address to this LAN.
func VIPSubnetWarning(vip netip.Prefix, dev string, ifAddrs []netip.Prefix) string {
	a := vip.Addr()
	var same []string
	for _, p := range ifAddrs {
		if p.Addr().Is4() != a.Is4() || p.Addr() == a || (a.Is6() && p.Addr().IsLinkLocalUnicast()) {
			continue
		}
		if p.Masked().Contains(a) {
			return ""
		}
		same = append(same, p.String())
	}
	has, by := strings.Join(same, ", "), "ARP"
	if a.Is6() {
		by = "neighbour discovery"
	}
	if len(same) == 0 {
		has = "no IPv4 address"
		if a.Is6() {
			has = "no global IPv6 address"
		}
	}
	return fmt.Sprintf("vip %v: not in a subnet of %s (%s): neighbours will not reach it by %s unless routed", vip, dev, has, by)
}
