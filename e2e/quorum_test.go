//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lanleader/lanleader/internal/waitfor"
)

// Quorum mode on real processes: 5 hosts, each `lanleader run --quorum 5`
// with its own CLOCK_MONOTONIC (a time namespace, offsets of days apart),
// the fencejob as the job (e2e/internal/fencejob: stamps of its run in a
// file on the shared wall clock, and writes to the fenced sink, a server
// of this test process outside every partition). A list of fault
// schedules runs on one cluster, host-5 leading at the start of each:
// partitions 2|3 (the leader on either side) and 1|4, one-way cuts of
// the leader's outgoing and incoming packets, a SIGSTOP of the leader's
// agent longer than its lease, a SIGKILL of it and a restart, 30% loss
// everywhere. During each fault the hosts that reach a majority agree on
// a leader whose job runs within quorumLiveness, the hosts that do not
// show no leader (leader_id 0), and the old leader's job ends with its
// lease; after it all five agree again. Over the whole run: no two runs
// of the job overlap, the sink's accepted terms never decrease and writes
// of two terms never interleave, one node per term.
//
// LANLEADER_QUORUM_ROUNDS=N repeats the schedule list N times (default
// 1), each fault at a random phase of the leader's lease.
// LANLEADER_QUORUM_TEXTBOOK=1 runs the agents without --quorum (the
// textbook election, a leader on each side of a partition): the test
// must then fail — its check that it catches the job run twice at once.

const (
	quorumN     = 5
	quorumLease = 400 * time.Millisecond // --lease (the default: --suspect-after plus a heartbeat)
	quorumMarg  = 40 * time.Millisecond  // --lease-margin (the default: a tenth of the lease)
	// quorumLiveness: from the start of a fault, the hosts that reach a
	// majority agree on a leader and its job has started (or kept
	// running), and the hosts that do not show no leader. What it takes:
	// the old lease and the followers' promise to run out (lease +
	// margin, 330 ms), an election with the votes of a majority (a few
	// packets), the job's start; a takeover may wait for the old
	// leader's job to be reported stopped (--job-grace 1s + 2s at most).
	// A liveness bound, generous, not a benchmark.
	quorumLiveness = 5 * time.Second
	// quorumHeal: from the end of a fault (heal, SIGCONT, restart) until
	// all five agree on host-5 and its job runs: memberlist may have to
	// find a host again (a restarted agent is found by its beacons).
	quorumHeal = 20 * time.Second
	// quorumJobEnd: the old leader's job has stopped at the end of its
	// lease, at most lease + margin after the fault (its lease was
	// renewed before the fault at the latest), plus slack for a loaded
	// machine's scheduling.
	quorumJobEnd = quorumLease + quorumMarg + 500*time.Millisecond
	// jobFresh: a running job stamps every 5 ms; a run whose last stamp
	// is older than this is not running.
	jobFresh = 300 * time.Millisecond
)

// quorumOffsets is each host's CLOCK_MONOTONIC offset (seconds): days
// apart, not in the order of the node_ids, host-2 at the machine's own.
var quorumOffsets = []int64{100_000, 0, 300_000, 200_000, 400_000}

// quorumLAN is the cluster of the quorum tests.
type quorumLAN struct {
	*Net
	t      *testing.T
	obs    *Observer
	sink   *FenceSink
	stamps *stampFile
	job    string // the fencejob binary
	dir    string
	procs  []*Proc
	exits  []Sample // the agents' deaths the test caused: ends of leadership beliefs
	quorum int      // --quorum: quorumN, or 0 with LANLEADER_QUORUM_TEXTBOOK=1
}

