package wire

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// decodeErrors are the only errors Decode may return.
var decodeErrors = []error{ErrShort, ErrBadMagic, ErrUnknownVersion, ErrUnknownType, ErrBadLength, ErrTrailing}

// FuzzDecode checks that Decode never panics, returns only its sentinels,
// and that whatever it accepts re-encodes to the same bytes (with the
// reserved byte 5, ignored on receive, normalised to zero) and decodes back
// to the same Message, also into a reused Message full of stale values.
// The committed seed corpus is in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	for _, g := range goldens() {
		b, err := g.msg.Append(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, enc, ok := checkDecode(t, b)
		if !ok {
			return
		}
		var again Message
		if err := Decode(enc, &again); err != nil {
			t.Fatalf("Decode(Append(m)): %v", err)
		}
		if !equalMessage(&again, &m) {
			t.Fatalf("Decode(Append(m)) != m:\n got %+v\nwant %+v", again, m)
		}

	})
}

// TestSeedCorpus checks that the committed seeds are what their names say:
// files named valid-* decode, files named invalid-* are rejected, and every
// type has a valid seed.
func TestSeedCorpus(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzDecode", "*"))
	if err != nil {
		t.Fatal(err)
	}
	types := map[Type]bool{}
	for _, p := range paths {
		text, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		body, ok := strings.CutPrefix(string(text), "go test fuzz v1\n[]byte(")
		body, ok2 := strings.CutSuffix(body, ")\n")
		if !ok || !ok2 {
			t.Errorf("%s: not a one-[]byte corpus file", p)
			continue
		}
		s, err := strconv.Unquote(body)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		var m Message
		err = Decode([]byte(s), &m)
		switch name := filepath.Base(p); {
		case strings.HasPrefix(name, "valid-"):
			if err != nil {
				t.Errorf("%s: Decode = %v, want nil", name, err)
			}
			types[m.Type] = true
		case strings.HasPrefix(name, "invalid-"):
			if err == nil {
				t.Errorf("%s: Decode succeeded, want an error", name)
			}
		}
	}
	for _, typ := range allTypes() {
		if !types[typ] {
			t.Errorf("no valid seed of type %d", typ)
		}
	}
}
