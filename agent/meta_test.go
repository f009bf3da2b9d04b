package agent

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/lanleader/lanleader/wire"
)

func TestMetaRoundTrip(t *testing.T) {
	for _, m := range []meta{
		{Proto: wire.Version, Algorithm: "bully", NodeID: 7, Priority: 150, Election: netip.MustParseAddrPort("198.18.0.7:7947")},
		{Proto: wire.Version, Algorithm: "bully", NodeID: MaxNodeID, Priority: 65535, Election: netip.MustParseAddrPort("[fe80::1]:7947"), Leaving: true},
		{Proto: wire.Version, Algorithm: "bully", NodeID: 9, Priority: 1, Election: netip.MustParseAddrPort("198.18.0.9:7947"), Job: true},
		{Proto: wire.Version, Algorithm: "ring", NodeID: 10, Priority: 2, Election: netip.MustParseAddrPort("198.18.0.10:7947")},
		{Proto: wire.Version, Algorithm: "chang-roberts", NodeID: 11, Priority: 3, Election: netip.MustParseAddrPort("198.18.0.11:7947")},
		{Proto: wire.Version, Algorithm: "hirschberg-sinclair", NodeID: 12, Priority: 4, Election: netip.MustParseAddrPort("198.18.0.12:7947")},
	} {
		b := m.append(nil)
		got, err := decodeMeta(b)
		if err != nil || got != m {
			t.Errorf("decode(append(%+v)) = %+v, %v (% x)", m, got, err, b)
		}
	}
	// The bytes are the protocol: pin one.
	b := meta{Proto: 1, Algorithm: "bully", NodeID: 0x0102030405060708, Priority: 0x0a0b,
		Election: netip.MustParseAddrPort("198.18.0.1:7947"), Leaving: true}.append(nil)
	want := []byte{1, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0x0b, 4, 198, 18, 0, 1, 0x1f, 0x0b, 1}
	if string(b) != string(want) {
		t.Errorf("meta bytes % x, want % x", b, want)
	}
	// The job flag is bit 1.
	b = meta{Proto: 1, Algorithm: "bully", NodeID: 0x0102030405060708, Priority: 0x0a0b,
		Election: netip.MustParseAddrPort("198.18.0.1:7947"), Leaving: true, Job: true}.append(nil)
	if b[len(b)-1] != 3 {
		t.Errorf("flags %#x with leaving and job, want 0x3", b[len(b)-1])
	}
	// Metadata of an agent that predates the flags byte still reads.
	if got, err := decodeMeta(want[:len(want)-1]); err != nil || got.Leaving || got.NodeID != 0x0102030405060708 {
		t.Errorf("without flags: %+v, %v", got, err)
	}
}

func TestMetaBad(t *testing.T) {
	good := meta{Proto: wire.Version, Algorithm: "bully", NodeID: 7, Priority: 1, Election: netip.MustParseAddrPort("198.18.0.7:7947")}.append(nil)
	cases := map[string][]byte{
		"empty":          nil,
		"short":          good[:13],
		"version":        append([]byte{9}, good[1:]...),
		"address length": func() []byte { b := append([]byte{}, good...); b[13] = 5; return b }(),
		"cut address":    good[:16],
		"node id 0":      func() []byte { b := append([]byte{}, good...); copy(b[3:11], make([]byte, 8)); return b }(),
		"protocol":       func() []byte { b := append([]byte{}, good...); b[1] = 2; return b }(),
	}
	for name, b := range cases {
		if _, err := decodeMeta(b); !errors.Is(err, errMeta) {
			t.Errorf("%s: %v, want errMeta", name, err)
		}
	}
}
