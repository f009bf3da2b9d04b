package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// event is a report of the supervisor and when it came.
type event struct {
	Event
	at time.Time
}

// harness runs one supervisor the way the agent does, without an agent:
// events land in a channel, the log in a buffer.
type harness struct {
	sup      *Supervisor
	events   chan event
	log      *logBuffer
	running  prometheus.Gauge
	restarts prometheus.Counter
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := &harness{events: make(chan event, 256), log: &logBuffer{},
		running:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "job_running"}),
		restarts: prometheus.NewCounter(prometheus.CounterOpts{Name: "job_restarts_total"})}
	cfg.Log, cfg.Running, cfg.Restarts = h.log.logger(), h.running, h.restarts
	cfg.Report = func(ev Event) { h.events <- event{ev, time.Now()} }
	cfg.NodeID, cfg.Name = 7, "node-7"
	h.sup = New(cfg)
	go h.sup.Run()
	t.Cleanup(func() {
		h.sup.Stop()
		select {
		case <-h.sup.Done():
		case <-time.After(cfg.Grace + 5*time.Second):
			h.sup.Kill()
			t.Errorf("the supervisor did not stop; log:\n%s", h.log)
		}
	})
	return h
}

// next waits for the next event of kind, skipping others.
func (h *harness) next(t *testing.T, kind EventKind, timeout time.Duration) event {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ev := <-h.events:
			if ev.Kind == kind {
				return ev
			}
		case <-deadline:
			t.Fatalf("no event %d within %v; status %+v; log:\n%s", kind, timeout, *h.sup.Status(), h.log)
		}
	}
}

// none asserts that no event of kind comes within d.
func (h *harness) none(t *testing.T, kind EventKind, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev := <-h.events:
			if ev.Kind == kind {
				t.Fatalf("unexpected event %+v; status %+v; log:\n%s", ev, *h.sup.Status(), h.log)
			}
		case <-deadline:
			return
		}
	}
}

// stubbornJob ignores SIGTERM and leaves a child in its group; it writes
// "child PID" to $1.
const stubbornJob = `trap '' TERM
sleep 1000 &
echo "child $!" >> "$1"
while :; do sleep 0.05; done
`

// TestSupervisorGrace: a job that ignores SIGTERM is killed, its whole
// group, when its grace period ends and not before (what the agent's
// TestJobGrace checks through an election, here directly).
func TestSupervisorGrace(t *testing.T) {
	const grace = 400 * time.Millisecond
	stamps := filepath.Join(t.TempDir(), "stamps")
	h := newHarness(t, Config{Argv: []string{writeScript(t, stubbornJob), stamps}, Grace: grace, FailureWindow: time.Minute})
	h.sup.Set(Want{Run: true, Gen: 1, Term: 3, Leader: 7})
	started := h.next(t, Started, 5*time.Second)
	child := pidIn(t, stamps, "child")
	if st := h.sup.Status(); st.State != "running" || st.Pid != started.Pid || st.Term != 3 || h.sup.Idle() {
		t.Fatalf("status %+v (idle %v), want running pid %d term 3", *st, h.sup.Idle(), started.Pid)
	}
	if v := testutil.ToFloat64(h.running); v != 1 {
		t.Errorf("running gauge %v, want 1", v)
	}
	t0 := time.Now()
	h.sup.Set(Want{Run: false, Gen: 1})
	waitFor(t, "stopping", time.Second, func() (bool, string) {
		st := h.sup.Status()
		return st.State == "stopping" || st.State == "stopped", st.State
	})
	stopped := h.next(t, Stopped, grace+5*time.Second)
	took := stopped.at.Sub(t0)
	if took < grace || took > grace+2*time.Second {
		t.Errorf("the job stopped %v after it was asked to; want its grace %v and a little", took, grace)
	}
	if stopped.Pid != started.Pid {
		t.Errorf("stopped pid %d, started %d", stopped.Pid, started.Pid)
	}
	if alive(child) {
		t.Errorf("the job's child %d survived the SIGKILL of its group", child)
	}
	st := h.sup.Status()
	if st.State != "stopped" || st.LastExit != "killed by SIGKILL" || st.Failures != 0 || st.Restarts != 0 || st.Pid != 0 {
		t.Errorf("status %+v, want stopped, killed by SIGKILL, no failure", *st)
	}
	if !h.sup.Idle() || testutil.ToFloat64(h.running) != 0 {
		t.Errorf("idle %v, running gauge %v after the stop", h.sup.Idle(), testutil.ToFloat64(h.running))
	}
	if log := h.log.String(); !strings.Contains(log, "did not stop within its grace period: SIGKILL") {
		t.Errorf("the log does not say the job was killed:\n%s", log)
	}
}

