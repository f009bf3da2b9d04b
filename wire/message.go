package wire

import "net/netip"

// Layout of version 2 (all integers big-endian).
//
//	offset size field
//	     0    2 magic        0x4C4C ("LL")
//	     2    1 version      2
//	     3    1 type         see Type
//	     4    1 flags        see Flag*
//	     5    1 reserved     sent as 0, ignored on receive
//	     6    2 priority     sender's current priority
//	     8    4 cluster id   ClusterID(cluster name)
//	    12    8 node id      sender's node_id
//	    20    8 term         sender's current term
//	    28    4 incarnation  changes at each start of the sender
//	    32    4 sequence     per-sender packet counter
//	    36    - body         type-specific, see the Type constants
//
// One message travels in one datagram, so the body length is the datagram
// length minus the header (and minus the authentication tag when FlagAuth is
// set; the tag is handled outside Decode).
const (
	Magic uint16 = 0x4C4C // first two bytes of every message, "LL"
	// Version is the only version this package encodes and decodes.
	// Version 2 numbers the claims (COORDINATOR and HEARTBEAT carry a
	// claim number that HEARTBEAT_ACK echoes) and adds PROBE and VOUCH;
	// agents of version 1 and 2 do not understand each other.
	Version    uint8 = 2
	HeaderLen        = 36   // length of the fixed header that starts every message
	MaxMembers       = 1024 // longest member list a ring body may carry
)

// Type is the message type. The numbers ARE THE PROTOCOL: this enum is
// append-only, never renumber or reuse a value.
type Type uint8

const (
	TypeInvalid         Type = 0  // never sent; the zero value, rejected by Decode and Append
	TypeElection        Type = 1  // bully: "I am electing"; body empty (36 bytes)
	TypeAnswer          Type = 2  // bully: "I am alive and larger, I take over"; body empty
	TypeCoordinator     Type = 3  // "I lead with term"; body: claim u32 (40 bytes)
	TypeHeartbeat       Type = 4  // leader's heartbeat; body: claim u32 (40 bytes)
	TypeHeartbeatAck    Type = 5  // follower's ack; body: the claim acknowledged u32 (40 bytes)
	TypeResign          Type = 6  // leader steps down; body empty
	TypeDiscover        Type = 7  // discovery beacon; body: addr len u8 (4|16), addr, port u16
	TypeRingElection    Type = 8  // ring: body: origin u64, count u16, count × (id u64, priority u16)
	TypeRingCoordinator Type = 9  // ring: body as TypeRingElection
	TypeRingAck         Type = 10 // ring hop ack; body: acked hop u32 (election: a hash of the hop's type, term and body)
	TypeCRElection      Type = 11 // Chang–Roberts: body: candidate id u64, candidate priority u16
	TypeCRElected       Type = 12 // Chang–Roberts and Hirschberg–Sinclair, the winner's lap: body as TypeCRElection
	TypeHSProbe         Type = 13 // Hirschberg–Sinclair: candidate id u64, priority u16, phase u8, hops u16, dir u8
	TypeHSReply         Type = 14 // Hirschberg–Sinclair: body as TypeHSProbe
	TypeProbe           Type = 15 // "is my leader alive?"; body: leader u64, age_us u32 (48 bytes)
	TypeVouch           Type = 16 // answer to PROBE: "I hear leader"; body as TypeProbe
	// TypeNotice: "the leader From of Term is gone, and its job with it",
	// sent on a crashed agent's behalf by its guard once the job's process
	// group is gone; body empty (36 bytes). Its replay rule is not the
	// sequence window but once per sender and term (agent/internal/auth);
	// the sequence is 0. An agent that predates it drops it as an unknown
	// type.
	TypeNotice Type = 17

	// typeEnd is one past the last valid type. It must be written as an
	// expression: a bare identifier here would repeat the previous constant
	// expression (17), not continue a sequence, and reject TypeNotice.
	typeEnd = TypeNotice + 1
)

// NumTypes is one past the largest message type: a table indexed by Type
// has this many entries.
const NumTypes = int(typeEnd)

// MaxAge is the largest Age a PROBE or VOUCH carries (about 71 minutes):
// longer ages are sent as MaxAge.
const MaxAge = 1<<32 - 1

// Flags are bits of the header's flags byte. Decode returns the byte as
// received, undefined bits included; Append writes Message.Flags as is.
const (
	FlagAuth uint8 = 1 << 0 // an HMAC tag follows the body (handled outside Decode)
	// FlagAlone (DISCOVER) says that the sender's membership lists no
	// other node. A node that lists the sender's address as a live
	// member joins it all the same: it is a new process there (a restart
	// before the others declared the old one dead, which the new one
	// then keeps from happening by answering the probes of its name).
	// An older agent ignores the bit.
	FlagAlone uint8 = 1 << 1
)

// Direction of a Hirschberg–Sinclair message.
const (
	DirLeft  uint8 = 0
	DirRight uint8 = 1
)

// Member is one entry of a ring member list.
type Member struct {
	ID       uint64
	Priority uint16
}

// Message is one decoded election message. Header fields are always set;
// body fields are meaningful only for the types that carry them. Decode
// zeroes every body field the decoded type does not carry (List is
// truncated to length 0, keeping its capacity), so a Message can be reused
// across Decode calls without keeping stale values. Append ignores the body
// fields of other types.
type Message struct {
	Type        Type
	Flags       uint8
	Priority    uint16
	Cluster     uint32
	From        uint64
	Term        uint64
	Incarnation uint32
	Seq         uint32

	Claim  uint32         // TypeCoordinator, TypeHeartbeat: the claim's number in its leadership (1, 2, …; 0 outside quorum mode's count)
	AckSeq uint32         // TypeHeartbeatAck: the claim acknowledged; TypeRingAck: the hop acknowledged (its token)
	Addr   netip.AddrPort // TypeDiscover: the sender's memberlist address

	// TypeProbe: the leader asked about, and how long ago the sender last
	// heard it. TypeVouch: the sender's leader (0: none it hears; the
	// sender itself when it leads) and how long ago the sender last heard
	// it (0 for itself). Age is in microseconds, saturating at MaxAge.
	Leader uint64
	Age    uint32

	// Chang–Roberts and Hirschberg–Sinclair.
	CandID   uint64
	CandPrio uint16
	Phase    uint8
	Hops     uint16
	Dir      uint8

	// Ring with live list: the initiator and the list collected so far.
	Origin uint64
	List   []Member
}
