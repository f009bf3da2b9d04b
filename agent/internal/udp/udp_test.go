package udp

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

// Send reaches its destination from every kind of socket Open makes: an
// IPv4 one, an IPv6 one, and the dual-stack one of a wildcard bind (an
// AF_INET6 socket, to which an IPv4 destination goes v4-mapped), with the
// TTL of a link-local packet.
func TestSendFamilies(t *testing.T) {
	for _, c := range []struct{ bind, dst string }{
		{"127.0.0.1:0", "127.0.0.1"},
		{"0.0.0.0:0", "127.0.0.1"},
		{"[::1]:0", "::1"},
		{"[::]:0", "::1"},
	} {
		t.Run(c.bind+"→"+c.dst, func(t *testing.T) {
			rx, err := Open(netip.AddrPortFrom(netip.MustParseAddr(c.dst), 0), netip.Addr{}, nil)
			if err != nil {
				t.Skipf("no %s here: %v", c.dst, err)
			}
			defer rx.Close()
			tx, err := Open(netip.MustParseAddrPort(c.bind), netip.Addr{}, nil)
			if err != nil {
				t.Skipf("cannot bind %s here: %v", c.bind, err)
			}
			defer tx.Close()
			if err := tx.Send([]byte("hello"), rx.Local); err != nil {
				t.Fatalf("send to %v: %v", rx.Local, err)
			}
			deadline := time.Now().Add(5 * time.Second) // a bound on a lost datagram: loopback loses none
			switch u := rx.Uni.(type) {
			case conn4:
				u.p.SetReadDeadline(deadline)
			case conn6:
				u.p.SetReadDeadline(deadline)
			}
			buf := make([]byte, 64)
			n, ttl, src, err := rx.Uni.ReadFrom(buf)
			if err != nil || string(buf[:n]) != "hello" || ttl != LinkLocalTTL {
				t.Fatalf("received %q with TTL %d from %v (%v); want hello with %d", buf[:n], ttl, src, err, LinkLocalTTL)
			}
			if ua, ok := src.(*net.UDPAddr); !ok || ua.AddrPort().Port() != tx.Local.Port() {
				t.Errorf("from %v, want port %d", src, tx.Local.Port())
			}
		})
	}
}
