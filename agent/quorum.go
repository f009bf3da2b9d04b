package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/election"
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

// The lease in the job's guard (quorum mode). The election machine steps
// down when its lease runs out, and the agent then stops the job; but an
// agent that is paused (SIGSTOP, a frozen VM, a long swap storm) does
// neither, while its job would run on beside the next leader's. So the
// guard, a process of its own, holds the lease too: the agent gives it the
// end of the lease on CLOCK_MONOTONIC when it starts the job and each time
// a majority renews it, and the guard SIGKILLs the job's process group
// when that time comes, whatever the agent is doing. A guard that hears
// nothing more keeps the last end it was given; an end is never moved
// back by a leader that steps down, which stops the job with SIGTERM and
// leaves the guard's deadline as the last word: the job has until the end
// of the lease, JobGrace at most.
//
// CLOCK_MONOTONIC, not Go's time: two processes must read one clock, and
// it is the one a time namespace gives both. The end is computed from the
// machine's time (the agent's monotonic clock) by reading CLOCK_MONOTONIC
// first, so that the conversion can only make the end earlier.

// toMono converts a time of the agent's clock to CLOCK_MONOTONIC.
func (a *Agent) toMono(d time.Duration) int64 {
	m := proc.MonoNow()
	return m + int64(d-a.now())
}

// updateLease gives the job's guard the lease of this node, when it leads
// in quorum mode and the lease has moved on. It runs after updateJob: the
// lease is for the generation of the job that updateJob asked for, and
// the supervisor starts no job of a generation without its lease.
func (a *Agent) updateLease(st election.Status) {
	l := &a.loop
	// Also while the job stops for a resign or a graceful stop: the node
	// still holds its lease, and the job its grace period.
	if a.procs.sup == nil || a.cfg.Quorum == 0 || st.State != election.StateLeader || st.LeaseUntil <= 0 {
		return
	}
	end := a.toMono(st.LeaseUntil)
	if end <= l.leaseMono && l.gen == l.leaseGen {
		return
	}
	l.leaseMono, l.leaseGen = max(end, l.leaseMono), l.gen
	a.procs.sup.SetLease(l.leaseMono, l.gen)
}
