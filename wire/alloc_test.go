package wire

import (
	"net/netip"
	"testing"
)

// assertNoAllocs fails if f allocates.
func assertNoAllocs(t *testing.T, name string, f func()) {
	t.Helper()
	if n := testing.AllocsPerRun(100, f); n != 0 {
		t.Errorf("%s: %v allocs per run, want 0", name, n)
	}
}

func TestDecodeNoAllocs(t *testing.T) {
	for _, file := range []string{
		"01_election.hex", "04_heartbeat.hex", "05_heartbeat_ack.hex",
		"07_discover_ipv4.hex", "07_discover_ipv6.hex", "11_cr_election.hex", "13_hs_probe.hex",
	} {
		b := readGolden(t, file)
		var m Message
		assertNoAllocs(t, "Decode "+file, func() {
			if err := Decode(b, &m); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestDecodeRingReusesListNoAllocs(t *testing.T) {
	src := Message{Type: TypeRingElection, Origin: 1, List: members(MaxMembers, false)}
	b := mustAppend(t, &src)
	m := Message{List: make([]Member, 0, MaxMembers)}
	assertNoAllocs(t, "Decode ring into List with capacity", func() {
		if err := Decode(b, &m); err != nil {
			t.Fatal(err)
		}
	})
	if len(m.List) != MaxMembers {
		t.Fatalf("decoded %d members, want %d", len(m.List), MaxMembers)
	}
}

// TestDecodeRingGrowsOnce checks that a list longer than cap(m.List) costs
// one allocation, not one per doubling.
func TestDecodeRingGrowsOnce(t *testing.T) {
	src := Message{Type: TypeRingElection, Origin: 1, List: members(MaxMembers, false)}
	b := mustAppend(t, &src)
	var m Message
	n := testing.AllocsPerRun(100, func() {
		m.List = nil
		if err := Decode(b, &m); err != nil {
			t.Fatal(err)
		}
	})
	if n != 1 {
		t.Errorf("Decode of a %d-member ring into an empty Message: %v allocs per run, want 1", MaxMembers, n)
	}
}

func TestDecodeErrorNoAllocs(t *testing.T) {
	short := heartbeatWire[:39]
	var m Message
	assertNoAllocs(t, "Decode short heartbeat", func() {
		if Decode(short, &m) != ErrShort {
			t.Fatal("want ErrShort")
		}
	})
}

func TestAppendNoAllocs(t *testing.T) {
	buf := make([]byte, 0, 2048)
	for _, m := range []Message{
		goldenHeader(TypeElection),
		{Type: TypeHeartbeat, Seq: 9, Claim: 1000},
		{Type: TypeDiscover, Addr: netip.MustParseAddrPort("[2001:db8::1]:7946")},
		{Type: TypeDiscover, Addr: netip.MustParseAddrPort("[::ffff:10.0.0.1]:7946")},
		{Type: TypeRingElection, List: members(100, false)},
		{Type: TypeHSProbe, CandID: 1},
	} {
		assertNoAllocs(t, "Append", func() {
			if _, err := m.Append(buf[:0]); err != nil {
				t.Fatal(err)
			}
		})
	}
}
