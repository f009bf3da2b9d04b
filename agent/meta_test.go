package agent

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/wire"
)

func TestMetaRoundTrip(t *testing.T) {
	for _, m := range []meta{
		{Proto: wire.Version, Algorithm: "bully", NodeID: 7, Priority: 150, Election: netip.MustParseAddrPort("198.18.0.7:7947")},
		{Proto: wire.Version, Algorithm: "bully", NodeID: config.MaxNodeID, Priority: 65535, Election: netip.MustParseAddrPort("[fe80::1]:7947"), Leaving: true},
		{Proto: wire.Version, Algorithm: "bully", NodeID: 9, Priority: 1, Election: netip.MustParseAddrPort("198.18.0.9:7947"), Job: true},
		{Proto: wire.Version, Algorithm: "ring", NodeID: 10, Priority: 2, Election: netip.MustParseAddrPort("198.18.0.10:7947")},
		{Proto: wire.Version, Algorithm: "chang-roberts", NodeID: 11, Priority: 3, Election: netip.MustParseAddrPort("198.18.0.11:7947")},
		{Proto: wire.Version, Algorithm: "hirschberg-sinclair", NodeID: 12, Priority: 4, Election: netip.MustParseAddrPort("198.18.0.12:7947")},
		{Proto: wire.Version, Algorithm: "bully", NodeID: 13, Priority: 5, Election: netip.MustParseAddrPort("198.18.0.13:7947"), JobGrace: 10 * time.Second, HasGrace: true},
		{Proto: wire.Version, Algorithm: "bully", NodeID: 14, Priority: 6, Election: netip.MustParseAddrPort("198.18.0.14:7947"), HasGrace: true},
	} {
		b := m.append(nil)
		got, err := decodeMeta(b)
		if err != nil || got != m {
			t.Errorf("decode(append(%+v)) = %+v, %v (% x)", m, got, err, b)
		}
	}
	// The bytes are the protocol: pin one.
	b := meta{Proto: 2, Algorithm: "bully", NodeID: 0x0102030405060708, Priority: 0x0a0b,
		Election: netip.MustParseAddrPort("198.18.0.1:7947"), Leaving: true}.append(nil)
	want := []byte{1, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0x0b, 4, 198, 18, 0, 1, 0x1f, 0x0b, 1, 0}
	if string(b) != string(want) {
		t.Errorf("meta bytes % x, want % x", b, want)
	}
	// The job flag is bit 1.
	b = meta{Proto: 2, Algorithm: "bully", NodeID: 0x0102030405060708, Priority: 0x0a0b,
		Election: netip.MustParseAddrPort("198.18.0.1:7947"), Leaving: true, Job: true}.append(nil)
	if b[len(b)-2] != 3 {
		t.Errorf("flags %#x with leaving and job, want 0x3", b[len(b)-2])
	}
	// The job grace: 4 bytes of milliseconds after the role, rounded up.
	b = meta{Proto: 2, Algorithm: "bully", NodeID: 0x0102030405060708, Priority: 0x0a0b,
		Election: netip.MustParseAddrPort("198.18.0.1:7947"), Leaving: true, JobGrace: 0x01020304*time.Millisecond - 1, HasGrace: true}.append(nil)
	if string(b) != string(append(want, 1, 2, 3, 4)) {
		t.Errorf("meta bytes with a grace % x, want % x", b, append(want, 1, 2, 3, 4))
	}
	// Metadata of an agent that predates the grace reads without one.
	if got, err := decodeMeta(want); err != nil || got.HasGrace || got.JobGrace != 0 {
		t.Errorf("without a grace: %+v, %v", got, err)
	}
	// Metadata of an agent that predates the flags byte still reads.
	if got, err := decodeMeta(want[:len(want)-2]); err != nil || got.Leaving || got.NodeID != 0x0102030405060708 {
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
		"protocol":       func() []byte { b := append([]byte{}, good...); b[1] = 1; return b }(), // an agent of protocol version 1
	}
	for name, b := range cases {
		if _, err := decodeMeta(b); !errors.Is(err, errMeta) {
			t.Errorf("%s: %v, want errMeta", name, err)
		}
	}
}

// TestMetaPusherRepeats: a metadata change is broadcast at once and again
// at each of metaRepeats after it (memberlist may drop a queued
// broadcast); a new change starts the schedule again from its own time.
func TestMetaPusherRepeats(t *testing.T) {
	const r0, r1 = 40 * time.Millisecond, 120 * time.Millisecond
	calls := make(chan time.Time, 64)
	a := &Agent{quit: make(chan struct{}), metaPush: metaPush{kick: make(chan struct{}, 1),
		repeats: []time.Duration{r0, r1},
		update:  func(time.Duration) error { calls <- time.Now(); return nil }}}
	done := make(chan struct{})
	go func() { a.metaPusher(); close(done) }()
	next := func() time.Time {
		t.Helper()
		select {
		case c := <-calls:
			return c
		case <-time.After(5 * time.Second):
			t.Fatal("no broadcast within 5 s")
			return time.Time{}
		}
	}

	// One change: three broadcasts, the repeats no earlier than due.
	kick := time.Now()
	a.pushMeta()
	first, second, third := next(), next(), next()
	if d := second.Sub(kick); d < r0 {
		t.Errorf("first repeat %v after the change, want at least %v", d, r0)
	}
	if d := third.Sub(kick); d < r1 {
		t.Errorf("second repeat %v after the change, want at least %v", d, r1)
	}
	if !first.Before(second) || !second.Before(third) {
		t.Errorf("broadcasts out of order: %v %v %v", first, second, third)
	}

	// A change during the repeats: its own broadcast, then its repeats,
	// counted from it rather than from the first change.
	a.pushMeta()
	next()
	kick2 := time.Now()
	a.pushMeta()
	next()
	if d := next().Sub(kick2); d < r0 {
		t.Errorf("repeat %v after the second change, want at least %v", d, r0)
	}
	if d := next().Sub(kick2); d < r1 {
		t.Errorf("repeat %v after the second change, want at least %v", d, r1)
	}

	close(a.quit)
	<-done
	// The first change of that pair was cut short: nothing more was due.
	if n := len(calls); n != 0 {
		t.Errorf("%d broadcasts more than the schedule's", n)
	}
}
