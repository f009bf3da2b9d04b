//go:build linux

package vip

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lanleader/lanleader/internal/syncbuf"
	"github.com/lanleader/lanleader/internal/waitfor"
	"github.com/mdlayher/packet"
)

// holds polls cond for d and fails t as soon as it does not hold.
func holds(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	waitfor.Holds(t, what, d, 20*time.Millisecond, cond)
}

const oldMAC = "02:00:5e:00:00:99" // the MAC B learnt for the address before (an old leader's)

func TestAcquireAnnouncesIPv4(t *testing.T) {
	t.Parallel()
	l := newLAN(t)
	vip := mustParse(t, "198.18.1.100/24,dev="+l.devA)
	addr := vip.Prefix.Addr()
	tap := tapARP(t, l.nsB, l.devB)
	iproute(t, "-n", l.b, "neigh", "replace", addr.String(), "lladdr", oldMAC, "dev", l.devB, "nud", "stale")
	var sent counter
	an := Announce{Repeat: 3, Interval: 100 * time.Millisecond}
	m := l.newManager(t, Config{Addrs: []Addr{vip}, Announce: an, Sent: sent.sent})

	// Called from a thread outside A: the Manager runs its calls in A.
	if err := m.Acquire(); err != nil {
		t.Fatal(err)
	}
	if n := sent.get(vip); n != 1 {
		t.Errorf("Sent called %d times when Acquire returned, want 1 (the first announcement)", n)
	}
	out := iproute(t, "-n", l.a, "-4", "addr", "show", "dev", l.devA)
	if !strings.Contains(out, "inet 198.18.1.100/24 ") || !strings.Contains(out, "inet 198.18.1.1/24 ") {
		t.Errorf("after Acquire, A's addresses are not the primary and the VIP:\n%s", out)
	}

	waitFor(t, 3*time.Second, "3 gratuitous ARPs in B", func() (bool, string) {
		g := tap.garps(l.macA, addr)
		return len(g) >= an.Repeat, fmt.Sprintf("%d: %+v", len(g), g)
	})
	g := tap.garps(l.macA, addr)
	for i, f := range g {
		if !bytes.Equal(f.dst, broadcastMAC) || !bytes.Equal(f.src, l.macA) || !bytes.Equal(f.p.tha, broadcastMAC) {
			t.Errorf("gratuitous ARP %d: Ethernet %s > %s, target MAC %s; want %s > %s, target %s",
				i, f.src, f.dst, f.p.tha, l.macA, broadcastMAC, broadcastMAC)
		}
		if i > 0 {
			if gap := f.at.Sub(g[i-1].at); gap < an.Interval*7/10 {
				t.Errorf("gratuitous ARPs %d and %d %s apart, want about %s", i-1, i, gap, an.Interval)
			}
		}
	}
	holds(t, 3*an.Interval, "a burst of 3", func() (bool, string) {
		n := len(tap.garps(l.macA, addr))
		return n == an.Repeat, fmt.Sprint(n, " gratuitous ARPs")
	})
	if n := sent.get(vip); n != an.Repeat {
		t.Errorf("Sent called %d times, want %d", n, an.Repeat)
	}
	waitFor(t, 2*time.Second, "B's neighbour entry for the VIP at A's MAC", func() (bool, string) {
		n := l.neighbour(t, addr)
		return strings.Contains(n, "lladdr "+l.macA.String()), n
	})
	if s := m.States(); len(s) != 1 || s[0] != (State{Addr: vip, Up: true}) {
		t.Errorf("States() = %+v, want the VIP up", s)
	}

	// Taken again (already there): no error, and a new burst on the
	// same socket.
	if err := m.Acquire(); err != nil {
		t.Errorf("Acquire with the address already there: %v", err)
	}
	m.mu.Lock()
	sock := m.links[l.devA].arp
	m.mu.Unlock()
	m.Reannounce(false)
	m.mu.Lock()
	again := m.links[l.devA].arp
	m.mu.Unlock()
	if again != sock || sock == nil {
		t.Errorf("the ARP socket was opened again (%p, then %p), want it reused", sock, again)
	}
	waitFor(t, 3*time.Second, "two more bursts", func() (bool, string) {
		n := len(tap.garps(l.macA, addr))
		return n == 3*an.Repeat, fmt.Sprint(n, " gratuitous ARPs")
	})

	if err := m.Release(); err != nil {
		t.Fatal(err)
	}
	if out := iproute(t, "-n", l.a, "-4", "addr", "show", "dev", l.devA); strings.Contains(out, "198.18.1.100") || !strings.Contains(out, "198.18.1.1/24") {
		t.Errorf("after Release, A's addresses are not the primary alone:\n%s", out)
	}
	if s := m.States(); len(s) != 1 || s[0].Up {
		t.Errorf("States() after Release = %+v, want the VIP down", s)
	}
	if err := m.Release(); err != nil {
		t.Errorf("Release with the address already gone: %v", err)
	}
	m.Reannounce(false) // not held: nothing
	n := len(tap.garps(l.macA, addr))
	holds(t, 3*an.Interval, "silence after Release", func() (bool, string) {
		now := len(tap.garps(l.macA, addr))
		return now == n, fmt.Sprint(now-n, " gratuitous ARPs after Release")
	})
}

