package wire

import (
	"crypto/sha256"
	"encoding/binary"
	"net/netip"
	"slices"
)

// Body sizes, in bytes, of the types whose body has a fixed size or a fixed
// part.
const (
	seqBodyLen     = 4                 // TypeCoordinator, TypeHeartbeat, TypeHeartbeatAck, TypeRingAck: one u32
	probeBodyLen   = 8 + 4             // TypeProbe, TypeVouch: leader u64, age u32
	crBodyLen      = 8 + 2             // candidate id u64, priority u16
	hsBodyLen      = 8 + 2 + 1 + 2 + 1 // candidate id, priority, phase, hops, dir
	ringFixedLen   = 8 + 2             // origin u64, count u16
	memberLen      = 8 + 2             // one list entry: id u64, priority u16
	discoverFixLen = 1 + 2             // addr len u8, port u16 (address bytes not counted)
)

// ClusterID returns the cluster identifier carried in every header: the
// first four bytes, read big-endian, of the SHA-256 digest of name. It
// keeps agents of different clusters sharing a LAN apart; it is not an
// authenticator.
func ClusterID(name string) uint32 {
	sum := sha256.Sum256([]byte(name))
	return binary.BigEndian.Uint32(sum[:4])
}

// Size returns the exact number of bytes Append appends for m, or 0 if m
// cannot be encoded (Append would return an error).
func (m *Message) Size() int {
	n, err := m.size()
	if err != nil {
		return 0
	}
	return n
}

// size returns the encoded length of m, or the error Append reports for it.
func (m *Message) size() (int, error) {
	switch m.Type {
	case TypeElection, TypeAnswer, TypeResign, TypeNotice:
		return HeaderLen, nil
	case TypeCoordinator, TypeHeartbeat, TypeHeartbeatAck, TypeRingAck:
		return HeaderLen + seqBodyLen, nil
	case TypeProbe, TypeVouch:
		return HeaderLen + probeBodyLen, nil
	case TypeDiscover:
		a := m.Addr.Addr()
		if !a.IsValid() || a.Zone() != "" {
			return 0, ErrBadAddr
		}
		if a.Unmap().Is4() {
			return HeaderLen + discoverFixLen + 4, nil
		}
		return HeaderLen + discoverFixLen + 16, nil
	case TypeRingElection, TypeRingCoordinator:
		if len(m.List) > MaxMembers {
			return 0, ErrBadLength
		}
		return HeaderLen + ringFixedLen + memberLen*len(m.List), nil
	case TypeCRElection, TypeCRElected:
		return HeaderLen + crBodyLen, nil
	case TypeHSProbe, TypeHSReply:
		return HeaderLen + hsBodyLen, nil
	}
	return 0, ErrUnknownType
}

