package auth

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var (
	secretA = []byte("cluster secret A, thirty-two bytes at least")
	secretB = []byte("cluster secret B, thirty-two bytes at least")
)

// TestReplayGuard: one sender's window, step by step.
func TestReplayGuard(t *testing.T) {
	g := NewReplayGuard()
	steps := []struct {
		inc, seq uint32
		fresh    bool
		why      string
	}{
		{100, 1000, true, "the first packet of a sender"},
		{100, 1000, false, "the same packet again"},
		{100, 1001, true, "the next"},
		{100, 1005, true, "a gap (lost packets)"},
		{100, 1003, true, "a late packet inside the window"},
		{100, 1003, false, "that late packet again"},
		{100, 1005 - 63, true, "the oldest the window holds"},
		{100, 1005 - 64, false, "one below the window"},
		{100, 5000, true, "a jump beyond the window"},
		{100, 4999, true, "just below the jump: not seen"},
		{100, 1005, false, "below the moved window"},
		{99, 9000, false, "an earlier run of the sender"},
		{101, 1, true, "a newer run (a restart) starts a new window, from any sequence"},
		{101, 1, false, "its first packet again"},
		{100, 5001, false, "the previous run, after the restart"},
		{101, 2, true, "the new run goes on"},
	}
	for i, s := range steps {
		if got := g.Check(7, s.inc, s.seq, time.Duration(i)); got != s.fresh {
			t.Fatalf("step %d (%s): inc %d seq %d fresh = %v, want %v", i, s.why, s.inc, s.seq, got, s.fresh)
		}
	}
	// A window silent for ReplayForget is forgotten: even an older run
	// (a restart after the clock was set back) is taken then, not before.
	last := time.Duration(len(steps) - 1) // when sender 7 last spoke
	if g.Check(7, 50, 1, last+ReplayForget) {
		t.Fatal("an older run was taken before the window was forgotten")
	}
	if !g.Check(7, 50, 1, last+ReplayForget+time.Second) || g.Check(7, 50, 1, last+ReplayForget+2*time.Second) {
		t.Fatal("after ReplayForget of silence, the older run's first packet is not taken once")
	}

	// Another sender has its own window.
	if !g.Check(8, 100, 1000, 0) {
		t.Fatal("sender 8's first packet, with sender 7's numbers, was taken for a replay")
	}
	// The windows are bounded: the sender heard from least recently goes.
	for id := range uint64(maxSenders + 10) {
		g.Check(1000+id, 1, 1, time.Duration(100+id))
	}
	if n := len(g.w); n != maxSenders {
		t.Fatalf("%d windows kept, want the bound %d", n, maxSenders)
	}
	if _, ok := g.w[8]; ok {
		t.Fatal("the sender heard from least recently (8) was not the one forgotten")
	}
	if _, ok := g.w[7]; !ok {
		t.Fatal("the sender heard from most recently (7) was forgotten")
	}
}

// TestStartSeq: a restart within the same second continues above what
// the previous run sent, unless it sent more than 64 packets a
// microsecond.
func TestStartSeq(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 250_000_000)
	first := StartSeq(t0)
	again := StartSeq(t0.Add(5 * time.Millisecond)) // a restart 5 ms later
	if again-first != 5000*64 {
		t.Fatalf("startSeq 5 ms apart: %d and %d, want %d apart", first, again, 5000*64)
	}
	if last := StartSeq(time.Unix(0, 999_999_999)); last > 1<<26 {
		t.Fatalf("startSeq at the end of a second is %d: leaves too little room", last)
	}
}

