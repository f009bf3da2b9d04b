package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/sim/job"
	"github.com/lanleader/lanleader/wire"
)

// noticeCluster is five preempting nodes whose jobs stop stop after
// SIGTERM, led by n5 after two seconds.
func noticeCluster(t *testing.T, quorum bool, stop time.Duration) (*Sim, func()) {
	t.Helper()
	var nodes []Node
	for id := range election.NodeID(5) {
		nodes = append(nodes, Node{Key: election.Key{Priority: 100, ID: id + 1}, Preempt: true, Job: job.Params{Stop: stop, Grace: time.Second}})
	}
	s, trace := jobCluster(t, nodes, quorum, nil)
	s.Start()
	s.RunUntil(2 * time.Second)
	if got := s.LiveLeaders(); len(got) != 1 || got[0] != 5 {
		logTrace(t, trace)
		t.Fatalf("before the crash: leaders %v, want [5]", got)
	}
	return s, func() { logTrace(t, trace) }
}

// survivorsAgree reports whether every node but n5 follows one live
// leader other than n5.
func survivorsAgree(s *Sim) bool {
	st, _ := s.Status(0)
	l := st.Leader
	if l == 0 || l == 5 {
		return false
	}
	for i := range 4 {
		st, ok := s.Status(i)
		if !ok || st.Leader != l || (st.Self.ID == l) != (st.State == election.StateLeader) {
			return false
		}
	}
	return true
}

// A leader's agent crashes on a live host: its NOTICE, sent once its job
// is dead, has the others agree on a new leader within a few packet
// delays of the job's death, in both modes — not after the detector's
// SuspectAfter, as after a host's death (Crash), which sends none. A job
// that takes 60 ms to stop delays the notice, and the failover, by as
// much.
func TestNoticeFailover(t *testing.T) {
	for _, quorum := range []bool{false, true} {
		for _, stop := range []time.Duration{0, 60 * time.Millisecond} {
			for _, withNotice := range []bool{true, false} {
				t.Run(fmt.Sprintf("quorum=%v/stop=%v/notice=%v", quorum, stop, withNotice), func(t *testing.T) {
					s, dump := noticeCluster(t, quorum, stop)
					at := s.Now()
					if withNotice {
						s.CrashWithNotice(4)
					} else {
						s.Crash(4)
					}
					if !s.RunWhile(at+5*time.Second, func() bool { return !survivorsAgree(s) }) {
						dump()
						t.Fatal("the survivors never agreed on a new leader")
					}
					took := s.Now() - at
					t.Logf("agreed %v after the crash; %d NOTICEs sent, %d acted on; violations %q", took, s.Check.NoticesSent, s.Check.NoticesActed, s.Check.Violations)
					if len(s.Check.Violations) > 0 {
						dump()
						t.Fatalf("violations: %q", s.Check.Violations)
					}
					suspect := s.Config().Timing.WithDefaults().SuspectAfter
					if !withNotice {
						if s.Check.NoticesSent != 0 || took < suspect {
							dump()
							t.Fatalf("a host's death: want no NOTICE and a failover after SuspectAfter (%v), got %d NOTICEs and %v", suspect, s.Check.NoticesSent, took)
						}
						return
					}
					if s.Check.NoticesSent != 1 || s.Check.NoticesActed == 0 || took < stop || took > stop+10*time.Millisecond {
						dump()
						t.Fatalf("an agent's crash: want one NOTICE acted on and a failover within 10 ms of the job's death (%v), got %d sent, %d acted on, %v",
							stop, s.Check.NoticesSent, s.Check.NoticesActed, took)
					}
				})
			}
		}
	}
}

// A NOTICE that went out while its leader's job still ran (as a notice
// guard that did not wait for the job's guard would send it) is caught
// twice by invariant 9: at its sending, and when a node that elected on
// it starts its job while the old one runs.
func TestNoticeCheckerCatchesEarlyNotice(t *testing.T) {
	s, dump := noticeCluster(t, false, time.Second)
	st, _ := s.Status(4)
	life := -1
	for k, l := range s.Check.Jobs.All {
		if l.ID == 5 && l.Open {
			life = k
		}
	}
	if life < 0 {
		t.Fatal("n5 runs no job")
	}
	s.Crash(4)
	s.sendNotice(&notice{node: 4, life: life, msg: wire.Message{Type: wire.TypeNotice, From: 5, Priority: 100, Term: st.Term, Incarnation: uint32(s.nodes[4].gen)}})
	s.RunUntil(s.Now() + 100*time.Millisecond)
	v := strings.Join(s.Check.Violations, "\n")
	if !strings.Contains(v, fmt.Sprintf("invariant 9: n5's NOTICE of term %d went out while its job", st.Term)) ||
		!strings.Contains(v, fmt.Sprintf("invariant 9: n4 acted on n5's NOTICE of term %d and started its job while that job", st.Term)) {
		dump()
		t.Fatalf("violations %q: want invariant 9 at the sending and at n4's start", s.Check.Violations)
	}
}

// Random schedules draw crashes with and without notice, from a stream
// of their own: each seed's cluster and faults are what they were.
func TestSchedulesDrawNotices(t *testing.T) {
	with, without := 0, 0
	for seed := uint64(1); seed <= 200; seed++ {
		sch := Generate(seed)
		for _, f := range sch.Faults {
			if f.Kind == FaultCrash && f.Notice {
				with++
			} else if f.Kind == FaultCrash {
				without++
			}
		}
	}
	if with == 0 || without == 0 {
		t.Fatalf("200 schedules: %d crashes with notice, %d without; want both", with, without)
	}
}
