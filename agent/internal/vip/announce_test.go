package vip

import (
	"bytes"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/mdlayher/ndp"
)

func TestAnnounceValidate(t *testing.T) {
	ok := []Announce{
		DefaultAnnounce(),
		{Repeat: 1},
		{Repeat: 5}, // keepalived's defaults: back to back, no delay, no refresh
		{Repeat: 5, Delay: 5 * time.Second},
		{Repeat: 3, Interval: time.Second, Delay: 2001 * time.Millisecond, Refresh: time.Minute},
		{Repeat: 100, Interval: time.Millisecond},
	}
	for _, a := range ok {
		if err := a.Validate(); err != nil {
			t.Errorf("%+v: %v", a, err)
		}
	}
	bad := []struct {
		a   Announce
		err string
	}{
		{Announce{}, "vip: announce repeat 0: at least 1"},
		{Announce{Repeat: -1}, "vip: announce repeat -1: at least 1"},
		{Announce{Repeat: 101}, "vip: announce repeat 101: at most 100"},
		{Announce{Repeat: 1, Interval: -time.Second}, "vip: announce interval -1s: negative"},
		{Announce{Repeat: 1, Delay: -time.Second}, "vip: announce delay -1s: negative"},
		{Announce{Repeat: 1, Refresh: -time.Second}, "vip: announce refresh -1s: negative"},
		{Announce{Repeat: 5, Interval: time.Second, Delay: 4 * time.Second},
			"vip: announce delay 4s: not longer than a burst (4s: repeat 5, interval 1s)"},
		{Announce{Repeat: 3, Interval: time.Second, Refresh: time.Second},
			"vip: announce refresh 1s: not longer than a burst (2s: repeat 3, interval 1s)"},
	}
	for _, c := range bad {
		err := c.a.Validate()
		if err == nil || err.Error() != c.err {
			t.Errorf("%+v: got %v, want %s", c.a, err, c.err)
		}
	}
}

var (
	testMAC = net.HardwareAddr{0x02, 0x00, 0x5e, 0x10, 0x00, 0x01}
	testIP4 = netip.MustParseAddr("198.18.0.100")
)

// TestGARPBytes pins the gratuitous ARP keepalived sends: a broadcast
// request whose sender and target addresses are both the address.
func TestGARPBytes(t *testing.T) {
	want := []byte{
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // Ethernet destination: broadcast
		0x02, 0x00, 0x5e, 0x10, 0x00, 0x01, // Ethernet source: the interface
		0x08, 0x06, // ARP
		0x00, 0x01, 0x08, 0x00, 6, 4, // Ethernet, IPv4, lengths
		0x00, 0x01, // request
		0x02, 0x00, 0x5e, 0x10, 0x00, 0x01, // sender hardware address
		198, 18, 0, 100, // sender address
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // target hardware address
		198, 18, 0, 100, // target address
	}
	got := garp(nil, testMAC, testIP4)
	if !bytes.Equal(got, want) {
		t.Fatalf("garp:\n got % x\nwant % x", got, want)
	}
	p, err := parseARP(got)
	if err != nil {
		t.Fatal(err)
	}
	if p.op != arpRequest || !bytes.Equal(p.sha, testMAC) || p.spa != testIP4 || p.tpa != testIP4 || !bytes.Equal(p.tha, broadcastMAC) {
		t.Errorf("parseARP(garp) = %+v", p)
	}
	if allocs := testing.AllocsPerRun(100, func() { got = garp(got[:0], testMAC, testIP4) }); allocs != 0 {
		t.Errorf("garp into a buffer allocates %v times", allocs)
	}
}

// TestARPProbeBytes pins RFC 5227's probe: sender address 0.0.0.0, target
// hardware address zero.
func TestARPProbeBytes(t *testing.T) {
	want := []byte{
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0x02, 0x00, 0x5e, 0x10, 0x00, 0x01,
		0x08, 0x06,
		0x00, 0x01, 0x08, 0x00, 6, 4,
		0x00, 0x01,
		0x02, 0x00, 0x5e, 0x10, 0x00, 0x01,
		0, 0, 0, 0,
		0, 0, 0, 0, 0, 0,
		198, 18, 0, 100,
	}
	if got := arpProbe(nil, testMAC, testIP4); !bytes.Equal(got, want) {
		t.Fatalf("arpProbe:\n got % x\nwant % x", got, want)
	}
}

