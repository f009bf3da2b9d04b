// Package vip holds the cluster's virtual addresses on the leader: it adds
// them to their interfaces by netlink, announces them (gratuitous ARP for
// IPv4, unsolicited neighbour advertisement for IPv6) at once, repeated and
// refreshed, removes them, probes whether another host holds one (RFC
// 5227), and watches the carrier of their interfaces. It decides nothing:
// the agent says when to take and when to drop the addresses.
package vip

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"time"
)

// Addr is one virtual address: an address with its prefix length, on an
// interface.
type Addr struct {
	Prefix netip.Prefix // 198.18.0.100/24, fd00::100/64
	Dev    string       // the interface's name; "" until resolved (see Parse)
}

// String is the flag's form, ADDR/PREFIX,dev=IFACE.
func (a Addr) String() string { return a.Prefix.String() + ",dev=" + a.Dev }

// Parse parses the flag's (and the YAML list's) form,
// ADDR/PREFIX[,dev=IFACE]. Without dev=, Dev is "" and the caller sets the
// bind address's interface. The error names what is wrong (not the flag).
func Parse(s string) (Addr, error) { return Addr{}, errors.New("vip: not built yet") }

// Announce is how a taken address is announced.
type Announce struct {
	// Repeat is how many announcements one burst sends per address (at
	// least 1); keepalived's garp_master_repeat.
	Repeat int
	// Interval is the gap between two announcements of a burst
	// (keepalived's garp_interval).
	Interval time.Duration
	// Delay: a second burst this long after the addresses were taken; 0:
	// none (keepalived's garp_master_delay).
	Delay time.Duration
	// Refresh: a burst this often while the addresses are held; 0: none
	// (keepalived's garp_master_refresh).
	Refresh time.Duration
}

// Config is a Manager's configuration.
type Config struct {
	Addrs    []Addr // each with its Dev set
	Announce Announce
	Log      *slog.Logger
	// Sent is called after each announcement packet sent for a; nil: not
	// called. It is called from the Manager's own goroutine, never
	// concurrently with itself, and must not block.
	Sent func(a Addr)
}

// Manager holds the addresses of a Config. Its methods may be called from
// any goroutine; none blocks longer than its netlink calls (announcements
// after the first are sent from the Manager's own goroutine).
type Manager struct{}

// New checks cfg (every interface exists; every address is of a family
// the interface can hold) and returns a Manager that holds nothing yet.
func New(cfg Config) (*Manager, error) { return nil, errors.New("vip: not built yet") }

// Acquire adds every address (an address already there is kept) and sends
// the first announcement of each at once, before it returns; the rest of
// the burst, the delayed burst and the refreshes follow from the Manager's
// goroutine until Release. It returns the first error, after trying every
// address.
func (m *Manager) Acquire() error { return errors.New("vip: not built yet") }

// Reannounce sends a burst now (a stale leader was heard: its hosts may
// have learnt its MAC for the addresses). Nothing while not held.
func (m *Manager) Reannounce() {}

// Release stops the announcements and removes every address (one already
// gone is no error). It returns the first error, after trying every
// address.
func (m *Manager) Release() error { return errors.New("vip: not built yet") }

// State is one address's state, for /status and the metrics.
type State struct {
	Addr Addr
	Up   bool // on its interface now
}

// States reads each address's presence on its interface.
func (m *Manager) States() []State { return nil }

// Close releases the Manager's goroutine; it does not remove the
// addresses (Release does).
func (m *Manager) Close() {}

// Remove removes addrs from their interfaces by netlink, without a
// Manager: for the job's guard at the end of a lease or at the agent's
// death, and for addresses left behind by an agent that was killed. It
// reports which it removed (those that were there).
func Remove(addrs []Addr) (removed []Addr, err error) {
	return nil, errors.New("vip: not built yet")
}

// Probe asks the LAN whether another host holds a's address (RFC 5227's
// ARP probe for IPv4, a neighbour solicitation for IPv6) and waits up to
// wait for an answer: the holder's hardware address, or nil when none
// answered.
func Probe(a Addr, wait time.Duration) (net.HardwareAddr, error) {
	return nil, errors.New("vip: not built yet")
}

// LinkWatch reports the carrier of interfaces.
type LinkWatch struct{}

// WatchLinks starts reporting changes of the carrier (up: the interface is
// up and has carrier) of the interfaces devs, each first with its state
// now. report is called from the watch's own goroutine, never
// concurrently with itself, and must not block.
func WatchLinks(devs []string, report func(dev string, up bool)) (*LinkWatch, error) {
	return nil, errors.New("vip: not built yet")
}

// Close ends the watch.
func (w *LinkWatch) Close() {}
