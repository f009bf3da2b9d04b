package statefile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// inode is the inode number of the file at path.
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// TestSaveInPlace: once the file exists, a term of the same length or
// one digit longer is written over it (the same inode: no rename, no
// temporary file); a file that is not such a line (longer than the new
// one) is replaced whole.
func TestSaveInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	if err := Save(path, 98); err != nil {
		t.Fatal(err)
	}
	ino := inode(t, path)
	for _, term := range []uint64{99, 100, 101} {
		if err := Save(path, term); err != nil {
			t.Fatal(err)
		}
		if got := inode(t, path); got != ino {
			t.Errorf("saving %d replaced the file (inode %d, was %d), want it written in place", term, got, ino)
		}
		if b, _ := os.ReadFile(path); string(b) != fmt.Sprintf("voted_term %d\n", term) {
			t.Errorf("after saving %d the file holds %q", term, b)
		}
	}
	os.WriteFile(path, []byte("voted_term 101\n\n\n\n\n\n"), 0o600)
	ino = inode(t, path)
	if err := Save(path, 102); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "voted_term 102\n" || inode(t, path) == ino {
		t.Errorf("a longer file: after saving 102 it holds %q (inode %d, was %d), want the line alone in a new file", b, inode(t, path), ino)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left in the directory: %v (temporary files?)", ents)
	}
}

// A grown line's crash: the old length with the new digits reads as the
// new term.
func TestLoadNewDigitsOldLength(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	os.WriteFile(path, []byte("voted_term 100"), 0o600)
	if n, err := Load(path); err != nil || n != 100 {
		t.Errorf("%d, %v; want 100", n, err)
	}
}

// BenchmarkSave: a vote written in place (the file exists) against the
// first write's new file renamed over it, on the file system of the test's
// temporary directory (-benchtime, and TMPDIR to choose the disk).
func BenchmarkSave(b *testing.B) {
	for _, mode := range []string{"in place", "replace"} {
		b.Run(mode, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "state")
			if err := Save(path, 1); err != nil {
				b.Fatal(err)
			}
			term := uint64(1 << 40)
			for b.Loop() {
				term++
				var err error
				if mode == "in place" {
					err = Save(path, term)
				} else {
					err = replace(path, fmt.Appendf(nil, "voted_term %d\n", term))
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
