package sim

import (
	"github.com/lanleader/lanleader/election"
)

// The faults a schedule or a test applies: crashes, restarts, pauses,
// cuts and partitions, resigns, suspicions and priorities.

// OneWay cuts the packets from every node of from to every node of to.
func (s *Sim) OneWay(from, to []int) {
	for _, a := range from {
		for _, b := range to {
			if a != b {
				s.Cut(a, b)
			}
		}
	}
	s.tracef("one-way %v -> %v", s.ids(from), s.ids(to))
}

// Heal removes every cut.
func (s *Sim) Heal() {
	clear(s.cut)
	s.tracef("heal")
}

// Connected reports whether packets flow both ways between a and b.
func (s *Sim) Connected(a, b int) bool { return !s.cut[[2]int{a, b}] && !s.cut[[2]int{b, a}] }

// Resign asks node i to hand over (it does so only if it leads). With
// Config.Jobs the driver first stops the job, as the agent does, and
// gives the machine EvResign once it has died.
func (s *Sim) Resign(i int) {
	n := s.nodes[i]
	if n.job == nil || !n.up {
		s.inject(i, election.Event{Kind: election.EvResign})
		return
	}
	if n.paused {
		s.At(s.now+waitPoll, func() { s.Resign(i) })
		return
	}
	if n.drv.Resign() {
		s.updateJob(n)
	}
}

// Suspect tells node i that its leader is suspected (as membership would).
func (s *Sim) Suspect(i int) { s.inject(i, election.Event{Kind: election.EvSuspectLeader}) }

// SetPriority changes node i's priority (as a health check would).
func (s *Sim) SetPriority(i int, p uint16) {
	n := s.nodes[i]
	n.key.Priority = p
	s.version++
	if !n.up {
		return
	}
	s.inject(i, election.Event{Kind: election.EvSetPriority, Priority: p})
	s.notifyOthers(i, true, s.cfg.UpdateDelay)
}

// inject feeds an event to a running node now, or when it resumes if it
// is paused.
func (s *Sim) inject(i int, ev election.Event) {
	n := s.nodes[i]
	if !n.up {
		return
	}
	s.dispatch(&event{at: s.now, kind: evInject, node: i, gen: n.gen, ev: &ev})
}

// Crash stops node i at once, its host with it (no NOTICE): it loses its
// memory; the others hear of it from the membership layer after
// MembershipDelay.
func (s *Sim) Crash(i int) { s.crash(i, false) }

func (s *Sim) crash(i int, withNotice bool) {
	n := s.nodes[i]
	if !n.up {
		return
	}
	var p *notice
	if withNotice {
		p = s.armNotice(n)
	}
	n.noticed = nil
	n.up, n.paused, n.pending, n.backlog = false, false, nil, 0
	n.m = nil
	s.Check.nodeDown(i)
	if sj := n.job; sj != nil {
		// The agent is gone; its job is left to the guard.
		n.job = nil
		n.drv.Crashed()
		if sj.life >= 0 {
			s.Check.Jobs.All[sj.life].Orphan = true
		}
		if p != nil {
			p.life = sj.life
		}
		s.jobChanged(sj, sj.j.Orphaned(s.now))
		if p != nil && sj.j.Alive() {
			// The notice guard waits for the job's guard.
			sj.notice, p = p, nil
		}
	}
	s.version++
	if withNotice {
		s.tracef("n%d's agent crashes, its host lives", n.key.ID)
	} else {
		s.tracef("n%d crash", n.key.ID)
	}
	if p != nil {
		s.sendNotice(p)
	}
	s.notifyOthers(i, false, s.cfg.MembershipDelay)
}

// Restart starts node i again with a fresh memory.
func (s *Sim) Restart(i int) {
	if s.nodes[i].up {
		return
	}
	s.tracef("n%d restart", s.nodes[i].key.ID)
	s.boot(i, false)
	s.notifyOthers(i, true, s.cfg.MembershipDelay)
}

// Pause freezes node i, as SIGSTOP would: it handles nothing and sends
// nothing; its timers that come due, and up to SocketBuffer packets that
// arrive, wait for Resume.
func (s *Sim) Pause(i int) {
	n := s.nodes[i]
	if !n.up || n.paused {
		return
	}
	n.paused = true
	s.version++
	s.tracef("n%d pause", n.key.ID)
}

// Resume wakes node i: the packets that arrived and the timers that came
// due are handled now, in the order they happened, on its stale state.
func (s *Sim) Resume(i int) {
	n := s.nodes[i]
	if !n.up || !n.paused {
		return
	}
	n.paused = false
	n.backlog = 0
	s.version++
	s.tracef("n%d resume", n.key.ID)
	for _, e := range n.pending {
		e.at = s.now
		s.push(e)
	}
	n.pending = nil
}

// Cut drops every packet from a to b (a one-way partition). Heal undoes it.
func (s *Sim) Cut(a, b int) { s.cut[[2]int{a, b}] = true }

// Partition cuts both ways between every node of side and every other.
func (s *Sim) Partition(side []int) {
	in := make([]bool, len(s.nodes))
	for _, i := range side {
		in[i] = true
	}
	for a := range s.nodes {
		for b := range s.nodes {
			if in[a] != in[b] {
				s.Cut(a, b)
			}
		}
	}
	s.tracef("partition %v", s.ids(side))
}
