package explore

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/sim/job"
	"github.com/lanleader/lanleader/wire"
)

// The faults a schedule chooses: crashes and restarts, pulled cables,
// pauses, and the stop latency of a job told to stop.

// boot starts node i: a new machine, which knows every other node as a
// member, with the last term it voted in.
func (e *explorer) boot(s *state, i int) {
	n := &s.nodes[i]
	cfg := e.cfgs[i]
	cfg.InitialTerm = n.voted
	m, err := election.New(cfg)
	if err != nil {
		panic(fmt.Sprintf("explore: node %d: %v", cfg.ID, err))
	}
	n.m, n.gen, n.seq, n.conflict, n.lastFrom, n.noticed = m, n.gen+1, 0, false, nil, nil
	n.paused, n.wake, n.held = false, 0, nil
	n.timers = [election.NumTimers]timer{}
	n.drv = job.Driver{Quorum: e.quorum, WaitMax: e.shape.Job.Grace + 2*time.Second}
	if e.shape.UnsafeJobNoWait {
		n.drv.WaitMax = 0
	}
	n.job = job.Job{P: e.shape.Job}
	e.linef("%v n%d starts (incarnation %d, initial term %d)", s.now, cfg.ID, n.gen, n.voted)
	for j, o := range e.shape.Nodes {
		if j != i && o.ID != cfg.ID {
			e.step(s, i, election.Event{Kind: election.EvMemberUp, Member: election.Key{Priority: 100, ID: o.ID}, Role: o.Role})
		}
	}
	e.step(s, i, election.Event{Kind: election.EvStart})
	if n.linkDown {
		e.standby(s, i)
	}
}

// crash stops node i: its machine is gone, its job left to the guard.
// withNotice: only its agent, its host alive: if it led, its NOTICE goes
// out once its job is dead.
func (e *explorer) crash(s *state, i int, withNotice bool) {
	n := &s.nodes[i]
	nm, notice := wire.Message{}, false
	if withNotice {
		nm, notice = e.armNotice(s, i)
		e.linef("%v n%d's agent crashes, its host lives", s.now, e.shape.Nodes[i].ID)
	} else {
		e.linef("%v n%d crashes", s.now, e.shape.Nodes[i].ID)
	}
	n.m = nil
	n.noticed = nil
	n.paused, n.wake, n.held, n.listen = false, 0, nil, 0
	j := n.job
	n.job = job.Job{P: e.shape.Job}
	if j.Alive() {
		for k := range s.lives.All {
			if l := &s.lives.All[k]; l.Node == i && l.Open && l.Start == j.Since {
				l.Orphan = true
			}
		}
		running := j.Phase == job.Running
		ch := j.Orphaned(s.now)
		e.jobChanged(s, i, j.Since, ch)
		if j.Alive() {
			n.orphans = append(n.orphans, j)
			if running {
				e.sigterm(s, i, len(n.orphans)-1)
			}
			if notice && !e.shape.UnsafeNoticeEarly {
				// The notice guard waits for the job's guard.
				n.notices = append(n.notices, noticeWait{m: nm, since: j.Since})
				return
			}
			if notice {
				e.sendNotice(s, i, nm, cover{i, j.Since})
				return
			}
		}
	}
	if notice {
		e.sendNotice(s, i, nm, cover{node: -1})
	}
}

// setLink takes node i's link down for d, or brings it back. Down, the driver
// takes the node out of the elections (EvStandby) and a leader stops its
// job at once; back, the driver listens for the leader for StartupWait
// before the node takes part again (the agent's onLinks). A paused
// node's driver does so when it wakes.
func (e *explorer) setLink(s *state, i int, down bool, d time.Duration) {
	n := &s.nodes[i]
	n.linkDown, n.linkUp = down, 0
	if down {
		n.linkUp = s.now + d
	}
	n.listen = 0
	if !down && n.m != nil && n.drv.Standby {
		n.listen = s.now + e.cfgs[i].WithDefaults().StartupWait
	}
	e.linef("%v n%d link %s", s.now, e.shape.Nodes[i].ID, map[bool]string{true: "down", false: "up"}[down])
	switch {
	case n.m == nil:
	case n.paused:
		s.seq++
		n.held = append(n.held, held{at: s.now, seq: s.seq, link: true})
	default:
		e.standby(s, i)
	}
}

// standby gives node i's awake driver and machine the link's state, and
// checks that a node whose link is down runs no job.
func (e *explorer) standby(s *state, i int) {
	n := &s.nodes[i]
	if want := n.linkDown || n.listen > 0; !e.shape.UnsafeLinkIgnored && n.drv.Standby != want {
		n.drv.Standby = want
		e.step(s, i, election.Event{Kind: election.EvStandby, On: want})
	}
	e.checkLink(s, i)
}

func (e *explorer) checkLink(s *state, i int) {
	if n := &s.nodes[i]; n.linkDown {
		if v := job.CheckLinkDown(e.shape.Nodes[i].ID, &n.job); v != "" {
			e.violate(s, v)
		}
	}
}

// pause freezes node i for d.
func (e *explorer) pause(s *state, i int, d time.Duration) {
	n := &s.nodes[i]
	n.paused, n.wake = true, s.now+d
	e.linef("%v n%d pauses until %v", s.now, e.shape.Nodes[i].ID, n.wake)
}

// wake ends node i's pause: what came in and the timers that came due
// are handled now, in the order they happened, on its stale state; then
// its driver looks at its job.
func (e *explorer) wake(s *state, i int) {
	n := &s.nodes[i]
	n.paused = false
	e.linef("%v n%d wakes", s.now, e.shape.Nodes[i].ID)
	backlog := n.held
	n.held = nil
	for t, tm := range n.timers {
		if tm.armed && tm.at <= s.now {
			backlog = append(backlog, held{at: tm.at, seq: n.tseq[t], timer: 1 + t})
		}
	}
	slices.SortStableFunc(backlog, func(a, b held) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return cmp.Compare(a.seq, b.seq)
	})
	for _, h := range backlog {
		if n.m == nil {
			return
		}
		switch {
		case h.link:
			e.standby(s, i)
		case h.timer > 0:
			t := h.timer - 1
			if tm := n.timers[t]; tm.armed && n.tseq[t] == h.seq && tm.at <= s.now {
				e.fire(s, i, t)
			}
		default:
			e.receive(s, h.m)
		}
	}
	e.setJob(s, i)
	e.checkLink(s, i)
}
