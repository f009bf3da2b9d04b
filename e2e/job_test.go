//go:build linux

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The job on real hosts: every host runs `lanleader run ... -- job.sh
// STAMPS`, and each run of the job appends its own start and stop, with
// its host and the wall clock (one clock: the hosts are namespaces of one
// machine), to one file. From those stamps alone the tests check that the
// job never runs on two hosts at once while the leadership moves (resign,
// health check, crash, graceful stop, a crash-looping job), and measure
// the hand-over: from the request to the job's start on the new leader.

const jobStampScript = `#!/bin/sh
f="$1"
echo "start $LANLEADER_NODE_ID $(date +%s.%N) $LANLEADER_TERM" >> "$f"
trap 'echo "stop $LANLEADER_NODE_ID $(date +%s.%N)" >> "$f"; exit 0' TERM
sleep 1000 &
while :; do sleep 0.02; done
`

type jobStamp struct {
	start bool
	node  int
	at    time.Time
	term  uint64
}

func readJobStamps(t *testing.T, path string) []jobStamp {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []jobStamp
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) < 3 || fl[0] != "start" && fl[0] != "stop" {
			continue
		}
		s := jobStamp{start: fl[0] == "start"}
		s.node, _ = strconv.Atoi(fl[1])
		sec, _ := strconv.ParseFloat(fl[2], 64)
		s.at = time.Unix(0, int64(sec*1e9))
		if s.start && len(fl) >= 4 {
			s.term, _ = strconv.ParseUint(fl[3], 10, 64)
		}
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b jobStamp) int { return a.at.Compare(b.at) })
	return out
}

// jobOverlaps lists every window in which two runs of the job ran at once.
func jobOverlaps(st []jobStamp) []string {
	running := map[int]time.Time{}
	var out []string
	for _, s := range st {
		if s.start {
			for n, since := range running {
				out = append(out, fmt.Sprintf("host-%d started at %s while host-%d ran since %s", s.node, s.at.Format("15:04:05.000000"), n, since.Format("15:04:05.000000")))
			}
			running[s.node] = s.at
		} else {
			delete(running, s.node)
		}
	}
	return out
}

// jobLAN is a test bed whose hosts run the job.
type jobLAN struct {
	*Net
	t      *testing.T
	obs    *Observer
	procs  []*Proc
	dir    string
	stamps string
	script string
	extra  func(dir string, i int) []string
}

// startJobLAN starts hosts agents with the job script, each with the
// flags extra gives (dir is the test's directory, of the stamps); with
// agree, it waits until they agree on the largest.
func startJobLAN(t *testing.T, hosts int, script string, agree bool, extra func(dir string, i int) []string) *jobLAN {
	t.Helper()
	n := NewNet(t, hosts)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	j := &jobLAN{Net: n, t: t, dir: dir, stamps: filepath.Join(dir, "stamps"), script: filepath.Join(dir, "job.sh"), extra: extra}
	if err := os.WriteFile(j.script, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	j.obs = n.Observe(t, observeEvery)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(j.stamps)
			t.Logf("job stamps:\n%s", b)
		}
	})
	for i := range hosts {
		j.procs = append(j.procs, j.start(i))
	}
	if agree {
		waitFor(t, "all hosts agree on the largest", startBound, func() (bool, string) {
			return j.obs.Agree(j.obs.Start, 0, j.All()...)
		})
	}
	return j
}

func (j *jobLAN) start(i int) *Proc {
	args := []string{"run", "--bind", j.Addr(i), "--name", hostName(i), "--node-id", strconv.Itoa(i + 1),
		"--log-format", "json", "--job-grace", "3s"}
	if j.extra != nil {
		args = append(args, j.extra(j.dir, i)...)
	}
	return j.Start(j.t, i, append(args, "--", j.script, j.stamps)...)
}

func (j *jobLAN) all() []int {
	h := make([]int, j.Hosts())
	for i := range h {
		h[i] = i
	}
	return h
}

