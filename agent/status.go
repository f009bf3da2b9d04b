package agent

import (
	"github.com/lanleader/lanleader/agent/api"
	"slices"
	"strings"
	"time"

	"github.com/lanleader/lanleader/agent/part"
	"github.com/lanleader/lanleader/agent/part/trackfile"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/metrics"
)

// What the agent publishes: the /status document, built by the loop in
// publish and read by any goroutine through Status.

// TrackFileStatus is one track file in /status.
type TrackFileStatus = trackfile.Status

// TrackFileEvery is how often the track files are stat'ed.
const TrackFileEvery = trackfile.Every

// The documents of /status (package api), by their names here.
type (
	Status       = api.Status
	Member       = api.Member
	ReloadStatus = api.ReloadStatus
)

// publish rebuilds the /status snapshot and the metrics view when
// something changed.
func (a *Agent) publish() {
	l := &a.loop
	if !l.dirty {
		return
	}
	l.dirty = false
	st := a.machine.Status()
	s := &Status{
		Name: a.cfg.Name, NodeID: a.cfg.NodeID, Priority: st.Self.Priority, State: st.State.String(),
		Term: st.Term, LeaderID: st.Leader, LeaderName: a.nameOf(st.Leader), Algorithm: a.cfg.Algorithm,
		Members: make([]Member, 0, len(l.members)), Cluster: a.cfg.Cluster, Transport: a.cfg.Transport,
		GossipAddr: a.gossip.String(), ElectionAddr: a.tr.Local.String(), Version: a.cfg.Version,
		Role: a.cfg.ElectionRole().String(),
	}
	if len(l.conflict) > 0 {
		s.Conflict = slices.Clone(l.conflict)
	}
	if !l.since.IsZero() {
		s.LeaderSince = l.since.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	counts, roles := map[string]int{}, map[string]int{}
	for _, m := range l.members {
		mm := Member{Name: m.name, Addr: m.addr, Alive: m.alive(), Status: m.status}
		if m.metaOK {
			mm.NodeID, mm.Priority, mm.ElectionAddr = m.meta.NodeID, m.meta.Priority, m.meta.Election.String()
			mm.Role = m.meta.Role.String()
			if mm.Alive {
				roles[mm.Role]++
			}
		}
		s.Members = append(s.Members, mm)
		counts[m.status]++
	}
	slices.SortFunc(s.Members, func(x, y Member) int { return strings.Compare(x.Name, y.Name) })
	a.checkVoters(roles)
	a.noteMajority(a.now())
	s.BasePriority = a.cfg.Priority
	s.Quorum, s.VotedTerm = a.cfg.Quorum, st.VotedTerm
	var checks []metrics.Check
	s.Checks, checks = a.checks.Status()
	s.TrackFiles, s.Fault = a.track.Status(), a.standbyReasons()
	if until, ok := a.lead.Penalty(); ok {
		s.PenaltyUntil = time.Now().Add(until - a.now()).UTC().Format(timeFormat)
	}
	if a.procs.sup != nil {
		js := *a.procs.sup.Status()
		if a.lead.Waiting() && js.State == "stopped" {
			js.State = "waiting"
		}
		s.Job = &js
	}
	if a.cfg.LogLevel != nil {
		s.LogLevel = strings.ToLower(a.cfg.LogLevel.Level().String())
	}
	if l.reload != nil {
		r := *l.reload
		s.LastReload = &r
	}
	s.VIPs = a.vips.Status()
	s.LinksDown = slices.Clone(a.links.VIPDown())
	var vips []metrics.VIP
	for _, v := range s.VIPs {
		vips = append(vips, metrics.VIP{Address: v.Address, Up: v.Up})
	}
	a.snap.Store(s)
	a.view.Store(&metrics.View{State: s.State, Term: s.Term, LeaderID: s.LeaderID, LeaderName: s.LeaderName, Members: counts,
		Priority: s.Priority, ChecksFailing: a.checks.Failing(), VIPs: vips, Checks: checks, Fault: len(s.Fault) > 0,
		Role: s.Role, MemberRoles: roles})
	v := part.View{NodeID: s.NodeID, State: s.State, Term: s.Term, LeaderID: s.LeaderID, LeaderName: s.LeaderName,
		Priority: s.Priority, BasePriority: s.BasePriority}
	if s.Job != nil {
		v.JobState, v.JobPid = s.Job.State, s.Job.Pid
	}
	for _, p := range a.parts {
		p.Changed(&v)
	}
}

// Status returns the latest /status document.
func (a *Agent) Status() Status {
	if s := a.snap.Load(); s != nil {
		return *s
	}
	return Status{Name: a.cfg.Name, NodeID: a.cfg.NodeID, Priority: a.cfg.Priority, BasePriority: a.cfg.Priority, State: "starting",
		Algorithm: a.cfg.Algorithm, Cluster: a.cfg.Cluster, Transport: a.cfg.Transport, Version: a.cfg.Version, Members: []Member{},
		Role: a.cfg.ElectionRole().String()}
}

// checkVoters warns, once until it is no longer so, when more members
// that vote (candidates and witnesses, this node included) are alive
// than quorum mode's N: two disjoint majorities of N could then form, and
// elect two leaders. N must count every candidate and witness and no
// observer. roles counts the other alive members by role.
func (a *Agent) checkVoters(roles map[string]int) {
	l := &a.loop
	if a.cfg.Quorum == 0 {
		return
	}
	voters := roles[election.RoleCandidate.String()] + roles[election.RoleWitness.String()]
	if a.cfg.ElectionRole().Votes() {
		voters++
	}
	over := voters > a.cfg.Quorum
	if over && !l.tooManyVoters {
		a.log.Warn("more voting members are alive than --quorum counts: two majorities could elect two leaders; --quorum must count every candidate and witness (and no observer)",
			"quorum", a.cfg.Quorum, "voters", voters)
	}
	l.tooManyVoters = over
}
