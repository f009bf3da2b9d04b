package vip

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"
)

// Config is a Manager's configuration.
type Config struct {
	Addrs []Addr // each with its Dev set
	// Announce: the zero Announce means DefaultAnnounce().
	Announce Announce
	Log      *slog.Logger // nil: nothing logged
	// Sent is called after each announcement packet sent for a; nil: not
	// called. It is called never concurrently with itself, with the
	// Manager's lock held: from Acquire's or Reannounce's caller for the
	// first packet of a burst, from the Manager's own goroutine for the
	// rest. It must not block and must not call the Manager's methods.
	Sent func(a Addr)
}

// ErrClosed is returned by a Manager's methods after Close.
var ErrClosed = errors.New("vip: manager closed")

// Manager holds the addresses of a Config.
//
// Concurrency: its methods may be called from any goroutine, also
// concurrently; they are serialised (each waits for the one running and
// for an announcement being sent). None blocks longer than its netlink
// calls and one announcement per address: the rest of a burst, the
// delayed burst and the refreshes are sent from the Manager's own
// goroutine. Config.Sent runs under the Manager's lock (see Config). Once
// Release (or Close) has returned, nothing more is sent until the next
// Acquire. After Close, Acquire and Release return ErrClosed and the others
// do nothing.
//
// The Manager's goroutine and its calls run in the network namespace of
// the thread that called New, also when a later caller's thread is in
// another one (tests move threads between namespaces).
type Manager struct {
	cfg  Config
	log  *slog.Logger
	home home

	mu     sync.Mutex // the methods, the sends, Sent; guards what follows
	held   bool
	gen    uint64 // bumped by Acquire and Release: a burst of an old gen is not sent
	closed bool
	links  map[string]*link // by Dev

	smu   sync.Mutex // guards sched; never held while taking mu
	sched []*burst

	skipped   int           // rounds skipped for being late (under smu)
	wake      chan struct{} // cap 1: sched changed
	quit      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// burst is a run of announcement rounds (one packet per address) the
// Manager's goroutine sends.
type burst struct {
	gen   uint64
	next  time.Time     // the next round
	left  int           // rounds left
	every time.Duration // > 0: a refresh, starting again this long after it started
	start time.Time
}

// New checks cfg (every interface exists; every address is of a family
// the interface can hold and announce) and returns a Manager that holds
// nothing yet.
func New(cfg Config) (*Manager, error) {
	if cfg.Announce == (Announce{}) {
		cfg.Announce = DefaultAnnounce()
	} else if err := cfg.Announce.Validate(); err != nil {
		return nil, err
	}
	seen := make(map[netip.Addr]bool)
	for _, a := range cfg.Addrs {
		if err := check(a); err != nil {
			return nil, err
		}
		ip := a.Prefix.Addr()
		if seen[ip] {
			return nil, fmt.Errorf("vip: %s: address given twice", a)
		}
		seen[ip] = true
	}
	m := &Manager{
		cfg:   cfg,
		log:   cfg.Log,
		home:  hereHome(),
		links: make(map[string]*link),
		wake:  make(chan struct{}, 1),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	go m.run()
	return m, nil
}

// check checks that a's interface exists and can hold and announce a.
func check(a Addr) error {
	if !a.Prefix.IsValid() {
		return fmt.Errorf("vip: an address without its prefix (dev %q)", a.Dev)
	}
	if a.Dev == "" {
		return fmt.Errorf("vip: %s: no interface (dev=)", a)
	}
	ifi, err := net.InterfaceByName(a.Dev)
	if err != nil {
		return fmt.Errorf("vip: %s: interface %s: %w", a, a.Dev, err)
	}
	switch {
	case ifi.Flags&net.FlagLoopback != 0:
		return fmt.Errorf("vip: %s: interface %s is a loopback interface: nothing on the LAN would learn the address", a, a.Dev)
	case len(ifi.HardwareAddr) != 6:
		return fmt.Errorf("vip: %s: interface %s has no Ethernet address to announce the address with", a, a.Dev)
	}
	if a.Prefix.Addr().Is6() {
		b, err := os.ReadFile("/proc/sys/net/ipv6/conf/" + a.Dev + "/disable_ipv6")
		switch {
		case err != nil:
			return fmt.Errorf("vip: %s: interface %s has no IPv6: %w", a, a.Dev, err)
		case strings.TrimSpace(string(b)) == "1":
			return fmt.Errorf("vip: %s: interface %s has IPv6 disabled (net.ipv6.conf.%s.disable_ipv6)", a, a.Dev, a.Dev)
		}
	}
	return nil
}

// Acquire adds every address (an address already there is kept) and sends
// the first announcement of each at once, before it returns; the rest of
// the burst, the delayed burst and the refreshes follow from the Manager's
// goroutine until Release. It returns the first error adding an address,
// after trying every address; an announcement that cannot be sent is
// logged, not returned (the address is held all the same, and the next
// announcement tries again).
func (m *Manager) Acquire() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	var first error
	err := m.home.do(func() error {
		for _, a := range m.cfg.Addrs {
			if err := add(a); err != nil {
				m.log.Error("vip: cannot add the address", "addr", a.String(), "err", err)
				if first == nil {
					first = err
				}
			}
		}
		return nil
	})
	if err != nil && first == nil {
		first = fmt.Errorf("vip: add the addresses: %w", err)
	}
	m.held = true
	m.gen++
	m.round()
	an, now := m.cfg.Announce, time.Now()
	var bs []*burst
	if an.Repeat > 1 {
		bs = append(bs, &burst{gen: m.gen, next: now.Add(an.Interval), left: an.Repeat - 1})
	}
	if an.Delay > 0 {
		bs = append(bs, &burst{gen: m.gen, next: now.Add(an.Delay), left: an.Repeat})
	}
	if an.Refresh > 0 {
		t := now.Add(an.Refresh)
		bs = append(bs, &burst{gen: m.gen, next: t, left: an.Repeat, every: an.Refresh, start: t})
	}
	m.schedule(true, bs...)
	return first
}

// Reannounce sends a burst now (a stale leader was heard: its hosts may
// have learnt its MAC for the addresses): the first announcement of each
// address before it returns, the rest from the Manager's goroutine.
// delayed adds the acquisition's second burst, Announce.Delay later: the
// other leader may have announced them within the hosts' ARP lock time
// (a second on Linux, which ignores a new MAC within it), so that the
// first burst alone may not move them. Nothing while not held.
func (m *Manager) Reannounce(delayed bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || !m.held {
		return
	}
	m.round()
	an, now := m.cfg.Announce, time.Now()
	var bs []*burst
	if an.Repeat > 1 {
		bs = append(bs, &burst{gen: m.gen, next: now.Add(an.Interval), left: an.Repeat - 1})
	}
	if delayed && an.Delay > 0 {
		bs = append(bs, &burst{gen: m.gen, next: now.Add(an.Delay), left: an.Repeat})
	}
	if len(bs) > 0 {
		m.schedule(false, bs...)
	}
}

// Release stops the announcements and removes every address (one already
// gone is no error). It returns the first error, after trying every
// address.
func (m *Manager) Release() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	m.held = false
	m.gen++
	m.schedule(true)
	var first error
	err := m.home.do(func() error {
		for _, a := range m.cfg.Addrs {
			if _, err := del(a); err != nil {
				m.log.Error("vip: cannot remove the address", "addr", a.String(), "err", err)
				if first == nil {
					first = err
				}
			}
		}
		return nil
	})
	if err != nil && first == nil {
		first = fmt.Errorf("vip: remove the addresses: %w", err)
	}
	return first
}