func startQuorumLAN(t *testing.T) *quorumLAN {
	t.Helper()
	n := NewNet(t, quorumN)
	RequireNFT(t)
	RequireTimeNS(t)
	bin, err := Binary()
	if err != nil {
		t.Fatalf("e2e: %v", err)
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	q := &quorumLAN{Net: n, t: t, dir: dir, job: buildFenceJob(t, dir), quorum: quorumN}
	if os.Getenv("LANLEADER_QUORUM_TEXTBOOK") == "1" {
		t.Log("LANLEADER_QUORUM_TEXTBOOK=1: the agents run without --quorum; the test must fail")
		q.quorum = 0
	} else if out, _ := exec.Command(bin, "run", "--help").CombinedOutput(); !strings.Contains(string(out), "--quorum") {
		t.Fatalf("lanleader run has no --quorum flag: quorum mode is not built (lanleader run --help)")
	}
	q.sink = NewFenceSink(t, dir)
	q.stamps = &stampFile{path: dir + "/stamps"}
	n.ClockOffsets(t, quorumOffsets...)
	q.obs = n.Observe(t, observeEvery)
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		var b strings.Builder
		for _, r := range q.stamps.Runs() {
			fmt.Fprintf(&b, "%v\n", r)
		}
		t.Logf("job runs:\n%s", b.String())
		b.Reset()
		type key struct {
			node int
			term uint64
		}
		var order []key
		rejected := map[key][]SinkRecord{}
		for _, r := range q.sink.Records() {
			if k := (key{r.Node, r.Term}); !r.Accepted {
				if rejected[k] == nil {
					order = append(order, k)
				}
				rejected[k] = append(rejected[k], r)
			}
		}
		for _, k := range order {
			rs := rejected[k]
			fmt.Fprintf(&b, "node %d term %d: %d rejected, from %s to %s\n", k.node, k.term, len(rs),
				rs[0].At.Format("15:04:05.000000"), rs[len(rs)-1].At.Format("15:04:05.000000"))
		}
		t.Logf("rejected sink writes (stale leaders fenced off):\n%s", b.String())
	})
	for i := range quorumN {
		q.procs = append(q.procs, q.start(i))
	}
	took := waitFor(t, "all five find each other and agree on host-5", startBound, func() (bool, string) {
		return q.obs.Agree(q.obs.Start, 5, q.All()...)
	})
	q.waitJobOn(t, "host-5's job runs", 5, time.Time{}, startBound)
	t.Logf("5 hosts (--quorum %d) agree on host-5 %v after the start", q.quorum, took.Round(time.Millisecond))
	return q
}

func (q *quorumLAN) start(i int) *Proc {
	args := []string{"run", "--bind", q.Addr(i), "--name", hostName(i), "--node-id", strconv.Itoa(i + 1),
		"--log-format", "json", "--job-grace", "1s"}
	if q.quorum > 0 {
		args = append(args, "--quorum", strconv.Itoa(q.quorum), "--state-file", fmt.Sprintf("%s/state-%d", q.dir, i+1),
			"--lease", quorumLease.String(), "--lease-margin", quorumMarg.String())
	}
	args = append(args, "--", q.job, q.stamps.path, q.sink.Path)
	// The test's t, not a subtest's: the agent outlives the schedule that
	// restarts it.
	return q.Start(q.t, i, args...)
}

// kill SIGKILLs host i's agent and waits until it is gone.
func (q *quorumLAN) kill(t *testing.T, i int) time.Time {
	t.Helper()
	t0 := time.Now()
	if err := q.procs[i].Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	q.procs[i].Wait(killTimeout)
	if !q.procs[i].Exited() {
		t.Fatalf("host-%d survived SIGKILL", i+1)
	}
	q.exits = append(q.exits, Sample{At: t0, Host: i, Source: "exit"})
	return t0
}

// running is node's run of the job that runs now in runs (its last
// stamp is fresh, no stop stamp), if any.
func running(runs []JobRun, node int) (JobRun, bool) {
	now := time.Now()
	for k := len(runs) - 1; k >= 0; k-- {
		r := runs[k]
		if r.Node == node && !r.Stopped && now.Sub(r.End) < jobFresh {
			return r, true
		}
	}
	return JobRun{}, false
}

func (q *quorumLAN) running(node int) (JobRun, bool) { return running(q.stamps.Runs(), node) }

