package vip

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/mdlayher/ndp"
	"github.com/mdlayher/packet"
	"golang.org/x/net/ipv6"
)

// probes is how many probes Probe sends, spread over its wait (RFC 5227
// sends 3).
const probes = 3

// Probe asks the LAN whether another host holds a's address (RFC 5227's
// ARP probe for IPv4, a neighbour solicitation for IPv6) and waits up to
// wait for an answer: the holder's hardware address, or nil when none
// answered. It sends 3 probes spread over wait. An answer from this host
// (from the hardware address of any of its interfaces) is not a conflict:
// an address left on this host is Remove's business. It runs in the
// calling thread's network namespace.
//
// IPv4: the probe is a broadcast ARP request with sender address 0.0.0.0
// and target a's address; a conflict is an ARP reply or request from
// another hardware address whose sender address is a's. IPv6: a
// neighbour solicitation for a's address from a link-local address of the
// interface (there must be one, not tentative) to the solicited-node
// group; a conflict is a neighbour advertisement for the address, whose
// target link-layer address is the holder's.
func Probe(a Addr, wait time.Duration) (net.HardwareAddr, error) {
	ifi, err := net.InterfaceByName(a.Dev)
	if err != nil {
		return nil, fmt.Errorf("vip: probe %s: interface %s: %w", a, a.Dev, err)
	}
	if len(ifi.HardwareAddr) != 6 {
		return nil, fmt.Errorf("vip: probe %s: interface %s has no Ethernet address", a, a.Dev)
	}
	own, err := ownMACs()
	if err != nil {
		return nil, fmt.Errorf("vip: probe %s: %w", a, err)
	}
	var mac net.HardwareAddr
	if a.Prefix.Addr().Is4() {
		mac, err = probe4(ifi, a.Prefix.Addr(), wait, own)
	} else {
		mac, err = probe6(ifi, a.Prefix.Addr(), wait, own)
	}
	if err != nil {
		return nil, fmt.Errorf("vip: probe %s: %w", a, err)
	}
	return mac, nil
}

// ownMACs is the set of this host's hardware addresses.
func ownMACs() (map[string]bool, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	own := make(map[string]bool)
	for _, ifi := range ifs {
		if len(ifi.HardwareAddr) > 0 {
			own[string(ifi.HardwareAddr)] = true
		}
	}
	return own, nil
}

// prober is the send-and-wait loop both families share: send sends a
// probe, read reads until the deadline and returns a holder's address (nil,
// nil at the deadline).
func prober(wait time.Duration, send func() error, setDeadline func(time.Time) error, read func() (net.HardwareAddr, error)) (net.HardwareAddr, error) {
	end := time.Now().Add(wait)
	for i := 0; i < probes; i++ {
		if err := send(); err != nil {
			return nil, err
		}
		until := end
		if i < probes-1 {
			until = time.Now().Add(time.Until(end) / time.Duration(probes-i))
		}
		if err := setDeadline(until); err != nil {
			return nil, err
		}
		mac, err := read()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue
		}
		return mac, err
	}
	return nil, nil
}

func probe4(ifi *net.Interface, ip netip.Addr, wait time.Duration, own map[string]bool) (net.HardwareAddr, error) {
	c, err := packet.Listen(ifi, packet.Raw, etherTypeARP, nil)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	out := arpProbe(nil, ifi.HardwareAddr, ip)
	buf := make([]byte, 1500)
	return prober(wait,
		func() error {
			_, err := c.WriteTo(out, &packet.Addr{HardwareAddr: broadcastMAC})
			return err
		},
		c.SetReadDeadline,
		func() (net.HardwareAddr, error) {
			for {
				n, _, err := c.ReadFrom(buf)
				if err != nil {
					return nil, err
				}
				p, err := parseARP(buf[:n])
				if err != nil || (p.op != arpReply && p.op != arpRequest) || p.spa != ip || own[string(p.sha)] {
					continue
				}
				return append(net.HardwareAddr(nil), p.sha...), nil
			}
		})
}

func probe6(ifi *net.Interface, ip netip.Addr, wait time.Duration, own map[string]bool) (net.HardwareAddr, error) {
	c, _, err := ndp.Listen(ifi, ndp.LinkLocal)
	if err != nil {
		return nil, fmt.Errorf("no usable link-local address on %s: %w", ifi.Name, err)
	}
	defer c.Close()
	var f ipv6.ICMPFilter
	f.SetAll(true)
	f.Accept(ipv6.ICMPTypeNeighborAdvertisement)
	if err := c.SetICMPFilter(&f); err != nil {
		return nil, err
	}
	group, err := ndp.SolicitedNodeMulticast(ip)
	if err != nil {
		return nil, err
	}
	ns := &ndp.NeighborSolicitation{
		TargetAddress: ip,
		Options:       []ndp.Option{&ndp.LinkLayerAddress{Direction: ndp.Source, Addr: ifi.HardwareAddr}},
	}
	return prober(wait,
		func() error { return c.WriteTo(ns, nil, group) },
		c.SetReadDeadline,
		func() (net.HardwareAddr, error) {
			for {
				m, _, _, err := c.ReadFrom()
				if err != nil {
					return nil, err
				}
				na, ok := m.(*ndp.NeighborAdvertisement)
				if !ok || na.TargetAddress != ip {
					continue
				}
				mac := targetLLA(na)
				if mac == nil || own[string(mac)] {
					continue
				}
				return mac, nil
			}
		})
}

// targetLLA is na's target link-layer address option, or nil.
func targetLLA(na *ndp.NeighborAdvertisement) net.HardwareAddr {
	for _, o := range na.Options {
		if lla, ok := o.(*ndp.LinkLayerAddress); ok && lla.Direction == ndp.Target {
			return append(net.HardwareAddr(nil), lla.Addr...)
		}
	}
	return nil
}