func TestAcquireAnnouncesIPv6(t *testing.T) {
	t.Parallel()
	l := newLAN(t)
	vip := mustParse(t, "2001:db8:1::100/64,dev="+l.devA)
	addr := vip.Prefix.Addr()
	tap := tapNA(t, l.nsB, l.devB)
	iproute(t, "-n", l.b, "-6", "neigh", "replace", addr.String(), "lladdr", oldMAC, "dev", l.devB, "nud", "stale")
	var sent counter
	an := Announce{Repeat: 3, Interval: 100 * time.Millisecond}
	m := l.newManager(t, Config{Addrs: []Addr{vip}, Announce: an, Sent: sent.sent})
	if err := m.Acquire(); err != nil {
		t.Fatal(err)
	}
	if n := sent.get(vip); n != 1 {
		t.Errorf("Sent called %d times when Acquire returned, want 1 (the first announcement)", n)
	}
	out := iproute(t, "-n", l.a, "-6", "addr", "show", "dev", l.devA)
	line := ""
	for _, s := range strings.Split(out, "\n") {
		if strings.Contains(s, "inet6 2001:db8:1::100/64") {
			line = s
		}
	}
	if line == "" || strings.Contains(line, "tentative") || !strings.Contains(line, "nodad") {
		t.Errorf("after Acquire, the VIP is not on A usable at once (nodad, not tentative):\n%s", out)
	}

	waitFor(t, 3*time.Second, "3 neighbour advertisements in B", func() (bool, string) {
		g := tap.nas(addr)
		return len(g) >= an.Repeat, fmt.Sprintf("%d: %+v", len(g), g)
	})
	g := tap.nas(addr)
	for i, s := range g {
		if !s.na.Override || s.na.Solicited || s.na.Router {
			t.Errorf("NA %d: override %v, solicited %v, router %v; want override alone", i, s.na.Override, s.na.Solicited, s.na.Router)
		}
		if mac := targetLLA(s.na); !bytes.Equal(mac, l.macA) {
			t.Errorf("NA %d: target link-layer address %s, want A's %s", i, mac, l.macA)
		}
		if s.src != l.llA {
			t.Errorf("NA %d from %s, want A's link-local address %s", i, s.src, l.llA)
		}
		if !s.dst.Equal(net.IPv6linklocalallnodes) || s.hops != 255 {
			t.Errorf("NA %d to %s with hop limit %d, want ff02::1 and 255", i, s.dst, s.hops)
		}
		if i > 0 {
			if gap := s.at.Sub(g[i-1].at); gap < an.Interval*7/10 {
				t.Errorf("NAs %d and %d %s apart, want about %s", i-1, i, gap, an.Interval)
			}
		}
	}
	holds(t, 3*an.Interval, "a burst of 3", func() (bool, string) {
		n := len(tap.nas(addr))
		return n == an.Repeat, fmt.Sprint(n, " NAs")
	})
	if n := sent.get(vip); n != an.Repeat {
		t.Errorf("Sent called %d times, want %d", n, an.Repeat)
	}
	waitFor(t, 2*time.Second, "B's neighbour entry for the VIP at A's MAC", func() (bool, string) {
		n := l.neighbour(t, addr)
		return strings.Contains(n, "lladdr "+l.macA.String()), n
	})

	if err := m.Release(); err != nil {
		t.Fatal(err)
	}
	if out := iproute(t, "-n", l.a, "-6", "addr", "show", "dev", l.devA); strings.Contains(out, "2001:db8:1::100") {
		t.Errorf("after Release, the VIP is still on A:\n%s", out)
	}
}

