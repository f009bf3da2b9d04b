package sim

import (
	"fmt"
	"slices"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/sim/job"
	"github.com/lanleader/lanleader/wire"
)

// A crashed leader's NOTICE (wire.TypeNotice), as its host's notice
// guard sends it when the agent dies and the host lives on: "the leader
// From of Term is gone, and its job with it", once the job's guard has
// ended the job (the simulator's job model: at the agent's death, after
// the job's stop time, or at the lease's end in quorum mode). It goes to
// the others as one multicast packet through the network as it is then
// (cuts, loss, duplication, delays), so it may be lost, late or
// duplicated. A host's death (Crash) sends none.

// notice is one crashed leader's NOTICE, waiting for its job to die or
// sent.
type notice struct {
	node int
	msg  wire.Message
	// life: the life of the crashed incarnation's job that the notice
	// covers, -1 when none ran.
	life int
}

// noticeKey names a NOTICE as its receivers see it.
type noticeKey struct {
	from election.NodeID
	inc  uint32
	term uint64
}

// CrashWithNotice crashes node i's agent, its host alive: as Crash, and
// when it led, its notice guard sends the NOTICE of its term once its
// job is dead.
func (s *Sim) CrashWithNotice(i int) { s.crash(i, true) }

// armNotice is the notice of node n, about to crash: nil unless it
// leads.
func (s *Sim) armNotice(n *node) *notice {
	st := n.m.Status()
	if st.State != election.StateLeader {
		return nil
	}
	return &notice{node: n.idx, life: -1, msg: wire.Message{Type: wire.TypeNotice, From: n.key.ID,
		Priority: st.Self.Priority, Term: st.Term, Incarnation: uint32(n.gen)}}
}

// sendNotice multicasts notice p from its node's host, and checks that
// the job it covers is dead (invariant 9).
func (s *Sim) sendNotice(p *notice) {
	n := s.nodes[p.node]
	if p.life >= 0 {
		if v := job.CheckNotice(s.Check.Jobs.All[p.life], 0); v != "" {
			s.Check.violate("%s", v)
		}
		if s.noticeLives == nil {
			s.noticeLives = make(map[noticeKey]int)
		}
		s.noticeLives[noticeKey{p.msg.From, p.msg.Incarnation, p.msg.Term}] = p.life
	}
	s.Check.NoticesSent++
	t := wire.TypeNotice
	s.Stats.Messages[t] += len(s.nodes) - 1
	s.Stats.Unicast[t] += len(s.nodes) - 1
	s.Stats.Packets[t]++
	s.tracef("n%d's notice guard multicasts NOTICE term=%d", n.key.ID, p.msg.Term)
	pkt, err := p.msg.Append(nil)
	if err != nil {
		panic(fmt.Sprintf("sim: a NOTICE does not encode: %v", err))
	}
	mc := &multicast{from: n.idx, pkt: pkt}
	for j := range s.nodes {
		if j != n.idx {
			s.carry(n, j, 0, mc)
		}
	}
	if len(mc.copies) > 0 {
		sortCopies(mc.copies)
		c := mc.copies[0]
		s.q.push(qitem{at: c.at, seq: c.seq, e: &event{kind: evMulticast, mc: mc}})
	}
}

// noticeHeard: node n is about to handle NOTICE m. If it acts on it
// (it follows that leader in that term), the job the notice covers is
// recorded, so that n's next job start checks it is dead.
func (s *Sim) noticeHeard(n *node, m *wire.Message) {
	if !election.NoticeActs(n.m.Status(), m.From, m.Term) {
		return
	}
	s.Check.NoticesActed++
	s.tracef("n%d acts on n%d's NOTICE of term %d", n.key.ID, m.From, m.Term)
	if k, ok := s.noticeLives[noticeKey{m.From, m.Incarnation, m.Term}]; ok && !slices.Contains(n.noticed, k) {
		n.noticed = append(n.noticed, k)
	}
}

// checkNoticed checks invariant 9 as node n's job starts.
func (c *Checker) checkNoticed(n *node) {
	for _, k := range n.noticed {
		if v := job.CheckNotice(c.Jobs.All[k], n.key.ID); v != "" {
			c.violate("%s", v)
		}
	}
}
