package agent

import (
	"github.com/lanleader/lanleader/agent/part"
	"github.com/lanleader/lanleader/agent/part/lead"
	"github.com/lanleader/lanleader/election"
)

// The job and leadership policy is a part (agent/part/lead): when the
// job runs, the takeover's waits, the penalty, the resign and the lease.
// Here is what the driver lends it (lead.Driver), what it tells it of
// the machine and the members, and the loop's auxiliary timer, which
// serves the deadlines of every part.

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
		VIPsReady:     a.vipsReady,
		VIPHeld:       a.vipsHeld,
		AcquireVIPs:   a.acquireVIPs,
		ReleaseVIPs:   a.releaseVIPs,
		UpdateVIPs:    a.updateVIPs,
		LinksGone:     func() bool { return a.links.Gone() },
		PushMeta:      a.pushJobMeta,
		ApplyPriority: a.applyPriority,
		ApplyStandby:  a.applyStandby,
		CountHook: func(hook, outcome string) {
			a.met.HookRuns.WithLabelValues(hook, outcome).Inc()
		},
		Rearm: a.rearmAux,
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

// onAux hands the deadlines that came to their parts.
func (a *Agent) onAux() {
	now := a.now()
	part.RunDue(a.parts, now)
	a.rearmAux()
}

// rearmAux sets the aux timer to the earliest deadline of the parts.
func (a *Agent) rearmAux() {
	l := &a.loop
	if l.aux == nil {
		return
	}
	next, ok := part.Earliest(a.parts)
	if !ok {
		l.aux.Stop()
		return
	}
	l.aux.Reset(max(next-a.now(), 0))
}