// TestBursts checks the schedule: the burst, the delayed burst, the
// refreshes, and that Release stops them.
func TestBursts(t *testing.T) {
	t.Parallel()
	l := newLAN(t)
	vip := mustParse(t, "198.18.1.100/24,dev="+l.devA)
	addr := vip.Prefix.Addr()
	tap := tapARP(t, l.nsB, l.devB)
	an := Announce{Repeat: 2, Interval: 50 * time.Millisecond, Delay: 300 * time.Millisecond, Refresh: 600 * time.Millisecond}
	m := l.newManager(t, Config{Addrs: []Addr{vip}, Announce: an})
	start := time.Now()
	if err := m.Acquire(); err != nil {
		t.Fatal(err)
	}
	// burst at 0, delayed burst at 300 ms, refresh at 600 ms (the next at 1200 ms)
	want := []time.Duration{0, 50, 300, 350, 600, 650}
	waitFor(t, 3*time.Second, "3 bursts", func() (bool, string) {
		n := len(tap.garps(l.macA, addr))
		return n >= len(want), fmt.Sprint(n, " gratuitous ARPs")
	})
	if err := m.Release(); err != nil {
		t.Fatal(err)
	}
	released := time.Now()
	g := tap.garps(l.macA, addr)
	var at []time.Duration
	for _, f := range g {
		at = append(at, f.at.Sub(start).Round(time.Millisecond))
	}
	wantTimes(t, "", at, want)
	holds(t, 1300*time.Millisecond-time.Since(start)+100*time.Millisecond, "silence after Release", func() (bool, string) {
		n := len(tap.garps(l.macA, addr))
		return n == len(want), fmt.Sprintf("%d gratuitous ARPs, released at %s", n, released.Sub(start))
	})
}

// TestReannounceDelayed: a reannouncement sends a burst; with delayed,
// the acquisition's second burst too, Delay later.
func TestReannounceDelayed(t *testing.T) {
	t.Parallel()
	l := newLAN(t)
	vip := mustParse(t, "198.18.1.100/24,dev="+l.devA)
	addr := vip.Prefix.Addr()
	tap := tapARP(t, l.nsB, l.devB)
	an := Announce{Repeat: 2, Interval: 50 * time.Millisecond, Delay: 300 * time.Millisecond}
	m := l.newManager(t, Config{Addrs: []Addr{vip}, Announce: an})
	if err := m.Acquire(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Second, "the acquisition's two bursts", func() (bool, string) {
		n := len(tap.garps(l.macA, addr))
		return n == 4, fmt.Sprint(n, " gratuitous ARPs")
	})
	for _, delayed := range []bool{false, true} {
		start := time.Now()
		n0 := len(tap.garps(l.macA, addr))
		m.Reannounce(delayed)
		want := []time.Duration{0, 50}
		if delayed {
			want = append(want, 300, 350)
		}
		// Whatever comes, by 700 ms: a delayed burst would be in.
		holds(t, 700*time.Millisecond, "no more than the bursts asked for", func() (bool, string) {
			n := len(tap.garps(l.macA, addr)) - n0
			return n <= len(want), fmt.Sprint(n, " gratuitous ARPs")
		})
		var at []time.Duration
		for _, f := range tap.garps(l.macA, addr)[n0:] {
			at = append(at, f.at.Sub(start).Round(time.Millisecond))
		}
		wantTimes(t, fmt.Sprintf("delayed %v: ", delayed), at, want)
	}
}

