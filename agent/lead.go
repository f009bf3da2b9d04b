package agent

import (
	"time"

	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/agent/part"
	"github.com/lanleader/lanleader/election"
)

// What the event loop does around the election for the operator: the job
// (through the supervisor), the hooks, the health checks and the
// effective priority, resigning, and the parts' deadlines. Everything
// here runs on the loop goroutine and never blocks it.

// jobWaitMargin is added to the job grace for the longest wait of a node
// that took the leadership over from a live leader, for that leader's job
// to stop: the old leader kills its job by the end of its grace period
// (its own --job-grace, which its metadata carries: graceOf) and then
// says so in its metadata, which gossip spreads within a few hundred
// milliseconds.
const jobWaitMargin = 2 * time.Second

// jobWaitSyncEvery: while a new leader waits for the previous leader's
// job to stop, it exchanges state with that member (memberlist's
// push-pull, over TCP) at once and then this often. The previous
// leader's "job stopped" normally comes by gossip within a gossip round
// (200 ms), but memberlist's broadcast queue can drop it (see
// metaPusher), and then only the next periodic push-pull, up to 30 s
// later, would carry it; its "job started" may not have come yet when
// the wait begins. The exchange reads the member's own current metadata.
const jobWaitSyncEvery = 500 * time.Millisecond

// leadState is the part of loopState this file owns.
type leadState struct {
	wantRun    bool
	gen        uint64
	jobRunning bool // the supervisor reported a process (until its group is gone)
	haltJob    bool // a graceful stop: the job must stop for good
	resigning  bool // a resign waits for the job to stop
	resignWhy  string
	// leaderLost: the machine reported no leader (a suspicion, a RESIGN)
	// since its status last named one (leadershipChanged); set and
	// cleared by do, in the order of a step's actions, even within the
	// step that elects the next leader.
	leaderLost bool
	// steppedDown (quorum mode): this node stopped leading within the
	// step being handled (its lease ran out), set by do until afterStep
	// has handled the step.
	steppedDown bool

	// lostToResign: the leader lost since the status last named one was
	// lost to its RESIGN (its job stopped before it resigned).
	lostToResign bool
	// takeoverUntil: Config.TakeoverWait, the job waits until then (0:
	// no wait).
	takeoverUntil time.Duration

	// jobWait is the member whose job must stop before ours starts (a
	// takeover from a live leader), until jobWaitUntil.
	jobWait      string
	jobWaitUntil time.Duration
	jobWaitMax   time.Duration // how long it may last
	jobWaitSync  time.Duration // the next state exchange with jobWait's member
	// formerLeader is the leader this node's status last named (one it
	// followed or was, or a claim it noted as a candidate), 0 before the
	// first: the one a leadership without a hand-over follows.
	// (loopState.lastLeader is already this node when leadershipChanged
	// sees it lead.)
	formerLeader uint64

	penaltyUntil time.Duration // the job failed too often: priority 1 until then
	penalised    bool

	awaitJoin bool // Config.JoinBeforeLead: no member has joined yet (job.go)
	followed  bool // this node followed a leader (or led) since it started
	aux       *time.Timer
}

// updateJob tells the supervisor what the job should be doing now.
func (a *Agent) updateJob() {
	if a.procs.sup == nil {
		return
	}
	l := &a.loop
	st := a.machine.Status()
	// The addresses first: the job starts only once they are held.
	run := st.State == election.StateLeader && !l.leaving && !l.haltJob && !l.resigning && l.jobWait == "" && l.takeoverUntil == 0 && a.vipsReady()
	if run && !l.wantRun && a.links.Gone() {
		return // it stepped down: onLinks updated the job
	}
	if run && (!l.wantRun || l.steppedDown) {
		l.gen++
	}
	l.wantRun = run
	a.procs.sup.Set(proc.Want{Run: run, Gen: l.gen, Term: st.Term, Leader: st.Leader})
}