// waitJobOn waits until node's job runs, in a run started at or after
// from, and no other node's does; it returns that run.
func (q *quorumLAN) waitJobOn(t *testing.T, what string, node int, from time.Time, bound time.Duration) JobRun {
	t.Helper()
	var got JobRun
	waitFor(t, what, bound, func() (bool, string) {
		runs := q.stamps.Runs()
		r, ok := running(runs, node)
		if !ok {
			return false, fmt.Sprintf("node %d's job does not run", node)
		}
		if r.Start.Before(from) {
			return false, fmt.Sprintf("node %d's job runs since before: %v", node, r)
		}
		for h := range quorumN {
			if o, ok := running(runs, h+1); ok && h+1 != node {
				return false, fmt.Sprintf("node %d's job runs too: %v", h+1, o)
			}
		}
		got = r
		return true, ""
	})
	return got
}

// quorumStatus is the part of /status that says quorum mode is on.
type quorumStatus struct {
	NodeID uint64 `json:"node_id"`
	Quorum int    `json:"quorum"`
}

// fault is one schedule.
type fault struct {
	name  string
	start func(q *quorumLAN, t *testing.T)
	end   func(q *quorumLAN, t *testing.T)
	hold  time.Duration // from the start of the fault to its end
	// majority: the hosts that reach a majority; during the fault they
	// agree on leader, whose job runs (a new run unless leader is 5).
	majority []int
	leader   int
	// noLeader: the hosts that show leader_id 0 and do not lead while
	// the fault lasts (polled from quorumLiveness after its start).
	noLeader []int
	// oldStops: host-5 loses its lease: its job ends within quorumJobEnd.
	oldStops bool
	dropAt   []int // the hosts whose fault rules must have dropped packets
}

func quorumSchedules() []fault {
	heal := func(q *quorumLAN, t *testing.T) { q.Heal(t) }
	others := []int{0, 1, 2, 3}
	return []fault{{
		name:  "partition 2|3, leader on the 2-side",
		start: func(q *quorumLAN, t *testing.T) { q.Partition(t, []int{3, 4}, []int{0, 1, 2}) },
		end:   heal, hold: 3 * time.Second,
		majority: []int{0, 1, 2}, leader: 3, noLeader: []int{3, 4}, oldStops: true, dropAt: []int{0, 1, 2, 3, 4},
	}, {
		name:  "partition 2|3, leader on the 3-side",
		start: func(q *quorumLAN, t *testing.T) { q.Partition(t, []int{0, 1}, []int{2, 3, 4}) },
		end:   heal, hold: 3 * time.Second,
		majority: []int{2, 3, 4}, leader: 5, noLeader: []int{0, 1}, dropAt: []int{0, 1, 2, 3, 4},
	}, {
		name:  "partition 1|4, leader alone",
		start: func(q *quorumLAN, t *testing.T) { q.Partition(t, []int{4}, others) },
		end:   heal, hold: 3 * time.Second,
		majority: others, leader: 4, noLeader: []int{4}, oldStops: true, dropAt: []int{0, 1, 2, 3, 4},
	}, {
		// host-5 still hears the others (host-4's heartbeats): it may
		// follow host-4, so only "it does not lead" is asserted of it.
		name:  "one-way: leader's outgoing packets cut",
		start: func(q *quorumLAN, t *testing.T) { q.Cut(t, []int{4}, others) },
		end:   heal, hold: 3 * time.Second,
		majority: others, leader: 4, oldStops: true, dropAt: others,
	}, {
		// host-5 cannot hear the acknowledgements of its claims: its
		// lease runs out and it steps down; hearing no majority's
		// pre-vote, it claims nothing more (docs/quorum.md, "What it
		// costs"), its heartbeats stop, and the others elect among
		// themselves. It shows no leader while it cannot hear.
		name:  "one-way: leader's incoming packets cut",
		start: func(q *quorumLAN, t *testing.T) { q.Cut(t, others, []int{4}) },
		end:   heal, hold: 3 * time.Second,
		majority: others, leader: 4, noLeader: []int{4}, oldStops: true, dropAt: []int{4},
	}, {
		name: "SIGSTOP of the leader's agent for 2s",
		start: func(q *quorumLAN, t *testing.T) {
			if err := q.procs[4].Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
		},
		end: func(q *quorumLAN, t *testing.T) {
			if err := q.procs[4].Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
		},
		hold:     2 * time.Second,
		majority: others, leader: 4, oldStops: true,
	}, {
		name:  "SIGKILL of the leader's agent, restart after 2s",
		start: func(q *quorumLAN, t *testing.T) { q.kill(t, 4) },
		end:   func(q *quorumLAN, t *testing.T) { q.procs[4] = q.start(4) },
		hold:  2 * time.Second, majority: others, leader: 4, oldStops: true,
	}, {
		name:  "30% loss on every host for 10s",
		start: func(q *quorumLAN, t *testing.T) { q.Loss(t, 30, 0, 1, 2, 3, 4) },
		end:   heal, hold: 10 * time.Second,
		dropAt: []int{0, 1, 2, 3, 4},
	}}
}

