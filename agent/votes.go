package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The voted term on stable storage (quorum mode). A node votes in a term
// when it acknowledges a leader's claim or claims itself; the election
// machine reports the highest such term in Status().VotedTerm. Were the
// vote forgotten in a crash, the restarted node could vote a second time
// in the same term, and two leaders could hold one term, one fencing
// token. So the agent writes the term to StateFile, and fsyncs it, before
// it carries out the actions of the step that raised it (the votes go out
// in those actions), and gives it back to the machine at the next start
// (election.Config.InitialTerm).
//
// The file holds one line, "voted_term N". It is replaced atomically: a
// temporary file in the same directory, fsynced, renamed over it, and the
// directory fsynced.

const votedTermKey = "voted_term"

// LoadVotedTerm reads the voted term kept in path: 0 when the file does
// not exist yet. A file that exists but is not what the agent writes is
// an error: it may be some other file, and guessing would be unsafe.
func LoadVotedTerm(path string) (uint64, error) {
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

// saveVotedTerm writes term to path, durably, before it returns.
func saveVotedTerm(path string, term uint64) error {
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

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// saveVote keeps the machine's voted term on stable storage when a step
// raised it, before the step's actions are carried out. It reports
// whether they may be: when the term cannot be written the vote must not
// go out, and the agent stops (it cannot vote safely any more).
func (a *Agent) saveVote() bool {
	l := &a.loop
	if a.cfg.Quorum == 0 || a.cfg.StateFile == "" {
		return true
	}
	t := a.machine.Status().VotedTerm
	if t <= l.savedTerm {
		return true
	}
	if err := saveVotedTerm(a.cfg.StateFile, t); err != nil {
		a.log.Error("cannot keep the voted term: stopping, since a vote that a restart forgets could give one term to two leaders",
			"state_file", a.cfg.StateFile, "voted_term", t, "err", err)
		a.fail(fmt.Errorf("state-file %s: %w", a.cfg.StateFile, err))
		return false
	}
	l.savedTerm = t
	return true
}