// waitJob waits until host's job has a start stamp at or after from, and
// returns it.
func (j *jobLAN) waitJob(host int, from time.Time, bound time.Duration) jobStamp {
	j.t.Helper()
	var got jobStamp
	waitFor(j.t, fmt.Sprintf("host-%d's job starts", host+1), bound, func() (bool, string) {
		st := readJobStamps(j.t, j.stamps)
		for _, s := range st {
			if s.start && s.node == host+1 && !s.at.Before(from) {
				got = s
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d stamps", len(st))
	})
	return got
}

// noProcesses waits until nothing runs in host's namespace any more (the
// agent has exited and left nothing behind).
func (j *jobLAN) noProcesses(host int, bound time.Duration) {
	j.t.Helper()
	waitFor(j.t, fmt.Sprintf("no process left on host-%d", host+1), bound, func() (bool, string) {
		out, err := j.run(nil, "netns", "pids", j.Namespace(host))
		if err != nil {
			return false, err.Error()
		}
		var alive []string
		for _, p := range strings.Fields(out) {
			st, err := os.ReadFile("/proc/" + p + "/stat")
			if err != nil {
				continue
			}
			// A zombie waits for init to reap it: it runs no more.
			if f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:])); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
				continue
			}
			b, _ := os.ReadFile("/proc/" + p + "/cmdline")
			alive = append(alive, p+":"+strings.ReplaceAll(string(b), "\x00", " "))
		}
		return len(alive) == 0, fmt.Sprintf("%q", alive)
	})
}

// jobStatus is the job's part of a host's /status.
type jobStatus struct {
	Priority     uint16 `json:"priority"`
	BasePriority uint16 `json:"base_priority"`
	PenaltyUntil string `json:"penalty_until"`
	Job          struct {
		State    string `json:"state"`
		Pid      int    `json:"pid"`
		Restarts uint64 `json:"restarts"`
		Failures int    `json:"failures"`
		LastExit string `json:"last_exit"`
	} `json:"job"`
}

func (j *jobLAN) jobStatus(i int) (jobStatus, error) {
	var s jobStatus
	body, err := j.Get(i, "http://127.0.0.1:9947/status")
	if err == nil {
		err = json.Unmarshal([]byte(body), &s)
	}
	return s, err
}