// TestSupervisorStopsOnTerm: a job that exits on SIGTERM stops at once,
// well within its grace, and that is no failure.
func TestSupervisorStopsOnTerm(t *testing.T) {
	const grace = 10 * time.Second
	stamps := filepath.Join(t.TempDir(), "stamps")
	h := newHarness(t, Config{Argv: []string{writeScript(t, "trap 'exit 0' TERM\necho \"up $$\" >> \"$1\"\nwhile :; do sleep 0.05; done\n"), stamps}, Grace: grace})
	h.sup.Set(Want{Run: true, Gen: 1})
	h.next(t, Started, 5*time.Second)
	// SIGTERM before the job set its trap would kill it, and its guard
	// before the guard caught it: wait until the job runs its own code.
	pidIn(t, stamps, "up")
	t0 := time.Now()
	h.sup.Set(Want{Run: false, Gen: 1})
	stopped := h.next(t, Stopped, 5*time.Second)
	if took := stopped.at.Sub(t0); took > 2*time.Second {
		t.Errorf("the job stopped %v after SIGTERM, want at once", took)
	}
	if st := h.sup.Status(); st.LastExit != "exit status 0" || st.Failures != 0 || st.State != "stopped" {
		t.Errorf("status %+v, want stopped with exit status 0, no failure", *st)
	}
}

// startGaps waits for n starts and returns the time between each two.
func startGaps(t *testing.T, h *harness, n int, timeout time.Duration) []time.Duration {
	t.Helper()
	var gaps []time.Duration
	prev := h.next(t, Started, timeout)
	for range n - 1 {
		ev := h.next(t, Started, timeout)
		gaps = append(gaps, ev.at.Sub(prev.at))
		prev = ev
	}
	return gaps
}

// TestSupervisorBackoff: a job that keeps exiting is restarted after
// 200 ms, then 400 ms, then 800 ms (doubling within the window); the
// restarts are counted.
func TestSupervisorBackoff(t *testing.T) {
	h := newHarness(t, Config{Argv: []string{writeScript(t, "exit 3\n")}, Grace: time.Second, FailureWindow: time.Minute})
	h.sup.Set(Want{Run: true, Gen: 1})
	gaps := startGaps(t, h, 4, 5*time.Second)
	for i, want := range []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond} {
		if gaps[i] < want || gaps[i] > want+time.Second {
			t.Errorf("restart %d came %v after the start before, want %v and a little", i+1, gaps[i], want)
		}
	}
	waitFor(t, "three restarts counted", time.Second, func() (bool, string) {
		st := h.sup.Status()
		return st.Restarts == 3 && testutil.ToFloat64(h.restarts) == 3, fmt.Sprintf("%+v, counter %v", *st, testutil.ToFloat64(h.restarts))
	})
	if st := h.sup.Status(); st.LastExit != "exit status 3" || st.Failures < 3 {
		t.Errorf("status %+v, want exit status 3 and ≥ 3 failures", *st)
	}
	if log := h.log.String(); !strings.Contains(log, "job exited on its own") || !strings.Contains(log, "restart_in=400ms") {
		t.Errorf("the log does not tell the failures and their backoff:\n%s", log)
	}
}

// TestSupervisorExitZeroRestarts: a job that exits 0 on its own has
// failed all the same, and is restarted.
func TestSupervisorExitZeroRestarts(t *testing.T) {
	h := newHarness(t, Config{Argv: []string{writeScript(t, "exit 0\n")}, Grace: time.Second, FailureWindow: time.Minute})
	h.sup.Set(Want{Run: true, Gen: 1})
	first := h.next(t, Started, 5*time.Second)
	h.next(t, Stopped, 5*time.Second)
	again := h.next(t, Started, 5*time.Second)
	if again.Pid == first.Pid {
		t.Errorf("restarted with the same pid %d", again.Pid)
	}
	if st := h.sup.Status(); st.LastExit != "exit status 0" || st.Failures < 1 || st.Restarts < 1 {
		t.Errorf("status %+v, want exit status 0 counted as a failure and a restart", *st)
	}
}

// TestSupervisorGivesUp: at the third failure within the window the
// supervisor reports a crash loop and starts the job no more in that
// generation; a new generation starts it again.
func TestSupervisorGivesUp(t *testing.T) {
	h := newHarness(t, Config{Argv: []string{writeScript(t, "echo broken >&2; exit 3\n")}, Grace: time.Second,
		MaxFailures: 3, FailureWindow: time.Minute})
	h.sup.Set(Want{Run: true, Gen: 1})
	starts := 0
	deadline := time.After(10 * time.Second)
	for crashed := false; !crashed; {
		select {
		case ev := <-h.events:
			starts += map[bool]int{true: 1}[ev.Kind == Started]
			crashed = ev.Kind == CrashLoop
		case <-deadline:
			t.Fatalf("no crash loop; status %+v; log:\n%s", *h.sup.Status(), h.log)
		}
	}
	if starts != 3 {
		t.Errorf("%d starts before the crash loop, want 3", starts)
	}
	// The report comes first, the status right after.
	waitFor(t, "the status failed", 5*time.Second, func() (bool, string) {
		st := h.sup.Status()
		return st.State == "failed", st.State
	})
	st := h.sup.Status()
	if st.State != "failed" || st.Failures != 3 || st.Restarts != 2 || st.LastExit != "exit status 3" {
		t.Errorf("status %+v, want failed, 3 failures, 2 restarts, exit status 3", *st)
	}
	// The next backoff would have been 800 ms.
	h.none(t, Started, 1500*time.Millisecond)
	if log := h.log.String(); !strings.Contains(log, "the job keeps failing: handing over") || !strings.Contains(log, `line=broken`) {
		t.Errorf("the log lacks the give-up or the job's output:\n%s", log)
	}
	h.sup.Set(Want{Run: true, Gen: 2})
	h.next(t, Started, 5*time.Second)
	if st := h.sup.Status(); st.Restarts != 2 {
		t.Errorf("restarts %d after a new generation's start, want still 2 (a new generation is no restart)", st.Restarts)
	}
}