// figures is what one schedule measured.
type figures struct {
	gap      string        // the smallest gap between two runs of the job
	runs     int           // runs of the job started in the window
	down     time.Duration // of the fault's time, how long no run of the job ran
	again    string        // fault → the majority's leader's job runs
	oldEnd   string        // fault → the old leader's job's last stamp
	noLeader string        // fault → the minority shows no leader
	accepted int
	rejected int
	overlap  time.Duration // the longest belief overlap of two hosts
	overlapW string
	dropped  string // by the fault's rules
	healed   string // end of the fault → all five on host-5, its job running
}

func (f figures) String() string {
	return fmt.Sprintf("job gap %s, %d runs started, job down %s during the fault | majority runs job again %s (old job ended %s, minority no leader %s) | sink %d accepted / %d rejected | belief overlap %v%s | dropped %s | after the fault: all agree + job %s",
		f.gap, f.runs, ms(f.down), f.again, f.oldEnd, f.noLeader, f.accepted, f.rejected, f.overlap.Round(time.Millisecond), f.overlapW, f.dropped, f.healed)
}

func ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }

func TestQuorum(t *testing.T) {
	q := startQuorumLAN(t)

	t.Run("clocks", func(t *testing.T) { q.checkClocks(t) })

	rounds := 1
	if s := os.Getenv("LANLEADER_QUORUM_ROUNDS"); s != "" {
		var err error
		if rounds, err = strconv.Atoi(s); err != nil || rounds < 1 {
			t.Fatalf("LANLEADER_QUORUM_ROUNDS=%q: want a count of rounds, at least 1", s)
		}
	}
	for round := 1; round <= rounds; round++ {
		for _, f := range quorumSchedules() {
			name := f.name
			if rounds > 1 {
				name = fmt.Sprintf("round %d: %s", round, f.name)
			}
			if !t.Run(name, func(t *testing.T) { q.schedule(t, name, f) }) {
				// Put the cluster back for the next schedule.
				q.recover(t)
			}
		}
	}

	t.Run("checkers", func(t *testing.T) {
		// The last stamps: the job of host-5 runs on, and writes again.
		end := time.Now()
		waitfor.Until(t, "a write at the sink after the schedules", 5*time.Second, 10*time.Millisecond, func() (bool, string) {
			recs := q.sink.Records()
			return len(recs) > 0 && recs[len(recs)-1].At.After(end), fmt.Sprintf("%d records", len(recs))
		})
		stamps, recs := q.stamps.Stamps(), q.sink.Records()
		for _, v := range fenceVerdict(stamps, recs) {
			t.Error(v)
		}
		if bad := q.sink.Malformed(); len(bad) > 0 {
			t.Errorf("the sink got %d malformed lines: %q", len(bad), bad[:min(len(bad), 5)])
		}
		if bad := q.stamps.Malformed(); len(bad) > 0 {
			t.Errorf("the stamp file has %d malformed lines: %q", len(bad), bad[:min(len(bad), 5)])
		}
		runs := jobRuns(stamps)
		killed := 0
		for _, r := range runs[:max(len(runs)-1, 0)] {
			if !r.Stopped {
				killed++
			}
		}
		acc, rej := sinkCounts(recs)
		gap, _ := smallestGap(runs, q.obs.Start, time.Now())
		ov, a, b := longestBeliefOverlap(beliefs(append(q.obs.Events(), q.exits...), time.Now()), q.obs.Start, time.Now())
		t.Logf("whole run: %d job runs (%d ended without their SIGTERM stamp: killed), %d stamps; smallest gap between runs %v; sink %d accepted / %d rejected; longest belief overlap %v (host-%d term %d, host-%d term %d)",
			len(runs), killed, len(stamps), gap.Round(time.Microsecond), acc, rej, ov.Round(time.Millisecond), a.Host+1, a.Term, b.Host+1, b.Term)
	})
}