// leadershipChanged runs after each step that changed the machine's
// status: the job, the hooks, the takeover wait.
func (a *Agent) leadershipChanged(prev, st election.Status, logged bool) {
	l := &a.loop
	now := a.now()
	becameLeader := st.State == election.StateLeader && (prev.State != election.StateLeader || l.steppedDown)
	stoppedLeading := prev.State == election.StateLeader && (st.State != election.StateLeader || l.steppedDown)
	if becameLeader {
		l.jobWait = ""
		// Taken over from a leader that was alive a moment ago (a
		// preemption): its job may still be stopping. A leader lost to
		// its RESIGN stopped its job before it resigned, and one lost to
		// a crash lost its job with it.
		// In quorum mode no wait is needed: this node leads only after
		// the previous leader's lease, and its job with it, has ended.
		// The wait begins even when the gossip has not said that job
		// runs: a job started a moment ago may not have been announced
		// yet. It ends when the previous leader's metadata says its job
		// is not running, by gossip or by a state exchange with it, the
		// first of which starts now.
		if a.procs.sup != nil && a.cfg.Quorum == 0 && prev.Leader != 0 && prev.Leader != a.cfg.NodeID && !l.leaderLost {
			a.waitForJobOf(prev.Leader, now, "waiting for the previous leader's job to stop before starting ours")
		}
		l.takeoverUntil = 0
		if a.procs.sup != nil && a.cfg.TakeoverWait > 0 && l.jobWait == "" && !l.lostToResign {
			// No hand-over, and no live leader to wait for: the previous
			// leader (if any: a node that has just started cannot know)
			// may have crashed or lost its link, and its job may run until
			// its guard or its agent has stopped it, within its grace.
			// --takeover-wait is set for a grace like this node's: a
			// previous leader with a longer one adds the difference.
			wait := a.cfg.TakeoverWait + max(a.graceOf(l.formerLeader)-a.cfg.JobGrace, 0)
			l.takeoverUntil = now + wait
			a.log.Info("leading without a hand-over: the job starts after --takeover-wait, once the previous leader's job has surely stopped",
				"takeover_wait", a.cfg.TakeoverWait, "wait", wait, "previous", l.formerLeader)
			a.rearmAux()
		}
	}
	if st.State != election.StateLeader {
		l.jobWait = ""
		l.takeoverUntil = 0
		if l.resigning {
			// Lost the leadership while the job was stopping for a
			// resign: nothing left to resign.
			l.resigning = false
		}
	}
	// Lost: the addresses go at once; won: they come before the job.
	a.updateVIPs()
	a.updateJob()

	if a.procs.hooks != nil {
		env := func() []string { return hookEnv(&a.cfg, st.State.String(), st.Term, st.Leader) }
		firstFollow := !l.followed && st.State == election.StateFollower && st.Leader != 0
		if becameLeader && a.cfg.OnLeader != "" {
			a.procs.hooks.Add(proc.Hook{Name: "on_leader", Command: a.cfg.OnLeader, Env: env()})
		}
		if (stoppedLeading || firstFollow) && a.cfg.OnFollower != "" {
			a.procs.hooks.Add(proc.Hook{Name: "on_follower", Command: a.cfg.OnFollower, Env: env()})
		}
		if logged && a.cfg.OnChange != "" {
			a.procs.hooks.Add(proc.Hook{Name: "on_change", Command: a.cfg.OnChange, Env: env()})
		}
	}
	if st.State == election.StateLeader || st.State == election.StateFollower && st.Leader != 0 {
		if !l.followed {
			a.judgeProbes(st)
		}
		l.followed = true
	}
	if st.Leader != 0 {
		// A live leader: this node, the one it follows, or one whose claim
		// it heard as a candidate while its own election goes on (bully
		// notes a smaller leader's claim that its election overrides,
		// with no ActFollow). A leadership that follows takes over from
		// it, and its job may run (sim/job's Driver alike).
		l.leaderLost = false
		l.lostToResign = false
		l.formerLeader = st.Leader
	}
}

