// Package udp opens the agent's election sockets: a unicast socket on the
// election port and, with the multicast transport, one joined to the
// group; every packet leaves with TTL 255 and reads report the TTL it
// arrived with. It also finds this host's interfaces and addresses. It
// knows nothing of the election or of the packets' content.
package udp

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// LinkLocalTTL is the IP TTL (IPv6 hop limit) every election packet is
// sent with. A receiver drops a packet that arrives with less: it crossed
// a router, so it cannot come from this LAN (VRRP's rule, RFC 5798 5.1.1.3).
const LinkLocalTTL = 255

// ReadBuffer is large enough for any UDP datagram, so nothing is cut.
const ReadBuffer = 64 << 10

// socketBuffer is the receive buffer asked of each election socket
// (SO_RCVBUF; the kernel caps it at net.core.rmem_max): a flood of junk
// shares the socket with the heartbeats, and a short stall of the reader
// must not overflow the buffer and lose them. 4 MiB holds some 4,000
// small datagrams, 80 ms of a 50,000 packets/s flood.
const socketBuffer = 4 << 20

// Conn is one UDP socket with what the Transport needs of it: reads that
// report the IP TTL (hop limit) of each packet, and writes that never
// wait (ErrWouldBlock).
type Conn interface {
	ReadFrom(b []byte) (n int, ttl int, src net.Addr, err error) // ttl -1: not reported
	WriteTo(b []byte, dst netip.AddrPort) error
	Close() error
}

// ErrWouldBlock: the kernel could not take the datagram at once, and it
// was not sent. The socket's send buffer is full: its datagrams wait in
// the kernel, typically for a neighbour that does not answer ARP (a
// pulled cable, a dead host), which holds them for up to 3 s. A write
// that waited for room would stall the agent's loop as long.
var ErrWouldBlock = errors.New("udp: the socket's send buffer is full")

type conn4 struct {
	p *ipv4.PacketConn
	sender
}

func (c conn4) ReadFrom(b []byte) (int, int, net.Addr, error) {
	n, cm, src, err := c.p.ReadFrom(b)
	if cm == nil {
		return n, -1, src, err
	}
	return n, cm.TTL, src, err
}
func (c conn4) Close() error { return c.p.Close() }

type conn6 struct {
	p *ipv6.PacketConn
	sender
}

func (c conn6) ReadFrom(b []byte) (int, int, net.Addr, error) {
	n, cm, src, err := c.p.ReadFrom(b)
	if cm == nil {
		return n, -1, src, err
	}
	return n, cm.HopLimit, src, err
}
func (c conn6) Close() error { return c.p.Close() }

// sender writes datagrams without waiting: sendto with MSG_DONTWAIT on
// the socket's descriptor, where the net package would park the caller
// until the socket is writable again. The TTL and the multicast
// interface are the socket's options, set once, so a plain sendto keeps
// them.
type sender struct {
	raw   syscall.RawConn
	inet6 bool      // an AF_INET6 socket (IPv4 destinations go v4-mapped)
	zones *sync.Map // zone name → interface index, for IPv6 link-local destinations
}

func newSender(c *net.UDPConn) (sender, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return sender{}, err
	}
	s := sender{raw: raw, zones: &sync.Map{}}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		var sa syscall.Sockaddr
		sa, serr = syscall.Getsockname(int(fd))
		_, s.inet6 = sa.(*syscall.SockaddrInet6)
	}); err != nil {
		return s, err
	}
	return s, serr
}

func (s sender) WriteTo(b []byte, dst netip.AddrPort) error {
	sa, err := s.sockaddr(dst)
	if err != nil {
		return err
	}
	var serr error
	err = s.raw.Write(func(fd uintptr) bool {
		serr = syscall.Sendto(int(fd), b, syscall.MSG_DONTWAIT, sa)
		return true // never wait for room
	})
	if err != nil {
		return err
	}
	if serr == syscall.EAGAIN || serr == syscall.EWOULDBLOCK {
		return ErrWouldBlock
	}
	if serr != nil {
		return os.NewSyscallError("sendto", serr)
	}
	return nil
}

func (s sender) sockaddr(dst netip.AddrPort) (syscall.Sockaddr, error) {
	a := dst.Addr()
	if !s.inet6 {
		if a = a.Unmap(); !a.Is4() {
			return nil, fmt.Errorf("udp: IPv6 destination %v on an IPv4 socket", dst)
		}
		return &syscall.SockaddrInet4{Port: int(dst.Port()), Addr: a.As4()}, nil
	}
	sa := &syscall.SockaddrInet6{Port: int(dst.Port()), Addr: a.As16()}
	z := a.Zone()
	if z == "" {
		return sa, nil
	}
	if id, ok := s.zones.Load(z); ok {
		sa.ZoneId = id.(uint32)
		return sa, nil
	}
	// Looked up once: an interface's index is a netlink dump away.
	if ifi, err := net.InterfaceByName(z); err == nil {
		sa.ZoneId = uint32(ifi.Index)
	} else if n, err := strconv.ParseUint(z, 10, 32); err == nil {
		sa.ZoneId = uint32(n)
	} else {
		return nil, fmt.Errorf("udp: destination %v: no interface %q", dst, z)
	}
	s.zones.Store(z, sa.ZoneId)
	return sa, nil
}