// TestSocketsOpenWithTheManager: the announcement socket opens with the
// Manager, before any leadership, and stays the same through bursts, a
// release and a take-over, until Close; closing it at each round's end
// made an agent killed within the close wait a grace period of the
// kernel's RCU before it could end. A socket that fails is opened again
// and the announcement sent all the same.
func TestSocketsOpenWithTheManager(t *testing.T) {
	t.Parallel()
	l := newLAN(t)
	vip := mustParse(t, "198.18.1.100/24,dev="+l.devA)
	addr := vip.Prefix.Addr()
	tap := tapARP(t, l.nsB, l.devB)
	an := Announce{Repeat: 2, Interval: 20 * time.Millisecond, Delay: 200 * time.Millisecond}
	m := l.newManager(t, Config{Addrs: []Addr{vip}, Announce: an})
	sock := func() *packet.Conn {
		m.mu.Lock()
		defer m.mu.Unlock()
		if l := m.links[l.devA]; l != nil {
			return l.arp
		}
		return nil
	}
	waitFor(t, 3*time.Second, "the socket open before any leadership", func() (bool, string) {
		n := m.openSockets()
		return n == 1, fmt.Sprint(n, " sockets open")
	})
	first := sock()
	same := func(when string) {
		t.Helper()
		if s := sock(); s != first {
			t.Errorf("%s: the ARP socket is %p, want the one opened with the Manager, %p", when, s, first)
		}
	}
	if err := m.Acquire(); err != nil {
		t.Fatal(err)
	}
	same("after Acquire")
	waitFor(t, 3*time.Second, "the burst and the delayed burst", func() (bool, string) {
		n := len(tap.garps(l.macA, addr))
		return n == 2*an.Repeat, fmt.Sprint(n, " gratuitous ARPs")
	})
	same("after the bursts")
	if err := m.Release(); err != nil {
		t.Fatal(err)
	}
	same("after Release")

	// A socket that fails (closed under the Manager here; an interface
	// gone and back in life) is opened again for the same announcement.
	m.mu.Lock()
	m.links[l.devA].arp.Close()
	m.mu.Unlock()
	if err := m.Acquire(); err != nil {
		t.Fatal(err)
	}
	if s := sock(); s == nil || s == first {
		t.Errorf("after a failed socket, the ARP socket is %p, want a new one", s)
	}
	waitFor(t, 3*time.Second, "the first announcement of the take-over, on the new socket", func() (bool, string) {
		n := len(tap.garps(l.macA, addr))
		return n >= 2*an.Repeat+1, fmt.Sprint(n, " gratuitous ARPs")
	})
	m.Close()
	if n := m.openSockets(); n != 0 {
		t.Errorf("%d sockets open after Close, want 0", n)
	}
}

// wantTimes checks the times of the gratuitous ARPs seen, at, against
// want, in milliseconds: each no earlier than 10 ms before and no later
// than 150 ms after (the machine may be busy); what prefixes the error.
func wantTimes(t *testing.T, what string, at, want []time.Duration) {
	t.Helper()
	if len(at) != len(want) {
		t.Fatalf("%sgratuitous ARPs at %v, want %d at about %v ms", what, at, len(want), want)
	}
	for i, w := range want {
		if w *= time.Millisecond; at[i] < w-10*time.Millisecond || at[i] > w+150*time.Millisecond {
			t.Errorf("%sgratuitous ARPs at %v, want about %v ms", what, at, want)
			return
		}
	}
}

func TestRemove(t *testing.T) {
	t.Parallel()
	l := newLAN(t)
	iproute(t, "-n", l.a, "addr", "add", "198.18.1.101/24", "dev", l.devA)
	iproute(t, "-n", l.a, "addr", "add", "198.18.1.103/25", "dev", l.devA) // another prefix length than asked
	iproute(t, "-n", l.a, "addr", "add", "2001:db8:1::101/64", "dev", l.devA, "nodad")
	addrs := []Addr{
		mustParse(t, "198.18.1.101/24,dev="+l.devA),
		mustParse(t, "198.18.1.102/24,dev="+l.devA), // not there
		mustParse(t, "198.18.1.103/24,dev="+l.devA),
		mustParse(t, "2001:db8:1::101/64,dev="+l.devA),
		mustParse(t, "198.18.1.104/24,dev=nosuchdev0"), // no such interface
	}
	var removed []Addr
	err := inNS(l.nsA, func() (err error) { removed, err = Remove(addrs); return err })
	if err != nil {
		t.Fatal(err)
	}
	if want := []Addr{addrs[0], addrs[2], addrs[3]}; !slices.Equal(removed, want) {
		t.Errorf("Remove removed %v, want %v", removed, want)
	}
	out := iproute(t, "-n", l.a, "addr", "show", "dev", l.devA)
	for _, s := range []string{"198.18.1.101", "198.18.1.103", "2001:db8:1::101"} {
		if strings.Contains(out, s) {
			t.Errorf("%s still on A after Remove:\n%s", s, out)
		}
	}
	for _, s := range []string{"198.18.1.1/24", "2001:db8:1::1/64"} {
		if !strings.Contains(out, s) {
			t.Errorf("Remove took %s, not one of its addresses:\n%s", s, out)
		}
	}
	err = inNS(l.nsA, func() (err error) { removed, err = Remove(addrs); return err })
	if err != nil || len(removed) != 0 {
		t.Errorf("Remove again = %v, %v; want nothing removed, no error", removed, err)
	}
}

