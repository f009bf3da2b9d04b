//go:build linux

package vip

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdlayher/ndp"
	"github.com/mdlayher/packet"
	"github.com/vishvananda/netns"
	"golang.org/x/net/ipv6"

	"github.com/lanleader/lanleader/internal/waitfor"
)

// The kernel tests run in a pair of network namespaces joined by a veth
// pair: the host under test in A, its neighbour in B. Addresses: IPv4 in
// 198.18.0.0/15, IPv6 in 2001:db8::/32 (documentation), inside the
// namespaces only; nothing leaves them.

// lan is one pair of namespaces joined by a veth pair.
type lan struct {
	a, b       string // namespace names
	devA, devB string
	nsA, nsB   netns.NsHandle
	macA, macB net.HardwareAddr
	llA        netip.Addr // A's link-local address
}

var lanSeq atomic.Int32

// needKernel skips t, saying why, unless it can build namespaces.
func needKernel(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: the kernel tests need root (network namespaces, netlink, raw sockets)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("skipped: the kernel tests need the ip command (iproute2), not found in PATH")
	}
}

func iproute(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// newLAN builds A and B, addressed 198.18.1.1/24 and 2001:db8:1::1/64
// (A), .2 and ::2 (B), both up, their link-local addresses usable
// (duplicate address detection off inside the namespaces), and removes
// them when t ends.
func newLAN(t *testing.T) *lan {
	needKernel(t)
	n := lanSeq.Add(1)
	pid := os.Getpid()
	l := &lan{
		a:    fmt.Sprintf("vip-a-%d-%d", pid, n),
		b:    fmt.Sprintf("vip-b-%d-%d", pid, n),
		devA: fmt.Sprintf("va%dx%d", pid, n),
		devB: fmt.Sprintf("vb%dx%d", pid, n),
	}
	if len(l.devA) > maxDevLen {
		t.Fatalf("interface name %s too long", l.devA)
	}
	iproute(t, "netns", "add", l.a)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", l.a).Run() })
	iproute(t, "netns", "add", l.b)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", l.b).Run() })
	// Made in the namespaces: the pair never appears in this one.
	iproute(t, "link", "add", "name", l.devA, "netns", l.a, "type", "veth", "peer", "name", l.devB, "netns", l.b)
	for _, s := range []struct{ ns, dev, v4, v6 string }{
		{l.a, l.devA, "198.18.1.1/24", "2001:db8:1::1/64"},
		{l.b, l.devB, "198.18.1.2/24", "2001:db8:1::2/64"},
	} {
		sh := fmt.Sprintf("echo 0 > /proc/sys/net/ipv6/conf/all/accept_dad && echo 0 > /proc/sys/net/ipv6/conf/%s/accept_dad", s.dev)
		if out, err := exec.Command("ip", "netns", "exec", s.ns, "sh", "-c", sh).CombinedOutput(); err != nil {
			t.Fatalf("turn duplicate address detection off in %s: %v\n%s", s.ns, err, out)
		}
		iproute(t, "-n", s.ns, "link", "set", "lo", "up")
		iproute(t, "-n", s.ns, "link", "set", s.dev, "up")
		iproute(t, "-n", s.ns, "addr", "add", s.v4, "dev", s.dev)
		iproute(t, "-n", s.ns, "addr", "add", s.v6, "dev", s.dev, "nodad")
	}
	var err error
	if l.nsA, err = netns.GetFromName(l.a); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.nsA.Close() })
	if l.nsB, err = netns.GetFromName(l.b); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.nsB.Close() })
	l.macA, l.llA = l.iface(t, l.nsA, l.devA)
	l.macB, _ = l.iface(t, l.nsB, l.devB)
	waitFor(t, 5*time.Second, "both ends up with carrier", func() (bool, string) {
		a, b := iproute(t, "-n", l.a, "link", "show", l.devA), iproute(t, "-n", l.b, "link", "show", l.devB)
		return strings.Contains(a, "LOWER_UP") && strings.Contains(b, "LOWER_UP"), a + b
	})
	return l
}

// iface waits for dev's link-local address in ns and returns it with
// dev's MAC.
func (l *lan) iface(t *testing.T, ns netns.NsHandle, dev string) (net.HardwareAddr, netip.Addr) {
	t.Helper()
	var mac net.HardwareAddr
	var ll netip.Addr
	waitFor(t, 5*time.Second, "a link-local address on "+dev, func() (bool, string) {
		var seen []string
		err := inNS(ns, func() error {
			ifi, err := net.InterfaceByName(dev)
			if err != nil {
				return err
			}
			mac = ifi.HardwareAddr
			addrs, err := ifi.Addrs()
			if err != nil {
				return err
			}
			for _, a := range addrs {
				seen = append(seen, a.String())
				if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().IsLinkLocalUnicast() {
					ll = p.Addr()
				}
			}
			return nil
		})
		return err == nil && ll.IsValid(), fmt.Sprint(seen, err)
	})
	return mac, ll
}