// Transport is the election socket: one unicast socket bound to the
// agent's address (it sends everything, and receives what is sent to this
// node), and in multicast mode a second one bound to the group, which
// receives the one-to-all messages. Both report each packet's TTL.
type Transport struct {
	Local netip.AddrPort // the unicast socket's address
	Group netip.AddrPort // invalid in unicast mode
	Uni   Conn
	Multi Conn // nil in unicast mode
}

// Open opens the election sockets on local (port 0: any free
// port). With a valid group it joins it on ifi, with multicast loopback
// off, and sends multicast through ifi.
func Open(local netip.AddrPort, group netip.Addr, ifi *net.Interface) (*Transport, error) {
	uc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(local))
	if err != nil {
		return nil, ListenError("election socket", local.String(), err)
	}
	uc.SetReadBuffer(socketBuffer) // best effort: the kernel's cap applies
	t := &Transport{Local: netip.MustParseAddrPort(uc.LocalAddr().String())}
	t.Local = netip.AddrPortFrom(t.Local.Addr().Unmap(), t.Local.Port())
	v6 := !local.Addr().Unmap().Is4()
	uni, err := setupConn(uc, v6, nil)
	if err != nil {
		uc.Close()
		return nil, err
	}
	t.Uni = uni.Conn
	if !group.IsValid() {
		return t, nil
	}
	if ifi == nil {
		t.Uni.Close()
		return nil, fmt.Errorf("multicast: no interface holds %v", local.Addr())
	}
	if group.IsLinkLocalMulticast() || group.IsInterfaceLocalMulticast() {
		group = group.WithZone(ifi.Name) // an IPv6 link-local group needs its link
	}
	t.Group = netip.AddrPortFrom(group, t.Local.Port())
	// The group socket is bound to the group address itself, so it
	// receives only what is sent to the group; SO_REUSEADDR lets agents in
	// one network namespace share it.
	pc, err := listenGroup(t.Group, ifi)
	if err != nil {
		t.Uni.Close()
		return nil, ListenError("multicast socket", t.Group.String(), err)
	}
	pc.SetReadBuffer(socketBuffer)
	multi, err := setupConn(pc, v6, ifi)
	if err != nil {
		pc.Close()
		t.Uni.Close()
		return nil, err
	}
	t.Multi = multi.Conn
	// The unicast socket sends the multicast packets (so that their source
	// is this node's address, which receivers answer): through ifi, TTL
	// 255, loopback off.
	if err := setupMulticastSend(uni, ifi); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// ipConn is one election socket at the IP layer: what differs between
// IPv4 and IPv6 is the name of the TTL (IPv6's hop limit) and the calls
// that report and set it; joining and sending to a group are the same.
type ipConn struct {
	Conn
	ttlName string
	// reportTTL has every read report the packet's TTL; setTTL and
	// setMulticastTTL set the TTL of unicast and multicast packets sent.
	reportTTL, setTTL, setMulticastTTL func() error
	group                              interface {
		JoinGroup(ifi *net.Interface, group net.Addr) error
		SetMulticastInterface(ifi *net.Interface) error
		SetMulticastLoopback(on bool) error
	}
}

func newIPConn(c *net.UDPConn, v6 bool, s sender) ipConn {
	if v6 {
		p := ipv6.NewPacketConn(c)
		return ipConn{Conn: conn6{p, s}, ttlName: "hop limit", group: p,
			reportTTL:       func() error { return p.SetControlMessage(ipv6.FlagHopLimit, true) },
			setTTL:          func() error { return p.SetHopLimit(LinkLocalTTL) },
			setMulticastTTL: func() error { return p.SetMulticastHopLimit(LinkLocalTTL) }}
	}
	p := ipv4.NewPacketConn(c)
	return ipConn{Conn: conn4{p, s}, ttlName: "TTL", group: p,
		reportTTL:       func() error { return p.SetControlMessage(ipv4.FlagTTL, true) },
		setTTL:          func() error { return p.SetTTL(LinkLocalTTL) },
		setMulticastTTL: func() error { return p.SetMulticastTTL(LinkLocalTTL) }}
}

// setupConn wraps c, turns on TTL reporting and sets the unicast TTL; with
// ifi it joins the group c is bound to on ifi.
func setupConn(c *net.UDPConn, v6 bool, ifi *net.Interface) (ipConn, error) {
	s, err := newSender(c)
	if err != nil {
		return ipConn{}, fmt.Errorf("election socket: %w", err)
	}
	ic := newIPConn(c, v6, s)
	if err := ic.reportTTL(); err != nil {
		return ic, fmt.Errorf("election socket: report %s: %w", ic.ttlName, err)
	}
	if err := ic.setTTL(); err != nil {
		return ic, fmt.Errorf("election socket: %s: %w", ic.ttlName, err)
	}
	if ifi != nil {
		if err := ic.group.JoinGroup(ifi, c.LocalAddr()); err != nil {
			return ic, fmt.Errorf("multicast: join %v on %s: %w", c.LocalAddr(), ifi.Name, err)
		}
	}
	return ic, nil
}

