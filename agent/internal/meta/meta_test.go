package meta

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

func TestMetaRoundTrip(t *testing.T) {
	for _, m := range []Meta{
		{Proto: wire.Version, Algorithm: "bully", NodeID: 7, Priority: 150, Election: netip.MustParseAddrPort("198.18.0.7:7947")},
		{Proto: wire.Version, Algorithm: "bully", NodeID: config.MaxNodeID, Priority: 65535, Election: netip.MustParseAddrPort("[fe80::1]:7947"), Leaving: true},
		{Proto: wire.Version, Algorithm: "bully", NodeID: 9, Priority: 1, Election: netip.MustParseAddrPort("198.18.0.9:7947"), Job: true},
		{Proto: wire.Version, Algorithm: "ring", NodeID: 10, Priority: 2, Election: netip.MustParseAddrPort("198.18.0.10:7947")},
		{Proto: wire.Version, Algorithm: "chang-roberts", NodeID: 11, Priority: 3, Election: netip.MustParseAddrPort("198.18.0.11:7947")},
		{Proto: wire.Version, Algorithm: "hirschberg-sinclair", NodeID: 12, Priority: 4, Election: netip.MustParseAddrPort("198.18.0.12:7947")},
		{Proto: wire.Version, Algorithm: "bully", NodeID: 13, Priority: 5, Election: netip.MustParseAddrPort("198.18.0.13:7947"), JobGrace: 10 * time.Second, HasGrace: true},
		{Proto: wire.Version, Algorithm: "bully", NodeID: 14, Priority: 6, Election: netip.MustParseAddrPort("198.18.0.14:7947"), HasGrace: true},
	} {
		b := m.Append(nil)
		got, err := Decode(b)
		if err != nil || got != m {
			t.Errorf("decode(append(%+v)) = %+v, %v (% x)", m, got, err, b)
		}
	}
	// The bytes are the protocol: pin one.
	b := Meta{Proto: 2, Algorithm: "bully", NodeID: 0x0102030405060708, Priority: 0x0a0b,
		Election: netip.MustParseAddrPort("198.18.0.1:7947"), Leaving: true}.Append(nil)
	want := []byte{1, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0x0b, 4, 198, 18, 0, 1, 0x1f, 0x0b, 1, 0}
	if string(b) != string(want) {
		t.Errorf("meta bytes % x, want % x", b, want)
	}
	// The job flag is bit 1.
	b = Meta{Proto: 2, Algorithm: "bully", NodeID: 0x0102030405060708, Priority: 0x0a0b,
		Election: netip.MustParseAddrPort("198.18.0.1:7947"), Leaving: true, Job: true}.Append(nil)
	if b[len(b)-2] != 3 {
		t.Errorf("flags %#x with leaving and job, want 0x3", b[len(b)-2])
	}
	// The job grace: 4 bytes of milliseconds after the role, rounded up.
	b = Meta{Proto: 2, Algorithm: "bully", NodeID: 0x0102030405060708, Priority: 0x0a0b,
		Election: netip.MustParseAddrPort("198.18.0.1:7947"), Leaving: true, JobGrace: 0x01020304*time.Millisecond - 1, HasGrace: true}.Append(nil)
	if string(b) != string(append(want, 1, 2, 3, 4)) {
		t.Errorf("meta bytes with a grace % x, want % x", b, append(want, 1, 2, 3, 4))
	}
	// Metadata of an agent that predates the grace reads without one.
	if got, err := Decode(want); err != nil || got.HasGrace || got.JobGrace != 0 {
		t.Errorf("without a grace: %+v, %v", got, err)
	}
	// Metadata of an agent that predates the flags byte still reads.
	if got, err := Decode(want[:len(want)-2]); err != nil || got.Leaving || got.NodeID != 0x0102030405060708 {
		t.Errorf("without flags: %+v, %v", got, err)
	}
}

func TestMetaBad(t *testing.T) {
	good := Meta{Proto: wire.Version, Algorithm: "bully", NodeID: 7, Priority: 1, Election: netip.MustParseAddrPort("198.18.0.7:7947")}.Append(nil)
	cases := map[string][]byte{
		"empty":          nil,
		"short":          good[:13],
		"version":        append([]byte{9}, good[1:]...),
		"address length": func() []byte { b := append([]byte{}, good...); b[13] = 5; return b }(),
		"cut address":    good[:16],
		"node id 0":      func() []byte { b := append([]byte{}, good...); copy(b[3:11], make([]byte, 8)); return b }(),
		"protocol":       func() []byte { b := append([]byte{}, good...); b[1] = 1; return b }(), // an agent of protocol version 1
	}
	for name, b := range cases {
		if _, err := Decode(b); !errors.Is(err, ErrBad) {
			t.Errorf("%s: %v, want ErrBad", name, err)
		}
	}
}

// The role byte follows the flags; an agent that predates it sends none
// and is a candidate.
func TestMetaRole(t *testing.T) {
	m := Meta{Proto: 2, Algorithm: "bully", NodeID: 0x0102030405060708, Priority: 0x0a0b,
		Election: netip.MustParseAddrPort("198.18.0.1:7947"), Role: election.RoleWitness}
	b := m.Append(nil)
	want := []byte{1, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0x0b, 4, 198, 18, 0, 1, 0x1f, 0x0b, 0, 1}
	if string(b) != string(want) {
		t.Fatalf("meta bytes % x, want % x", b, want)
	}
	for _, r := range []election.Role{election.RoleCandidate, election.RoleWitness, election.RoleObserver} {
		m.Proto, m.Role = wire.Version, r
		if got, err := Decode(m.Append(nil)); err != nil || got != m {
			t.Errorf("role %v: decoded %+v, %v", r, got, err)
		}
	}
	want[1] = wire.Version
	if got, err := Decode(want[:len(want)-1]); err != nil || got.Role != election.RoleCandidate {
		t.Errorf("without the role byte: %+v, %v, want a candidate", got, err)
	}
	// A newer agent's role is kept as a number: neither votes nor leads.
	want[len(want)-1] = 9
	if got, err := Decode(want); err != nil || got.Role.MayLead() || got.Role.Votes() {
		t.Errorf("role 9: %+v, %v", got, err)
	}
}