func (j *jobLAN) metric(i int, name string) float64 {
	j.t.Helper()
	body, err := j.Get(i, "http://127.0.0.1:9947/metrics")
	if err != nil {
		j.t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		j.t.Fatalf("host-%d: no %s in /metrics", i+1, name)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// logTimes is the time of every line of a JSON log whose msg is msg.
func logTimes(log, msg string) []time.Time {
	var out []time.Time
	for _, line := range strings.Split(log, "\n") {
		var l struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == msg {
			out = append(out, l.Time)
		}
	}
	return out
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// TestJobHandover: three hosts, the job on the leader only, as the
// leadership moves: `lanleader resign` on the leader (5 times: the
// hand-over time from the command to the job's start elsewhere, and no
// take-back before --preempt-delay), a health check that fails on the
// leader (its priority drops by the weight, the next host takes over and
// starts the job once the old one's has stopped) and passes again, a
// crash of the leader's agent (SIGKILL: its job is stopped by its guard,
// nothing is left on the host), and a graceful stop (SIGTERM: the job
// stops, then RESIGN, nothing left). The job's own stamps never overlap,
// and every run stopped with its SIGTERM trap.
func TestJobHandover(t *testing.T) {
	const preemptDelay = 1500 * time.Millisecond
	j := startJobLAN(t, 3, jobStampScript, true, func(dir string, i int) []string {
		return []string{"--preempt-delay", preemptDelay.String(),
			"--check", fmt.Sprintf("test ! -e %s/fail-%d", dir, i+1), "--check-interval", "200ms"}
	})
	j.waitJob(2, j.obs.Start, startBound)

	// Resign: the hand-over, and the resigned leader's return.
	var handovers []time.Duration
	var newStarts []time.Time
	for round := range 5 {
		t0 := time.Now()
		out, err := j.Exec(2, "lanleader", "resign", "--timeout", "10s")
		if err != nil {
			t.Fatalf("round %d: lanleader resign: %v", round, err)
		}
		s := j.waitJob(1, t0, failoverBound)
		handovers = append(handovers, s.at.Sub(t0))
		newStarts = append(newStarts, s.at)
		if !strings.Contains(out, "host-2 (node 2) leads now") {
			t.Errorf("lanleader resign printed %q", out)
		}
		// host-3 stays out for its hold-off (the preempt delay), then
		// takes over again, once host-2's job has stopped.
		t1 := time.Now()
		back := j.waitJob(2, t1, failoverBound+preemptDelay)
		if d := back.at.Sub(t0); d < preemptDelay {
			t.Errorf("round %d: host-3's job started again %v after its resign, within its preempt delay %v", round, d, preemptDelay)
		}
	}
	t.Logf("`lanleader resign` run → the job started on the new leader: median %v, max %v, of %d", median(handovers).Round(100*time.Microsecond),
		slices.Max(handovers).Round(100*time.Microsecond), len(handovers))
	// The same from the agent's own "resigning" line (without the start
	// of the resign command and its request).
	var fromAgent []time.Duration
	resigned := logTimes(j.procs[2].Log(), "resigning")
	for k, start := range newStarts {
		if k < len(resigned) {
			fromAgent = append(fromAgent, start.Sub(resigned[k]))
		}
	}
	if len(fromAgent) != len(newStarts) {
		t.Errorf("host-3 logged %d resigns, want %d", len(resigned), len(newStarts))
	} else {
		t.Logf("host-3 resigning (its log) → the job started on the new leader: median %v, max %v", median(fromAgent).Round(100*time.Microsecond),
			slices.Max(fromAgent).Round(100*time.Microsecond))
	}

	// A failing check on the leader: priority 100 - 50, host-2 takes
	// over; it passes again: host-3 takes over back.
	t0 := time.Now()
	if err := os.WriteFile(filepath.Join(j.dir, "fail-3"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := j.waitJob(1, t0, failoverBound)
	t.Logf("check failed on the leader → the job started on host-2 %v later", s.at.Sub(t0).Round(time.Millisecond))
	if st, err := j.jobStatus(2); err != nil || st.Priority != 50 || st.BasePriority != 100 {
		t.Errorf("host-3's status with a failing check: %+v %v, want priority 50 of 100", st, err)
	}
	if v := j.metric(2, "lanleader_priority"); v != 50 {
		t.Errorf("host-3's lanleader_priority %v, want 50", v)
	}
	t0 = time.Now()
	os.Remove(filepath.Join(j.dir, "fail-3"))
	j.waitJob(2, t0, failoverBound)

	// Crash: SIGKILL of host-3's agent. Its job is stopped by its guard;
	// host-2 starts the job once it has noticed.
	t0 = time.Now()
	if err := j.procs[2].Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s = j.waitJob(1, t0, failoverBound)
	t.Logf("SIGKILL of the leader's agent → the job started on host-2 %v later", s.at.Sub(t0).Round(time.Millisecond))
	j.noProcesses(2, 5*time.Second)

	// Graceful stop: SIGTERM of host-2's agent: job, RESIGN, leave.
	t0 = time.Now()
	if err := j.procs[1].Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s = j.waitJob(0, t0, failoverBound)
	t.Logf("SIGTERM of the leader's agent → the job started on host-1 %v later", s.at.Sub(t0).Round(time.Millisecond))
	if code, err := j.procs[1].Wait(10 * time.Second); err != nil || code != 0 {
		t.Errorf("host-2 after SIGTERM: exit %d, %v", code, err)
	}
	j.noProcesses(1, 5*time.Second)

	st := readJobStamps(t, j.stamps)
	ov := jobOverlaps(st)
	starts, stops := 0, 0
	for _, s := range st {
		if s.start {
			starts++
		} else {
			stops++
		}
	}
	t.Logf("job runs: %d starts, %d stops (trap), overlap windows: %d", starts, stops, len(ov))
	if len(ov) > 0 {
		t.Errorf("the job ran on two hosts at once: %q", ov)
	}
	// Every run but host-1's current one ended with its SIGTERM trap,
	// the crashed host's included.
	if stops != starts-1 {
		t.Errorf("%d starts but %d stops: a run ended without its SIGTERM trap", starts, stops)
	}
	// Terms only grow from run to run.
	var last uint64
	for _, s := range st {
		if s.start {
			if s.term <= last {
				t.Errorf("a run with term %d after one with %d", s.term, last)
			}
			last = s.term
		}
	}
}

// TestTakeoverWithoutGossip: a node that takes the leadership over from a
// live leader starts its job once that leader's job has stopped, which
// the old leader announces in its gossiped metadata. Here that gossip is
// lost (host-1 drops host-2's memberlist UDP packets; memberlist's own
// queue can lose such a broadcast too): host-1 must learn it by its
// state exchanges with host-2 (memberlist's push-pull, over TCP) during
// the wait, well before the wait's limit, --job-grace + 2 s = 22 s.
func TestTakeoverWithoutGossip(t *testing.T) {
	RequireNFT(t)
	j := startJobLAN(t, 2, jobStampScript, true, func(dir string, i int) []string {
		return []string{"--job-grace", "20s", "--check", fmt.Sprintf("test ! -e %s/fail-%d", dir, i+1), "--check-interval", "200ms"}
	})
	j.waitJob(1, j.obs.Start, startBound)
	j.faultRules(t, 0, fmt.Sprintf(`iifname "eth0" ip saddr %s udp dport %d counter drop comment "gossip"`, j.Addr(1), 7946))

	// host-2's check fails: host-1 (priority 100 against 50) takes over
	// and waits for host-2's job, whose stop it hears of only by asking.
	t0 := time.Now()
	if err := os.WriteFile(filepath.Join(j.dir, "fail-2"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := j.waitJob(0, t0, 2*failoverBound)
	t.Logf("check failed on the leader → the job started on host-1 %v later", s.at.Sub(t0).Round(time.Millisecond))
	if n, err := j.Dropped(0); err != nil || n == 0 {
		t.Errorf("host-1 dropped %d of host-2's gossip packets (%v): the fault did not bite", n, err)
	}
	log := j.procs[0].Log()
	waited := logTimes(log, "waiting for the previous leader's job to stop before starting ours")
	stopped := logTimes(log, "the previous leader's job has stopped")
	if len(waited) != 1 || len(stopped) != 1 {
		t.Fatalf("host-1 logged %d waits and %d ends of a wait, want 1 and 1", len(waited), len(stopped))
	}
	wait := stopped[0].Sub(waited[0])
	t.Logf("host-1 waited %v for host-2's job", wait.Round(time.Millisecond))
	if strings.Contains(log, "still reported running") || wait > 2*failoverBound {
		t.Errorf("host-1 waited %v: it did not learn by a state exchange that host-2's job had stopped", wait)
	}
	if ov := jobOverlaps(readJobStamps(t, j.stamps)); len(ov) > 0 {
		t.Errorf("the job ran twice at once: %q", ov)
	}
}

// TestJobCrashLoopAndHooks: host-3's job fails at once, every time: it is
// restarted with backoff, and at the third failure host-3 drops to
// priority 1 and resigns; host-2 runs the job. Meanwhile the hooks: an
// on-leader that hangs is killed at --hook-timeout and counted while the
// agent leads on; an on-follower that fails is counted.
func TestJobCrashLoopAndHooks(t *testing.T) {
	script := strings.Replace(jobStampScript, "f=\"$1\"\n", "f=\"$1\"\nif [ \"$LANLEADER_NODE_ID\" = 3 ]; then echo \"cannot run on host-3\" >&2; exit 3; fi\n", 1)
	j := startJobLAN(t, 3, script, false, func(dir string, i int) []string {
		return []string{"--job-max-failures", "3", "--job-failure-window", "1m",
			"--on-leader", "sleep 30", "--on-follower", "exit 4", "--hook-timeout", "500ms"}
	})
	t0 := j.obs.Start
	waitFor(t, "host-2 leads and all follow it", 15*time.Second, func() (bool, string) {
		return j.obs.Agree(time.Now().Add(-2*observeEvery), 2, j.All()...)
	})
	j.waitJob(1, t0, failoverBound)
	st, err := j.jobStatus(2)
	if err != nil || st.Priority != 1 || st.PenaltyUntil == "" || st.Job.Failures != 3 || st.Job.Restarts != 2 || st.Job.LastExit != "exit status 3" {
		t.Errorf("host-3 after its crash loop: %+v %v; want priority 1, a penalty, 3 failures, 2 restarts, exit status 3", st, err)
	}
	if v := j.metric(2, "lanleader_job_restarts_total"); v != 2 {
		t.Errorf("host-3's lanleader_job_restarts_total %v, want 2", v)
	}
	if v := j.metric(1, "lanleader_job_running"); v != 1 {
		t.Errorf("host-2's lanleader_job_running %v, want 1", v)
	}
	// Hooks: host-2's on-leader hung and was killed; host-3's
	// on-follower (after its resign) failed.
	waitFor(t, "host-2's hung on-leader counted", 5*time.Second, func() (bool, string) {
		v := j.metric(1, `lanleader_hook_runs_total{hook="on_leader",outcome="timeout"}`)
		return v >= 1, fmt.Sprint(v)
	})
	waitFor(t, "host-3's failed on-follower counted", 5*time.Second, func() (bool, string) {
		v := j.metric(2, `lanleader_hook_runs_total{hook="on_follower",outcome="failed"}`)
		return v >= 1, fmt.Sprint(v)
	})
	if log := j.procs[2].Log(); !strings.Contains(log, `"line":"cannot run on host-3"`) || !strings.Contains(log, "the job failed too often") {
		t.Errorf("host-3's log lacks the job's output or the hand-over")
	}
	if ov := jobOverlaps(readJobStamps(t, j.stamps)); len(ov) > 0 {
		t.Errorf("the job ran on two hosts at once: %q", ov)
	}
}
