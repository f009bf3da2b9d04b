package vip

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/mdlayher/ndp"
	"github.com/mdlayher/packet"
	"golang.org/x/net/bpf"
	"golang.org/x/net/ipv6"
)

// Announce is how a taken address is announced.
type Announce struct {
	// Repeat is how many announcements one burst sends per address (at
	// least 1); keepalived's garp_master_repeat.
	Repeat int
	// Interval is the gap between two announcements of a burst
	// (keepalived's garp_interval); 0: back to back.
	Interval time.Duration
	// Delay: a second burst this long after the addresses were taken; 0:
	// none (keepalived's garp_master_delay).
	Delay time.Duration
	// Refresh: a burst this often while the addresses are held; 0: none
	// (keepalived's garp_master_refresh).
	Refresh time.Duration
}

// DefaultAnnounce is the announcement a Config with a zero Announce gets:
//
//   - Repeat 5, as keepalived: one lost frame (a switch port still
//     learning, a busy host) must not leave a neighbour with the old
//     leader's MAC until its cache entry expires (tens of seconds).
//   - Interval 100 ms, where keepalived sends back to back: five frames
//     in the same millisecond are lost together to one burst of
//     congestion; spread over 400 ms they are not, and a burst of 5 per
//     address stays negligible traffic.
//   - Delay 5 s, as keepalived: a second burst after the old leader's
//     last word (its own late announcements, a reply it gave to a
//     request in flight) has surely passed.
//   - Refresh 0, as keepalived: a neighbour keeps a learnt MAC while it
//     talks to the address, and the agent sends a burst again
//     (Reannounce) whenever it hears a stale leader; set it (60 s) on
//     networks whose switches or hosts are known to forget.
func DefaultAnnounce() Announce {
	return Announce{Repeat: 5, Interval: 100 * time.Millisecond, Delay: 5 * time.Second}
}

// maxRepeat bounds a burst: more is a flood, not an announcement.
const maxRepeat = 100

// Validate checks a: Repeat from 1 to 100, no negative duration, and a
// Delay or Refresh longer than one burst ((Repeat-1) × Interval), so that
// two bursts never overlap.
func (a Announce) Validate() error {
	burst := time.Duration(a.Repeat-1) * a.Interval
	switch {
	case a.Repeat < 1:
		return fmt.Errorf("vip: announce repeat %d: at least 1", a.Repeat)
	case a.Repeat > maxRepeat:
		return fmt.Errorf("vip: announce repeat %d: at most %d", a.Repeat, maxRepeat)
	case a.Interval < 0:
		return fmt.Errorf("vip: announce interval %s: negative", a.Interval)
	case a.Delay < 0:
		return fmt.Errorf("vip: announce delay %s: negative", a.Delay)
	case a.Refresh < 0:
		return fmt.Errorf("vip: announce refresh %s: negative", a.Refresh)
	case a.Delay > 0 && a.Delay <= burst:
		return fmt.Errorf("vip: announce delay %s: not longer than a burst (%s: repeat %d, interval %s)", a.Delay, burst, a.Repeat, a.Interval)
	case a.Refresh > 0 && a.Refresh <= burst:
		return fmt.Errorf("vip: announce refresh %s: not longer than a burst (%s: repeat %d, interval %s)", a.Refresh, burst, a.Repeat, a.Interval)
	}
	return nil
}

// link is one interface's announcement sockets, opened with the Manager
// (Manager.prime) or by the first announcement that finds them closed,
// and closed at Close or when a write fails.
type link struct {
	dev    string
	arpMAC net.HardwareAddr // the interface's address when arp was opened
	arp    *packet.Conn     // IPv4: gratuitous ARP
	ndpMAC net.HardwareAddr
	ndp    *ndp.Conn // IPv6: unsolicited NA, from a link-local address
	router bool      // the interface forwards IPv6: the NA's Router flag
	failed string    // the last open error logged, not logged again
	buf    []byte
}

// writeTimeout bounds one announcement's write.
const writeTimeout = time.Second

// openARP opens a packet socket on ifi that sends ARP and receives
// nothing (its filter drops every frame, so that nothing queues on it).
func openARP(ifi *net.Interface) (*packet.Conn, error) {
	drop, err := bpf.Assemble([]bpf.Instruction{bpf.RetConstant{Val: 0}})
	if err != nil {
		return nil, err
	}
	return packet.Listen(ifi, packet.Raw, etherTypeARP, &packet.Config{Filter: drop})
}

