package proc

import (
	"strings"
	"testing"
	"time"
)

// TestGuardKillsAtLeaseEnd (quorum mode): no job starts without a lease
// for its generation; once started, a lease that is not renewed ends it:
// the guard SIGKILLs the group at the lease's end, not before, with no
// word from the supervisor. That is no failure, and the job does not
// start again until the lease is renewed.
func TestGuardKillsAtLeaseEnd(t *testing.T) {
	h := newHarness(t, Config{Argv: []string{"sleep", "1000"}, Grace: time.Second, Quorum: true, FailureWindow: time.Minute})
	h.sup.Set(Want{Run: true, Gen: 1})
	h.none(t, Started, 300*time.Millisecond)
	if h.sup.Status().State == "running" || !h.sup.Idle() {
		t.Fatalf("started without a lease: %+v", *h.sup.Status())
	}
	const lease = 600 * time.Millisecond
	h.sup.SetLease(MonoNow()+int64(lease), 1)
	end := time.Now().Add(lease)
	h.next(t, Started, 5*time.Second)
	stopped := h.next(t, Stopped, lease+5*time.Second)
	if stopped.at.Before(end) || stopped.at.After(end.Add(2*time.Second)) {
		t.Errorf("the job ended %v after its lease's end, want at it and a little", stopped.at.Sub(end))
	}
	st := h.sup.Status()
	if st.LastExit != "killed by SIGKILL" || st.Failures != 0 || st.Restarts != 0 {
		t.Errorf("status %+v, want killed by SIGKILL, no failure", *st)
	}
	log := h.log.String()
	for _, want := range []string{"job killed by its guard: the leader's lease ran out", "the leader's lease ran out: SIGKILL to the job's process group"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	h.none(t, Started, 300*time.Millisecond)
	h.sup.SetLease(MonoNow()+int64(time.Minute), 1)
	h.next(t, Started, 5*time.Second)
}

// TestGuardLeaseRenewed (quorum mode): renewals through the lease pipe
// keep the job running past the first end; when they stop, the guard
// kills it at the last end it was given.
func TestGuardLeaseRenewed(t *testing.T) {
	h := newHarness(t, Config{Argv: []string{"sleep", "1000"}, Grace: time.Second, Quorum: true, FailureWindow: time.Minute})
	const lease = 400 * time.Millisecond
	h.sup.SetLease(MonoNow()+int64(lease), 1)
	h.sup.Set(Want{Run: true, Gen: 1})
	started := h.next(t, Started, 5*time.Second)
	var end time.Time
	for time.Since(started.at) < 3*lease {
		h.sup.SetLease(MonoNow()+int64(lease), 1)
		end = time.Now().Add(lease)
		h.none(t, Stopped, lease/4)
	}
	if st := h.sup.Status(); st.State != "running" || st.Pid != started.Pid {
		t.Fatalf("status %+v after renewals, want the first process running", *st)
	}
	stopped := h.next(t, Stopped, lease+5*time.Second)
	if stopped.at.Before(end) || stopped.at.After(end.Add(2*time.Second)) {
		t.Errorf("the job ended %v after the last renewal's end, want at it and a little", stopped.at.Sub(end))
	}
	if st := h.sup.Status(); st.LastExit != "killed by SIGKILL" || st.Failures != 0 {
		t.Errorf("status %+v, want killed by SIGKILL, no failure", *st)
	}
}