func writeFile(t *testing.T, name string, b []byte, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadKeyFile(t *testing.T) {
	key := bytes.Repeat([]byte{'k'}, 32)
	for _, c := range []struct {
		name string
		body []byte
		mode os.FileMode
		want string // "": loads key
	}{
		{"exact", key, 0o600, ""},
		{"newline", append(bytes.Clone(key), "\r\n\n"...), 0o640, ""},
		{"group-readable", key, 0o440, ""},
		{"world-readable", key, 0o644, "is readable by every user (mode 0644)"},
		{"world-writable", key, 0o622, "is writable by every user (mode 0622)"},
		{"short", key[:31], 0o600, "the key is 31 bytes, want at least 32"},
		{"short-with-newlines", append(bytes.Clone(key[:31]), "\n\n"...), 0o600, "the key is 31 bytes"},
		{"huge", bytes.Repeat([]byte{'k'}, 5000), 0o600, "5000 bytes, more than 4096"},
	} {
		p := writeFile(t, c.name, c.body, c.mode)
		got, err := LoadKeyFile(p)
		switch {
		case c.want == "" && (err != nil || !bytes.Equal(got, key)):
			t.Errorf("%s: %q, %v; want the key", c.name, got, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), p)):
			t.Errorf("%s: %v; want an error naming %s and saying %q", c.name, err, p, c.want)
		}
	}
	if _, err := LoadKeyFile(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
	if _, err := LoadKeyFile(filepath.Join(t.TempDir(), "none")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestDerivedKeysDiffer: the three keys of one secret differ from each
// other and from the other secret's; the resign token is the HTTP key.
func TestDerivedKeysDiffer(t *testing.T) {
	seen := map[string]string{}
	for _, s := range [][]byte{secretA, secretB} {
		for _, l := range []string{labelElection, labelGossip, labelHTTP} {
			k := string(deriveKey(s, l))
			if len(k) != 32 {
				t.Fatalf("%s: %d bytes", l, len(k))
			}
			if prev, dup := seen[k]; dup {
				t.Fatalf("%s of %q is %s's", l, s, prev)
			}
			seen[k] = l
		}
	}
	k := NewKeys(secretA, [][]byte{secretB})
	if !k.ResignAllowed(ResignToken(secretA)) || !k.ResignAllowed(ResignToken(secretB)) {
		t.Fatal("the tokens of the signing and the accepted secret are refused")
	}
	if k.ResignAllowed(ResignToken([]byte("yet another secret of thirty-two bytes"))) || k.ResignAllowed("zz") || k.ResignAllowed("") {
		t.Fatal("a token of another secret, or no token, is accepted")
	}
}

// The record of this node's own packets tells a replay of one (byte for
// byte a packet it sent, or one too old to tell) from a clone's (another
// packet under the same sequence number, or one not yet used).
func TestSentRecord(t *testing.T) {
	var r Sent
	for seq := uint32(1); seq <= sentLen+10; seq++ {
		r.Add(seq, []byte(fmt.Sprintf("packet %d", seq)))
	}
	last := uint32(sentLen + 10)
	for _, c := range []struct {
		seq  uint32
		b    string
		want bool
	}{
		{last, fmt.Sprintf("packet %d", last), true},       // a replay of the latest
		{last - 5, fmt.Sprintf("packet %d", last-5), true}, // of an older one
		{last - 5, "a clone's packet", false},              // another packet under that number
		{last + 1, fmt.Sprintf("packet %d", last+1), false},
		{5, "anything", true}, // older than remembered: taken for a replay
		{last - sentLen + 1, "a clone's packet", false},
	} {
		if got := r.MayHaveSent(c.seq, []byte(c.b)); got != c.want {
			t.Errorf("seq %d %q (last %d): MayHaveSent %v, want %v", c.seq, c.b, last, got, c.want)
		}
	}
}

// packetHash is FNV-1a (the standard library's, without its allocation).
func TestPacketHash(t *testing.T) {
	for _, b := range []string{"", "a", "a HEARTBEAT of 48 bytes, or so, with its tag"} {
		h := fnv.New64a()
		h.Write([]byte(b))
		if got, want := packetHash([]byte(b)), h.Sum64(); got != want {
			t.Errorf("packetHash(%q) = %x, want %x", b, got, want)
		}
	}
	if n := testing.AllocsPerRun(10, func() { packetHash([]byte("x")) }); n != 0 {
		t.Errorf("packetHash allocates %v times", n)
	}
}

// TestReplayGuardNotice: a NOTICE is taken once per sender, incarnation
// and term, each newer than the last, whatever its sequence number (the
// guard sends one built long before), and never from an earlier run than
// the sender's window; it leaves the sequence window as it was.
func TestReplayGuardNotice(t *testing.T) {
	g := NewReplayGuard()
	if !g.Check(7, 100, 5000, 0) {
		t.Fatal("the first packet of a sender was refused")
	}
	steps := []struct {
		inc   uint32
		term  uint64
		fresh bool
		why   string
	}{
		{100, 4, true, "the notice of the sender's term 4 (its sequence far below the window)"},
		{100, 4, false, "the same notice again: a replay"},
		{100, 3, false, "an earlier term's notice"},
		{99, 9, false, "an earlier run of the sender"},
		{100, 6, true, "a later term of the same run"},
		{101, 2, true, "a newer run (a restart), any term"},
		{100, 7, false, "the previous run, after the restart's notice"},
	}
	for i, s := range steps {
		if got := g.CheckNotice(7, s.inc, s.term, time.Duration(i)); got != s.fresh {
			t.Fatalf("step %d (%s): inc %d term %d fresh = %v, want %v", i, s.why, s.inc, s.term, got, s.fresh)
		}
	}
	// The sequence window is untouched: the next packet of run 100 goes on.
	if !g.Check(7, 100, 5001, 10) || g.Check(7, 100, 5000, 11) {
		t.Fatal("a notice moved the sequence window")
	}
	// A sender never heard from: its first notice is taken once.
	if !g.CheckNotice(8, 50, 3, 0) || g.CheckNotice(8, 50, 3, 1) {
		t.Fatal("the first notice of an unknown sender is not taken exactly once")
	}
}
