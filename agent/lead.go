package agent

import (
	"fmt"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/agent/internal/sdbus"
	"github.com/lanleader/lanleader/agent/internal/statefile"
	"github.com/lanleader/lanleader/agent/part/lead"
	"github.com/lanleader/lanleader/election"
)

// The agent's side of the job (package proc runs it): the supervisor
// built from the config and wired to the event loop, the job unit's
// checks, and the public API's view of the job. When the job runs, and
// the hooks, are the policy's (agent/part/lead).

// procs are the job's supervisor and what it reports to the loop through
// (the policy's part runs the hooks).
type procs struct {
	sup   *proc.Supervisor // nil without a job
	dirty chan struct{}    // capacity 1: the job's status changed

	// systemd runs the job unit (below), nil without one.
	systemd jobSystemd
}

// JobStatus is the job's part of /status.
type JobStatus = proc.JobStatus

// timeFormat is RFC 3339 with milliseconds, as in /status.
const timeFormat = proc.TimeFormat

// Guard is the entry of the job's guard: the agent runs a job through its
// own executable, started again as the guard of the job's process group.
// A program that runs agents with a job must call Guard first thing in
// main, and a test binary whose tests do, first thing in TestMain: in a
// process started as a guard it runs the job and exits (the address
// keeper and the notice guard are entered here too); elsewhere it
// returns at once. Without it the agent does not start the job (its
// /status says why) rather than run the program's main again.
func Guard() {
	proc.SetNoticeSend(noticeSend)
	proc.Guard()
}

// newSupervisor is the supervisor of the configured job, reporting to
// the event loop.
func newSupervisor(a *Agent) *proc.Supervisor {
	cfg := &a.cfg
	return proc.New(proc.Config{
		Argv: cfg.Job, Grace: cfg.JobGrace, MaxFailures: cfg.JobMaxFailures, FailureWindow: cfg.JobFailureWindow,
		Quorum: cfg.Quorum > 0, NodeID: cfg.NodeID, Name: cfg.Name, Once: cfg.JobMode == config.JobModeOnce,
		Unit: cfg.JobUnit, Systemd: a.procs.systemd, EnvFile: jobEnvFile(cfg),
		Log: a.log, Running: a.met.JobRunning, Restarts: a.met.JobRestarts,
		// After the loop ended, a.call does nothing.
		Report: func(ev proc.Event) { a.call(func() { a.lead.JobEvent(ev) }) },
		// The loop republishes /status.
		Changed: func() {
			select {
			case a.procs.dirty <- struct{}{}:
			default:
			}
		},
	})
}

// The job as a systemd unit (Config.JobUnit): the supervisor starts and
// stops it through systemd (proc/unit.go), after the start's checks of
// the unit (proc.CheckUnit).

// jobSystemd is what the agent needs of systemd for a job unit.
type jobSystemd = proc.UnitSystemd

// newJobSystemd is the connection to systemd for cfg's job unit, nil
// without one.
func newJobSystemd(cfg *Config, fake jobSystemd) jobSystemd {
	switch {
	case cfg.JobUnit == "":
		return nil
	case fake != nil:
		return fake
	}
	return &sdbus.Conn{}
}

// jobEnvFile is where the job unit's environment is written.
func jobEnvFile(cfg *Config) string { return proc.EnvFile(cfg.JobEnvFile, config.DefaultJobEnvFile) }

// checkJobUnit refuses a job unit that systemd does not know or that is
// not bound to the agent's own unit, or whose environment file cannot be
// written (proc.CheckUnit).
func (a *Agent) checkJobUnit() error {
	if a.procs.systemd == nil {
		return nil
	}
	return proc.CheckUnit(a.procs.systemd, a.cfg.JobUnit, jobEnvFile(&a.cfg), a.log)
}

// Job mode once (Config.JobMode): the supervisor runs the job once per
// leadership; `lanleader run --once` waits on JobRan and JobEnded to run
// a command once and exit with its status.

// JobRan is closed when the job has first started; never without a job.
func (a *Agent) JobRan() <-chan struct{} { return a.lead.Ran() }

// JobEnded is closed when, in job mode once, the job has first finished:
// it exited on its own, with the status JobExitStatus gives.
func (a *Agent) JobEnded() <-chan struct{} { return a.lead.Ended() }

// JobExitStatus is the status of the job's last exit, as a shell gives
// it (128+N for a signal N), and false when it never exited.
func (a *Agent) JobExitStatus() (int, bool) {
	if a.procs.sup == nil {
		return 0, false
	}
	st := a.procs.sup.Status()
	if st.ExitCode == nil {
		return 0, false
	}
	return *st.ExitCode, true
}

