package agent

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lanleader/lanleader/agent/part/lead"
	"github.com/lanleader/lanleader/internal/waitfor"
)

// The job's own record: each run of the test job appends "start NODE
// UNIXTIME TERM" when it starts and "stop NODE UNIXTIME" when SIGTERM
// ends it, to one file shared by every node (O_APPEND: lines do not mix).
const stampJob = `f="$1"
echo "start $LANLEADER_NODE_ID $(date +%s.%N) $LANLEADER_TERM $LANLEADER_LEADER_ID" >> "$f"
trap 'echo "stop $LANLEADER_NODE_ID $(date +%s.%N)" >> "$f"; exit 0' TERM
while :; do sleep 0.05; done
`

// stamp is one line of the job's record.
type stamp struct {
	start bool
	node  uint64
	at    float64 // seconds since the epoch
	term  uint64
	lead  uint64
}

func readStamps(t *testing.T, path string) []stamp {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []stamp
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] != "start" && f[0] != "stop" {
			continue
		}
		var s stamp
		s.start = f[0] == "start"
		s.node, _ = strconv.ParseUint(f[1], 10, 64)
		s.at, _ = strconv.ParseFloat(f[2], 64)
		if s.start && len(f) >= 5 {
			s.term, _ = strconv.ParseUint(f[3], 10, 64)
			s.lead, _ = strconv.ParseUint(f[4], 10, 64)
		}
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b stamp) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return 0
	})
	return out
}

// overlaps is every moment, from the stamps, when two runs of the job
// ran at once: how long, and which nodes.
func overlaps(st []stamp) []string {
	running := map[uint64]float64{}
	var out []string
	for _, s := range st {
		if s.start {
			for n, since := range running {
				out = append(out, fmt.Sprintf("node %d started at %.6f while node %d ran (since %.6f)", s.node, s.at, n, since))
			}
			running[s.node] = s.at
		} else {
			delete(running, s.node)
		}
	}
	return out
}

func writeScript(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitFor polls cond every 5ms until it holds or timeout passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	waitfor.Until(t, what, timeout, 5*time.Millisecond, cond)
}

// started waits until node has a start stamp after n stamps and returns it.
func startedAfter(t *testing.T, path string, n int, node uint64, timeout time.Duration) stamp {
	t.Helper()
	var got stamp
	waitFor(t, fmt.Sprintf("node %d's job starts", node), timeout, func() (bool, string) {
		st := readStamps(t, path)
		for _, s := range st[min(n, len(st)):] {
			if s.start && s.node == node {
				got = s
				return true, ""
			}
		}
		return false, fmt.Sprintf("stamps %+v", st)
	})
	return got
}