func TestParseARPRefuses(t *testing.T) {
	f := garp(nil, testMAC, testIP4)
	cases := map[string][]byte{
		"short":         f[:arpLen-1],
		"IPv4 frame":    append(append([]byte{}, f[:12]...), append([]byte{0x08, 0x00}, f[14:]...)...),
		"not Ethernet":  append(append([]byte{}, f[:14]...), append([]byte{0x00, 0x06}, f[16:]...)...),
		"IPv6 protocol": append(append([]byte{}, f[:16]...), append([]byte{0x86, 0xdd}, f[18:]...)...),
		"hlen 8":        append(append([]byte{}, f[:18]...), append([]byte{8}, f[19:]...)...),
	}
	for name, b := range cases {
		if _, err := parseARP(b); err != errNotARP {
			t.Errorf("%s: parseARP = %v, want errNotARP", name, err)
		}
	}
}

// TestUnsolicitedNABytes pins the neighbour advertisement: Override set,
// Solicited and Router clear, the target and its link-layer address.
func TestUnsolicitedNABytes(t *testing.T) {
	ip := netip.MustParseAddr("2001:db8::100")
	b, err := ndp.MarshalMessage(unsolicitedNA(testMAC, ip, false))
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		136, 0, 0, 0, // neighbour advertisement, code 0, checksum (the kernel's)
		0x20, 0, 0, 0, // Override only
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x00, // target
		2, 1, 0x02, 0x00, 0x5e, 0x10, 0x00, 0x01, // target link-layer address
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("NA:\n got % x\nwant % x", b, want)
	}
	b, _ = ndp.MarshalMessage(unsolicitedNA(testMAC, ip, true))
	if b[4] != 0xa0 {
		t.Errorf("a router's NA flags = %#x, want Router and Override (0xa0)", b[4])
	}
}

// FuzzParseARP: parseARP never panics, and what it reads packs back into
// the same bytes.
func FuzzParseARP(f *testing.F) {
	f.Add(garp(nil, testMAC, testIP4))
	f.Add(arpProbe(nil, testMAC, testIP4))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseARP(b)
		if err != nil {
			return
		}
		if !bytes.Equal(b[6:12], p.sha) {
			return // appendARP sends from the sender's address
		}
		if got := appendARP(nil, net.HardwareAddr(b[0:6]), p); !bytes.Equal(got, b[:arpLen]) {
			t.Fatalf("parse then append:\n got % x\nwant % x", got, b[:arpLen])
		}
	})
}

// A round due longer ago than lateLimit (the process was stopped) is not
// sent, and the burst goes on from now; a round a little late is sent.
func TestDueSkipsLateRounds(t *testing.T) {
	m := &Manager{cfg: Config{Announce: Announce{Repeat: 3, Interval: 100 * time.Millisecond}}}
	t0 := time.Unix(1000, 0)
	m.sched = []*burst{{gen: 1, next: t0, left: 3}, {gen: 2, next: t0.Add(time.Second), left: 1}}
	if got := m.due(t0.Add(10 * time.Millisecond)); len(got) != 1 || got[0] != 1 {
		t.Fatalf("due 10ms late: %v, want [1]", got)
	}
	// Frozen: the second round of burst 1 (due at +110ms) and burst 2
	// (due at +1s) come 5s late.
	if got := m.due(t0.Add(5 * time.Second)); len(got) != 0 {
		t.Fatalf("due 5s late: %v, want none", got)
	}
	if m.skipped != 2 {
		t.Fatalf("skipped %d, want 2", m.skipped)
	}
	// Burst 1's last round is due an interval after the skipped one.
	if len(m.sched) != 1 || m.sched[0].gen != 1 || m.sched[0].left != 1 || !m.sched[0].next.Equal(t0.Add(5*time.Second+100*time.Millisecond)) {
		t.Fatalf("schedule after the skip: %+v", m.sched)
	}
}