// State is one address's state, for /status and the metrics.
type State struct {
	Addr Addr
	Up   bool // on its interface now
}

// States reads each address's presence on its interface (Up false when
// it cannot be read).
func (m *Manager) States() []State {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	out := make([]State, len(m.cfg.Addrs))
	m.home.do(func() error {
		for i, a := range m.cfg.Addrs {
			up, err := present(a)
			if err != nil {
				m.log.Warn("vip: cannot read the addresses", "addr", a.String(), "err", err)
			}
			out[i] = State{Addr: a, Up: up}
		}
		return nil
	})
	return out
}

// Close releases the Manager's goroutine and sockets; it does not remove
// the addresses (Release does).
func (m *Manager) Close() {
	m.closeOnce.Do(func() {
		close(m.quit)
		<-m.done
		m.mu.Lock()
		defer m.mu.Unlock()
		m.closed = true
		m.held = false
		for _, l := range m.links {
			l.close()
		}
		m.home.close()
	})
}

// round sends one announcement of every address; m.mu is held.
func (m *Manager) round() {
	for _, a := range m.cfg.Addrs {
		l := m.link(a.Dev)
		if err := l.send(m.home, a.Prefix.Addr()); err != nil {
			if msg := err.Error(); msg != l.failed {
				l.failed = msg
				m.log.Warn("vip: cannot announce the address", "addr", a.String(), "err", err)
			}
			continue
		}
		l.failed = ""
		if m.cfg.Sent != nil {
			m.cfg.Sent(a)
		}
	}
}

