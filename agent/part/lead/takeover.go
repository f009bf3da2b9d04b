package lead

import (
	"time"

	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/election"
)

// What a change of leadership means for the job: the takeover's waits
// and the hooks. The driver tells the part of the machine's actions in
// the order of a step (Follow), of the packets that concern a takeover
// (HeardResign, HeardClaim), of the members' news (MemberChanged), and
// of each step that changed the machine's status (LeadershipChanged).

// Follow: the machine followed leader (0: it lost its leader) within the
// step being handled; wasLeader, this node led before the step. A step
// may also follow a leader and begin at once to take it over (a node
// listening after a standby hears it), a takeover from a live leader
// (sim/job's Driver alike).
func (p *Lead) Follow(leader uint64, wasLeader bool) {
	p.leaderLost = leader == 0
	if p.cfg.Quorum > 0 && wasLeader {
		// Stepped down: a leadership ends here even when the same step
		// starts another (a node that is its own majority).
		p.steppedDown = true
	}
}

// SteppedDown says whether this node stopped leading within the step
// being handled (quorum mode: its lease ran out).
func (p *Lead) SteppedDown() bool { return p.steppedDown }

// EndStep: the driver has handled the step.
func (p *Lead) EndStep() { p.steppedDown = false }

// HeardResign: the leader this node's status names resigned; its job
// stopped before it did, so no takeover wait is needed.
func (p *Lead) HeardResign() { p.lostToResign = true }

// LeadershipChanged runs after each step that changed the machine's
// status from prev to st (logged: a change of state or leader, not a new
// term of the same leadership): the takeover's waits, the addresses, the
// job and the hooks. It reports whether this is the first leadership
// this node leads or follows since it started.
func (p *Lead) LeadershipChanged(prev, st election.Status, logged bool) (first bool) {
	becameLeader := st.State == election.StateLeader && (prev.State != election.StateLeader || p.steppedDown)
	stoppedLeading := prev.State == election.StateLeader && (st.State != election.StateLeader || p.steppedDown)
	if becameLeader {
		p.beginTakeover(prev)
	}
	if st.State != election.StateLeader {
		p.jobWait = ""
		p.takeoverUntil = 0
		if p.resigning {
			// Lost the leadership while the job was stopping for a
			// resign: nothing left to resign.
			p.resigning = false
		}
	}
	// Lost: the addresses go at once; won: they come before the job.
	p.d.UpdateVIPs()
	p.updateJob()
	p.runHooks(st, becameLeader, stoppedLeading, logged)
	if st.State == election.StateLeader || st.State == election.StateFollower && st.Leader != 0 {
		first = !p.followed
		p.followed = true
	}
	if st.Leader != 0 {
		// A live leader: this node, the one it follows, or one whose claim
		// it heard as a candidate while its own election goes on (bully
		// notes a smaller leader's claim that its election overrides,
		// with no ActFollow). A leadership that follows takes over from
		// it, and its job may run (sim/job's Driver alike).
		p.leaderLost = false
		p.lostToResign = false
		p.formerLeader = st.Leader
	}
	return first
}

// beginTakeover: this node became the leader after prev; the job waits
// for what may still run of the previous leader's.
func (p *Lead) beginTakeover(prev election.Status) {
	now := p.host.Now()
	p.jobWait = ""
	// Taken over from a leader that was alive a moment ago (a
	// preemption): its job may still be stopping. A leader lost to its
	// RESIGN stopped its job before it resigned, and one lost to a crash
	// lost its job with it.
	// In quorum mode no wait is needed: this node leads only after the
	// previous leader's lease, and its job with it, has ended.
	// The wait begins even when the gossip has not said that job runs: a
	// job started a moment ago may not have been announced yet. It ends
	// when the previous leader's metadata says its job is not running,
	// by gossip or by a state exchange with it, the first of which
	// starts now.
	if p.sup != nil && p.cfg.Quorum == 0 && prev.Leader != 0 && prev.Leader != p.cfg.NodeID && !p.leaderLost {
		p.waitForJobOf(prev.Leader, now, "waiting for the previous leader's job to stop before starting ours")
	}
	p.takeoverUntil = 0
	if p.sup != nil && p.cfg.TakeoverWait > 0 && p.jobWait == "" && !p.lostToResign {
		// No hand-over, and no live leader to wait for: the previous
		// leader (if any: a node that has just started cannot know) may
		// have crashed or lost its link, and its job may run until its
		// guard or its agent has stopped it, within its grace.
		// --takeover-wait is set for a grace like this node's: a
		// previous leader with a longer one adds the difference.
		wait := p.cfg.TakeoverWait + max(p.GraceOf(p.formerLeader)-p.cfg.JobGrace, 0)
		p.takeoverUntil = now + wait
		p.host.Log().Info("leading without a hand-over: the job starts after --takeover-wait, once the previous leader's job has surely stopped",
			"takeover_wait", p.cfg.TakeoverWait, "wait", wait, "previous", p.formerLeader)
		p.host.Rearm()
	}
}

