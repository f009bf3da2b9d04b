package explore

import (
	"slices"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/sim/job"
	"github.com/lanleader/lanleader/wire"
)

// A crashed leader's NOTICE (wire.TypeNotice): a crash chosen with its
// notice is the agent's alone, its host alive; if the node led, its
// notice guard sends the NOTICE of its term to every other node once the
// job of the incarnation that crashed is dead (at once when none ran).
// Its packets are packets like the others (held, lost, delivered before
// what is due), and one may also arrive a second time, NoticeLate after
// it was sent (Bounds.NoticeDup): after a new term, to nodes of another
// term.

// noticeWait is a crashed leader's NOTICE waiting for its job to die.
type noticeWait struct {
	m wire.Message
	// since: the start of the job it covers (an orphan of its node).
	since time.Duration
}

// cover names the job a NOTICE covers: its node and the start of its
// life; node -1: none ran.
type cover struct {
	node  int
	since time.Duration
}

// armNotice is the NOTICE of node i, about to crash, if it leads.
func (e *explorer) armNotice(s *state, i int) (wire.Message, bool) {
	n := &s.nodes[i]
	st := n.m.Status()
	if st.State != election.StateLeader {
		return wire.Message{}, false
	}
	return wire.Message{Type: wire.TypeNotice, From: e.shape.Nodes[i].ID, Priority: st.Self.Priority, Term: st.Term, Incarnation: n.gen}, true
}

// sendNotice: node i's notice guard sends m, which covers c, to every
// other node, and invariant 9 checks that the job it covers is dead.
func (e *explorer) sendNotice(s *state, i int, m wire.Message, c cover) {
	if c.node >= 0 {
		if l, ok := openLife(s, c); ok {
			e.violate(s, job.CheckNotice(l, 0))
		}
	}
	e.linef("%v n%d's notice guard sends NOTICE term=%d", s.now, e.shape.Nodes[i].ID, m.Term)
	for j := range e.shape.Nodes {
		if j == i || s.nodes[i].linkDown || s.nodes[j].linkDown {
			continue
		}
		s.seq++
		s.msgs = append(s.msgs, msg{from: i, to: j, m: m, sent: s.now, due: s.now, seq: s.seq, cover: c})
	}
}

// noticeJobDied: an orphan of node i that started at since has died;
// the NOTICE waiting for it goes out (unless UnsafeNoticeEarly sent it
// at the crash).
func (e *explorer) noticeJobDied(s *state, i int, since time.Duration) {
	n := &s.nodes[i]
	for k, w := range n.notices {
		if w.since == since {
			n.notices = slices.Delete(n.notices, k, k+1)
			e.sendNotice(s, i, w.m, cover{i, since})
			return
		}
	}
}

// noticeHeard: node i is about to handle NOTICE m. If it acts on it (it
// follows that leader in that term), the job the notice covers is
// recorded, for invariant 9 at i's next job start.
func (e *explorer) noticeHeard(s *state, i int, m *msg) {
	n := &s.nodes[i]
	if !election.NoticeActs(n.m.Status(), m.m.From, m.m.Term) {
		return
	}
	e.res.NoticesActed++
	e.linef("n%d acts on the NOTICE", e.shape.Nodes[i].ID)
	if m.cover.node >= 0 && !slices.Contains(n.noticed, m.cover) {
		n.noticed = append(n.noticed, m.cover)
	}
}

// checkNoticed checks invariant 9 as node i's job starts.
func (e *explorer) checkNoticed(s *state, i int) {
	for _, c := range s.nodes[i].noticed {
		if l, ok := openLife(s, c); ok {
			e.violate(s, job.CheckNotice(l, e.shape.Nodes[i].ID))
		}
	}
}

// openLife is the life c names, if it is still open (a life pruned has
// ended).
func openLife(s *state, c cover) (job.Life, bool) {
	for _, l := range s.lives.All {
		if l.Node == c.node && l.Start == c.since && l.Open {
			return l, true
		}
	}
	return job.Life{}, false
}

// dupNotice: NOTICE packet k arrives a second time, NoticeLate after it
// was sent.
func (e *explorer) dupNotice(s *state, k int) {
	s.left.NoticeDup--
	m := s.msgs[k]
	s.seq++
	m.seq, m.due = s.seq, m.sent+e.b.NoticeLate
	e.linef("%v arrives again at %v", e.describe(&m), m.due)
	s.msgs = append(s.msgs, m)
}