// TestJobFollowsLeadership: three agents with a job; it runs on the
// leader only, with the leader's term and ids in its environment; a
// resign and a graceful stop move it, the old leader's run stopping
// before the new one starts (from the job's own stamps); the resigned
// node does not lead again before its hold-off (its --preempt-delay),
// and does after it.
func TestJobFollowsLeadership(t *testing.T) {
	stamps := filepath.Join(t.TempDir(), "stamps")
	job := writeScript(t, "job.sh", stampJob)
	const preemptDelay = 1500 * time.Millisecond
	l := startLocal(t, LocalOptions{Nodes: 3, HTTP: true, Base: func(c *Config) {
		c.PreemptDelay, c.Job, c.JobGrace = preemptDelay, []string{job, stamps}, 2*time.Second
	}})
	first := waitLeader(t, l, electBound, 2)
	s := startedAfter(t, stamps, 0, 3, electBound)
	if s.term != first.Term || s.lead != 3 {
		t.Errorf("the job's LANLEADER_TERM %d, LANLEADER_LEADER_ID %d; want %d, 3", s.term, s.lead, first.Term)
	}
	waitFor(t, "job running in /status and metrics", 5*time.Second, func() (bool, string) {
		js := l.Agents[2].Status().Job
		return js != nil && js.State == "running" && js.Pid > 0 && testutil.ToFloat64(l.Agents[2].met.JobRunning) == 1, fmt.Sprintf("%+v", js)
	})
	for _, i := range []int{0, 1} {
		if js := l.Agents[i].Status().Job; js == nil || js.State != "stopped" || testutil.ToFloat64(l.Agents[i].met.JobRunning) != 0 {
			t.Errorf("node-%d (follower): job %+v, want stopped", i+1, js)
		}
	}

	// Resign: node-2 leads and runs the job; node-3 stays out for its
	// hold-off (the preempt delay), then takes over again.
	n := len(readStamps(t, stamps))
	t0 := time.Now()
	if !l.Agents[2].Resign() {
		t.Fatal("Resign: node-3 did not lead")
	}
	second := waitLeader(t, l, failoverBound, 1)
	s2 := startedAfter(t, stamps, n, 2, failoverBound)
	handover := time.Duration((s2.at - float64(t0.UnixNano())/1e9) * float64(time.Second))
	t.Logf("resign → the new leader's job started: %v", handover.Round(time.Millisecond))
	if s2.term != second.Term || s2.lead != 2 {
		t.Errorf("node-2's job: term %d leader %d, want %d, 2", s2.term, s2.lead, second.Term)
	}
	// The hold-off: no take-back before the preempt delay.
	waitLeader(t, l, failoverBound+preemptDelay, 2)
	if took := time.Since(t0); took < preemptDelay {
		t.Errorf("node-3 led again %v after its resign, before its preempt delay %v", took, preemptDelay)
	}
	n = len(readStamps(t, stamps))
	startedAfter(t, stamps, n-1, 3, failoverBound)

	// A graceful stop of the leader moves the job to node-2.
	n = len(readStamps(t, stamps))
	if err := l.Stop(2); err != nil {
		t.Fatal(err)
	}
	startedAfter(t, stamps, n, 2, failoverBound)
	st := readStamps(t, stamps)
	if ov := overlaps(st); len(ov) > 0 {
		t.Errorf("the job ran twice at once: %q", ov)
	}
	if restarts := testutil.ToFloat64(l.Agents[1].met.JobRestarts); restarts != 0 {
		t.Errorf("node-2 counted %v restarts; a new leadership is not a restart", restarts)
	}
	t.Logf("stamps: %+v", st)
}

// TestJobGrace: a job that ignores SIGTERM is killed (its whole group)
// when its grace period ends, and not before.
func TestJobGrace(t *testing.T) {
	stamps := filepath.Join(t.TempDir(), "stamps")
	job := writeScript(t, "stubborn.sh", `echo "start $LANLEADER_NODE_ID $(date +%s.%N) $LANLEADER_TERM $LANLEADER_LEADER_ID" >> "$1"
trap '' TERM
sleep 1000 &
echo "child $!" >> "$1"
while :; do sleep 0.05; done
`)
	const grace = 400 * time.Millisecond
	set := newAgentSet(t)
	c := testConfig("node-1", 1)
	c.Job, c.JobGrace = []string{job, stamps}, grace
	a := set.start(0, c)
	startedAfter(t, stamps, 0, 1, electBound)
	var child int
	waitFor(t, "the job's child", 5*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(stamps)
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "child "); ok {
				child, _ = strconv.Atoi(v)
			}
		}
		return child > 0, string(b)
	})
	t0 := time.Now()
	a.Resign()
	waitFor(t, "the job stopped", grace+5*time.Second, func() (bool, string) {
		js := a.Status().Job
		return js.State != "running" && js.State != "stopping", js.State
	})
	took := time.Since(t0)
	if took < grace || took > grace+2*time.Second {
		t.Errorf("the job stopped %v after the resign; want its grace %v and a little", took, grace)
	}
	if alive(child) {
		t.Errorf("the job's child %d survived the SIGKILL of its group", child)
	}
	if js := a.Status().Job; js.LastExit != "killed by SIGKILL" {
		t.Errorf("last exit %q, want killed", js.LastExit)
	}
	if log := set.logs.String(); !strings.Contains(log, "did not stop within its grace period: SIGKILL") {
		t.Errorf("the log does not say the job was killed")
	}
}