// runHooks queues the hooks of a change to st.
func (p *Lead) runHooks(st election.Status, becameLeader, stoppedLeading, logged bool) {
	env := func() []string { return proc.HookEnv(p.cfg.NodeID, p.cfg.Name, st.State.String(), st.Term, st.Leader) }
	firstFollow := !p.followed && st.State == election.StateFollower && st.Leader != 0
	if becameLeader && p.cfg.OnLeader != "" {
		p.Hook(proc.Hook{Name: "on_leader", Command: p.cfg.OnLeader, Env: env()})
	}
	if (stoppedLeading || firstFollow) && p.cfg.OnFollower != "" {
		p.Hook(proc.Hook{Name: "on_follower", Command: p.cfg.OnFollower, Env: env()})
	}
	if logged && p.cfg.OnChange != "" {
		p.Hook(proc.Hook{Name: "on_change", Command: p.cfg.OnChange, Env: env()})
	}
}

// waitForJobOf makes the job wait for the job of node id, a live member,
// to stop, at most its grace (or ours, the longer) and JobWaitMargin
// from now; a wait for it already under way lasts until then at least.
// It reports whether id is a live member (the wait began or goes on).
func (p *Lead) waitForJobOf(id uint64, now time.Duration, msg string) bool {
	for _, m := range p.d.Members() {
		if !m.Alive || !m.MetaOK || m.NodeID != id {
			continue
		}
		// Its job stops within its grace, not ours; ours too in case its
		// metadata is older than a reload.
		wait := max(p.cfg.JobGrace, p.GraceOf(id)) + JobWaitMargin
		if p.jobWait == m.Name {
			// Its claims go on: so may its job (logged once).
			p.jobWaitMax += max(now+wait-p.jobWaitUntil, 0)
			p.jobWaitUntil = max(p.jobWaitUntil, now+wait)
			p.host.Rearm()
			return true
		}
		p.jobWaitMax = wait
		p.jobWait, p.jobWaitUntil = m.Name, now+wait
		p.jobWaitSync = now
		p.host.Log().Info(msg, "previous", m.Name, "reported_running", m.Job, "at_most", wait)
		p.syncWait(now)
		p.host.Rearm()
		return true
	}
	return false
}

// HeardClaim runs after the step of a claim (COORDINATOR or HEARTBEAT)
// of node x, another node; wanted: the job was wanted before that step.
// x led a moment ago and learns only now, from this leader's answer,
// that it no longer does: it had not heard this node's claim (a one-way
// link, a partition), or claimed a new term meanwhile. Its job stops
// within its grace from now, not from when this node took over, so a
// leader whose job has not started yet waits for it as for a displaced
// leader's, from now (sim/job's Driver.HeardClaim alike). A wait for a
// third leader is kept as it is. A job that runs already ran beside x's:
// that was two leaders, not a takeover.
func (p *Lead) HeardClaim(x uint64, wanted bool) {
	if p.sup == nil || p.cfg.Quorum > 0 || wanted || p.d.Status().State != election.StateLeader {
		return
	}
	if p.jobWait != "" {
		if m, ok := p.d.Member(p.jobWait); !ok || !m.MetaOK || m.NodeID != x {
			return
		}
	}
	if p.waitForJobOf(x, p.host.Now(), "another leader claimed: waiting for its job to stop before starting ours") {
		p.host.MarkDirty()
		p.updateJob()
	}
}

// GraceOf is how long the job of node id may take to stop after SIGTERM:
// its --job-grace, as its metadata says; this node's own for an agent
// whose metadata does not say (an older one) and for this node itself.
// For a node unknown (id 0: no leader seen yet, or one membership no
// longer lists) it is the longest of this node's and every member's, as
// any of them may have been that leader.
func (p *Lead) GraceOf(id uint64) time.Duration {
	own := p.cfg.JobGrace
	if id == p.cfg.NodeID {
		return own
	}
	of := func(m Member) time.Duration {
		if m.HasGrace {
			return m.Grace
		}
		return own
	}
	members := p.d.Members()
	g, found := time.Duration(0), false
	for _, m := range members {
		if id != 0 && m.MetaOK && m.NodeID == id {
			g, found = max(g, of(m)), true
		}
	}
	if found {
		return g
	}
	g = own
	for _, m := range members {
		if m.MetaOK {
			g = max(g, of(m))
		}
	}
	return g
}

// MemberChanged: a member's metadata changed, it went away, or a state
// exchange with it ended; a takeover may be waiting for its job.
func (p *Lead) MemberChanged(name string) {
	if p.jobWait == "" || p.jobWait != name {
		return
	}
	if m, ok := p.d.Member(name); !ok || !m.Alive || !m.MetaOK || !m.Job {
		p.host.Log().Info("the previous leader's job has stopped", "previous", name)
		p.jobWait = ""
		p.host.MarkDirty()
		p.updateJob()
	}
}

// syncWait starts a state exchange with the member a takeover waits for,
// when one is due (see jobWaitSyncEvery).
func (p *Lead) syncWait(now time.Duration) {
	if p.jobWait != "" && now >= p.jobWaitSync && now < p.jobWaitUntil {
		if m, ok := p.d.Member(p.jobWait); ok && m.Alive {
			p.d.Sync(p.jobWait)
		}
		p.jobWaitSync = now + jobWaitSyncEvery
	}
}
