package wire

import (
	"bytes"
	"errors"
	"math"
	"net/netip"
	"testing"
)

func TestClusterID(t *testing.T) {
	// Values from `printf %s NAME | sha256sum`, first 8 hex digits.
	for _, tc := range []struct {
		name string
		want uint32
	}{
		{"", 0xe3b0c442},
		{"office", 0x5cc3f828},
		{"lanleader", 0x9f485366},
	} {
		if got := ClusterID(tc.name); got != tc.want {
			t.Errorf("ClusterID(%q) = %#08x, want %#08x", tc.name, got, tc.want)
		}
	}
}

func TestFileNamesCoverEnum(t *testing.T) {
	if typeEnd != TypeNotice+1 || NumTypes != int(TypeNotice)+1 {
		t.Fatalf("typeEnd = %d, NumTypes = %d, want %d (one past TypeNotice)", typeEnd, NumTypes, TypeNotice+1)
	}
	if len(fileNames) != len(allTypes()) {
		t.Fatalf("fileNames has %d entries, the enum has %d valid types", len(fileNames), len(allTypes()))
	}
	for _, typ := range allTypes() {
		if fileNames[typ] == "" {
			t.Errorf("type %d has no name", typ)
		}
	}
}

// maxHeader returns a header with every field at its maximum.
func maxHeader(t Type) Message {
	return Message{
		Type:        t,
		Flags:       math.MaxUint8,
		Priority:    math.MaxUint16,
		Cluster:     math.MaxUint32,
		From:        math.MaxUint64,
		Term:        math.MaxUint64,
		Incarnation: math.MaxUint32,
		Seq:         math.MaxUint32,
	}
}

// members returns n members; with max set, every field is at its maximum.
func members(n int, max bool) []Member {
	l := make([]Member, n)
	for i := range l {
		if max {
			l[i] = Member{ID: math.MaxUint64, Priority: math.MaxUint16}
		} else {
			l[i] = Member{ID: uint64(i)*0x0101010101 + 1, Priority: uint16(i * 7)}
		}
	}
	return l
}

// roundTripCases returns, for every type, messages with zero, maximal and
// ordinary values.
func roundTripCases() []Message {
	var ms []Message
	for _, g := range goldens() {
		ms = append(ms, g.msg)
	}
	addrs := []string{
		"0.0.0.0:0", "10.0.0.1:1", "255.255.255.255:65535",
		"[::]:0", "[::1]:7946", "[fe80::1]:7946", "[2001:db8::ffff:0:1]:80",
		"[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535",
	}
	for _, typ := range allTypes() {
		zero := Message{Type: typ}
		max := maxHeader(typ)
		switch typ {
		case TypeHeartbeat:
			max.Claim = math.MaxUint32
		case TypeHeartbeatAck, TypeRingAck:
			max.AckSeq = math.MaxUint32
		case TypeDiscover:
			for _, a := range addrs {
				z, x := zero, max
				z.Addr = netip.MustParseAddrPort(a)
				x.Addr = z.Addr
				ms = append(ms, z, x)
			}
			continue
		case TypeRingElection, TypeRingCoordinator:
			max.Origin = math.MaxUint64
			max.List = members(MaxMembers, true)
			one := zero
			one.List = members(1, false)
			long := zero
			long.Origin = 12345
			long.List = members(MaxMembers, false)
			ms = append(ms, one, long)
		case TypeCRElection, TypeCRElected:
			max.CandID, max.CandPrio = math.MaxUint64, math.MaxUint16
		case TypeHSProbe, TypeHSReply:
			max.CandID, max.CandPrio = math.MaxUint64, math.MaxUint16
			max.Phase, max.Hops, max.Dir = math.MaxUint8, math.MaxUint16, math.MaxUint8
		}
		ms = append(ms, zero, max)
	}
	return ms
}

