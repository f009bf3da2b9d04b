package wire

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// testKey is the key of the pinned tags: bytes 0x00 … 0x1f.
func testKey() []byte {
	k := make([]byte, 32)
	for i := range k {
		k[i] = byte(i)
	}
	return k
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMACIsHMACSHA256 pins the tag to the standard algorithm: RFC 4231
// test case 6 (a 131-byte key), truncated to TagLen bytes.
func TestMACIsHMACSHA256(t *testing.T) {
	key := bytes.Repeat([]byte{0xaa}, 131)
	data := []byte("Test Using Larger Than Block-Size Key - Hash Key First")
	full := mustHex(t, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
	m := NewMAC(key)
	if !m.Verify(data, full[:TagLen]) {
		t.Fatal("RFC 4231 case 6: the truncated tag does not verify")
	}
	if m.Verify(data, full) {
		t.Fatal("a 32-byte tag verified: only TagLen bytes are a tag")
	}
	if m.Verify(data, full[:TagLen-1]) {
		t.Fatal("a 15-byte tag verified")
	}
}

// TestSealGolden pins the bytes of a sealed COORDINATOR (golden 03 with
// FlagAuth): the tag is the first 16 bytes of
// `openssl dgst -sha256 -mac HMAC -macopt hexkey:000102…1f` of the 40
// bytes before it.
func TestSealGolden(t *testing.T) {
	m := goldenHeader(TypeCoordinator)
	m.Flags, m.Claim = FlagAuth, 1
	b := mustAppend(t, &m)
	got := NewMAC(testKey()).Seal(b)
	want := mustHex(t, "4c4c020301000064"+"5cc3f828"+"1122334455667788"+"0000000000000007"+"65a1b2c3"+"0000002a"+"00000001"+
		"1ce095bd14bf37084fccbb6f3506e418")
	if !bytes.Equal(got, want) {
		t.Fatalf("sealed COORDINATOR:\n got %x\nwant %x", got, want)
	}
}

// TestSealOpen seals every golden message, then checks that Split and
// Decode give the message back, that the tag verifies, and that every
// single-bit change, a cut, an extra byte or another key does not.
func TestSealOpen(t *testing.T) {
	mac, other := NewMAC(testKey()), NewMAC(bytes.Repeat([]byte{7}, 32))
	for _, g := range goldens() {
		m := g.msg
		m.Flags = FlagAuth
		sealed := mac.Seal(mustAppend(t, &m))
		if len(sealed) != m.Size()+TagLen {
			t.Fatalf("%s: sealed %d bytes, want %d", g.file, len(sealed), m.Size()+TagLen)
		}
		msg, tag := Split(sealed)
		if len(tag) != TagLen || !mac.Verify(msg, tag) {
			t.Fatalf("%s: the tag of a sealed message does not verify", g.file)
		}
		var back Message
		if err := Decode(msg, &back); err != nil || !equalMessage(&back, &m) {
			t.Fatalf("%s: Decode(Split(Seal(m))) = %+v, %v; want %+v", g.file, back, err, m)
		}
		if other.Verify(msg, tag) {
			t.Fatalf("%s: verified under another key", g.file)
		}
		for i := range len(sealed) * 8 {
			flipped := bytes.Clone(sealed)
			flipped[i/8] ^= 1 << (i % 8)
			if msg, tag := Split(flipped); tag != nil && mac.Verify(msg, tag) {
				t.Fatalf("%s: flipping bit %d still verifies", g.file, i)
			}
		}
		for _, b := range [][]byte{sealed[:len(sealed)-1], append(bytes.Clone(sealed), 0), sealed[:HeaderLen]} {
			if msg, tag := Split(b); tag != nil && mac.Verify(msg, tag) {
				t.Fatalf("%s: a %d-byte cut or extension verifies", g.file, len(b))
			}
		}
	}
}

func TestSplit(t *testing.T) {
	m := goldenHeader(TypeElection)
	plain := mustAppend(t, &m)
	if msg, tag := Split(plain); tag != nil || !bytes.Equal(msg, plain) {
		t.Errorf("Split without FlagAuth = %x, %x; want the packet and no tag", msg, tag)
	}
	m.Flags = FlagAuth
	flagged := mustAppend(t, &m) // FlagAuth but no room for a tag
	if msg, tag := Split(flagged); tag != nil || len(msg) != HeaderLen {
		t.Errorf("Split of a flagged 36-byte packet = %d bytes, tag %x; want no tag", len(msg), tag)
	}
	if msg, tag := Split(flagged[:3]); tag != nil || len(msg) != 3 {
		t.Errorf("Split of 3 bytes = %x, %x", msg, tag)
	}
	sealed := NewMAC(testKey()).Seal(bytes.Clone(flagged))
	if msg, tag := Split(sealed); len(msg) != HeaderLen || len(tag) != TagLen {
		t.Errorf("Split of a sealed packet: %d + %d bytes, want %d + %d", len(msg), len(tag), HeaderLen, TagLen)
	}
	if got := NewMAC(testKey()).Seal(bytes.Clone(plain)); !bytes.Equal(got, plain) {
		t.Errorf("Seal without FlagAuth changed the packet: %x", got)
	}
}

func TestNewMACShortKeyPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("NewMAC of a 31-byte key did not panic")
		}
	}()
	NewMAC(make([]byte, MinKeyLen-1))
}

func TestSealVerifyNoAllocs(t *testing.T) {
	mac := NewMAC(testKey())
	m := goldenHeader(TypeHeartbeat)
	m.Flags, m.Claim = FlagAuth, 100
	buf := make([]byte, 0, 64)
	var sealed []byte
	assertNoAllocs(t, "Append+Seal", func() {
		b, _ := m.Append(buf[:0])
		sealed = mac.Seal(b)
	})
	msg, tag := Split(sealed)
	assertNoAllocs(t, "Verify", func() {
		if !mac.Verify(msg, tag) {
			t.Fatal("does not verify")
		}
	})
}

func BenchmarkSeal(b *testing.B) {
	mac := NewMAC(testKey())
	m := goldenHeader(TypeHeartbeat)
	m.Flags = FlagAuth
	buf := make([]byte, 0, 64)
	for b.Loop() {
		p, _ := m.Append(buf[:0])
		mac.Seal(p)
	}
}

func BenchmarkVerify(b *testing.B) {
	mac := NewMAC(testKey())
	m := goldenHeader(TypeCoordinator)
	m.Flags = FlagAuth
	sealed := mac.Seal(mustAppend(b, &m))
	msg, tag := Split(sealed)
	for b.Loop() {
		mac.Verify(msg, tag)
	}
}
