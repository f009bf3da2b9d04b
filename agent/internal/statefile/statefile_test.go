package statefile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFile: no file yet is term 0; a saved term reads back, in the one
// line the agent writes, and no temporary file is left; what is not that
// line is an error naming the file; so is a missing directory.
func TestFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	if n, err := Load(path); err != nil || n != 0 {
		t.Fatalf("no file yet: %d, %v; want 0, nil", n, err)
	}
	for _, term := range []uint64{7, 8, 1 << 40} {
		if err := Save(path, term); err != nil {
			t.Fatal(err)
		}
		if n, err := Load(path); err != nil || n != term {
			t.Fatalf("after saving %d: %d, %v", term, n, err)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "voted_term 1099511627776\n" {
		t.Errorf("file holds %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left in the directory: %v (temporary files?)", ents)
	}
	for _, bad := range []string{"", "7\n", "voted_term x\n", "voted_term 7\nmore\n", "voted_term -1\n"} {
		os.WriteFile(path, []byte(bad), 0o600)
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%q: %v, want an error naming the file", bad, err)
		}
	}
	if _, err := Load(filepath.Join(dir, "nodir", "state")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing directory: %v", err)
	}
}