// alive says whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// TestJobCrashLoop: node-2's job exits at once, every time: it is
// restarted with backoff, and at the third failure node-2 drops to
// priority 1 and resigns; node-1 takes over and its job runs.
func TestJobCrashLoop(t *testing.T) {
	stamps := filepath.Join(t.TempDir(), "stamps")
	job := writeScript(t, "job.sh", `if [ "$LANLEADER_NODE_ID" = 2 ]; then echo "broken on node 2" >&2; exit 3; fi
`+stampJob)
	l := startLocal(t, LocalOptions{Nodes: 2, Base: func(c *Config) {
		c.Job, c.JobMaxFailures, c.JobFailureWindow = []string{job, stamps}, 3, time.Minute
	}})
	waitLeader(t, l, electBound, 1)
	// 3 failures: restarts after 200ms and 400ms, then the hand-over.
	waitLeader(t, l, 10*time.Second, 0)
	startedAfter(t, stamps, 0, 1, failoverBound)
	b := l.Agents[1]
	st := b.Status()
	if st.Priority != 1 || st.BasePriority != 100 || st.PenaltyUntil == "" {
		t.Errorf("node-2: priority %d (base %d), penalty until %q; want 1, 100 and a time", st.Priority, st.BasePriority, st.PenaltyUntil)
	}
	if st.Job == nil || st.Job.Failures != 3 || st.Job.Restarts != 2 || st.Job.LastExit != "exit status 3" {
		t.Errorf("node-2's job: %+v, want 3 failures, 2 restarts, exit status 3", st.Job)
	}
	if got := testutil.ToFloat64(b.met.JobRestarts); got != 2 {
		t.Errorf("lanleader_job_restarts_total %v, want 2", got)
	}
	if log := l.logs.String(); !strings.Contains(log, `line="broken on node 2"`) || !strings.Contains(log, "the job failed too often") {
		t.Errorf("node-2's log lacks the job's output or the hand-over")
	}
}

// TestHooks: on_leader, on_follower and on_change run with the state,
// term and ids; a hook that hangs is killed at its timeout and counted,
// while the agent goes on leading; a failing hook is counted.
func TestHooks(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "hooks")
	set := newAgentSet(t)
	c := testConfig("node-1", 7)
	c.OnLeader = `echo "leader $LANLEADER_STATE $LANLEADER_TERM $LANLEADER_NODE_ID $LANLEADER_LEADER_ID $LANLEADER_NAME" >> ` + out
	c.OnFollower = `echo "follower $LANLEADER_STATE $LANLEADER_LEADER_ID" >> ` + out + `; exit 4`
	c.OnChange = `echo "change $LANLEADER_STATE" >> ` + out + `; if [ "$LANLEADER_STATE" = leader ] && [ ! -e ` + dir + `/hung ]; then touch ` + dir + `/hung; sleep 30; fi`
	c.HookTimeout = 300 * time.Millisecond
	a := set.start(0, c)
	lines := func() []string {
		b, _ := os.ReadFile(out)
		return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", "_"))
	}
	waitFor(t, "the leader's hooks", 10*time.Second, func() (bool, string) {
		return slices.Contains(lines(), "leader_leader_1_7_7_node-1"), fmt.Sprint(lines())
	})
	// The first on_change hangs: it is killed at its timeout, and
	// meanwhile the agent went on leading.
	waitFor(t, "the hung hook counted", 5*time.Second, func() (bool, string) {
		n := testutil.ToFloat64(a.met.HookRuns.WithLabelValues("on_change", "timeout"))
		return n == 1, fmt.Sprint(n)
	})
	if st := a.Status(); st.State != "leader" {
		t.Errorf("state %s while the hook hung, want leader", st.State)
	}
	a.Resign()
	waitFor(t, "on_follower after the resign", 5*time.Second, func() (bool, string) {
		return slices.Contains(lines(), "follower_follower_0"), fmt.Sprint(lines())
	})
	waitFor(t, "the failed hook counted", 5*time.Second, func() (bool, string) {
		n := testutil.ToFloat64(a.met.HookRuns.WithLabelValues("on_follower", "failed"))
		return n == 1, fmt.Sprint(n)
	})
	got := lines()
	// In order: the first hooks ran before the resign's.
	if i, j := slices.Index(got, "leader_leader_1_7_7_node-1"), slices.Index(got, "follower_follower_0"); i < 0 || j < i {
		t.Errorf("hooks ran in the order %q", got)
	}
	if n := testutil.ToFloat64(a.met.HookRuns.WithLabelValues("on_leader", "ok")); n < 1 {
		t.Errorf("on_leader ok %v, want ≥ 1", n)
	}
	if log := set.logs.String(); !strings.Contains(log, "hook timed out: killed") {
		t.Errorf("the log does not say a hook timed out")
	}
}