// checkClocks: every host's agent runs in its own time namespace, whose
// CLOCK_MONOTONIC is the machine's shifted by the host's offset; so does
// the job.
func (q *quorumLAN) checkClocks(t *testing.T) {
	var self unix.Timespec
	inos := map[uint64]int{}
	ownNS, err := ProcTimeNS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for i := range quorumN {
		path, ino, err := q.TimeNamespace(i)
		if err != nil || path == "" {
			t.Fatalf("host-%d: time namespace %q: %v", i+1, path, err)
		}
		if h, dup := inos[ino]; dup || ino == ownNS {
			t.Errorf("host-%d's time namespace %d is host-%d's or the test's own", i+1, ino, h+1)
		}
		inos[ino] = i
		if got, err := ProcTimeNS(q.procs[i].Pid); err != nil || got != ino {
			t.Errorf("host-%d's agent (pid %d) is in time namespace %d (%v), want its host's %d", i+1, q.procs[i].Pid, got, err, ino)
		}
		// mono - wall is constant in a namespace (the wall clock is the
		// same for all): the difference of it between the host and this
		// process is the offset, whenever each was read.
		out, err := q.Exec(i, q.job, "-print-monotonic")
		if err != nil {
			t.Fatal(err)
		}
		var mono, wall int64
		if _, err := fmt.Sscan(out, &mono, &wall); err != nil {
			t.Fatalf("host-%d: fencejob -print-monotonic printed %q: %v", i+1, out, err)
		}
		var rt unix.Timespec
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &self)
		unix.ClockGettime(unix.CLOCK_REALTIME, &rt)
		shift := time.Duration((mono - wall) - (self.Nano() - rt.Nano()))
		want := time.Duration(quorumOffsets[i]) * time.Second
		if d := shift - want; d < -time.Second || d > time.Second {
			t.Errorf("host-%d: CLOCK_MONOTONIC is shifted by %v from the machine's, want %v", i+1, shift, want)
		}
		// /status says quorum mode is on.
		body, err := q.Get(i, "http://127.0.0.1:9947/status")
		var st quorumStatus
		if err == nil {
			err = json.Unmarshal([]byte(body), &st)
		}
		if err != nil || st.Quorum != q.quorum || st.NodeID != uint64(i+1) {
			t.Errorf("host-%d's /status: %+v, %v; want quorum %d", i+1, st, err, q.quorum)
		}
		t.Logf("host-%d: time namespace %d, CLOCK_MONOTONIC %+.3fs from the machine's (want %+ds), agent pid %d in it", i+1, ino, shift.Seconds(), quorumOffsets[i], q.procs[i].Pid)
	}
	// The job runs in the leader's namespace too.
	r, ok := q.running(5)
	if !ok {
		t.Fatal("host-5's job does not run")
	}
	_, ino, _ := q.TimeNamespace(4)
	if got, err := ProcTimeNS(r.Pid); err != nil || got != ino {
		t.Errorf("host-5's job (pid %d) is in time namespace %d (%v), want host-5's %d", r.Pid, got, err, ino)
	}
}

