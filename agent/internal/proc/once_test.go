package proc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSupervisorOnce: in job mode once a job that exits on its own, with
// any status, is reported Finished with that status and not started
// again in its generation (the restart would come after 200ms); the next
// generation (a new leadership) runs it again, with its term. A job
// killed by a signal has status 128+N.
func TestSupervisorOnce(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	script := writeScript(t, `echo "run $LANLEADER_TERM" >> "$1"
[ "$LANLEADER_TERM" = 5 ] && kill -KILL $$
exit 7
`)
	h := newHarness(t, Config{Argv: []string{script, runs}, Grace: time.Second, FailureWindow: time.Minute, MaxFailures: 1, Once: true})
	h.sup.Set(Want{Run: true, Gen: 1, Term: 4})
	h.next(t, Started, 5*time.Second)
	if ev := h.next(t, Stopped, 5*time.Second); ev.Code != 7 {
		t.Errorf("Stopped %+v, want code 7", ev.Event)
	}
	if ev := h.next(t, Finished, 5*time.Second); ev.Code != 7 {
		t.Errorf("Finished %+v, want code 7", ev.Event)
	}
	// MaxFailures 1 would have made it a crash loop: once, an exit is
	// not a failure.
	h.none(t, Started, time.Second)
	st := h.sup.Status()
	if st.State != "finished" || st.ExitCode == nil || *st.ExitCode != 7 || st.LastExit != "exit status 7" || st.Failures != 0 || st.Restarts != 0 {
		t.Errorf("status %+v, want finished with exit status 7, no failure, no restart", *st)
	}
	h.sup.Set(Want{Run: true, Gen: 2, Term: 5})
	h.next(t, Started, 5*time.Second)
	if ev := h.next(t, Finished, 5*time.Second); ev.Code != 128+9 {
		t.Errorf("Finished %+v, want code 137 (SIGKILL)", ev.Event)
	}
	if st := h.sup.Status(); st.State != "finished" || *st.ExitCode != 137 || st.LastExit != "exit status 137" {
		t.Errorf("status %+v, want finished, exit status 137 (the guard passes the signal on as 128+9)", *st)
	}
	b, _ := os.ReadFile(runs)
	if got := strings.Fields(string(b)); strings.Join(got, " ") != "run 4 run 5" {
		t.Errorf("runs %q, want one in term 4 and one in term 5", b)
	}
}

// TestSupervisorOnceStopped: a job of job mode once stopped by the caller
// (the leadership ended) is stopped, not finished: no Finished event,
// and it runs again in the next generation.
func TestSupervisorOnceStopped(t *testing.T) {
	h := newHarness(t, Config{Argv: []string{writeScript(t, "exec sleep 1000\n")}, Grace: time.Second, FailureWindow: time.Minute, Once: true})
	h.sup.Set(Want{Run: true, Gen: 1, Term: 1})
	h.next(t, Started, 5*time.Second)
	h.sup.Set(Want{Run: false, Gen: 1})
	if ev := h.next(t, Stopped, 5*time.Second); ev.Code != 128+15 {
		t.Errorf("Stopped %+v, want code 143 (SIGTERM)", ev.Event)
	}
	h.none(t, Finished, 300*time.Millisecond)
	if st := h.sup.Status(); st.State != "stopped" {
		t.Errorf("status %+v, want stopped", *st)
	}
	h.sup.Set(Want{Run: true, Gen: 2, Term: 2})
	h.next(t, Started, 5*time.Second)
}