// TestChecks: a failing check lowers node-2's priority by its weight, in
// /status and lanleader_priority, and node-1 takes over (preemption); when
// it passes again node-2 leads again.
func TestChecks(t *testing.T) {
	dir := t.TempDir()
	l := startLocal(t, LocalOptions{Nodes: 2, Base: func(c *Config) {
		c.Checks = []Check{{Command: "test ! -e " + dir + "/fail-$LANLEADER_NODE_ID"}}
		c.CheckInterval, c.CheckWeight = 100*time.Millisecond, 30
	}})
	waitLeader(t, l, electBound, 1)
	if err := os.WriteFile(filepath.Join(dir, "fail-2"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, l, failoverBound, 0)
	st := l.Agents[1].Status()
	if st.Priority != 70 || st.BasePriority != 100 || len(st.Checks) != 1 || st.Checks[0].OK || st.Checks[0].Weight != 30 {
		t.Errorf("node-2's status: priority %d base %d checks %+v; want 70, 100, one failing", st.Priority, st.BasePriority, st.Checks)
	}
	if !strings.Contains(st.Checks[0].Detail, "exit status 1") {
		t.Errorf("check detail %q", st.Checks[0].Detail)
	}
	body := gather(t, l.Agents[1])
	for _, want := range []string{"lanleader_priority 70\n", "lanleader_checks_failing 1\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	// node-1 sees node-2's new priority in its members.
	waitFor(t, "node-1 sees priority 70", 5*time.Second, func() (bool, string) {
		ms := l.Agents[0].Status().Members
		return len(ms) == 1 && ms[0].Priority == 70, fmt.Sprintf("%+v", ms)
	})
	os.Remove(filepath.Join(dir, "fail-2"))
	waitLeader(t, l, failoverBound, 1)
	if p := l.Agents[1].Status().Priority; p != 100 {
		t.Errorf("priority %d after the check passes again, want 100", p)
	}
}

func gather(t *testing.T, a *Agent) string {
	t.Helper()
	mfs, err := a.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if g := m.GetGauge(); g != nil && len(m.GetLabel()) == 0 {
				fmt.Fprintf(&b, "%s %v\n", mf.GetName(), g.GetValue())
			}
		}
	}
	return b.String()
}

// TestResignEndpoint: POST /resign hands over from this host; a request
// from a web page (Origin) is refused, and a follower answers 409.
func TestResignEndpoint(t *testing.T) {
	l := startLocal(t, LocalOptions{Nodes: 2, HTTP: true})
	waitLeader(t, l, electBound, 1)
	post := func(a *Agent, origin string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+a.HTTPAddr()+"/resign", nil)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(l.Agents[1], "http://evil.example"); code != http.StatusForbidden {
		t.Errorf("POST with Origin: %d %s, want 403", code, body)
	}
	if code, body := post(l.Agents[0], ""); code != http.StatusConflict || !strings.Contains(body, `"resigned":false`) {
		t.Errorf("POST to the follower: %d %s, want 409", code, body)
	}
	code, body := post(l.Agents[1], "")
	if code != http.StatusOK || !strings.Contains(body, `"resigned":true`) || !strings.Contains(body, `"hold_off":"1s"`) {
		t.Errorf("POST to the leader: %d %s", code, body)
	}
	waitLeader(t, l, failoverBound, 0)
}

// TestSystemdNotify: under systemd (NOTIFY_SOCKET), the agent says
// READY=1 once it leads, its state in STATUS=, pings the watchdog, and
// says STOPPING=1 when stopped.
func TestSystemdNotify(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	t.Setenv("WATCHDOG_USEC", "300000")
	t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	set := newAgentSet(t)
	a := set.start(0, testConfig("node-1", 1))
	var got []string
	read := func(want string, timeout time.Duration) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		buf := make([]byte, 4096)
		for range 1000 {
			conn.SetReadDeadline(deadline)
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatalf("no %q within %v; got %q (%v)", want, timeout, got, err)
			}
			got = append(got, string(buf[:n]))
			if strings.HasPrefix(string(buf[:n]), want) {
				return
			}
		}
	}
	read("READY=1", 10*time.Second)
	read("STATUS=leader, term 1", 5*time.Second)
	read("WATCHDOG=1", time.Second)
	read("WATCHDOG=1", time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a.Stop(ctx)
	read("STOPPING=1", 5*time.Second)
}

