// Package absentaddr finds, for a test, an address of the documentation
// range 192.0.2.0/24 that no interface of this host has: an address a
// configuration may name and the host lacks. Nothing is ever sent to it.
package absentaddr

import (
	"net"
	"net/netip"
	"testing"
)

// Get is an address of 192.0.2.0/24 that no interface of this host has;
// the test is skipped when the host has them all.
func Get(tb testing.TB) netip.Addr {
	tb.Helper()
	as, err := net.InterfaceAddrs()
	if err != nil {
		tb.Fatal(err)
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
	tb.Skip("every address of 192.0.2.0/24 is on this host")
	return netip.Addr{}
}