func TestProbe(t *testing.T) {
	t.Parallel()
	l := newLAN(t)
	iproute(t, "-n", l.b, "addr", "add", "198.18.1.110/24", "dev", l.devB)
	iproute(t, "-n", l.b, "addr", "add", "2001:db8:1::110/64", "dev", l.devB, "nodad")
	iproute(t, "-n", l.a, "addr", "add", "198.18.1.112/24", "dev", l.devA) // a leftover on this host
	iproute(t, "-n", l.a, "addr", "add", "2001:db8:1::112/64", "dev", l.devA, "nodad")
	for _, c := range []struct {
		addr string
		wait time.Duration
		want net.HardwareAddr
	}{
		{"198.18.1.110/24", time.Second, l.macB},
		{"198.18.1.111/24", 300 * time.Millisecond, nil},
		{"198.18.1.112/24", 300 * time.Millisecond, nil},
		{"2001:db8:1::110/64", time.Second, l.macB},
		{"2001:db8:1::111/64", 300 * time.Millisecond, nil},
		{"2001:db8:1::112/64", 300 * time.Millisecond, nil},
	} {
		a := mustParse(t, c.addr+",dev="+l.devA)
		var got net.HardwareAddr
		start := time.Now()
		err := inNS(l.nsA, func() (err error) { got, err = Probe(a, c.wait); return err })
		took := time.Since(start)
		if err != nil {
			t.Errorf("Probe(%s): %v", a, err)
			continue
		}
		if !bytes.Equal(got, c.want) {
			t.Errorf("Probe(%s) = %v, want %v", a, got, c.want)
		}
		if took > c.wait+500*time.Millisecond {
			t.Errorf("Probe(%s, %s) took %s", a, c.wait, took)
		}
	}
}