// TestJobNotFoundCounts: a job that cannot start is a failure like an
// exit (the command line is checked by `lanleader run` before it starts;
// a program removed since is found here).
func TestJobNotFoundCounts(t *testing.T) {
	set := newAgentSet(t)
	c := testConfig("node-1", 1)
	c.Job, c.JobMaxFailures = []string{filepath.Join(t.TempDir(), "missing")}, 2
	a := set.start(0, c)
	waitFor(t, "two failures", 10*time.Second, func() (bool, string) {
		js := a.Job()
		return js.Restarts >= 1 && js.LastExit == "exit status 127", fmt.Sprintf("%+v", js)
	})
}

// TestTakeoverWait: with --takeover-wait a node that leads without a
// hand-over (the first leader after the start, and the one that follows
// a crashed leader) shows its job "waiting" and starts it only that long
// after it leads; after a RESIGN (the old job stopped first) it starts
// at once.
func TestTakeoverWait(t *testing.T) {
	const wait = 1500 * time.Millisecond
	stamps := filepath.Join(t.TempDir(), "stamps")
	job := writeScript(t, "job.sh", stampJob)
	l := startLocal(t, LocalOptions{Nodes: 3, HTTP: true, Base: func(c *Config) {
		c.Job, c.JobGrace, c.TakeoverWait = []string{job, stamps}, time.Second, wait
	}})
	// waitedAfter: node leads (observed at from); its job is "waiting",
	// then starts at least wait after from (less the polling's slack).
	waitedAfter := func(what string, i int, n int, from time.Time) {
		t.Helper()
		if js := l.Agents[i].Status().Job; js == nil || js.State != "waiting" && time.Since(from) < wait/2 {
			t.Errorf("%s: node-%d leads, job %+v, want waiting", what, i+1, js)
		}
		s := startedAfter(t, stamps, n, uint64(i+1), wait+failoverBound)
		if d := time.Duration((s.at - float64(from.UnixNano())/1e9) * float64(time.Second)); d < wait-100*time.Millisecond {
			t.Errorf("%s: node-%d's job started %v after it led, want --takeover-wait %v", what, i+1, d, wait)
		}
	}
	waitLeader(t, l, electBound, 2)
	waitedAfter("the first leader", 2, 0, time.Now())

	n := len(readStamps(t, stamps))
	afterCrash := n
	l.Crash(2)
	waitLeader(t, l, failoverBound, 1)
	waitedAfter("after a crash", 1, n, time.Now())

	n = len(readStamps(t, stamps))
	t0 := time.Now()
	if !l.Agents[1].Resign() {
		t.Fatal("Resign: node-2 did not lead")
	}
	waitLeader(t, l, failoverBound, 0)
	s := startedAfter(t, stamps, n, 1, failoverBound)
	if d := time.Duration((s.at - float64(t0.UnixNano())/1e9) * float64(time.Second)); d >= wait {
		t.Errorf("after a RESIGN node-1's job started %v after it, want no takeover wait (%v)", d, wait)
	}
	// (The crashed node's job was SIGKILLed in this process, with no stop
	// stamp: only the runs after the crash are compared.)
	if ov := overlaps(readStamps(t, stamps)[afterCrash:]); len(ov) > 0 {
		t.Errorf("the job ran twice at once: %q", ov)
	}
}

// slowStampJob is stampJob that takes $2 seconds to stop after SIGTERM.
const slowStampJob = `f="$1"
echo "start $LANLEADER_NODE_ID $(date +%s.%N) $LANLEADER_TERM $LANLEADER_LEADER_ID" >> "$f"
trap 'sleep "$2"; echo "stop $LANLEADER_NODE_ID $(date +%s.%N)" >> "$f"; exit 0' TERM
while :; do sleep 0.05; done
`

