package sim

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/planted"
	"github.com/lanleader/lanleader/sim/job"
)

// jobCluster is a cluster of the given nodes with jobs, quorum mode when
// quorum.
func jobCluster(t *testing.T, nodes []Node, quorum bool, tweak func(*Config)) (*Sim, *bytes.Buffer) {
	t.Helper()
	timing := DefaultTiming()
	cfg := Config{Seed: 5, Timing: timing, Net: Net{DelayMin: 100 * time.Microsecond, DelayMax: time.Millisecond}, Jobs: true, Nodes: nodes}
	if quorum {
		cfg.Timing.Quorum = len(nodes)
		cfg.DriftPPM = 500
		// The agent's timing: the leader steps down a heartbeat before
		// the end of its lease, one heartbeat longer.
		t := cfg.Timing.WithDefaults()
		cfg.Timing.StopBefore = t.HeartbeatInterval
		cfg.Timing.Lease = t.LossWindow() + t.HeartbeatInterval
	}
	if tweak != nil {
		tweak(&cfg)
	}
	trace := &bytes.Buffer{}
	cfg.Trace = trace
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, trace
}

// lives returns the lives of node id's jobs.
func lives(s *Sim, id election.NodeID) []job.Life {
	var out []job.Life
	for _, l := range s.Check.Jobs.All {
		if l.ID == id {
			out = append(out, l)
		}
	}
	return out
}

func logTrace(t *testing.T, trace *bytes.Buffer) {
	t.Helper()
	var keep []string
	for _, line := range strings.Split(trace.String(), "\n") {
		if strings.Contains(line, "HEARTBEAT") || strings.Contains(line, "timer heartbeat") || strings.Contains(line, "timer resend") {
			continue
		}
		keep = append(keep, line)
	}
	t.Log(strings.Join(keep, "\n"))
}

// Bug 1 (issue 26), quorum mode with two candidates and a witness: the
// preferred node crashes, the other candidate B takes over and runs the
// job, the preferred node restarts and preempts. A deposed leader that
// acknowledges the new claim at once (planted DeposedAck, the old rule)
// completes the new leader's majority while its own lease, and its job
// (3 s to stop after SIGTERM), still run: the checker sees the two jobs
// overlap, until B's guard kills its job at its lease's end. With the
// rule fixed, B does not vote before its lease has ended: no overlap.
func TestJobQuorumDeposedAckOverlap(t *testing.T) {
	for _, unsafe := range []bool{true, false} {
		name := "fixed"
		if unsafe {
			name = "DeposedAck"
		}
		t.Run(name, func(t *testing.T) {
			slow := job.Params{Stop: 3 * time.Second, Grace: 10 * time.Second}
			s, trace := jobCluster(t, []Node{
				{Key: election.Key{Priority: 100, ID: 1}, Role: election.RoleWitness, Preempt: true},
				{Key: election.Key{Priority: 100, ID: 2}, Preempt: true, Job: slow},
				{Key: election.Key{Priority: 100, ID: 3}, Preempt: true, Job: slow},
			}, true, func(c *Config) { c.Timing.Planted = &planted.Election{DeposedAck: unsafe} })
			s.Start()
			s.RunUntil(2 * time.Second)
			if got := s.LiveLeaders(); len(got) != 1 || got[0] != 3 {
				t.Fatalf("before the crash: leaders %v, want [3]", got)
			}
			s.Crash(2)
			s.RunUntil(5 * time.Second)
			if got := s.LiveLeaders(); len(got) != 1 || got[0] != 2 {
				t.Fatalf("after n3's crash: leaders %v, want [2]", got)
			}
			if l := lives(s, 2); len(l) != 1 || !l[0].Open {
				t.Fatalf("n2's jobs %v, want one running", l)
			}
			s.Restart(2)
			s.RunUntil(10 * time.Second)
			s.Check.jobsFinish()
			if got := s.LiveLeaders(); len(got) != 1 || got[0] != 3 {
				t.Fatalf("after n3's return: leaders %v, want [3]", got)
			}
			b := lives(s, 2)
			p := lives(s, 3)
			if len(b) != 1 || b[0].Open || len(p) != 2 || !p[1].Open {
				t.Fatalf("lives: n2 %v, n3 %v; want n2's one ended, n3's second running", b, p)
			}
			overlap := b[0].End - p[1].Start
			t.Logf("n2's job %v, n3's new job %v: overlap %v; checker: %d overlaps, longest %v; violations %q",
				b[0], p[1], max(overlap, 0), s.Check.Jobs.Overlaps, s.Check.Jobs.Max, s.Check.Violations)
			lease := s.Config().Timing.Lease
			if unsafe {
				// B's job was killed by its guard at its lease's end, not
				// after its 3 s: the lease bounds the overlap.
				if overlap <= 0 || overlap > lease || s.Check.Jobs.Overlaps != 1 || s.Check.Jobs.Max != overlap ||
					len(s.Check.Violations) == 0 || !strings.Contains(s.Check.Violations[0], "invariant 6: jobs overlap") {
					logTrace(t, trace)
					t.Fatalf("want one overlap of at most the lease (%v) reported as invariant 6", lease)
				}
				return
			}
			if overlap > 0 || s.Check.Jobs.Overlaps != 0 || s.Check.Count != 0 {
				logTrace(t, trace)
				t.Fatalf("the fixed rule: want no overlap and no violation")
			}
		})
	}
}