func TestRoundTrip(t *testing.T) {
	for _, m := range roundTripCases() {
		enc := mustAppend(t, &m)
		if enc[5] != 0 {
			t.Errorf("type %d: reserved byte encoded as %#x, want 0", m.Type, enc[5])
		}
		if got := m.Size(); got != len(enc) {
			t.Errorf("type %d: Size() = %d, Append wrote %d bytes", m.Type, got, len(enc))
		}
		var d Message
		if err := Decode(enc, &d); err != nil {
			t.Errorf("type %d: Decode(Append(%+v)): %v", m.Type, m, err)
			continue
		}
		if !equalMessage(&d, &m) {
			t.Errorf("type %d: round trip:\n got %+v\nwant %+v", m.Type, d, m)
		}
		// Appending after existing bytes keeps them and adds the same encoding.
		prefix := []byte("prefix")
		got, err := m.Append(prefix)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[:len(prefix)], []byte("prefix")) || !bytes.Equal(got[len(prefix):], enc) {
			t.Errorf("type %d: Append(prefix) = %x, want prefix + %x", m.Type, got, enc)
		}
	}
}

// TestDecodeEmptyListIsNilForFreshMessage pins that an empty ring list
// decodes, into a zero Message, to a nil List: nothing is allocated.
func TestDecodeEmptyListIsNilForFreshMessage(t *testing.T) {
	m := Message{Type: TypeRingElection, Origin: 5}
	var d Message
	if err := Decode(mustAppend(t, &m), &d); err != nil {
		t.Fatal(err)
	}
	if d.List != nil || d.Origin != 5 {
		t.Errorf("Decode = %+v, want Origin 5 and nil List", d)
	}
}

func TestSizes(t *testing.T) {
	v4 := netip.MustParseAddrPort("10.0.0.1:1")
	v6 := netip.MustParseAddrPort("[::1]:1")
	for _, tc := range []struct {
		m    Message
		want int
	}{
		{Message{Type: TypeElection}, 36},
		{Message{Type: TypeAnswer}, 36},
		{Message{Type: TypeCoordinator}, 40},
		{Message{Type: TypeResign}, 36},
		{Message{Type: TypeNotice}, 36},
		{Message{Type: TypeProbe}, 48},
		{Message{Type: TypeVouch}, 48},
		{Message{Type: TypeHeartbeat}, 40},
		{Message{Type: TypeHeartbeatAck}, 40},
		{Message{Type: TypeRingAck}, 40},
		{Message{Type: TypeDiscover, Addr: v4}, 43},
		{Message{Type: TypeDiscover, Addr: v6}, 55},
		{Message{Type: TypeRingElection}, 46},
		{Message{Type: TypeRingCoordinator, List: make([]Member, 3)}, 76},
		{Message{Type: TypeRingElection, List: make([]Member, MaxMembers)}, 46 + 10*MaxMembers},
		{Message{Type: TypeCRElection}, 46},
		{Message{Type: TypeCRElected}, 46},
		{Message{Type: TypeHSProbe}, 50},
		{Message{Type: TypeHSReply}, 50},
	} {
		if got := tc.m.Size(); got != tc.want {
			t.Errorf("type %d: Size() = %d, want %d", tc.m.Type, got, tc.want)
		}
		if got := len(mustAppend(t, &tc.m)); got != tc.want {
			t.Errorf("type %d: len(Append) = %d, want %d", tc.m.Type, got, tc.want)
		}
	}
}

// TestHeartbeatFitsIn40Bytes guards the size of the most frequent message.
func TestHeartbeatFitsIn40Bytes(t *testing.T) {
	m := maxHeader(TypeHeartbeat)
	m.Claim = math.MaxUint32
	if n := len(mustAppend(t, &m)); n > 40 {
		t.Errorf("HEARTBEAT encodes to %d bytes, want at most 40", n)
	}
}

func TestAppendErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Message
		want error
	}{
		{"type 0", Message{Type: TypeInvalid}, ErrUnknownType},
		{"type typeEnd", Message{Type: typeEnd}, ErrUnknownType},
		{"type 255", Message{Type: 255}, ErrUnknownType},
		{"ring list MaxMembers+1", Message{Type: TypeRingElection, List: make([]Member, MaxMembers+1)}, ErrBadLength},
		{"ring coordinator list MaxMembers+1", Message{Type: TypeRingCoordinator, List: make([]Member, MaxMembers+1)}, ErrBadLength},
		{"discover zero addr", Message{Type: TypeDiscover}, ErrBadAddr},
		{"discover zoned IPv6", Message{Type: TypeDiscover, Addr: netip.MustParseAddrPort("[fe80::1%eth0]:7946")}, ErrBadAddr},
		{"discover zoned 4-in-6", Message{Type: TypeDiscover, Addr: netip.MustParseAddrPort("[::ffff:10.0.0.1%eth0]:7946")}, ErrBadAddr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf := []byte("keep")
			got, err := tc.m.Append(buf)
			if err != tc.want {
				t.Errorf("Append error = %v, want %v", err, tc.want)
			}
			if !bytes.Equal(got, []byte("keep")) {
				t.Errorf("Append returned %q on error, want the input unchanged", got)
			}
			if n := tc.m.Size(); n != 0 {
				t.Errorf("Size() = %d for an unencodable message, want 0", n)
			}
		})
	}
}

// TestAppendUnmaps4In6 checks that an IPv4-mapped IPv6 address is encoded
// in its 4-byte form and decodes as plain IPv4.
func TestAppendUnmaps4In6(t *testing.T) {
	m := Message{Type: TypeDiscover, Addr: netip.MustParseAddrPort("[::ffff:192.168.1.20]:7946")}
	plain := Message{Type: TypeDiscover, Addr: netip.MustParseAddrPort("192.168.1.20:7946")}
	enc := mustAppend(t, &m)
	if want := mustAppend(t, &plain); !bytes.Equal(enc, want) {
		t.Fatalf("Append(4-in-6) = %x, want %x", enc, want)
	}
	if m.Size() != len(enc) {
		t.Errorf("Size() = %d, want %d", m.Size(), len(enc))
	}
	var d Message
	if err := Decode(enc, &d); err != nil {
		t.Fatal(err)
	}
	if d.Addr != plain.Addr {
		t.Errorf("decoded Addr = %v, want %v", d.Addr, plain.Addr)
	}
}

// junk returns a message of type t with every header and body field set to
// a non-zero value, including the body fields t does not carry.
func junk(t Type) Message {
	return Message{
		Type: t, Flags: 0x80, Priority: 1, Cluster: 2, From: 3, Term: 4, Incarnation: 5, Seq: 6,
		Claim: 7, AckSeq: 8, Addr: netip.MustParseAddrPort("[2001:db8::9]:9"),
		CandID: 10, CandPrio: 11, Phase: 12, Hops: 13, Dir: 14,
		Origin: 15, List: []Member{{16, 17}, {18, 19}}, Leader: 20, Age: 21,
	}
}

// carried returns the header of src and only the body fields that type
// src.Type carries, per the Type comments in message.go.
func carried(src *Message) Message {
	m := *src
	m.Claim, m.AckSeq, m.Addr = 0, 0, netip.AddrPort{}
	m.CandID, m.CandPrio, m.Phase, m.Hops, m.Dir = 0, 0, 0, 0, 0
	m.Origin, m.List = 0, nil
	m.Leader, m.Age = 0, 0
	switch src.Type {
	case TypeCoordinator, TypeHeartbeat:
		m.Claim = src.Claim
	case TypeProbe, TypeVouch:
		m.Leader, m.Age = src.Leader, src.Age
	case TypeHeartbeatAck, TypeRingAck:
		m.AckSeq = src.AckSeq
	case TypeDiscover:
		m.Addr = src.Addr
	case TypeRingElection, TypeRingCoordinator:
		m.Origin, m.List = src.Origin, src.List
	case TypeCRElection, TypeCRElected:
		m.CandID, m.CandPrio = src.CandID, src.CandPrio
	case TypeHSProbe, TypeHSReply:
		m.CandID, m.CandPrio, m.Phase, m.Hops, m.Dir = src.CandID, src.CandPrio, src.Phase, src.Hops, src.Dir
	}
	return m
}