// waitForJobOf makes the job wait for the job of node id, a live member,
// to stop, at most its grace (or ours, the longer) and jobWaitMargin
// from now; a wait for it already under way lasts until then at least.
// It reports whether id is a live member (the wait began or goes on).
func (a *Agent) waitForJobOf(id uint64, now time.Duration, msg string) bool {
	l := &a.loop
	for name, m := range l.members {
		if !m.alive() || !m.metaOK || m.meta.NodeID != id {
			continue
		}
		// Its job stops within its grace, not ours; ours too in case its
		// metadata is older than a reload.
		wait := max(a.cfg.JobGrace, a.graceOf(id)) + jobWaitMargin
		if l.jobWait == name {
			// Its claims go on: so may its job (logged once).
			l.jobWaitMax += max(now+wait-l.jobWaitUntil, 0)
			l.jobWaitUntil = max(l.jobWaitUntil, now+wait)
			a.rearmAux()
			return true
		}
		l.jobWaitMax = wait
		l.jobWait, l.jobWaitUntil = name, now+wait
		l.jobWaitSync = now
		a.log.Info(msg, "previous", name, "reported_running", m.meta.Job, "at_most", wait)
		a.syncWait(now)
		return true
	}
	return false
}

// heardClaim runs after the step of a claim (COORDINATOR or HEARTBEAT)
// of node x, another node; wanted: the job was wanted before that step.
// x led a moment ago and learns only now, from this leader's answer,
// that it no longer does: it had not heard this node's claim (a one-way
// link, a partition), or claimed a new term meanwhile. Its job stops
// within its grace from now, not from when this node took over, so a
// leader whose job has not started yet waits for it as for a displaced
// leader's, from now (sim/job's Driver.HeardClaim alike). A wait for a
// third leader is kept as it is. A job that runs already ran beside x's:
// that was two leaders, not a takeover.
func (a *Agent) heardClaim(x uint64, wanted bool) {
	l := &a.loop
	if a.procs.sup == nil || a.cfg.Quorum > 0 || wanted || a.machine.Status().State != election.StateLeader {
		return
	}
	if l.jobWait != "" {
		if m := l.members[l.jobWait]; m == nil || !m.metaOK || m.meta.NodeID != x {
			return
		}
	}
	if a.waitForJobOf(x, a.now(), "another leader claimed: waiting for its job to stop before starting ours") {
		l.dirty = true
		a.updateJob()
	}
}

// graceOf is how long the job of node id may take to stop after SIGTERM:
// its --job-grace, as its metadata says; this node's own for an agent
// whose metadata does not say (an older one) and for this node itself.
// For a node unknown (id 0: no leader seen yet, or one membership no
// longer lists) it is the longest of this node's and every member's, as
// any of them may have been that leader.
func (a *Agent) graceOf(id uint64) time.Duration {
	own := a.cfg.JobGrace
	if id == a.cfg.NodeID {
		return own
	}
	of := func(m *member) time.Duration {
		if m.meta.HasGrace {
			return m.meta.JobGrace
		}
		return own
	}
	g, found := time.Duration(0), false
	for _, m := range a.loop.members {
		if id != 0 && m.metaOK && m.meta.NodeID == id {
			g, found = max(g, of(m)), true
		}
	}
	if found {
		return g
	}
	g = own
	for _, m := range a.loop.members {
		if m.metaOK {
			g = max(g, of(m))
		}
	}
	return g
}

// onJobEvent is the supervisor's report, run on the loop.
func (a *Agent) onJobEvent(ev proc.Event) {
	l := &a.loop
	l.dirty = true
	switch ev.Kind {
	case proc.Started:
		a.procs.ran.fire()
		l.jobRunning = true
		a.setMeta()
		a.pushMeta()
	case proc.Stopped:
		l.jobRunning = false
		if a.cfg.Quorum > 0 && a.vipsHeld() && !l.resigning && !l.haltJob {
			// The guard of an earlier leadership's job, whose lease ran
			// out, may have removed the addresses as it killed that
			// job; this leadership holds them (Acquire keeps those still
			// there, and announces).
			a.acquireVIPs()
		}
		a.setMeta()
		a.pushMeta()
		a.finishResign()
	case proc.Finished:
		a.log.Info("the job has finished: job mode once, it runs again when this node next leads", "exit_status", ev.Code)
		a.procs.ended.fire()
	case proc.CrashLoop:
		l.penaltyUntil, l.penalised = a.now()+a.cfg.JobFailureWindow, true
		a.log.Error("the job failed too often: priority 1 and resign, so that another node runs it",
			"for", a.cfg.JobFailureWindow, "max_failures", a.cfg.JobMaxFailures)
		a.applyPriority()
		a.beginResign("the job failed too often")
	}
}

