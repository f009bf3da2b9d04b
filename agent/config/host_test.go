package config

import (
	"errors"
	"net"
	"net/netip"
	"testing"
)

// TestBindOnHost: loopback is on every host; an address of the
// documentation range that this host does not have is ErrNotOnHost.
func TestBindOnHost(t *testing.T) {
	c := testConfig()
	c.Bind = "127.0.0.1:0"
	if ip, ifi, err := c.BindOnHost(); err != nil || ip != netip.MustParseAddr("127.0.0.1") || ifi == nil {
		t.Errorf("loopback: %v %v %v", ip, ifi, err)
	}
	c.Bind = absentAddr(t).String() + ":7946"
	if _, _, err := c.BindOnHost(); !errors.Is(err, ErrNotOnHost) {
		t.Errorf("bind %s: %v, want ErrNotOnHost", c.Bind, err)
	}
}

// absentAddr is an address of 192.0.2.0/24 that no interface of this
// host has.
func absentAddr(t *testing.T) netip.Addr {
	t.Helper()
	as, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	have := map[netip.Addr]bool{}
	for _, a := range as {
		if n, ok := a.(*net.IPNet); ok {
			ip, _ := netip.AddrFromSlice(n.IP)
			have[ip.Unmap()] = true
		}
	}
	for i := 254; i > 0; i-- {
		if a := netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}); !have[a] {
			return a
		}
	}
	t.Skip("every address of 192.0.2.0/24 is on this host")
	return netip.Addr{}
}