// schedule runs one fault and checks what it must do.
func (q *quorumLAN) schedule(t *testing.T, name string, f fault) {
	var fig figures
	from := time.Now()
	if _, ok := q.running(5); !ok {
		t.Fatalf("host-5's job does not run at the start")
	}
	if ok, why := q.obs.Agree(from.Add(-2*observeEvery), 5, q.All()...); !ok {
		t.Fatalf("not all five agree on host-5 at the start: %s", why)
	}
	// A random phase of the leader's lease.
	phase := rand.N(quorumLease)
	time.Sleep(phase) // the fault's moment in the lease, not a synchronisation
	old, _ := q.running(5)

	t0 := time.Now()
	f.start(q, t)
	ended := false
	end := func() {
		if !ended {
			ended = true
			f.end(q, t)
		}
	}
	defer end()

	if len(f.majority) > 0 {
		waitFor(t, fmt.Sprintf("%s agree on host-%d", hostList(f.majority), f.leader), quorumLiveness-time.Since(t0), func() (bool, string) {
			return q.obs.Agree(t0, uint64(f.leader), f.majority...)
		})
		if f.leader == 5 {
			// The leader kept its lease: its job ran on, the same run.
			r := q.waitJobOn(t, "host-5's job runs on", 5, time.Time{}, quorumLiveness-time.Since(t0))
			if r.Pid != old.Pid {
				t.Errorf("host-5's job was restarted during the fault: pid %d, then %v", old.Pid, r)
			}
			fig.again = "kept running"
		} else {
			r := q.waitJobOn(t, fmt.Sprintf("host-%d's job runs", f.leader), f.leader, t0, quorumLiveness-time.Since(t0))
			fig.again = fmt.Sprintf("+%s (host-%d, term %d)", ms(r.Start.Sub(t0)), r.Node, r.Term)
		}
	} else {
		fig.again = "n/a"
	}
	fig.noLeader = "n/a"
	var settled time.Time
	if len(f.noLeader) > 0 {
		waitFor(t, hostList(f.noLeader)+" show no leader", quorumLiveness-time.Since(t0), func() (bool, string) {
			for _, h := range f.noLeader {
				st, at, err := q.obs.Status(h)
				switch {
				case err != nil:
					return false, err.Error()
				case at.Before(t0):
					return false, fmt.Sprintf("host-%d: not polled since", h+1)
				case st.LeaderID != 0 || st.State == "leader":
					return false, fmt.Sprintf("host-%d: %s, leader %d", h+1, st.State, st.LeaderID)
				}
			}
			return true, ""
		})
		settled = time.Now()
		fig.noLeader = "+" + ms(settled.Sub(t0))
	}
	time.Sleep(time.Until(t0.Add(f.hold)))

	// While it lasted: the minority named no leader once it had none.
	if !settled.IsZero() {
		for _, s := range q.obs.Events() {
			if slices.Contains(f.noLeader, s.Host) && s.At.After(settled) && s.Err == "" && (s.Leader != 0 || s.State == "leader") {
				t.Errorf("host-%d named a leader while it could not reach a majority: %v at +%v", s.Host+1, s, s.At.Sub(t0).Round(time.Millisecond))
			}
		}
	}
	// The old leader did not lead on: its job ended with its lease.
	fig.oldEnd = "n/a"
	if f.oldStops {
		for _, r := range q.stamps.Runs() {
			if r.Node == 5 && r.Pid == old.Pid {
				d := r.End.Sub(t0)
				fig.oldEnd = "+" + ms(d)
				if r.Stopped {
					fig.oldEnd += " (SIGTERM)"
				} else {
					fig.oldEnd += " (killed)"
				}
				if d > quorumJobEnd {
					t.Errorf("host-5's job ran %v into the fault, want it stopped with its lease (%v at most): %v", d.Round(time.Millisecond), quorumJobEnd, r)
				}
			}
		}
		if st, at, err := q.obs.Status(4); err == nil && at.After(t0.Add(quorumJobEnd)) && st.State == "leader" {
			t.Errorf("host-5 says it leads %v into the fault", at.Sub(t0).Round(time.Millisecond))
		}
	}
	// The fault did bite.
	fig.dropped = "n/a"
	if len(f.dropAt) > 0 {
		var sum uint64
		for _, h := range f.dropAt {
			d, err := q.Dropped(h)
			if err != nil || d == 0 {
				t.Errorf("host-%d: the fault dropped %d packets (%v), want some", h+1, d, err)
			}
			sum += d
		}
		fig.dropped = fmt.Sprintf("%d packets at %s", sum, hostList(f.dropAt))
	}

	end()
	t1 := time.Now()
	fig.down = downtime(q.stamps.Runs(), t0, t1)
	healed := waitFor(t, "all five agree on host-5 after the fault", quorumHeal, func() (bool, string) {
		return q.obs.Agree(t1, 5, q.All()...)
	})
	r := q.waitJobOn(t, "host-5's job runs after the fault", 5, time.Time{}, quorumHeal-time.Since(t1))
	fig.healed = "+" + ms(healed)
	if r.Start.After(t1) {
		fig.healed += fmt.Sprintf(", job +%s (term %d)", ms(r.Start.Sub(t1)), r.Term)
	} else {
		fig.healed += " (job kept running)"
	}

	to := time.Now()
	runs := q.stamps.Runs()
	if gap, ok := smallestGap(runs, from, to); ok {
		fig.gap = ms(gap)
	} else {
		fig.gap = "none (one run)"
	}
	fig.accepted, fig.rejected = sinkCounts(recordsBetween(q.sink.Records(), from, to))
	var a, b Belief
	fig.overlap, a, b = longestBeliefOverlap(beliefs(append(q.obs.Events(), q.exits...), to), from, to)
	if fig.overlap > 0 {
		fig.overlapW = fmt.Sprintf(" (host-%d term %d, host-%d term %d)", a.Host+1, a.Term, b.Host+1, b.Term)
	}
	var recent []JobRun // the runs of this schedule's window
	for _, r := range runs {
		if !r.End.Before(from) {
			recent = append(recent, r)
		}
		if !r.Start.Before(from) {
			fig.runs++
		}
	}
	if ov := runOverlaps(recent); len(ov) > 0 {
		t.Errorf("the job ran twice at once: %q", ov)
	}
	t.Logf("%s [phase %v]: %v", name, ms(phase), fig)
}

