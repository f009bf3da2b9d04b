package vip

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
)

// The ARP frames this package sends and reads: Ethernet II carrying an ARP
// packet for IPv4 over Ethernet (RFC 826), 42 bytes.
const (
	etherTypeARP = 0x0806
	arpLen       = 14 + 28
	arpRequest   = 1
	arpReply     = 2
)

var (
	broadcastMAC = net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	zeroMAC      = net.HardwareAddr{0, 0, 0, 0, 0, 0}
)

// errNotARP is returned by parseARP for a frame that is not an ARP packet
// for IPv4 over Ethernet.
var errNotARP = errors.New("vip: not an IPv4-over-Ethernet ARP frame")

// arpPacket is the part of an ARP frame this package uses.
type arpPacket struct {
	op       uint16
	sha, tha net.HardwareAddr
	spa, tpa netip.Addr
}

// appendARP appends the Ethernet frame carrying p, sent from p.sha to dst.
func appendARP(b []byte, dst net.HardwareAddr, p arpPacket) []byte {
	b = append(b, dst[:6]...)
	b = append(b, p.sha[:6]...)
	b = binary.BigEndian.AppendUint16(b, etherTypeARP)
	b = binary.BigEndian.AppendUint16(b, 1)      // hardware type: Ethernet
	b = binary.BigEndian.AppendUint16(b, 0x0800) // protocol type: IPv4
	b = append(b, 6, 4)
	b = binary.BigEndian.AppendUint16(b, p.op)
	spa, tpa := p.spa.As4(), p.tpa.As4()
	b = append(b, p.sha[:6]...)
	b = append(b, spa[:]...)
	b = append(b, p.tha[:6]...)
	return append(b, tpa[:]...)
}

// garp is the gratuitous ARP keepalived sends for ip: a request from mac
// to the broadcast address whose sender and target addresses are both ip.
func garp(b []byte, mac net.HardwareAddr, ip netip.Addr) []byte {
	return appendARP(b, broadcastMAC, arpPacket{op: arpRequest, sha: mac, spa: ip, tha: broadcastMAC, tpa: ip})
}

// arpProbe is RFC 5227's probe for ip: a request from mac, sender address
// 0.0.0.0, target hardware address zero, to the broadcast address.
func arpProbe(b []byte, mac net.HardwareAddr, ip netip.Addr) []byte {
	return appendARP(b, broadcastMAC, arpPacket{op: arpRequest, sha: mac, spa: netip.IPv4Unspecified(), tha: zeroMAC, tpa: ip})
}

// parseARP reads the ARP packet of an Ethernet frame. The hardware
// addresses returned alias b.
func parseARP(b []byte) (arpPacket, error) {
	if len(b) < arpLen || binary.BigEndian.Uint16(b[12:]) != etherTypeARP {
		return arpPacket{}, errNotARP
	}
	a := b[14:]
	if binary.BigEndian.Uint16(a[0:]) != 1 || binary.BigEndian.Uint16(a[2:]) != 0x0800 || a[4] != 6 || a[5] != 4 {
		return arpPacket{}, errNotARP
	}
	return arpPacket{
		op:  binary.BigEndian.Uint16(a[6:]),
		sha: net.HardwareAddr(a[8:14]),
		spa: netip.AddrFrom4([4]byte(a[14:18])),
		tha: net.HardwareAddr(a[18:24]),
		tpa: netip.AddrFrom4([4]byte(a[24:28])),
	}, nil
}