// Bug 2 (issue 26), cloned hosts: two live nodes with one node_id,
// started alike (so with one incarnation), and other nodes. With the old
// receive rule (a packet with our node_id and our incarnation is our own)
// neither clone sees the other, both lead and both run the job. With the
// rule fixed (a packet with our node_id that we did not send is a
// conflict), both clones end in conflict and another node leads. In
// quorum mode the clones never run the job: a claim needs a majority's
// acknowledgements, and by then each has heard the other. In default mode
// two clones that boot at the same instant both claim at the end of
// their listen period, having sent nothing before, so each runs the job
// from its claim until its twin's claim reaches it (a packet delay) plus
// the job's stop: the receive rule cannot see a twin that has not spoken.
func TestJobClones(t *testing.T) {
	for _, quorum := range []bool{false, true} {
		for _, old := range []bool{true, false} {
			name := "default"
			if quorum {
				name = "quorum"
			}
			if old {
				name += "/SelfByIncarnation"
			} else {
				name += "/fixed"
			}
			t.Run(name, func(t *testing.T) {
				p := job.Params{Stop: 200 * time.Millisecond, Grace: time.Second}
				nodes := []Node{
					{Key: election.Key{Priority: 100, ID: 1}, Preempt: true, Job: p},
					{Key: election.Key{Priority: 100, ID: 2}, Preempt: true, Job: p},
					{Key: election.Key{Priority: 100, ID: 3}, Preempt: true, Job: p},
					{Key: election.Key{Priority: 100, ID: 7}, Preempt: true, Job: p},
					{Key: election.Key{Priority: 100, ID: 7}, Preempt: true, Job: p},
				}
				s, trace := jobCluster(t, nodes, quorum, func(c *Config) {
					c.Clones, c.SelfByIncarnation = true, old
					// Membership's report of the twin comes late: the
					// receive rule must find it first.
					c.MembershipDelay = time.Hour
				})
				s.Start()
				s.RunUntil(3 * time.Second)
				s.Check.jobsFinish()
				var clone []job.Life
				for _, l := range s.Check.Jobs.All {
					if l.ID == 7 {
						clone = append(clone, l)
					}
				}
				a, _ := s.Status(3)
				b, _ := s.Status(4)
				t.Logf("clones: %v and %v; %d job starts, %d of a clone; %d overlaps, longest %v; violations %q",
					a.State, b.State, s.Check.JobStarts, len(clone), s.Check.Jobs.Overlaps, s.Check.Jobs.Max, s.Check.Violations)
				if old {
					// Both clones led at once.
					if s.Check.Jobs.Overlaps == 0 || len(clone) < 2 || clone[0].End > 0 && clone[1].Start >= clone[0].End {
						logTrace(t, trace)
						t.Fatal("the old rule: want both clones to run the job at once")
					}
					if quorum && !strings.Contains(strings.Join(s.Check.Violations, "\n"), "invariant 6: jobs overlap") {
						t.Fatal("quorum mode: want the overlap reported as invariant 6")
					}
					return
				}
				if a.State != election.StateConflict || b.State != election.StateConflict || s.Check.Count != 0 {
					logTrace(t, trace)
					t.Fatal("the fixed rule: want both clones in conflict and no violation")
				}
				if quorum && (len(clone) != 0 || s.Check.Jobs.Overlaps != 0) {
					logTrace(t, trace)
					t.Fatal("the fixed rule, quorum mode: want no job of a clone, no overlap")
				}
				for _, l := range clone {
					if l.Open || l.End-l.Start > 2*time.Millisecond+p.Stop {
						logTrace(t, trace)
						t.Fatalf("the fixed rule: a clone's job %v outlived its twin's first packet and its stop", l)
					}
				}
				if err := s.Converged(true); err != nil || len(s.LiveLeaders()) != 1 || s.LiveLeaders()[0] != 3 {
					t.Fatalf("want n3 alone leading: %v %v", s.LiveLeaders(), err)
				}
				if l := lives(s, 3); len(l) != 1 || !l[0].Open {
					t.Fatalf("n3's jobs %v, want one running", l)
				}
			})
		}
	}
}