// link is dev's link, made on first use; m.mu is held.
func (m *Manager) link(dev string) *link {
	l := m.links[dev]
	if l == nil {
		l = &link{dev: dev}
		m.links[dev] = l
	}
	return l
}

// schedule adds bs to the goroutine's bursts, after dropping the old ones
// when reset.
func (m *Manager) schedule(reset bool, bs ...*burst) {
	m.smu.Lock()
	if reset {
		m.sched = nil
	}
	m.sched = append(m.sched, bs...)
	m.smu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// run is the Manager's goroutine: it sends the rounds of the scheduled
// bursts when they are due.
func (m *Manager) run() {
	defer close(m.done)
	m.prime()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		m.smu.Lock()
		var next time.Time
		for _, b := range m.sched {
			if next.IsZero() || b.next.Before(next) {
				next = b.next
			}
		}
		m.smu.Unlock()
		if next.IsZero() {
			t.Stop()
		} else {
			t.Reset(time.Until(next))
		}
		select {
		case <-m.quit:
			return
		case <-m.wake:
		case <-t.C:
		}
		for _, gen := range m.due(time.Now()) {
			m.mu.Lock()
			if !m.closed && m.held && m.gen == gen {
				m.round()
			}
			m.mu.Unlock()
		}
	}
}

// The announcement sockets open with the Manager, before any leadership
// (a packet socket's bind waits a grace period of the kernel's RCU, which
// a take-over's first announcement must not), and stay open until Close;
// a socket that fails is closed and opened again. A round never closes
// one: a close waits a grace period too, in the agent's goroutine, and an
// agent killed within it could not die, or tell its guards so, before it
// ended. Open, they cost nothing (their filter takes no frame), and a
// killed agent's teardown releases them after the pipes to its guards
// (proc's top.go).

// prime opens the sockets of every address's link and family; one that
// fails (no link-local address yet for an NA) is opened by the first
// round, which logs if it fails again.
func (m *Manager) prime() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.cfg.Addrs {
		if m.closed {
			return
		}
		m.link(a.Dev).ready(m.home, a.Prefix.Addr())
	}
}

// openSockets counts the links' open sockets (for tests).
func (m *Manager) openSockets() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, l := range m.links {
		if l.arp != nil {
			n++
		}
		if l.ndp != nil {
			n++
		}
	}
	return n
}

// lateLimit: a round due longer ago than this is not sent. So late a
// round means the process was stopped (SIGSTOP, a frozen VM) or starved,
// and what it knew of who leads is old: another host may hold the
// addresses by now, and a stale announcement would draw the traffic back
// here. The agent announces again (Acquire, Reannounce) once it knows it
// still leads. A scheduler's delays are milliseconds.
const lateLimit = 200 * time.Millisecond

// due advances the bursts due at now and returns their generations, one
// per round to send; a round later than lateLimit is skipped (counted in
// skipped).
func (m *Manager) due(now time.Time) []uint64 {
	m.smu.Lock()
	defer m.smu.Unlock()
	var gens []uint64
	keep := m.sched[:0]
	for _, b := range m.sched {
		if b.next.After(now) {
			keep = append(keep, b)
			continue
		}
		if now.Sub(b.next) <= lateLimit {
			gens = append(gens, b.gen)
		} else {
			m.skipped++
		}
		b.left--
		switch {
		case b.left > 0:
			b.next = now.Add(m.cfg.Announce.Interval)
		case b.every > 0:
			b.start = b.start.Add(b.every)
			if b.start.Before(now) {
				b.start = now.Add(b.every)
			}
			b.next, b.left = b.start, m.cfg.Announce.Repeat
		default:
			continue
		}
		keep = append(keep, b)
	}
	clear(m.sched[len(keep):])
	m.sched = keep
	return gens
}