// Append appends the encoding of m to b and returns the extended slice, in
// the manner of strconv.AppendInt. It grows b at most once and does not
// allocate when cap(b)-len(b) >= m.Size().
//
// The reserved header byte is written as zero. Only the body fields of
// m.Type are encoded. A DISCOVER address that is IPv4 or IPv4-mapped IPv6
// is encoded in its 4-byte form, any other address in its 16-byte form.
//
// On error Append returns b unchanged and one of: ErrUnknownType if m.Type
// is TypeInvalid or unknown; ErrBadLength if a ring message's List is
// longer than MaxMembers; ErrBadAddr if a DISCOVER message's Addr holds an
// invalid address or one with an IPv6 zone.
func (m *Message) Append(b []byte) ([]byte, error) {
	n, err := m.size()
	if err != nil {
		return b, err
	}
	b = slices.Grow(b, n)
	start := len(b)
	b = b[:start+n]
	p := b[start:]

	be := binary.BigEndian
	be.PutUint16(p[0:], Magic)
	p[2] = Version
	p[3] = uint8(m.Type)
	p[4] = m.Flags
	p[5] = 0 // reserved
	be.PutUint16(p[6:], m.Priority)
	be.PutUint32(p[8:], m.Cluster)
	be.PutUint64(p[12:], m.From)
	be.PutUint64(p[20:], m.Term)
	be.PutUint32(p[28:], m.Incarnation)
	be.PutUint32(p[32:], m.Seq)

	body := p[HeaderLen:]
	switch m.Type {
	case TypeCoordinator, TypeHeartbeat:
		be.PutUint32(body, m.Claim)
	case TypeProbe, TypeVouch:
		be.PutUint64(body, m.Leader)
		be.PutUint32(body[8:], m.Age)
	case TypeHeartbeatAck, TypeRingAck:
		be.PutUint32(body, m.AckSeq)
	case TypeDiscover:
		a := m.Addr.Addr().Unmap()
		if a.Is4() {
			body[0] = 4
			a4 := a.As4()
			copy(body[1:], a4[:])
		} else {
			body[0] = 16
			a16 := a.As16()
			copy(body[1:], a16[:])
		}
		be.PutUint16(body[1+body[0]:], m.Addr.Port())
	case TypeRingElection, TypeRingCoordinator:
		be.PutUint64(body, m.Origin)
		be.PutUint16(body[8:], uint16(len(m.List)))
		e := body[ringFixedLen:]
		for _, mem := range m.List {
			be.PutUint64(e, mem.ID)
			be.PutUint16(e[8:], mem.Priority)
			e = e[memberLen:]
		}
	case TypeCRElection, TypeCRElected:
		be.PutUint64(body, m.CandID)
		be.PutUint16(body[8:], m.CandPrio)
	case TypeHSProbe, TypeHSReply:
		be.PutUint64(body, m.CandID)
		be.PutUint16(body[8:], m.CandPrio)
		body[10] = m.Phase
		be.PutUint16(body[11:], m.Hops)
		body[13] = m.Dir
	}
	return b, nil
}

// Decode parses one message from b, which must hold exactly one message:
// the whole datagram minus any authentication tag. It fills every header
// field of m and the body fields of the decoded type, and zeroes all other
// body fields; m.List is truncated to length 0 and reused, so it keeps its
// capacity. The reserved header byte is ignored. Flags are returned as
// received, including bits this package does not define.
//
// Decode returns nil or exactly one of ErrShort, ErrBadMagic,
// ErrUnknownVersion, ErrUnknownType, ErrBadLength or ErrTrailing; see the
// rule in errors.go. On error the contents of m are unspecified, except
// that m.List still refers to its original backing array. Decode never
// panics, and it does not allocate unless a ring list needs more than
// cap(m.List) entries.
func Decode(b []byte, m *Message) error {
	if len(b) < HeaderLen {
		return ErrShort
	}
	// The header fields below are in bounds: len(b) >= HeaderLen.
	be := binary.BigEndian
	if be.Uint16(b[0:]) != Magic {
		return ErrBadMagic
	}
	if b[2] != Version {
		return ErrUnknownVersion
	}
	t := Type(b[3])
	if t == TypeInvalid || t >= typeEnd {
		return ErrUnknownType
	}
	*m = Message{
		Type:        t,
		Flags:       b[4],
		Priority:    be.Uint16(b[6:]),
		Cluster:     be.Uint32(b[8:]),
		From:        be.Uint64(b[12:]),
		Term:        be.Uint64(b[20:]),
		Incarnation: be.Uint32(b[28:]),
		Seq:         be.Uint32(b[32:]),
		List:        m.List[:0],
	}

	body := b[HeaderLen:]
	off := 0
	var err error
	switch t {
	case TypeElection, TypeAnswer, TypeResign, TypeNotice:
		// Empty body.
	case TypeCoordinator, TypeHeartbeat:
		m.Claim, off, err = unpackUint32(body, off)
	case TypeProbe, TypeVouch:
		m.Leader, off, err = unpackUint64(body, off)
		if err == nil {
			m.Age, off, err = unpackUint32(body, off)
		}
	case TypeHeartbeatAck, TypeRingAck:
		m.AckSeq, off, err = unpackUint32(body, off)
	case TypeDiscover:
		m.Addr, off, err = unpackAddrPort(body, off)
	case TypeRingElection, TypeRingCoordinator:
		m.Origin, m.List, off, err = unpackRing(body, off, m.List)
	case TypeCRElection, TypeCRElected:
		m.CandID, off, err = unpackUint64(body, off)
		if err == nil {
			m.CandPrio, off, err = unpackUint16(body, off)
		}
	case TypeHSProbe, TypeHSReply:
		off, err = unpackHS(body, off, m)
	}
	if err != nil {
		return err
	}
	if off != len(body) {
		return ErrTrailing
	}
	return nil
}

