package wire

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.hex from the current encoder")

// TestGolden encodes each golden message and compares the bytes with its
// file, then decodes the file and compares the result with the message.
func TestGolden(t *testing.T) {
	for _, g := range goldens() {
		t.Run(g.file, func(t *testing.T) {
			got := mustAppend(t, &g.msg)
			path := filepath.Join("testdata", "golden", g.file)
			if *update {
				text, err := annotate(&g.msg, got)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// The independent field layout must cover the encoding exactly.
			if _, err := annotate(&g.msg, got); err != nil {
				t.Fatalf("layout vs Append: %v", err)
			}
			want := readGolden(t, g.file)
			if !bytes.Equal(got, want) {
				t.Fatalf("Append:\n got %x\nwant %x", got, want)
			}
			var m Message
			if err := Decode(want, &m); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !equalMessage(&m, &g.msg) {
				t.Fatalf("Decode:\n got %+v\nwant %+v", m, g.msg)
			}
		})
	}
}

// TestGoldenFilesComplete checks that every type has a golden file and that
// testdata/golden holds no file the test does not check.
func TestGoldenFilesComplete(t *testing.T) {
	covered := map[Type]bool{}
	var want []string
	for _, g := range goldens() {
		covered[g.msg.Type] = true
		want = append(want, g.file)
	}
	for _, typ := range allTypes() {
		if !covered[typ] {
			t.Errorf("no golden message for type %d", typ)
		}
	}
	got, err := filepath.Glob(filepath.Join("testdata", "golden", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("testdata/golden holds %q, want %q", got, want)
	}
}

// heartbeatWire is the golden HEARTBEAT, spelled out so that the format is
// visible in review. It must match testdata/golden/04_heartbeat.hex.
var heartbeatWire = [...]byte{
	0x4c, 0x4c, // magic "LL"
	0x02,       // version 2
	0x04,       // type TypeHeartbeat
	0x00,       // flags
	0x00,       // reserved
	0x00, 0x64, // priority 100
	0x5c, 0xc3, 0xf8, 0x28, // cluster id: sha256("office")[:4]
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, // node id
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, // term 7
	0x65, 0xa1, 0xb2, 0xc3, // incarnation
	0x00, 0x00, 0x00, 0x2a, // sequence 42
	0x00, 0x00, 0x03, 0xe8, // body: claim 1000
}

func TestHeartbeatWireLiteral(t *testing.T) {
	m := goldenHeader(TypeHeartbeat)
	m.Claim = 1000
	if got := mustAppend(t, &m); !bytes.Equal(got, heartbeatWire[:]) {
		t.Errorf("Append:\n got %x\nwant %x", got, heartbeatWire[:])
	}
	if got := readGolden(t, "04_heartbeat.hex"); !bytes.Equal(got, heartbeatWire[:]) {
		t.Errorf("04_heartbeat.hex:\n got %x\nwant %x", got, heartbeatWire[:])
	}
	var d Message
	if err := Decode(heartbeatWire[:], &d); err != nil {
		t.Fatal(err)
	}
	if !equalMessage(&d, &m) {
		t.Errorf("Decode:\n got %+v\nwant %+v", d, m)
	}
}

// TestParseHex checks the golden file reader itself, so that a reader that
// drops bytes cannot make TestGolden pass vacuously.
func TestParseHex(t *testing.T) {
	got, err := parseHex([]byte("# comment 4c4c\n4c 4c  # magic ff\n\t01\r\n\n0a#x\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0x4c, 0x4c, 0x01, 0x0a}; !bytes.Equal(got, want) {
		t.Errorf("parseHex = %x, want %x", got, want)
	}
	if _, err := parseHex([]byte("4c 4")); err == nil {
		t.Error("parseHex accepted an odd number of digits")
	}
	if _, err := parseHex([]byte("zz")); err == nil {
		t.Error("parseHex accepted non-hex text")
	}
}