// TestSupervisorWindowForgets: failures older than the window do not
// count: with a window shorter than the first backoff the job never
// fails "too often", and its backoff stays the first.
func TestSupervisorWindowForgets(t *testing.T) {
	h := newHarness(t, Config{Argv: []string{writeScript(t, "exit 3\n")}, Grace: time.Second,
		MaxFailures: 2, FailureWindow: 100 * time.Millisecond})
	h.sup.Set(Want{Run: true, Gen: 1})
	for i, gap := range startGaps(t, h, 4, 5*time.Second) {
		if gap < backoffMin || gap > backoffMin+time.Second {
			t.Errorf("restart %d came %v after the start before, want %v and a little", i+1, gap, backoffMin)
		}
	}
	if st := h.sup.Status(); st.State == "failed" || st.Failures > 1 {
		t.Errorf("status %+v: failures outside the window counted", *st)
	}
	h.none(t, CrashLoop, 0)
}

// TestSupervisorKill: Kill SIGKILLs the group at once, without the grace;
// the job did not stop on request, so it is restarted.
func TestSupervisorKill(t *testing.T) {
	stamps := filepath.Join(t.TempDir(), "stamps")
	h := newHarness(t, Config{Argv: []string{writeScript(t, stubbornJob), stamps}, Grace: time.Minute, FailureWindow: time.Minute})
	h.sup.Set(Want{Run: true, Gen: 1})
	first := h.next(t, Started, 5*time.Second)
	child := pidIn(t, stamps, "child")
	t0 := time.Now()
	h.sup.Kill()
	stopped := h.next(t, Stopped, 5*time.Second)
	if took := stopped.at.Sub(t0); took > 2*time.Second {
		t.Errorf("killed %v after Kill, want at once", took)
	}
	if alive(child) {
		t.Errorf("the job's child %d survived Kill", child)
	}
	if st := h.sup.Status(); st.LastExit != "killed by SIGKILL" || st.Failures != 1 {
		t.Errorf("status %+v, want killed by SIGKILL, one failure", *st)
	}
	if again := h.next(t, Started, 5*time.Second); again.Pid == first.Pid {
		t.Errorf("not restarted after Kill")
	}
}

// TestSupervisorEnv: the job gets the term, node and leader ids and the
// name, and none of the guard's own variables.
func TestSupervisorEnv(t *testing.T) {
	out := filepath.Join(t.TempDir(), "env")
	h := newHarness(t, Config{Argv: []string{writeScript(t, `env > "$1.tmp"; mv "$1.tmp" "$1"; exec sleep 1000`), out}, Grace: time.Second})
	h.sup.Set(Want{Run: true, Gen: 1, Term: 42, Leader: 7})
	h.next(t, Started, 5*time.Second)
	var env string
	waitFor(t, "the job's environment", 5*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(out)
		env = string(b)
		return env != "", ""
	})
	for _, want := range []string{"LANLEADER_TERM=42\n", "LANLEADER_NODE_ID=7\n", "LANLEADER_LEADER_ID=7\n", "LANLEADER_NAME=node-7\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("the job's environment lacks %q", want)
		}
	}
	if strings.Contains(env, "LANLEADER_JOB_GUARD") {
		t.Errorf("the job's environment holds the guard's variables:\n%s", env)
	}
}

// TestSupervisorWithoutGuardEntry: in a program that never entered the
// guard, the job is not started (the program is not run again) and the
// status says why.
func TestSupervisorWithoutGuardEntry(t *testing.T) {
	guardInstalled.Store(false)
	t.Cleanup(func() { guardInstalled.Store(true) })
	h := newHarness(t, Config{Argv: []string{"/bin/true"}, Grace: time.Second, MaxFailures: 1, FailureWindow: time.Minute})
	h.sup.Set(Want{Run: true, Gen: 1})
	h.next(t, CrashLoop, 5*time.Second)
	// The report comes first, the status right after.
	waitFor(t, "the status failed", 5*time.Second, func() (bool, string) {
		st := h.sup.Status()
		return st.State == "failed", st.State
	})
	st := h.sup.Status()
	if st.LastExit != errNoGuard.Error() || st.State != "failed" || st.Pid != 0 || !h.sup.Idle() {
		t.Errorf("status %+v (idle %v), want failed with %q", *st, h.sup.Idle(), errNoGuard)
	}
	if !strings.Contains(st.LastExit, "agent.Guard") {
		t.Errorf("the error does not name the entry to call: %q", st.LastExit)
	}
	h.none(t, Started, 0)
}