// beginResign starts a hand-over: the job stops first, then the virtual
// addresses go, then RESIGN, so that the next leader's job never runs
// beside ours and the next leader can take the addresses at once.
func (a *Agent) beginResign(why string) bool {
	l := &a.loop
	if a.machine.Status().State != election.StateLeader || l.leaving {
		return false
	}
	if !l.resigning {
		a.log.Info("resigning", "why", why)
	}
	l.resigning, l.resignWhy = true, why
	a.updateJob()
	a.finishResign()
	return true
}

// finishResign sends RESIGN once the job has stopped.
func (a *Agent) finishResign() {
	l := &a.loop
	if !l.resigning || a.procs.sup != nil && !a.procs.sup.Idle() {
		return
	}
	l.resigning = false
	if a.machine.Status().State == election.StateLeader {
		a.releaseVIPs("resigning: " + l.resignWhy)
		a.step(a.now(), election.Event{Kind: election.EvResign})
	}
	a.updateJob()
	// A resign for a standby (health.go): now out of the elections.
	a.applyStandby()
}

// onMemberChanged: a member's metadata changed, it went away, or a state
// exchange with it ended; a takeover may be waiting for its job.
func (a *Agent) onMemberChanged(name string) {
	l := &a.loop
	if l.jobWait == "" || l.jobWait != name {
		return
	}
	m := l.members[name]
	if m == nil || !m.alive() || !m.metaOK || !m.meta.Job {
		a.log.Info("the previous leader's job has stopped", "previous", name)
		l.jobWait = ""
		l.dirty = true
		a.updateJob()
	}
}

// syncWait starts a state exchange with the member a takeover waits for,
// when one is due (see jobWaitSyncEvery), and arms the aux timer.
func (a *Agent) syncWait(now time.Duration) {
	l := &a.loop
	if l.jobWait != "" && now >= l.jobWaitSync && now < l.jobWaitUntil {
		if m := l.members[l.jobWait]; m != nil && m.alive() {
			select {
			case a.syncKick <- syncReq{name: l.jobWait, addr: m.addr}:
			default: // an exchange is under way
			}
		}
		l.jobWaitSync = now + jobWaitSyncEvery
	}
	a.rearmAux()
}

// onSynced runs on the loop after a state exchange with name: once the
// updates it queued are applied, the loop's view of that member is the
// member's own, and a takeover waiting for it ends when its job is not
// running.
func (a *Agent) onSynced(name string) {
	a.drainMembers()
	a.onMemberChanged(name)
}

// onAux handles the loop's own deadlines: the end of a takeover wait or
// of a penalty, READY=1 by its deadline, the watchdog.
func (a *Agent) onAux() {
	l := &a.loop
	now := a.now()
	a.syncWait(now)
	if l.jobWait != "" && now >= l.jobWaitUntil {
		a.log.Warn("the previous leader's job is still reported running: starting ours anyway", "previous", l.jobWait,
			"waited", l.jobWaitMax)
		l.jobWait = ""
		a.updateJob()
	}
	if l.takeoverUntil != 0 && now >= l.takeoverUntil {
		l.takeoverUntil = 0
		a.log.Info("takeover wait over: starting the job")
		a.updateJob()
	}
	if l.penalised && now >= l.penaltyUntil {
		l.penalised = false
		a.log.Info("job penalty over: priority restored")
		a.applyPriority()
	}
	part.RunDue(a.parts, now)
	a.rearmAux()
}

// rearmAux sets the aux timer to the earliest of the loop's own deadlines.
func (a *Agent) rearmAux() {
	l := &a.loop
	if l.aux == nil {
		return
	}
	next := time.Duration(-1)
	at := func(d time.Duration) {
		if next < 0 || d < next {
			next = d
		}
	}
	if l.jobWait != "" {
		at(l.jobWaitUntil)
		at(l.jobWaitSync)
	}
	if l.penalised {
		at(l.penaltyUntil)
	}
	if l.takeoverUntil != 0 {
		at(l.takeoverUntil)
	}
	if d, ok := part.Earliest(a.parts); ok {
		at(d)
	}
	if next < 0 {
		l.aux.Stop()
		return
	}
	l.aux.Reset(max(next-a.now(), 0))
}
