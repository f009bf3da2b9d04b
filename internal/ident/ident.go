package ident

import (
	"net/netip"
	"strconv"
)

// Verdict is what Classify says of a packet.
type Verdict uint8

const (
	// Other: another node's packet; it goes on to the replay check and
	// the election.
	Other Verdict = iota
	// Own: a packet this node sent itself (one it sent to its own
	// address, or a late one of an earlier run on the same socket
	// address); dropped, counted with reason "self".
	Own
	// Conflict: another node sends with this node's node_id; dropped,
	// counted with reason "conflict", and evidence that puts this node in
	// state conflict.
	Conflict
)

var verdictNames = [...]string{"other", "own", "conflict"}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "verdict(" + strconv.Itoa(int(v)) + ")"
}

// Reason is the drop reason of a verdict (the label of
// lanleader_packets_dropped_total), "" for Other, which is not dropped.
func (v Verdict) Reason() string {
	switch v {
	case Own:
		return "self"
	case Conflict:
		return "conflict"
	}
	return ""
}

// Self is what identifies this node's own packets.
type Self struct {
	NodeID uint64
	// Addr is the address of this node's election socket, the source of
	// every packet it sends (unicast and multicast alike). The agent binds
	// it to one address, never the unspecified one (with --bind 0.0.0.0
	// it binds the address it announces), so it is a packet's source
	// exactly.
	Addr netip.AddrPort
	// Incarnation is this run's; it decides only when an address cannot
	// (see Classify).
	Incarnation uint32
}

// Packet is what Classify reads of a received packet.
type Packet struct {
	From        uint64 // the sender's node_id
	Incarnation uint32
	// Src is the packet's source address, invalid when the socket did not
	// report one.
	Src netip.AddrPort
}

// Classify says who sent p. A packet with another node_id is Other. A
// packet with this node's node_id is Own when it comes from this node's
// election address and Conflict from any other: two live sockets never
// share an address and port, so the source tells two hosts apart however
// alike their configuration, start time (the incarnation is the start's
// second) and sequence numbers are. Our own multicasts do not come back
// (the socket has multicast loopback off); what does come back from our
// own address (a packet sent to ourselves) is Own.
//
// Only when the source or this node's address is not known, or this
// node's address is unspecified, does the incarnation decide (the same
// incarnation: Own, as before addresses were compared); clones started
// in the same second are then taken for one node, so the agent always
// gives both.
func Classify(self Self, p Packet) Verdict {
	if p.From != self.NodeID {
		return Other
	}
	if p.Src.IsValid() && self.Addr.IsValid() && !self.Addr.Addr().IsUnspecified() {
		if SameAddr(p.Src, self.Addr) {
			return Own
		}
		return Conflict
	}
	if p.Incarnation == self.Incarnation {
		return Own
	}
	return Conflict
}

// SameAddr says whether a and b are one socket address: the same port and
// the same IP, an IPv4 address and its IPv4-mapped IPv6 form being one,
// and an IPv6 zone not counting (the agent never binds a link-local
// address, the only kind a zone would tell apart).
func SameAddr(a, b netip.AddrPort) bool {
	return a.Port() == b.Port() && a.Addr().Unmap().WithZone("") == b.Addr().Unmap().WithZone("")
}