func TestWatchLinks(t *testing.T) {
	t.Parallel()
	l := newLAN(t)
	type report struct {
		dev string
		up  bool
	}
	reports := make(chan report, 16)
	var w *LinkWatch
	err := inNS(l.nsA, func() (err error) {
		w, err = WatchLinks([]string{l.devA, "nosuchdev0"}, func(dev string, up bool) { reports <- report{dev, up} })
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// The first states come before WatchLinks returns: the agent reads
	// them before its first election.
	if n := len(reports); n != 2 {
		t.Fatalf("%d reports when WatchLinks returned, want the 2 first states", n)
	}
	expect := func(why string, want report) {
		t.Helper()
		select {
		case r := <-reports:
			if r != want {
				t.Fatalf("%s: reported %+v, want %+v", why, r, want)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("%s: no report after 3s, want %+v", why, want)
		}
	}
	expect("first", report{l.devA, true})
	expect("first", report{"nosuchdev0", false})
	if !w.Up(l.devA) || w.Up("nosuchdev0") {
		t.Fatalf("Up: %s %v, nosuchdev0 %v; want true, false", l.devA, w.Up(l.devA), w.Up("nosuchdev0"))
	}
	iproute(t, "-n", l.a, "link", "set", l.devA, "down")
	// Up reads the kernel, whether or not the report is in yet.
	if w.Up(l.devA) {
		t.Fatalf("Up(%s) after it was set down: true", l.devA)
	}
	expect("set down", report{l.devA, false})
	iproute(t, "-n", l.a, "link", "set", l.devA, "up")
	expect("set up", report{l.devA, true})
	if !w.Up(l.devA) {
		t.Fatalf("Up(%s) after it was set up: false", l.devA)
	}
	iproute(t, "-n", l.b, "link", "set", l.devB, "down")
	expect("the peer down (no carrier)", report{l.devA, false})
	iproute(t, "-n", l.b, "link", "set", l.devB, "up")
	expect("the peer up", report{l.devA, true})

	// The kernel drops the subscription (as on an overflow of its
	// socket): the watch subscribes again and reports what changed.
	w.sub.Load().end()
	iproute(t, "-n", l.a, "link", "set", l.devA, "down")
	expect("set down while the subscription is lost", report{l.devA, false})
	iproute(t, "-n", l.a, "link", "set", l.devA, "up")
	expect("set up after it is back", report{l.devA, true})

	closed := make(chan struct{})
	go func() { w.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(3 * time.Second):
		t.Fatal("Close did not return after 3s")
	}
	iproute(t, "-n", l.a, "link", "set", l.devA, "down")
	holds(t, 300*time.Millisecond, "silence after Close", func() (bool, string) {
		select {
		case r := <-reports:
			return false, fmt.Sprintf("%+v", r)
		default:
			return true, ""
		}
	})
}

func TestNewRefuses(t *testing.T) {
	for _, c := range []struct {
		cfg Config
		err string
	}{
		{Config{Addrs: []Addr{{Prefix: netip.MustParsePrefix("198.18.0.100/24")}}},
			"vip: 198.18.0.100/24: no interface (dev=)"},
		{Config{Addrs: []Addr{{Prefix: netip.MustParsePrefix("198.18.0.100/24"), Dev: "nosuchdev0"}}},
			"vip: 198.18.0.100/24,dev=nosuchdev0: interface nosuchdev0: route ip+net: no such network interface"},
		{Config{Addrs: []Addr{{Prefix: netip.MustParsePrefix("198.18.0.100/24"), Dev: "lo"}}},
			"vip: 198.18.0.100/24,dev=lo: interface lo is a loopback interface: nothing on the LAN would learn the address"},
		{Config{Announce: Announce{Interval: time.Second}},
			"vip: announce repeat 0: at least 1"},
	} {
		m, err := New(c.cfg)
		if err == nil {
			m.Close()
			t.Errorf("New(%+v) made a Manager, want the error %s", c.cfg, c.err)
			continue
		}
		if err.Error() != c.err {
			t.Errorf("New(%+v):\n got %s\nwant %s", c.cfg, err, c.err)
		}
	}
}

func TestNewRefusesInterfaces(t *testing.T) {
	t.Parallel()
	l := newLAN(t)
	a := mustParse(t, "198.18.1.100/24,dev="+l.devA)
	b := mustParse(t, "198.18.1.100/25,dev="+l.devA)
	c := mustParse(t, "2001:db8:1::100/64,dev="+l.devA)
	err := inNS(l.nsA, func() error {
		if _, err := New(Config{Addrs: []Addr{a, b}}); err == nil || err.Error() != "vip: "+b.String()+": address given twice" {
			return fmt.Errorf("New with an address twice: %v", err)
		}
		if err := setSysctl("net/ipv6/conf/"+l.devA+"/disable_ipv6", "1"); err != nil {
			return err
		}
		want := fmt.Sprintf("vip: %s: interface %s has IPv6 disabled (net.ipv6.conf.%s.disable_ipv6)", c, l.devA, l.devA)
		if _, err := New(Config{Addrs: []Addr{c}}); err == nil || err.Error() != want {
			return fmt.Errorf("New with IPv6 disabled: %v, want %s", err, want)
		}
		m, err := New(Config{Addrs: []Addr{a}})
		if err != nil {
			return err
		}
		m.Close()
		if err := m.Acquire(); err != ErrClosed {
			return fmt.Errorf("Acquire after Close: %v, want ErrClosed", err)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// TestConcurrentCalls checks the Manager's contract under calls from many
// goroutines: Sent never runs concurrently with itself, and nothing is
// sent once the last Release has returned.
func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	l := newLAN(t)
	addrs := []Addr{mustParse(t, "198.18.1.100/24,dev="+l.devA), mustParse(t, "2001:db8:1::100/64,dev="+l.devA)}
	var inSent, overlaps, sends atomic.Int32
	sent := func(Addr) {
		if inSent.Add(1) != 1 {
			overlaps.Add(1)
		}
		sends.Add(1)
		inSent.Add(-1)
	}
	an := Announce{Repeat: 3, Interval: 5 * time.Millisecond, Delay: 20 * time.Millisecond, Refresh: 30 * time.Millisecond}
	m := l.newManager(t, Config{Addrs: addrs, Announce: an, Sent: sent})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 25 {
				switch (g + i) % 4 {
				case 0:
					m.Acquire()
				case 1:
					m.Reannounce(false)
				case 2:
					m.States()
				case 3:
					if i%3 == 0 {
						m.Release()
					}
				}
			}
		})
	}
	wg.Wait()
	if err := m.Release(); err != nil {
		t.Fatal(err)
	}
	n := sends.Load()
	holds(t, 150*time.Millisecond, "silence after the last Release", func() (bool, string) {
		now := sends.Load()
		return now == n, fmt.Sprint(now-n, " sent after Release")
	})
	if o := overlaps.Load(); o != 0 || n == 0 {
		t.Errorf("%d announcements sent, Sent ran concurrently with itself %d times; want some, and never", n, o)
	}
	for _, s := range m.States() {
		if s.Up {
			t.Errorf("%s up after the last Release", s.Addr)
		}
	}
}

// TestCloseLeavesNoGoroutine checks that Close ends the Manager's and the
// watch's goroutines (and the netlink library's). Not parallel: it counts
// the process's goroutines.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	l := newLAN(t)
	before := runtime.NumGoroutine()
	vip := mustParse(t, "198.18.1.100/24,dev="+l.devA)
	var m *Manager
	var w *LinkWatch
	err := inNS(l.nsA, func() (err error) {
		if m, err = New(Config{Addrs: []Addr{vip}, Announce: Announce{Repeat: 2, Interval: time.Second, Delay: 5 * time.Second}}); err != nil {
			return err
		}
		w, err = WatchLinks([]string{l.devA}, func(string, bool) {})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Acquire(); err != nil {
		t.Fatal(err)
	}
	m.Close()
	w.Close()
	if out := iproute(t, "-n", l.a, "-4", "addr", "show", "dev", l.devA); !strings.Contains(out, "198.18.1.100/24") {
		t.Errorf("Close removed the address (Release's business):\n%s", out)
	}
	waitFor(t, 2*time.Second, "return to the goroutine count of before", func() (bool, string) {
		n := runtime.NumGoroutine()
		return n <= before, fmt.Sprintf("%d goroutines, %d before", n, before)
	})
}

// TestAnnounceRetries checks that an announcement that cannot be sent (no
// link-local address yet to send an NA from) is logged once, does not fail
// Acquire, and that the Manager's goroutine opens the socket when it can
// (in A, though the goroutine's thread is not there).
func TestAnnounceRetries(t *testing.T) {
	t.Parallel()
	l := newLAN(t)
	vip := mustParse(t, "2001:db8:1::100/64,dev="+l.devA)
	tap := tapNA(t, l.nsB, l.devB)
	ll := l.llA.String() + "/64"
	iproute(t, "-n", l.a, "addr", "del", ll, "dev", l.devA)
	var logged syncbuf.Buffer
	var sent counter
	an := Announce{Repeat: 1, Delay: 300 * time.Millisecond}
	m := l.newManager(t, Config{Addrs: []Addr{vip}, Announce: an, Sent: sent.sent,
		Log: slog.New(slog.NewTextHandler(&logged, nil))})
	if err := m.Acquire(); err != nil {
		t.Fatalf("Acquire with an announcement that cannot be sent: %v", err)
	}
	if n := sent.get(vip); n != 0 {
		t.Errorf("Sent called %d times, want 0: nothing could be sent", n)
	}
	m.Reannounce(false)
	if s := logged.String(); strings.Count(s, "cannot announce the address") != 1 || !strings.Contains(s, "link-local") {
		t.Errorf("log after two failed announcements, want the failure once:\n%s", s)
	}
	if s := m.States(); len(s) != 1 || !s[0].Up {
		t.Errorf("States() = %+v, want the VIP up though unannounced", s)
	}
	iproute(t, "-n", l.a, "addr", "add", ll, "dev", l.devA, "scope", "link", "nodad")
	waitFor(t, 3*time.Second, "the delayed NA in B", func() (bool, string) {
		g := tap.nas(vip.Prefix.Addr())
		return len(g) == 1 && g[0].src == l.llA, fmt.Sprintf("%+v", g)
	})
	if n := sent.get(vip); n != 1 {
		t.Errorf("Sent called %d times, want 1", n)
	}
}