// The waits of a takeover are for the previous leader's job, which
// stops within that leader's --job-grace (its metadata says it), not
// within the new leader's own.
//
//   - preemption: node-1 (grace 6 s) leads, its job taking 4 s to stop;
//     node-2 (grace 1 s, larger) joins and takes over. Its wait for
//     node-1's job lasts up to 6 s and 2 s, and ends when that job has
//     stopped: no overlap. With its own grace (1 s and 2 s) its job
//     started a second before node-1's had stopped.
//   - crash: node-2 (grace 3 s) leads; node-1 (grace 1 s,
//     --takeover-wait 1.5 s) takes over when it crashes, and waits the
//     difference of the graces more: 3.5 s.
func TestTakeoverWaitsPreviousGrace(t *testing.T) {
	t.Run("preemption", func(t *testing.T) {
		s := newAgentSet(t)
		stamps := filepath.Join(t.TempDir(), "stamps")
		job := writeScript(t, "job.sh", slowStampJob)
		c1 := testConfig("node-1", 1)
		c1.Job, c1.JobGrace = []string{job, stamps, "4"}, 6*time.Second
		a1 := s.start(0, c1)
		startedAfter(t, stamps, 0, 1, electBound)
		c2 := testConfig("node-2", 2)
		c2.Job, c2.JobGrace = []string{job, stamps, "0"}, time.Second
		c2.Join = []string{a1.GossipAddr().String()}
		a2 := s.start(1, c2)
		waitFor(t, "node-2 leads, node-1 follows it", electBound, func() (bool, string) {
			return a2.Status().State == "leader" && a1.Status().LeaderID == 2, fmt.Sprint(a2.Status().State, a1.Status().LeaderID)
		})
		s2 := startedAfter(t, stamps, 1, 2, 6*time.Second+lead.JobWaitMargin+failoverBound)
		st := readStamps(t, stamps)
		var stop1 *stamp
		for i := range st {
			if !st[i].start && st[i].node == 1 {
				stop1 = &st[i]
			}
		}
		if ov := overlaps(st); len(ov) > 0 || stop1 == nil || s2.at < stop1.at {
			t.Fatalf("node-2's job started at %.3f, node-1's stopped at %v: want after it; overlaps %q", s2.at, stop1, ov)
		}
		if !strings.Contains(s.logs.String(), "at_most=8s") {
			t.Errorf("node-2's wait was not bounded by node-1's grace (6s) and the margin (2s)")
		}
	})
	t.Run("crash", func(t *testing.T) {
		s := newAgentSet(t)
		stamps := filepath.Join(t.TempDir(), "stamps")
		job := writeScript(t, "job.sh", stampJob)
		c2 := testConfig("node-2", 2)
		c2.Job, c2.JobGrace = []string{job, stamps}, 3*time.Second
		a2 := s.start(1, c2)
		startedAfter(t, stamps, 0, 2, electBound)
		c1 := testConfig("node-1", 1)
		const wait = 1500 * time.Millisecond
		c1.Job, c1.JobGrace, c1.TakeoverWait = []string{job, stamps}, time.Second, wait
		c1.Join = []string{a2.GossipAddr().String()}
		a1 := s.start(0, c1)
		waitFor(t, "node-1 follows node-2, knowing its grace", electBound, func() (bool, string) {
			var g time.Duration
			a1.call(func() { g = a1.lead.GraceOf(2) })
			return a1.Status().LeaderID == 2 && g == 3*time.Second, fmt.Sprint(a1.Status().LeaderID, " ", g)
		})
		n := len(readStamps(t, stamps))
		a2.Crash()
		var from time.Time
		waitFor(t, "node-1 leads", failoverBound, func() (bool, string) {
			from = time.Now()
			return a1.Status().State == "leader", a1.Status().State
		})
		s1 := startedAfter(t, stamps, n, 1, 2*wait+failoverBound)
		want := wait + 3*time.Second - time.Second
		if d := time.Duration((s1.at - float64(from.UnixNano())/1e9) * float64(time.Second)); d < want-100*time.Millisecond {
			t.Errorf("node-1's job started %v after it led, want --takeover-wait and the difference of the graces, %v", d, want)
		}
	})
}