// The unpack helpers read one field of msg at off. Each checks that the
// field fits before reading it and returns the value and the offset just
// past the field, or ErrShort and the unchanged offset.

func unpackUint8(msg []byte, off int) (uint8, int, error) {
	if off+1 > len(msg) {
		return 0, off, ErrShort
	}
	return msg[off], off + 1, nil
}

func unpackUint16(msg []byte, off int) (uint16, int, error) {
	if off+2 > len(msg) {
		return 0, off, ErrShort
	}
	return binary.BigEndian.Uint16(msg[off:]), off + 2, nil
}

func unpackUint32(msg []byte, off int) (uint32, int, error) {
	if off+4 > len(msg) {
		return 0, off, ErrShort
	}
	return binary.BigEndian.Uint32(msg[off:]), off + 4, nil
}

func unpackUint64(msg []byte, off int) (uint64, int, error) {
	if off+8 > len(msg) {
		return 0, off, ErrShort
	}
	return binary.BigEndian.Uint64(msg[off:]), off + 8, nil
}

// unpackAddrPort reads a DISCOVER body: addr len u8 (4 or 16), the address,
// port u16. A length other than 4 or 16, or a 16-byte IPv4-mapped address
// (not the canonical encoding of an IPv4 address), is ErrBadLength.
func unpackAddrPort(msg []byte, off int) (netip.AddrPort, int, error) {
	alen, off, err := unpackUint8(msg, off)
	if err != nil {
		return netip.AddrPort{}, off, err
	}
	var a netip.Addr
	switch alen {
	case 4:
		if off+4 > len(msg) {
			return netip.AddrPort{}, off, ErrShort
		}
		a = netip.AddrFrom4([4]byte(msg[off : off+4]))
	case 16:
		if off+16 > len(msg) {
			return netip.AddrPort{}, off, ErrShort
		}
		a = netip.AddrFrom16([16]byte(msg[off : off+16]))
		if a.Is4In6() {
			return netip.AddrPort{}, off, ErrBadLength
		}
	default:
		return netip.AddrPort{}, off, ErrBadLength
	}
	off += int(alen)
	port, off, err := unpackUint16(msg, off)
	if err != nil {
		return netip.AddrPort{}, off, err
	}
	return netip.AddrPortFrom(a, port), off, nil
}

// unpackRing reads a ring body: origin u64, count u16, count × (id u64,
// priority u16). It appends the entries to list, which the caller passes
// with length 0, allocating a new backing array only if cap(list) is less
// than count. A count above MaxMembers is
// ErrBadLength, checked before the entries' presence.
func unpackRing(msg []byte, off int, list []Member) (uint64, []Member, int, error) {
	origin, off, err := unpackUint64(msg, off)
	if err != nil {
		return 0, list, off, err
	}
	count, off, err := unpackUint16(msg, off)
	if err != nil {
		return 0, list, off, err
	}
	if count > MaxMembers {
		return 0, list, off, ErrBadLength
	}
	n := int(count)
	if n*memberLen > len(msg)-off {
		return 0, list, off, ErrShort
	}
	if cap(list) < n {
		list = make([]Member, 0, n) // list is empty: nothing to copy
	}
	be := binary.BigEndian
	for range n {
		e := msg[off : off+memberLen]
		list = append(list, Member{ID: be.Uint64(e), Priority: be.Uint16(e[8:])})
		off += memberLen
	}
	return origin, list, off, nil
}

// unpackHS reads a Hirschberg–Sinclair body into m: candidate id u64,
// priority u16, phase u8, hops u16, dir u8. Phase and Dir are returned as
// received; judging their values is the caller's job.
func unpackHS(msg []byte, off int, m *Message) (int, error) {
	if off+hsBodyLen > len(msg) {
		return off, ErrShort
	}
	be := binary.BigEndian
	m.CandID = be.Uint64(msg[off:])
	m.CandPrio = be.Uint16(msg[off+8:])
	m.Phase = msg[off+10]
	m.Hops = be.Uint16(msg[off+11:])
	m.Dir = msg[off+13]
	return off + hsBodyLen, nil
}