// The job and leadership policy is a part (agent/part/lead): when the
// job runs, the takeover's waits, the penalty, the resign and the lease.
// Here is what the driver lends it (lead.Driver) and what it tells it of
// the machine and the members.

// newLead is the policy's part, reading the machine, the members and the
// other concerns through the driver's callbacks, on the loop.
func (a *Agent) newLead() *lead.Lead {
	return lead.New(loopHost{a}, &a.cfg, a.procs.sup, lead.Driver{
		Status:  func() election.Status { return a.machine.Status() },
		Leaving: func() bool { return a.loop.leaving },
		Members: a.leadMembers,
		Member: func(name string) (lead.Member, bool) {
			if m := a.loop.members[name]; m != nil {
				return leadMember(m), true
			}
			return lead.Member{}, false
		},
		Sync:          a.syncWith,
		Resign:        func() { a.step(a.now(), election.Event{Kind: election.EvResign}) },
		VIPsReady:     a.vips.Ready,
		VIPHeld:       a.vips.Held,
		AcquireVIPs:   a.vips.Acquire,
		ReleaseVIPs:   a.vips.Release,
		UpdateVIPs:    a.updateVIPs,
		LinksGone:     func() bool { return a.links.Gone() },
		PushMeta:      a.pushJobMeta,
		ApplyPriority: a.applyPriority,
		ApplyStandby:  a.applyStandby,
		CountHook: func(hook, outcome string) {
			a.met.HookRuns.WithLabelValues(hook, outcome).Inc()
		},
	})
}

// leadMember is what the policy reads of member m.
func leadMember(m *member) lead.Member {
	return lead.Member{Name: m.name, NodeID: m.meta.NodeID, Alive: m.alive(), MetaOK: m.metaOK,
		Job: m.meta.Job, Grace: m.meta.JobGrace, HasGrace: m.meta.HasGrace}
}

// leadMembers are the members as the policy reads them.
func (a *Agent) leadMembers() []lead.Member {
	ms := make([]lead.Member, 0, len(a.loop.members))
	for _, m := range a.loop.members {
		ms = append(ms, leadMember(m))
	}
	return ms
}

// syncWith starts a state exchange with the member name, unless one is
// under way (the syncer, gossip.go).
func (a *Agent) syncWith(name string) {
	m := a.loop.members[name]
	if m == nil {
		return
	}
	select {
	case a.syncKick <- syncReq{name: name, addr: m.addr}:
	default: // an exchange is under way
	}
}

// pushJobMeta gossips the metadata anew, with the job's state as the
// policy has it now.
func (a *Agent) pushJobMeta() {
	a.setMeta()
	a.pushMeta()
}

// leadershipChanged runs after each step that changed the machine's
// status: the policy's part, then the first probe of the addresses once
// this node first leads or follows.
func (a *Agent) leadershipChanged(prev, st election.Status, logged bool) {
	if a.lead.LeadershipChanged(prev, st, logged) {
		a.judgeProbes(st)
	}
}

// beginResign starts a hand-over (the policy's Resign); it reports
// whether this node was leading.
func (a *Agent) beginResign(why string) bool { return a.lead.Resign(why) }

// onSynced runs on the loop after a state exchange with name: once the
// updates it queued are applied, the loop's view of that member is the
// member's own, and a takeover waiting for it ends when its job is not
// running.
func (a *Agent) onSynced(name string) {
	a.drainMembers()
	a.lead.MemberChanged(name)
}

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

// ownClaim reports whether the step just taken raised the voted term for
// this node's own claim, and no more: no vote given to another, no lease
// held. Its actions may then go out before the vote is kept (step): this
// vote counts only here, and only once kept, since the loop handles no
// acknowledgement before saveVote returns. Should the host die in
// between, a node that claimed a term it never led may vote in it again
// after its restart; no leader counted its claim (as a node that crashed
// before it claimed). A vote for another must be kept before it goes out,
// as must the claim of a step that already leads (a majority of one).
func (a *Agent) ownClaim() bool {
	if a.cfg.Quorum == 0 || a.cfg.StateFile == "" {
		return false
	}
	st := a.machine.Status()
	return st.VotedTerm > a.loop.savedTerm && st.VotedFor == st.Self.ID && st.LeaseUntil == 0
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
	save := statefile.Save
	if a.seams.saveVote != nil {
		save = func(path string, term uint64) error { return a.seams.saveVote(a, path, term) }
	}
	if err := save(a.cfg.StateFile, t); err != nil {
		a.log.Error("cannot keep the voted term: stopping, since a vote that a restart forgets could give one term to two leaders",
			"state_file", a.cfg.StateFile, "voted_term", t, "err", err)
		a.fail(fmt.Errorf("state-file %s: %w", a.cfg.StateFile, err))
		return false
	}
	l.savedTerm = t
	return true
}
