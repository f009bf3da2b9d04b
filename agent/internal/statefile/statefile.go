// Package statefile keeps the voted term of quorum mode on stable
// storage. A node votes in a term when it acknowledges a leader's claim
// or claims itself; were the vote forgotten in a crash, the restarted
// node could vote a second time in the same term, and two leaders could
// hold one term, one fencing token. So the agent writes the term, and
// fsyncs it, before the votes of the step that raised it go out, and
// gives it back to the election machine at the next start.
//
// The file holds one line, "voted_term N". It is replaced atomically: a
// temporary file in the same directory, fsynced, renamed over it, and the
// directory fsynced.
package statefile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

const votedTermKey = "voted_term"

// Load reads the voted term kept in path: 0 when the file does not exist
// yet. A file that exists but is not what the agent writes is an error:
// it may be some other file, and guessing would be unsafe.
func Load(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		dir := filepath.Dir(path)
		if st, derr := os.Stat(dir); derr != nil || !st.IsDir() {
			return 0, fmt.Errorf("state-file %s: its directory %s does not exist", path, dir)
		}
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("state-file: %w", err)
	}
	line := strings.TrimSuffix(string(b), "\n")
	v, ok := strings.CutPrefix(line, votedTermKey+" ")
	n, perr := strconv.ParseUint(v, 10, 64)
	if !ok || perr != nil || strings.Contains(line, "\n") {
		return 0, fmt.Errorf("state-file %s: not a lanleader state file (want one line %q, got %q)", path, votedTermKey+" N", truncate(line, 40))
	}
	return n, nil
}

// Save writes term to path, durably, before it returns.
func Save(path string, term uint64) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = fmt.Fprintf(f, "%s %d\n", votedTermKey, term)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// truncate cuts s to n bytes, marking the cut, for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