// inNS runs f on a thread of ns. The thread is never given back: it ends
// with its goroutine.
func inNS(ns netns.NsHandle, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := netns.Set(ns); err != nil {
			errc <- err
			return
		}
		errc <- f()
	}()
	return <-errc
}

// waitFor polls cond until it holds or d has passed, and then fails t
// with what cond saw last.
func waitFor(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	waitfor.Until(t, what, d, 20*time.Millisecond, cond)
}

// arpFrame is one ARP frame a tap saw.
type arpFrame struct {
	at       time.Time
	dst, src net.HardwareAddr
	p        arpPacket
}

// arpTap records the ARP frames of an interface.
type arpTap struct {
	mu  sync.Mutex
	got []arpFrame
}

func tapARP(t *testing.T, ns netns.NsHandle, dev string) *arpTap {
	t.Helper()
	var c *packet.Conn
	err := inNS(ns, func() error {
		ifi, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		c, err = packet.Listen(ifi, packet.Raw, etherTypeARP, nil)
		return err
	})
	if err != nil {
		t.Fatalf("tap ARP on %s: %v", dev, err)
	}
	tap := &arpTap{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1600)
		for {
			n, _, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			at := time.Now()
			p, err := parseARP(buf[:n])
			if err != nil {
				continue
			}
			p.sha, p.tha = bytes.Clone(p.sha), bytes.Clone(p.tha)
			f := arpFrame{at: at, dst: bytes.Clone(buf[0:6]), src: bytes.Clone(buf[6:12]), p: p}
			tap.mu.Lock()
			tap.got = append(tap.got, f)
			tap.mu.Unlock()
		}
	}()
	t.Cleanup(func() { c.Close(); <-done })
	return tap
}

// garps returns the gratuitous ARPs for ip from mac seen so far.
func (tp *arpTap) garps(mac net.HardwareAddr, ip netip.Addr) []arpFrame {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	var out []arpFrame
	for _, f := range tp.got {
		if f.p.op == arpRequest && f.p.spa == ip && f.p.tpa == ip && bytes.Equal(f.p.sha, mac) {
			out = append(out, f)
		}
	}
	return out
}

// naSeen is one neighbour advertisement a tap saw.
type naSeen struct {
	at   time.Time
	na   *ndp.NeighborAdvertisement
	src  netip.Addr
	dst  net.IP
	hops int
}

type naTap struct {
	mu  sync.Mutex
	got []naSeen
}

func tapNA(t *testing.T, ns netns.NsHandle, dev string) *naTap {
	t.Helper()
	var c *ndp.Conn
	err := inNS(ns, func() error {
		ifi, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		if c, _, err = ndp.Listen(ifi, ndp.LinkLocal); err != nil {
			return err
		}
		var f ipv6.ICMPFilter
		f.SetAll(true)
		f.Accept(ipv6.ICMPTypeNeighborAdvertisement)
		if err := c.SetICMPFilter(&f); err != nil {
			return err
		}
		return c.SetControlMessage(ipv6.FlagDst|ipv6.FlagHopLimit, true)
	})
	if err != nil {
		t.Fatalf("tap NA on %s: %v", dev, err)
	}
	tap := &naTap{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, cm, src, err := c.ReadFrom()
			if err != nil {
				return
			}
			na, ok := m.(*ndp.NeighborAdvertisement)
			if !ok {
				continue
			}
			s := naSeen{at: time.Now(), na: na, src: src.WithZone(""), hops: -1}
			if cm != nil {
				s.dst, s.hops = cm.Dst, cm.HopLimit
			}
			tap.mu.Lock()
			tap.got = append(tap.got, s)
			tap.mu.Unlock()
		}
	}()
	t.Cleanup(func() { c.Close(); <-done })
	return tap
}

func (tp *naTap) nas(ip netip.Addr) []naSeen {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	var out []naSeen
	for _, s := range tp.got {
		if s.na.TargetAddress == ip {
			out = append(out, s)
		}
	}
	return out
}

// counter counts Config.Sent's calls per address.
type counter struct {
	mu sync.Mutex
	n  map[Addr]int
}

func (c *counter) sent(a Addr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = make(map[Addr]int)
	}
	c.n[a]++
}

func (c *counter) get(a Addr) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[a]
}

// newManager makes a Manager in A (its calls then run there whatever
// thread calls them).
func (l *lan) newManager(t *testing.T, cfg Config) *Manager {
	t.Helper()
	var m *Manager
	if err := inNS(l.nsA, func() (err error) { m, err = New(cfg); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func mustParse(t *testing.T, s string) Addr {
	t.Helper()
	a, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// neighbour returns B's neighbour entry for ip.
func (l *lan) neighbour(t *testing.T, ip netip.Addr) string {
	return strings.TrimSpace(iproute(t, "-n", l.b, "neigh", "show", ip.String(), "dev", l.devB))
}

// setSysctl writes /proc/sys/name in the calling thread's namespace.
func setSysctl(name, value string) error {
	return os.WriteFile("/proc/sys/"+name, []byte(value), 0o644)
}