// A pulled cable (default mode): the leader whose link goes down stops
// its job at once (SIGTERM then, dead after its stop latency), starts no
// job while the link is down, and the others elect one leader.
//
// When the link is back the node, the largest, knows no leader: it
// listens first, as a restarted node does (election's onStandby), hears
// the interim leader, and takes over under a later term once that
// leader's job has stopped. Electing at once, it claimed the interim
// leader's term again and started its job 151 ms before that leader's had
// stopped.
func TestJobLinkDown(t *testing.T) {
	p := job.Params{Stop: 150 * time.Millisecond, Grace: time.Second}
	s, trace := jobCluster(t, []Node{
		{Key: election.Key{Priority: 100, ID: 1}, Preempt: true, Job: p},
		{Key: election.Key{Priority: 100, ID: 2}, Preempt: true, Job: p},
		{Key: election.Key{Priority: 100, ID: 3}, Preempt: true, Job: p},
	}, false, nil)
	s.Start()
	s.RunUntil(time.Second)
	s.LinkDown(2)
	down := s.Now()
	s.RunUntil(3 * time.Second)
	if got := lives(s, 3); len(got) != 1 || got[0].Open || got[0].End != down+p.Stop {
		logTrace(t, trace)
		t.Fatalf("n3's jobs %v: want one, SIGTERM at the link's loss (%v), dead %v later", got, down, p.Stop)
	}
	if st, _ := s.Status(2); st.State == election.StateLeader {
		t.Fatalf("n3 leads with its link down: %+v", st)
	}
	if got := s.LiveLeaders(); len(got) != 1 || got[0] != 2 {
		t.Fatalf("leaders %v while n3's link is down, want [2]", got)
	}
	l2 := lives(s, 2)
	if len(l2) != 1 || !l2[0].Open {
		t.Fatalf("n2's jobs %v, want one running (the interim leader)", l2)
	}
	if s.Check.Count != 0 || s.Check.Jobs.Overlaps != 0 {
		t.Fatalf("violations %q, %d overlaps", s.Check.Violations, s.Check.Jobs.Overlaps)
	}
	s.LinkUp(2)
	s.RunUntil(6 * time.Second)
	s.Check.jobsFinish()
	l2, l3 := lives(s, 2), lives(s, 3)
	t.Logf("n3's job ended %v after its link went down; n2's interim job %v; after the link's return: n3's jobs %v, %d overlaps, longest %v",
		l3[0].End-down, l2, l3, s.Check.Jobs.Overlaps, s.Check.Jobs.Max)
	if len(l2) != 1 || l2[0].Open || len(l3) != 2 || !l3[1].Open {
		logTrace(t, trace)
		t.Fatal("want n2's interim job ended and n3's second running")
	}
	if l3[1].Term <= l2[0].Term || l3[1].Start < l2[0].End || s.Check.Jobs.Overlaps != 0 || s.Check.Count != 0 {
		logTrace(t, trace)
		t.Fatalf("want n3's second job under a later term than n2's, started after n2's had stopped; violations %q", s.Check.Violations)
	}
}