// TestOnlyCarriedFieldsTravel checks that Append ignores, and Decode
// zeroes, the body fields of other types.
func TestOnlyCarriedFieldsTravel(t *testing.T) {
	for _, typ := range allTypes() {
		j := junk(typ)
		want := carried(&j)
		if got, exp := mustAppend(t, &j), mustAppend(t, &want); !bytes.Equal(got, exp) {
			t.Errorf("type %d: Append encodes fields the type does not carry:\n got %x\nwant %x", typ, got, exp)
		}
		var d Message
		if err := Decode(mustAppend(t, &j), &d); err != nil {
			t.Fatal(err)
		}
		if !equalMessage(&d, &want) {
			t.Errorf("type %d: Decode:\n got %+v\nwant %+v", typ, d, want)
		}
	}
}

// TestDecodeResetsReusedMessage decodes every golden packet into a Message
// that last held each other type (and a junk-filled one) and checks that
// nothing stale survives.
func TestDecodeResetsReusedMessage(t *testing.T) {
	gs := goldens()
	for _, next := range gs {
		enc := readGolden(t, next.file)
		var fresh Message
		if err := Decode(enc, &fresh); err != nil {
			t.Fatal(err)
		}
		prevs := []Message{}
		for _, typ := range allTypes() {
			prevs = append(prevs, junk(typ))
		}
		for _, prev := range gs {
			prevs = append(prevs, prev.msg)
		}
		for _, prev := range prevs {
			var m Message
			if err := Decode(mustAppend(t, &prev), &m); err != nil {
				t.Fatal(err)
			}
			if err := Decode(enc, &m); err != nil {
				t.Fatal(err)
			}
			if !equalMessage(&m, &fresh) {
				t.Errorf("%s decoded over type %d:\n got %+v\nwant %+v", next.file, prev.Type, m, fresh)
			}
		}
	}
}

// TestDecodeReusesListCapacity checks that a ring list is decoded into the
// caller's backing array.
func TestDecodeReusesListCapacity(t *testing.T) {
	m := Message{List: make([]Member, 0, 8)}
	backing := &m.List[:1][0]
	if err := Decode(readGolden(t, "09_ring_coordinator.hex"), &m); err != nil {
		t.Fatal(err)
	}
	if len(m.List) != 3 || &m.List[0] != backing {
		t.Errorf("Decode did not reuse List's backing array (len %d)", len(m.List))
	}
	if err := Decode(readGolden(t, "04_heartbeat.hex"), &m); err != nil {
		t.Fatal(err)
	}
	if len(m.List) != 0 || cap(m.List) != 8 {
		t.Errorf("after a HEARTBEAT, List has len %d cap %d, want len 0 cap 8", len(m.List), cap(m.List))
	}
}

// TestDecodeIgnoresReserved checks that the reserved byte does not affect
// decoding.
func TestDecodeIgnoresReserved(t *testing.T) {
	b := bytes.Clone(heartbeatWire[:])
	b[5] = 0xa5
	var m, want Message
	if err := Decode(b, &m); err != nil {
		t.Fatal(err)
	}
	if err := Decode(heartbeatWire[:], &want); err != nil {
		t.Fatal(err)
	}
	if !equalMessage(&m, &want) {
		t.Errorf("reserved byte changed the result:\n got %+v\nwant %+v", m, want)
	}
}

// header returns a 36-byte header with type byte t, valid or not.
func header(t Type) []byte {
	m := goldenHeader(TypeElection) // empty body: the encoding is the header
	b, err := m.Append(nil)
	if err != nil {
		panic(err)
	}
	b[3] = byte(t)
	return b
}

