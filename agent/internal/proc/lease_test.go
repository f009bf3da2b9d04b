package proc

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

// TestGuardLeaseReadsThePipe: the guard's end of the lease is what the
// pipe holds when it asks (its expiry asks before it kills), not what a
// reader that has not run yet has passed on; a record written in two
// parts counts once whole; the end never moves back; the agent's end
// closing keeps the last end.
func TestGuardLeaseReadsThePipe(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w := p[0], p[1]
	defer func() {
		if w >= 0 {
			unix.Close(w)
		}
	}()
	g := newGuardLease(r, 100) // no watch: nothing reads but current
	put := func(b []byte) {
		t.Helper()
		if _, err := unix.Write(w, b); err != nil {
			t.Fatal(err)
		}
	}
	rec := func(end int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(end)) }
	if got := g.current(); got != 100 {
		t.Fatalf("nothing written: end %d, want 100", got)
	}
	put(rec(200))
	put(rec(150))
	if got := g.current(); got != 200 {
		t.Errorf("after renewals to 200 and 150: end %d, want 200", got)
	}
	select {
	case <-g.moved:
	default:
		t.Errorf("the end moved and nothing was told")
	}
	r300 := rec(300)
	put(r300[:3])
	if got := g.current(); got != 200 {
		t.Errorf("3 bytes of a record: end %d, want 200", got)
	}
	put(r300[3:])
	if got := g.current(); got != 300 {
		t.Errorf("the record completed: end %d, want 300", got)
	}
	unix.Close(w)
	w = -1
	if got := g.current(); got != 300 || g.fd != -1 {
		t.Errorf("the agent's end closed: end %d, fd %d; want 300 and the pipe closed", got, g.fd)
	}
}