// recover brings the cluster back after a failed schedule: no fault, every
// agent running, all agree on host-5.
func (q *quorumLAN) recover(t *testing.T) {
	t.Helper()
	q.Heal(t)
	for i, p := range q.procs {
		if p.Exited() {
			q.procs[i] = q.start(i)
		} else {
			p.Signal(syscall.SIGCONT)
		}
	}
	t1 := time.Now()
	waitFor(t, "all five agree on host-5 after a failed schedule", quorumHeal, func() (bool, string) {
		return q.obs.Agree(t1, 5, q.All()...)
	})
	q.waitJobOn(t, "host-5's job runs after a failed schedule", 5, time.Time{}, quorumHeal)
}

// downtime is how much of [from, to) no run of the job covers.
func downtime(runs []JobRun, from, to time.Time) time.Duration {
	covered := from // runs are sorted by start: [from, covered) is done
	var down time.Duration
	for _, r := range runs {
		if !r.End.After(covered) || !r.Start.Before(to) {
			continue
		}
		if r.Start.After(covered) {
			down += r.Start.Sub(covered)
		}
		covered = r.End
	}
	if covered.Before(to) {
		down += to.Sub(covered)
	}
	return down
}

// fenceVerdict is every violation of the job's safety in stamps and sink
// records: two runs of the job at once, a term accepted after a larger
// one, two terms' writes interleaved, two nodes under one term (in the
// sink or in the runs), a later leader's run with a smaller term.
func fenceVerdict(stamps []Stamp, recs []SinkRecord) []string {
	var out []string
	runs := jobRuns(stamps)
	out = append(out, runOverlaps(runs)...)
	for _, v := range acceptedTermDecreases(recs) {
		out = append(out, "sink: accepted terms decrease: "+v)
	}
	for _, v := range termInterleavings(recs) {
		out = append(out, "sink: writes of two terms interleave: "+v)
	}
	for _, v := range termNodeConflicts(recs) {
		out = append(out, "sink: two nodes under one term: "+v)
	}
	byTerm := map[uint64]JobRun{}
	var prev *JobRun
	for i := range runs {
		r := &runs[i]
		if r.NoStart {
			out = append(out, fmt.Sprintf("a run without its start stamp: %v", r))
		}
		if o, ok := byTerm[r.Term]; ok && o.Node != r.Node {
			out = append(out, fmt.Sprintf("two nodes ran the job under term %d: %v and %v", r.Term, o, r))
		}
		byTerm[r.Term] = *r
		if prev != nil && prev.Node != r.Node && r.Term <= prev.Term {
			out = append(out, fmt.Sprintf("a later leader's run has a term not above the earlier one's: %v after %v", r, prev))
		}
		prev = r
	}
	return out
}
