package ident

import (
	"net/netip"
	"testing"
)

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

// TestClassify: the verdict of every kind of packet, IPv4 and IPv6. The
// rows marked "clone" are the cloned-host case: same node_id, same
// incarnation (started in the same second), another address; before
// addresses were compared they were taken for this node's own packets.
func TestClassify(t *testing.T) {
	v4 := Self{NodeID: 7, Addr: ap("198.18.0.1:7947"), Incarnation: 1_700_000_000}
	v6 := Self{NodeID: 7, Addr: ap("[fd00::1]:7947"), Incarnation: 1_700_000_000}
	cases := []struct {
		name string
		self Self
		p    Packet
		want Verdict
	}{
		{"v4 another node_id", v4, Packet{From: 3, Incarnation: 1_700_000_000, Src: ap("198.18.0.3:7947")}, Other},
		{"v4 another node_id from our own address", v4, Packet{From: 3, Src: ap("198.18.0.1:7947")}, Other},
		{"v4 sent to ourselves", v4, Packet{From: 7, Incarnation: 1_700_000_000, Src: ap("198.18.0.1:7947")}, Own},
		{"v4 an earlier run of ours on the same address", v4, Packet{From: 7, Incarnation: 1_699_999_000, Src: ap("198.18.0.1:7947")}, Own},
		{"v4 clone: same incarnation, another host", v4, Packet{From: 7, Incarnation: 1_700_000_000, Src: ap("198.18.0.2:7947")}, Conflict},
		{"v4 clone: same incarnation, same host, another port", v4, Packet{From: 7, Incarnation: 1_700_000_000, Src: ap("198.18.0.1:7948")}, Conflict},
		{"v4 another incarnation, another host", v4, Packet{From: 7, Incarnation: 1_700_000_005, Src: ap("198.18.0.2:7947")}, Conflict},
		{"v4 our address as IPv4-mapped IPv6", v4, Packet{From: 7, Incarnation: 1_700_000_000, Src: ap("[::ffff:198.18.0.1]:7947")}, Own},
		{"v4 clone as IPv4-mapped IPv6", v4, Packet{From: 7, Incarnation: 1_700_000_000, Src: ap("[::ffff:198.18.0.2]:7947")}, Conflict},
		{"v6 sent to ourselves", v6, Packet{From: 7, Incarnation: 1_700_000_000, Src: ap("[fd00::1]:7947")}, Own},
		{"v6 with a zone reported", v6, Packet{From: 7, Incarnation: 1_700_000_000, Src: ap("[fd00::1%eth0]:7947")}, Own},
		{"v6 clone: same incarnation, another host", v6, Packet{From: 7, Incarnation: 1_700_000_000, Src: ap("[fd00::2]:7947")}, Conflict},
		{"v6 clone from a link-local source", v6, Packet{From: 7, Incarnation: 1_700_000_000, Src: ap("[fe80::2%eth0]:7947")}, Conflict},
		{"v6 another node_id", v6, Packet{From: 8, Src: ap("[fd00::1]:7947")}, Other},
		// No address to compare: the incarnation decides.
		{"no source, our incarnation", v4, Packet{From: 7, Incarnation: 1_700_000_000}, Own},
		{"no source, another incarnation", v4, Packet{From: 7, Incarnation: 1_700_000_001, Src: netip.AddrPort{}}, Conflict},
		{"unspecified own address, our incarnation", Self{NodeID: 7, Addr: ap("0.0.0.0:7947"), Incarnation: 5}, Packet{From: 7, Incarnation: 5, Src: ap("198.18.0.1:7947")}, Own},
		{"unspecified own address, another incarnation", Self{NodeID: 7, Addr: ap("0.0.0.0:7947"), Incarnation: 5}, Packet{From: 7, Incarnation: 6, Src: ap("198.18.0.1:7947")}, Conflict},
		{"no own address, another node_id", Self{NodeID: 7}, Packet{From: 9}, Other},
	}
	for _, c := range cases {
		if got := Classify(c.self, c.p); got != c.want {
			t.Errorf("%s: Classify(%+v, %+v) = %v, want %v", c.name, c.self, c.p, got, c.want)
		}
	}
}

func TestVerdictNames(t *testing.T) {
	for _, c := range []struct {
		v            Verdict
		name, reason string
	}{{Other, "other", ""}, {Own, "own", "self"}, {Conflict, "conflict", "conflict"}, {Verdict(9), "verdict(9)", ""}} {
		if c.v.String() != c.name || c.v.Reason() != c.reason {
			t.Errorf("%d: %q, reason %q; want %q, %q", c.v, c.v.String(), c.v.Reason(), c.name, c.reason)
		}
	}
}

// TestClassifyAllocs: the receive path runs it on every packet of our
// node_id, a flood of them included.
func TestClassifyAllocs(t *testing.T) {
	self := Self{NodeID: 7, Addr: ap("[fd00::1]:7947")}
	p := Packet{From: 7, Src: ap("[fe80::2%eth0]:7947")}
	if n := testing.AllocsPerRun(100, func() { Classify(self, p) }); n != 0 {
		t.Errorf("Classify allocates %v times, want 0", n)
	}
}