// The checker bites (default mode): a preempting node that does not wait
// for the displaced leader's job (UnsafeJobNoWait) starts its own while
// that job is still stopping, which invariant 8 reports; the policy as
// the agent has it waits (the takeover's first state exchange, then
// gossip) and nothing is reported.
func TestJobPreemptionWaits(t *testing.T) {
	for _, unsafe := range []bool{true, false} {
		t.Run(map[bool]string{true: "UnsafeJobNoWait", false: "policy"}[unsafe], func(t *testing.T) {
			p := job.Params{Stop: time.Second, Grace: 3 * time.Second}
			s, trace := jobCluster(t, []Node{
				{Key: election.Key{Priority: 100, ID: 1}, Preempt: true, Job: p},
				{Key: election.Key{Priority: 100, ID: 2}, Preempt: true, Job: p},
				{Key: election.Key{Priority: 100, ID: 3}, Preempt: true, Job: p},
			}, false, func(c *Config) { c.UnsafeJobNoWait = unsafe })
			s.Start()
			s.RunUntil(time.Second)
			s.Crash(2)
			s.RunUntil(4 * time.Second)
			s.Restart(2)
			s.RunUntil(9 * time.Second)
			s.Check.jobsFinish()
			l2, l3 := lives(s, 2), lives(s, 3)
			if len(l2) != 1 || len(l3) < 2 || l2[0].Open {
				logTrace(t, trace)
				t.Fatalf("n2 %v, n3 %v: want n2's interim job ended and n3 running again", l2, l3)
			}
			gap := l3[len(l3)-1].Start - l2[0].End
			t.Logf("n3's job starts %v after n2's ended; violations %q", gap, s.Check.Violations)
			if unsafe {
				if gap >= 0 || s.Check.Count == 0 || !strings.Contains(s.Check.Violations[0], "invariant 8") {
					logTrace(t, trace)
					t.Fatal("want n3's job to start while n2's stops, reported as invariant 8")
				}
				return
			}
			if gap < 0 || s.Check.Count != 0 {
				logTrace(t, trace)
				t.Fatal("want n3's job to start after n2's ended, and no violation")
			}
		})
	}
}

// Invariant 7 bites: a job that starts on a node whose link is down is
// reported.
func TestJobCheckerCatchesStartWithLinkDown(t *testing.T) {
	s, _ := jobCluster(t, []Node{{Key: election.Key{Priority: 100, ID: 1}}, {Key: election.Key{Priority: 100, ID: 2}}}, false, nil)
	s.Start()
	s.nodes[0].linkDown = true
	s.Check.jobStarted(s.nodes[0], 1)
	if s.Check.Count != 1 || !strings.Contains(s.Check.Violations[0], "invariant 7") {
		t.Fatalf("violations %q, want one of invariant 7", s.Check.Violations)
	}
}

// The job checker bites on random schedules: with the old rule of bug 1
// (planted.Election.DeposedAck) the quorum-mode schedules run two
// jobs at once, which the checker reports (invariant 6), while with the
// rule fixed the same schedules run none (TestQuorumSchedules checks all
// of them). It logs how many of the first schedules overlap, and by how
// much, under each rule.
func TestQuorumJobCheckerCatchesDeposedAck(t *testing.T) {
	n := 300
	if *flagSchedules != 0 || sweep() {
		n = schedules(t)
	}
	for _, unsafe := range []bool{true, false} {
		var runs, pairs int
		var longest, sum time.Duration
		var first uint64
		for seed := uint64(1); seed <= uint64(n); seed++ {
			sch := GenerateQuorum(election.AlgorithmBully, seed)
			sch.Config.Timing.Planted = &planted.Election{DeposedAck: unsafe}
			res := Run(sch, nil)
			if res.JobOverlaps > 0 {
				runs++
				if first == 0 {
					first = seed
				}
			}
			pairs += res.JobOverlaps
			sum += res.JobOverlapSum
			longest = max(longest, res.JobOverlapMax)
		}
		t.Logf("planted DeposedAck=%v: %d of %d quorum-mode schedules ran two jobs at once (first: seed %d): %d overlaps, %v in all, the longest %v",
			unsafe, runs, n, first, pairs, sum, longest)
		if unsafe && runs == 0 {
			t.Fatal("the old rule: the checker saw no overlap")
		}
		if !unsafe && runs != 0 {
			t.Errorf("the fixed rule: %d schedules overlap", runs)
		}
	}
}

