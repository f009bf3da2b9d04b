package wire

import (
	"bytes"
	"testing"
)

// The body fuzz targets: one per shape of body, each building a valid
// header of one of that shape's types (picked by the first input byte)
// around arbitrary body bytes, so that the fuzzer spends its time inside
// the body's parser instead of on the magic and version. Each checks what
// FuzzDecode checks: Decode never panics, returns only its sentinels, and
// what it accepts re-encodes to the same bytes and decodes back equal.
// Their committed seed corpora are in testdata/fuzz/<target>; CI runs each
// for a bounded time (test.sh, LANLEADER_FUZZTIME).

// bodyHeader is a valid header of type t with the header fields from the
// fuzzer's integers.
func bodyHeader(t Type, flags uint8, prio uint16, term uint64, seq uint32) []byte {
	m := Message{Type: TypeElection, Flags: flags, Priority: prio, Cluster: 0x5cc3f828, From: 0x1122334455667788, Term: term,
		Incarnation: 0x65a1b2c3, Seq: seq}
	b, err := m.Append(nil)
	if err != nil {
		panic(err)
	}
	b[3] = uint8(t) // a header is the same for every type
	return b
}

// checkDecode is the property every decode target checks on one
// datagram: Decode leaves its input alone and fails only with one of its
// sentinels; what it accepts re-encodes to the same bytes (the reserved
// byte zeroed) of the size Size says, and decodes the same into a reused
// Message. It returns the decoded message and its encoding, ok false when
// Decode refused b.
func checkDecode(t *testing.T, b []byte) (m Message, enc []byte, ok bool) {
	in := bytes.Clone(b)
	err := Decode(b, &m)
	if !bytes.Equal(b, in) {
		t.Fatal("Decode modified its input")
	}
	if err != nil {
		for _, e := range decodeErrors {
			if err == e {
				return m, nil, false
			}
		}
		t.Fatalf("Decode returned %#v, not one of its sentinels", err)
	}
	enc, err = m.Append(nil)
	if err != nil {
		t.Fatalf("Append(Decode(%x)): %v", b, err)
	}
	want := bytes.Clone(b)
	want[5] = 0
	if !bytes.Equal(enc, want) {
		t.Fatalf("Append(Decode(b)) != b:\n got %x\nwant %x", enc, want)
	}
	if m.Size() != len(enc) {
		t.Fatalf("Size() = %d, Append wrote %d", m.Size(), len(enc))
	}
	stale := junk(TypeRingCoordinator)
	if err := Decode(b, &stale); err != nil || !equalMessage(&stale, &m) {
		t.Fatalf("Decode into a reused Message: %v, %+v; want %+v", err, stale, m)
	}
	return m, enc, true
}

// fuzzBody runs the body target of the types ts: seeds are the golden
// bodies of those types, and their cuts and extensions by one byte.
func fuzzBody(f *testing.F, ts ...Type) {
	for _, g := range goldens() {
		for i, t := range ts {
			if g.msg.Type != t {
				continue
			}
			body := mustAppend(f, &g.msg)[HeaderLen:]
			f.Add(uint8(i), uint8(0), uint16(100), uint64(7), uint32(42), body)
			if len(body) > 0 {
				f.Add(uint8(i), uint8(FlagAuth), uint16(1), uint64(1<<63), uint32(0), body[:len(body)-1])
			}
			f.Add(uint8(i), uint8(0xff), uint16(0xffff), uint64(0), uint32(0xffffffff), append(bytes.Clone(body), 0))
		}
	}
	f.Fuzz(func(t *testing.T, which, flags uint8, prio uint16, term uint64, seq uint32, body []byte) {
		typ := ts[int(which)%len(ts)]
		checkDecode(t, append(bodyHeader(typ, flags, prio, term, seq), body...))
	})
}

// FuzzBodyEmpty: ELECTION, ANSWER, RESIGN (no body: any byte is
// trailing).
func FuzzBodyEmpty(f *testing.F) {
	fuzzBody(f, TypeElection, TypeAnswer, TypeResign, TypeNotice)
}

// FuzzBodyUint32: HEARTBEAT and COORDINATOR (a claim number),
// HEARTBEAT_ACK (the claim acknowledged) and RING_ACK (a hop token).
func FuzzBodyUint32(f *testing.F) {
	fuzzBody(f, TypeHeartbeat, TypeHeartbeatAck, TypeRingAck, TypeCoordinator)
}

// FuzzBodyProbe: PROBE and VOUCH (leader, age in microseconds).
func FuzzBodyProbe(f *testing.F) {
	fuzzBody(f, TypeProbe, TypeVouch)
}

// FuzzBodyDiscover: DISCOVER (address length, address, port).
func FuzzBodyDiscover(f *testing.F) {
	fuzzBody(f, TypeDiscover)
}

// FuzzBodyRing: RING_ELECTION and RING_COORDINATOR (origin, count, list).
func FuzzBodyRing(f *testing.F) {
	fuzzBody(f, TypeRingElection, TypeRingCoordinator)
}

// FuzzBodyCR: CR_ELECTION and CR_ELECTED (candidate id and priority).
func FuzzBodyCR(f *testing.F) {
	fuzzBody(f, TypeCRElection, TypeCRElected)
}

// FuzzBodyHS: HS_PROBE and HS_REPLY (candidate, phase, hops, direction).
func FuzzBodyHS(f *testing.F) {
	fuzzBody(f, TypeHSProbe, TypeHSReply)
}

// FuzzOpen is the receive path of an authenticated cluster: Split, then
// Decode and Verify, on any datagram. It checks that nothing panics, that
// a datagram that verifies is exactly a message sealed under the key
// (re-sealing what decoded gives the same bytes), and that a sealed
// message still verifies after the fuzzer's bytes were used to build it.
func FuzzOpen(f *testing.F) {
	mac := NewMAC(testKey())
	for _, g := range goldens() {
		m := g.msg
		m.Flags = FlagAuth
		f.Add(mac.Seal(mustAppend(f, &m)))
		f.Add(mustAppend(f, &g.msg))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		msg, tag := Split(b)
		if tag == nil {
			if len(b) >= HeaderLen+TagLen && b[4]&FlagAuth != 0 {
				t.Fatal("Split found no tag in a long enough flagged datagram")
			}
			return
		}
		if len(msg)+len(tag) != len(b) || len(tag) != TagLen {
			t.Fatalf("Split: %d + %d bytes of %d", len(msg), len(tag), len(b))
		}
		var m Message
		derr := Decode(msg, &m)
		if !mac.Verify(msg, tag) {
			return
		}
		// Only a message sealed under the key verifies; the fuzzer cannot
		// forge one, but the seeds are such messages.
		if derr != nil {
			t.Fatalf("a datagram that verifies does not decode: %v", derr)
		}
		enc, err := m.Append(nil)
		if err != nil {
			t.Fatal(err)
		}
		want := bytes.Clone(b)
		want[5] = 0
		if re := mac.Seal(enc); !bytes.Equal(re, want) && b[5] == 0 {
			t.Fatalf("re-sealing the decoded message:\n got %x\nwant %x", re, want)
		}
	})
}
