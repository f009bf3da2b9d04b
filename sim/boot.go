package sim

import (
	"fmt"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/sim/job"
)

// A node's life: its boot (first or a restart), what membership tells
// the others, and its drifting clock.

// boot creates node i's machine and starts it.
func (s *Sim) boot(i int, first bool) {
	n := s.nodes[i]
	cfg := s.cfg.Timing
	cfg.ID, cfg.Priority, cfg.Preempt, cfg.Role = n.key.ID, n.key.Priority, n.preempt, n.role
	if !s.cfg.Amnesia {
		cfg.InitialTerm = n.voted
	}
	if s.cfg.Algorithm != "" {
		cfg.Algorithm = s.cfg.Algorithm
	}
	if s.cfg.Phi {
		cfg.Detector = newPhi(cfg)
	}
	m, err := election.New(cfg)
	if err != nil {
		panic(fmt.Sprintf("sim: node %d: %v", n.key.ID, err))
	}
	n.m, n.up, n.paused, n.pending, n.backlog = m, true, false, nil, 0
	s.version++
	n.gen++
	n.seq = 0
	// Each incarnation's monotonic clock has its own origin, so that a
	// machine comparing times across nodes would show up.
	n.offset = time.Duration(s.rng.Int64N(int64(time.Hour)))
	n.ppm = 0
	if d := int64(s.cfg.DriftPPM); d > 0 {
		n.ppm = s.rng.Int64N(2*d+1) - d
		if s.rng.IntN(2) == 0 {
			n.ppm = d
			if s.rng.IntN(2) == 0 {
				n.ppm = -d
			}
		}
	}
	s.Check.nodeUp(i)
	n.conflict, n.lastFrom = false, nil
	if s.cfg.Jobs {
		p := s.cfg.Nodes[i].Job
		n.job = &simJob{node: i, j: job.Job{P: p}, life: -1}
		n.drv = job.Driver{Quorum: s.cfg.Timing.Quorum > 0, WaitMax: p.Grace + s.cfg.JobWaitMargin, Standby: n.linkDown}
		if s.cfg.UnsafeJobNoWait {
			n.drv.WaitMax = 0
		}
	}
	for j, o := range s.nodes {
		if j != i && (first || o.up) {
			if o.key.ID == n.key.ID {
				continue // membership has one member per node_id
			}
			s.step(n, election.Event{Kind: election.EvMemberUp, Member: o.key, Role: o.role})
		}
	}
	s.step(n, election.Event{Kind: election.EvStart})
	if n.linkDown {
		s.step(n, election.Event{Kind: election.EvStandby, On: true})
	}
	if s.cfg.Clones {
		for _, o := range s.nodes {
			if o != n && o.key.ID == n.key.ID && o.up {
				// Membership lists two members with one node_id: each
				// sees the other in the metadata (agent/membership.go
				// checkConflict), MembershipDelay later.
				s.At(s.now+s.cfg.MembershipDelay, func() { s.memberConflict(n.key.ID) })
				break
			}
		}
	}
}

// memberConflict: membership tells every live node with node_id id of
// another live member with that id.
func (s *Sim) memberConflict(id election.NodeID) {
	var live []*node
	for _, n := range s.nodes {
		if n.key.ID == id && n.up {
			live = append(live, n)
		}
	}
	if len(live) < 2 {
		return
	}
	for _, n := range live {
		if !n.conflict {
			n.conflict = true
			s.tracef("n%d: membership lists another member with its node_id: conflict", n.key.ID)
			s.inject(n.idx, election.Event{Kind: election.EvConflict, On: true})
		}
	}
}

// notifyOthers delivers a membership notice about node i (its current
// key) to every other node after delay.
func (s *Sim) notifyOthers(i int, up bool, delay time.Duration) {
	for j, o := range s.nodes {
		if j == i || !o.up || o.key.ID == s.nodes[i].key.ID {
			continue
		}
		s.push(&event{at: s.now + delay, kind: evMember, node: j, gen: o.gen, up: up, about: i, aboutGen: s.nodes[i].gen})
	}
}

// local is node n's monotonic clock at global time g: its origin, and its
// rate off by n.ppm.
func (n *node) local(g time.Duration) time.Duration {
	return n.offset + g + time.Duration(int64(g)*n.ppm/1_000_000)
}

// global is the first global time at which node n's clock reads local or
// more.
func (n *node) global(local time.Duration) time.Duration {
	if n.ppm == 0 {
		return local - n.offset
	}
	g := time.Duration(int64(local-n.offset) * 1_000_000 / (1_000_000 + n.ppm))
	for n.local(g) < local {
		g++
	}
	for n.local(g-1) >= local {
		g--
	}
	return g
}