// packet returns header(t) followed by the body bytes.
func packet(t Type, body ...[]byte) []byte {
	b := header(t)
	for _, p := range body {
		b = append(b, p...)
	}
	return b
}

// withByte returns a copy of b with b[i] = v.
func withByte(b []byte, i int, v byte) []byte {
	b = bytes.Clone(b)
	b[i] = v
	return b
}

// ringBody returns origin, a count field and n zeroed entries.
func ringBody(count uint16, n int) []byte {
	b := make([]byte, 8, 10+n*memberLen)
	b = append(b, byte(count>>8), byte(count))
	return append(b, make([]byte, n*memberLen)...)
}

func repeat(n int) []byte { return bytes.Repeat([]byte{0xab}, n) }

func TestDecodeErrors(t *testing.T) {
	hb := heartbeatWire[:]
	v6 := []byte{16, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}
	mapped := []byte{16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1}
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		// Header, in check order.
		{"nil", nil, ErrShort},
		{"empty", []byte{}, ErrShort},
		{"35 bytes", hb[:35], ErrShort},
		{"35 bytes of garbage", repeat(35), ErrShort},
		{"bad magic first byte", withByte(hb, 0, 'l'), ErrBadMagic},
		{"bad magic second byte", withByte(hb, 1, 0), ErrBadMagic},
		{"bad magic before bad version", withByte(withByte(hb, 0, 0), 2, 9), ErrBadMagic},
		{"version 0", withByte(hb, 2, 0), ErrUnknownVersion},
		{"version 1", withByte(hb, 2, 1), ErrUnknownVersion},
		{"version 3", withByte(hb, 2, 3), ErrUnknownVersion},
		{"bad version before bad type", withByte(withByte(hb, 2, 3), 3, 0), ErrUnknownVersion},
		{"type 0", packet(0), ErrUnknownType},
		{"type 18", packet(18), ErrUnknownType},
		{"type 255", packet(255), ErrUnknownType},
		{"bad type before short body", withByte(hb[:37], 3, 255), ErrUnknownType},

		// Fixed-size bodies: short is ErrShort, long is ErrTrailing.
		{"election 1 trailing byte", packet(TypeElection, []byte{0}), ErrTrailing},
		{"resign 4 trailing bytes", packet(TypeResign, repeat(4)), ErrTrailing},
		{"notice 1 trailing byte", packet(TypeNotice, repeat(1)), ErrTrailing},
		{"heartbeat empty body", hb[:36], ErrShort},
		{"heartbeat 3 body bytes", hb[:39], ErrShort},
		{"heartbeat 5 body bytes", append(bytes.Clone(hb), 0), ErrTrailing},
		{"heartbeat ack 2 body bytes", packet(TypeHeartbeatAck, repeat(2)), ErrShort},
		{"coordinator empty body", packet(TypeCoordinator), ErrShort},
		{"coordinator 5 body bytes", packet(TypeCoordinator, repeat(5)), ErrTrailing},
		{"probe empty body", packet(TypeProbe), ErrShort},
		{"probe 11 body bytes", packet(TypeProbe, repeat(11)), ErrShort},
		{"vouch 8 body bytes", packet(TypeVouch, repeat(8)), ErrShort},
		{"vouch 13 body bytes", packet(TypeVouch, repeat(13)), ErrTrailing},
		{"ring ack 8 body bytes", packet(TypeRingAck, repeat(8)), ErrTrailing},
		{"cr election 9 body bytes", packet(TypeCRElection, repeat(9)), ErrShort},
		{"cr elected 11 body bytes", packet(TypeCRElected, repeat(11)), ErrTrailing},
		{"hs probe 13 body bytes", packet(TypeHSProbe, repeat(13)), ErrShort},
		{"hs reply 15 body bytes", packet(TypeHSReply, repeat(15)), ErrTrailing},

		// Ring lists.
		{"ring empty body", packet(TypeRingElection), ErrShort},
		{"ring origin only", packet(TypeRingElection, repeat(8)), ErrShort},
		{"ring half a count", packet(TypeRingElection, repeat(9)), ErrShort},
		{"ring count MaxMembers+1 no entries", packet(TypeRingElection, ringBody(MaxMembers+1, 0)), ErrBadLength},
		{"ring count MaxMembers+1 all entries", packet(TypeRingCoordinator, ringBody(MaxMembers+1, MaxMembers+1)), ErrBadLength},
		{"ring count 0xffff", packet(TypeRingCoordinator, ringBody(0xffff, 0)), ErrBadLength},
		{"ring count exceeds data", packet(TypeRingElection, ringBody(3, 2)), ErrShort},
		{"ring count 1 with 9 entry bytes", packet(TypeRingElection, ringBody(1, 0), repeat(9)), ErrShort},
		{"ring count MaxMembers one entry short", packet(TypeRingElection, ringBody(MaxMembers, MaxMembers-1)), ErrShort},
		{"ring byte after list", packet(TypeRingCoordinator, ringBody(2, 2), []byte{0}), ErrTrailing},
		{"ring entry after list", packet(TypeRingCoordinator, ringBody(1, 2)), ErrTrailing},

		// DISCOVER.
		{"discover empty body", packet(TypeDiscover), ErrShort},
		{"discover addr length 0", packet(TypeDiscover, []byte{0}), ErrBadLength},
		{"discover addr length 5", packet(TypeDiscover, []byte{5, 1, 2, 3, 4, 5, 0, 80}), ErrBadLength},
		{"discover addr length 5 no data", packet(TypeDiscover, []byte{5}), ErrBadLength},
		{"discover addr length 255", packet(TypeDiscover, []byte{255}), ErrBadLength},
		{"discover truncated IPv4", packet(TypeDiscover, []byte{4, 10, 0, 0}), ErrShort},
		{"discover truncated inside IPv6", packet(TypeDiscover, v6[:9]), ErrShort},
		{"discover IPv6 without port", packet(TypeDiscover, v6), ErrShort},
		{"discover IPv4 half a port", packet(TypeDiscover, []byte{4, 10, 0, 0, 1, 0}), ErrShort},
		{"discover IPv4 trailing", packet(TypeDiscover, []byte{4, 10, 0, 0, 1, 0, 80, 0}), ErrTrailing},
		{"discover IPv6 trailing", packet(TypeDiscover, v6, []byte{0, 80, 1}), ErrTrailing},
		{"discover 16-byte IPv4-mapped", packet(TypeDiscover, mapped, []byte{0, 80}), ErrBadLength},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m Message
			err := Decode(tc.in, &m)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decode(%x) = %v, want %v", tc.in, err, tc.want)
			}
			if err != tc.want {
				t.Errorf("Decode(%x) = %#v, want the bare sentinel %v", tc.in, err, tc.want)
			}
		})
	}
}

// TestDecodeValidEdges pins the boundaries just inside the rules that
// TestDecodeErrors pins from outside.
func TestDecodeValidEdges(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"election exactly 36 bytes", packet(TypeElection)},
		{"type 14, the last type", packet(TypeHSReply, repeat(14))},
		{"ring count MaxMembers", packet(TypeRingElection, ringBody(MaxMembers, MaxMembers))},
		{"ring count 0", packet(TypeRingCoordinator, ringBody(0, 0))},
		{"discover IPv4", packet(TypeDiscover, []byte{4, 10, 0, 0, 1, 0, 80})},
		{"discover IPv4-compatible ::a00:1", packet(TypeDiscover, []byte{16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1, 0, 80})},
		{"all flags set", withByte(heartbeatWire[:], 4, 0xff)},
	} {
		var m Message
		if err := Decode(tc.in, &m); err != nil {
			t.Errorf("%s: Decode = %v, want nil", tc.name, err)
		}
	}
}
