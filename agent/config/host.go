package config

// What this host says of a configuration that Validate accepts: whether
// the bind address is on it now. Validate does not read it (a
// configuration is checked before its host is ready); `lanleader
// check-config` asks it. It reads the interfaces' addresses and sends
// nothing.

import (
	"net"
	"net/netip"

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