// setupMulticastSend has c send multicast through ifi, with TTL 255 and
// loopback off.
func setupMulticastSend(c ipConn, ifi *net.Interface) error {
	for _, step := range []struct {
		what string
		do   func() error
	}{
		{"interface", func() error { return c.group.SetMulticastInterface(ifi) }},
		{c.ttlName, c.setMulticastTTL},
		{"loopback off", func() error { return c.group.SetMulticastLoopback(false) }},
	} {
		if err := step.do(); err != nil {
			return fmt.Errorf("multicast: %s on %s: %w", step.what, ifi.Name, err)
		}
	}
	return nil
}

// listenGroup opens a UDP socket bound to the multicast address group
// (with SO_REUSEADDR). The net package cannot: it binds a multicast
// address as the wildcard address, which would collide with the unicast
// socket's port and receive unicast traffic too.
func listenGroup(group netip.AddrPort, ifi *net.Interface) (*net.UDPConn, error) {
	family := syscall.AF_INET
	var sa syscall.Sockaddr
	if group.Addr().Is4() {
		sa = &syscall.SockaddrInet4{Port: int(group.Port()), Addr: group.Addr().As4()}
	} else {
		family = syscall.AF_INET6
		sa = &syscall.SockaddrInet6{Port: int(group.Port()), Addr: group.Addr().As16(), ZoneId: uint32(ifi.Index)}
	}
	// As the net package does: no fork between socket and close-on-exec.
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(family, syscall.SOCK_DGRAM, syscall.IPPROTO_UDP)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, err
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	if err := syscall.Bind(fd, sa); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "multicast "+group.String())
	defer f.Close()
	pc, err := net.FilePacketConn(f)
	if err != nil {
		return nil, err
	}
	return pc.(*net.UDPConn), nil
}

func (t *Transport) Close() {
	t.Uni.Close()
	if t.Multi != nil {
		t.Multi.Close()
	}
}

// Send writes b to dst by unicast; ErrWouldBlock when the kernel could
// not take it at once.
func (t *Transport) Send(b []byte, dst netip.AddrPort) error {
	return t.Uni.WriteTo(b, dst)
}

// Multicast writes b to the group, as Send.
func (t *Transport) Multicast(b []byte) error {
	return t.Uni.WriteTo(b, t.Group)
}

// ListenError names the problem of a failed listen in words an operator
// acts on: a port in use, an address not on this host.
func ListenError(what, addr string, err error) error {
	var msg string
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		msg = fmt.Sprintf("%s %s: port already in use (another lanleader, or another program, listens there)", what, addr)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		msg = fmt.Sprintf("%s %s: address not on this host", what, addr)
	case errors.Is(err, syscall.EACCES):
		msg = fmt.Sprintf("%s %s: permission denied (ports below 1024 need privileges)", what, addr)
	default:
		msg = fmt.Sprintf("%s %s: %s", what, addr, strings.Join(strings.Fields(err.Error()), " "))
	}
	return &listenError{msg: msg, err: err}
}

// listenError is ListenError's error: its message, and the cause for
// errors.Is (a start retries while the port is in use).
type listenError struct {
	msg string
	err error
}

func (e *listenError) Error() string { return e.msg }
func (e *listenError) Unwrap() error { return e.err }

// SendFrom sends b to each of dsts from a socket of its own, bound to
// from (a crashed agent's election address, free once it is dead) or,
// when that is taken, to another port of from's address, with TTL 255,
// multicast through the interface iface with loopback off: what a crashed
// agent's notice guard sends on its behalf. A send the kernel cannot take
// at once is tried again for a little while.
func SendFrom(from netip.AddrPort, iface string, b []byte, dsts []netip.AddrPort) error {
	uc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(from))
	if err != nil {
		uc, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(from.Addr(), 0)))
		if err != nil {
			return ListenError("notice socket", from.String(), err)
		}
	}
	defer uc.Close()
	ic, err := setupConn(uc, !from.Addr().Unmap().Is4(), nil)
	if err != nil {
		return err
	}
	for _, d := range dsts {
		if d.Addr().IsMulticast() {
			ifi, err := net.InterfaceByName(iface)
			if err != nil {
				return fmt.Errorf("multicast: %w", err)
			}
			if err := setupMulticastSend(ic, ifi); err != nil {
				return err
			}
			break
		}
	}
	var errs []error
	for _, d := range dsts {
		err := ic.WriteTo(b, d)
		for try := 0; errors.Is(err, ErrWouldBlock) && try < 100; try++ {
			time.Sleep(time.Millisecond) // the buffer drains; nothing to wait on
			err = ic.WriteTo(b, d)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%v: %w", d, err))
		}
	}
	return errors.Join(errs...)
}
