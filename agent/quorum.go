package agent

import (
	"fmt"

	"github.com/lanleader/lanleader/agent/internal/statefile"
)

// The voted term on stable storage (quorum mode): the machine reports the
// highest term this node voted in (Status().VotedTerm); the agent writes
// it to StateFile (agent/internal/statefile) before it carries out the
// actions of the step that raised it, since the votes go out in those
// actions, and gives it back to the machine at the next start
// (election.Config.InitialTerm). The lease the job's guard enforces is
// the policy's (agent/part/lead).

// LoadVotedTerm reads the voted term kept in path: 0 when the file does
// not exist yet. A file that exists but is not what the agent writes is
// an error: it may be some other file, and guessing would be unsafe.
func LoadVotedTerm(path string) (uint64, error) { return statefile.Load(path) }

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
	if err := statefile.Save(a.cfg.StateFile, t); err != nil {
		a.log.Error("cannot keep the voted term: stopping, since a vote that a restart forgets could give one term to two leaders",
			"state_file", a.cfg.StateFile, "voted_term", t, "err", err)
		a.fail(fmt.Errorf("state-file %s: %w", a.cfg.StateFile, err))
		return false
	}
	l.savedTerm = t
	return true
}