// openNDP opens an ICMPv6 socket on ifi's link-local address that sends
// neighbour advertisements and receives nothing.
func openNDP(ifi *net.Interface) (*ndp.Conn, error) {
	c, _, err := ndp.Listen(ifi, ndp.LinkLocal)
	if err != nil {
		return nil, fmt.Errorf("an NA is sent from a link-local address: %w", err)
	}
	var f ipv6.ICMPFilter
	f.SetAll(true)
	if err := c.SetICMPFilter(&f); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// forwarding reads whether dev forwards IPv6 (a router's advertisements
// carry the Router flag; without it neighbours would stop using it as a
// router).
func forwarding(dev string) bool {
	b, err := os.ReadFile("/proc/sys/net/ipv6/conf/" + dev + "/forwarding")
	return err == nil && strings.TrimSpace(string(b)) == "1"
}

// open opens l's socket for ip's family, in h's namespace.
func (l *link) open(h home, ip netip.Addr) error {
	return h.do(func() error {
		ifi, err := net.InterfaceByName(l.dev)
		if err != nil {
			return err
		}
		if len(ifi.HardwareAddr) != 6 {
			return fmt.Errorf("interface %s has no Ethernet address", l.dev)
		}
		if ip.Is4() {
			c, err := openARP(ifi)
			if err != nil {
				return err
			}
			l.arp, l.arpMAC = c, ifi.HardwareAddr
			return nil
		}
		c, err := openNDP(ifi)
		if err != nil {
			return err
		}
		l.ndp, l.ndpMAC, l.router = c, ifi.HardwareAddr, forwarding(l.dev)
		return nil
	})
}

// ready opens l's socket for ip's family unless it is open.
func (l *link) ready(h home, ip netip.Addr) error {
	if (ip.Is4() && l.arp == nil) || (ip.Is6() && l.ndp == nil) {
		if err := l.open(h, ip); err != nil {
			return fmt.Errorf("open a socket on %s: %w", l.dev, err)
		}
	}
	return nil
}

// send sends one announcement of ip, opening the socket first if need
// be. A socket opened before that fails (its interface went away and came
// back) is opened again and tried once more.
func (l *link) send(h home, ip netip.Addr) error {
	wasOpen := (ip.Is4() && l.arp != nil) || (ip.Is6() && l.ndp != nil)
	err := l.sendOnce(h, ip)
	if err != nil && wasOpen {
		err = l.sendOnce(h, ip)
	}
	return err
}

// sendOnce sends one announcement of ip; a socket that fails is closed.
func (l *link) sendOnce(h home, ip netip.Addr) error {
	if err := l.ready(h, ip); err != nil {
		return err
	}
	if ip.Is4() {
		l.buf = garp(l.buf[:0], l.arpMAC, ip)
		l.arp.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := l.arp.WriteTo(l.buf, &packet.Addr{HardwareAddr: broadcastMAC}); err != nil {
			l.arp.Close()
			l.arp = nil
			return err
		}
		return nil
	}
	l.ndp.SetWriteDeadline(time.Now().Add(writeTimeout))
	if err := l.ndp.WriteTo(unsolicitedNA(l.ndpMAC, ip, l.router), nil, netip.IPv6LinkLocalAllNodes()); err != nil {
		l.ndp.Close()
		l.ndp = nil
		return err
	}
	return nil
}

// unsolicitedNA is RFC 4861's unsolicited neighbour advertisement of ip
// at mac (section 7.2.6), as keepalived sends it: Override set,
// Solicited clear, with the target link-layer address.
func unsolicitedNA(mac net.HardwareAddr, ip netip.Addr, router bool) *ndp.NeighborAdvertisement {
	return &ndp.NeighborAdvertisement{
		Router:        router,
		Override:      true,
		TargetAddress: ip,
		Options:       []ndp.Option{&ndp.LinkLayerAddress{Direction: ndp.Target, Addr: mac}},
	}
}

func (l *link) close() {
	if l.arp != nil {
		l.arp.Close()
		l.arp = nil
	}
	if l.ndp != nil {
		l.ndp.Close()
		l.ndp = nil
	}
}