// A takeover from a leader noted during an election (default mode). n5
// leads n1…n5 and crashes with n4 (membership still lists both); n2
// cannot hear n3 (a one-way cut), and n3 stalls for 90 ms just as the
// followers' detectors fire. n2 elects first, hears no ANSWER (n3's is
// cut) and leads, its job starting at once. n3 has lost n5 meanwhile
// ("has no leader") and is electing (ELECTION to n4, which is gone) when
// n2's COORDINATOR comes: it notes the claim and elects on, with no
// ActFollow (election's testdata/bully_candidate_notes_smaller_claim.txt).
// The cut heals; n3 wins, n2 follows it and stops its job (1 s). n2 was
// alive, leading, and heard by n3: n3's job waits for n2's to stop.
// Before, the loss of n5 stood in n3's driver, and n3 started its job at
// once: the two jobs ran together for 1 s (n2's stop), which invariant 8
// did not see either, since the driver's From (0: no live leader) is
// what it checks.
func TestJobTakeoverFromNotedLeaderWaits(t *testing.T) {
	p := job.Params{Stop: time.Second, Grace: 3 * time.Second}
	var nodes []Node
	for id := election.NodeID(1); id <= 5; id++ {
		nodes = append(nodes, Node{Key: election.Key{Priority: 100, ID: id}, Preempt: true, Job: p})
	}
	s, trace := jobCluster(t, nodes, false, nil)
	s.Start()
	s.RunUntil(time.Second)
	if got := s.LiveLeaders(); len(got) != 1 || got[0] != 5 {
		t.Fatalf("leaders %v, want [5]", got)
	}
	s.OneWay([]int{2}, []int{1})
	s.Crash(3)
	s.Crash(4)
	// The detectors fire at 1150 ms (the heartbeat of 1 s, SuspectAfter
	// 150 ms).
	s.At(1100*time.Millisecond, func() { s.Pause(2) })
	s.At(1190*time.Millisecond, func() { s.Resume(2) })
	noted := func() bool {
		st, _ := s.Status(2)
		return st.State == election.StateCandidate && st.Leader == 2
	}
	if !s.RunWhile(2*time.Second, func() bool { return !noted() }) {
		logTrace(t, trace)
		t.Fatal("n3 never noted n2's claim during its election")
	}
	if l := lives(s, 2); len(l) != 1 || !l[0].Open {
		logTrace(t, trace)
		t.Fatalf("n2's jobs %v when n3 notes its claim, want one running", l)
	}
	s.Heal()
	s.RunUntil(6 * time.Second)
	s.Check.jobsFinish()
	if got := s.LiveLeaders(); len(got) != 1 || got[0] != 3 {
		logTrace(t, trace)
		t.Fatalf("leaders %v, want [3]", got)
	}
	l2, l3 := lives(s, 2), lives(s, 3)
	if len(l2) != 1 || l2[0].Open || len(l3) != 1 || !l3[0].Open {
		logTrace(t, trace)
		t.Fatalf("n2's jobs %v, n3's %v: want n2's ended and n3's running", l2, l3)
	}
	t.Logf("n2's job %v, n3's %v: n3's starts %v after n2's ended; violations %q", l2[0], l3[0], l3[0].Start-l2[0].End, s.Check.Violations)
	if l3[0].Start < l2[0].End || s.Check.Count != 0 ||
		!strings.Contains(trace.String(), "n3 takes over from live leader n2") || !strings.Contains(trace.String(), "n3 waits for n2's job to stop") {
		logTrace(t, trace)
		t.Fatal("want n3 to take over from live n2 and start its job after n2's ended, with no violation")
	}
}
