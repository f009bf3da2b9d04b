package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/waitfor"
)

// The election interface's carrier (agent/part/links), driven by the fake link
// watch of vip_test.go: the agents bind 127.0.0.1, whose interface is lo.

// carrierJob appends its node_id to starts once it has set its SIGTERM
// trap, then runs until SIGTERM, after which it takes stopDelay to exit.
// (The tests stop a job only after its line is there: a SIGTERM that
// comes while the job's guard has not started it yet is lost.)
func carrierJob(starts string, stopDelay time.Duration) []string {
	return []string{"/bin/sh", "-c", fmt.Sprintf(
		`trap 'sleep %.3f; exit 0' TERM; echo "$LANLEADER_NODE_ID" >> %q; while :; do sleep 0.05; done`,
		stopDelay.Seconds(), starts)}
}

// jobStarts counts the starts of node id's job in the file starts.
func jobStarts(t *testing.T, starts string, id uint64) int {
	t.Helper()
	b, err := os.ReadFile(starts)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Fields(string(b)) {
		if l == fmt.Sprint(id) {
			n++
		}
	}
	return n
}

// waitStarts waits until node id's job has started n times.
func waitStarts(t *testing.T, starts string, id uint64, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("node-%d's job has started %d times", id, n), electBound, func() (bool, string) {
		got := jobStarts(t, starts, id)
		return got == n, fmt.Sprint(got)
	})
}

func hasFault(st Status, part string) bool {
	return slices.ContainsFunc(st.Fault, func(f string) bool { return strings.Contains(f, part) })
}

// A leader whose election interface loses its carrier steps down at
// once: the addresses go and the job gets its SIGTERM in the same turn
// of the loop, while the job still takes its time to exit, not after it
// (the hand-over of a resign, whose RESIGN no one could hear). Alone, it
// does not lead again while the carrier is lost; with the carrier back it
// listens for a leader, then leads.
func TestCarrierLossLeaderStopsAtOnce(t *testing.T) {
	s := newAgentSet(t)
	rec := &vipRecord{}
	f := &fakeVIPs{rec: rec}
	starts := filepath.Join(t.TempDir(), "starts")
	cfg := vipConfig("node-1", 1, false)
	const stopDelay = 2 * time.Second
	cfg.Job, cfg.JobGrace = carrierJob(starts, stopDelay), 5*time.Second
	a := startVIPAgent(t, s, 0, cfg, f)
	waitStarts(t, starts, 1, 1)
	from := len(rec.all())
	lost := time.Now()
	f.linkReport("lo", false)
	// Well within the job's stop delay: a hand-over would still lead.
	waitFor(t, "node-1 steps down, its job stopping, its addresses gone", stopDelay/2, func() (bool, string) {
		st := a.Status()
		return st.State != "leader" && a.Job().State == "stopping" && index(rec.all(), from, "node-1", "release") >= 0,
			fmt.Sprint(st.State, " job ", a.Job().State, rec)
	})
	calls := rec.all()
	if c := calls[index(calls, from, "node-1", "release")]; c.state == election.StateLeader || c.job == "stopped" {
		t.Errorf("release %v: want it on the step down, before the job has stopped", c)
	}
	if took := time.Since(lost); took >= stopDelay {
		t.Errorf("stepped down %v after the carrier loss, not before the job stopped (%v)", took, stopDelay)
	}
	// The addresses' interface is the election's: both say so.
	if st := a.Status(); !hasFault(st, "the election interface has no carrier (lo)") || !slices.Equal(st.LinksDown, []string{"lo"}) {
		t.Errorf("fault %q, links_down %q: want the carrier as a reason, and lo down", st.Fault, st.LinksDown)
	}
	if !strings.Contains(s.logs.String(), "level=WARN msg=\"the election interface has no carrier") {
		t.Errorf("no warning of the carrier loss")
	}
	waitJob(t, a, "stopped")
	// Alone, it would lead again after its resign hold-off; it must not
	// while the carrier is lost: an absence, watched over that hold-off
	// and two listen periods.
	waitfor.Holds(t, "node-1 does not lead without carrier", a.machine.Config().ResignHoldoff+2*cfg.SuspectAfter, 5*time.Millisecond, func() (bool, string) {
		st := a.Status()
		return st.State != "leader" && index(rec.all(), from, "node-1", "acquire") < 0 && jobStarts(t, starts, 1) == 1,
			fmt.Sprintf("led without carrier: %v, %d job starts, calls %v", st.State, jobStarts(t, starts, 1), rec)
	})
	f.linkReport("lo", true)
	waitStarts(t, starts, 1, 2)
	if !strings.Contains(s.logs.String(), "listening for the leader before taking part in elections") {
		t.Errorf("no listen for the leader after the carrier came back")
	}
	if st := a.Status(); len(st.Fault) > 0 || st.State != "leader" {
		t.Errorf("fault %q, state %s; want none, leader", st.Fault, st.State)
	}
}

// The carrier is read before the job starts, ahead of the watch's
// report: a node whose carrier went while its report was still on the way
// (an agent resumed from a pause handles its election timer and the
// kernel's notice in either order) steps down instead of starting its
// job, and its status says why. Here the report never comes: the node
// wins its first election without carrier.
func TestCarrierReadBeforeTheJobStarts(t *testing.T) {
	s := newAgentSet(t)
	rec := &vipRecord{}
	f := &fakeVIPs{rec: rec}
	f.silentCarrier("lo", false)
	starts := filepath.Join(t.TempDir(), "starts")
	cfg := testConfig("node-1", 1)
	cfg.Job, cfg.JobGrace = carrierJob(starts, 0), 2*time.Second
	a := startVIPAgent(t, s, 0, cfg, f)
	waitFor(t, "node-1 in fault for its carrier", electBound, func() (bool, string) {
		st := a.Status()
		return hasFault(st, "the election interface has no carrier (lo)"), fmt.Sprint(st.State, st.Fault)
	})
	// Alone, it would lead again after its resign hold-off; it must not
	// while the carrier is lost: an absence, watched over that hold-off
	// and two listen periods.
	waitfor.Holds(t, "node-1 does not lead without carrier", a.machine.Config().ResignHoldoff+2*cfg.SuspectAfter, 5*time.Millisecond, func() (bool, string) {
		st, job := a.Status(), a.Job()
		return st.State != "leader" && jobStarts(t, starts, 1) == 0 && job.State != "running",
			fmt.Sprintf("led without carrier: %v, job %s, %d job starts", st.State, job.State, jobStarts(t, starts, 1))
	})
	f.linkReport("lo", true)
	waitStarts(t, starts, 1, 1)
}

// A follower whose election interface loses its carrier takes no part in
// elections: when its leader goes (as it does for a node that hears no
// one), it does not elect itself and never starts the job; once the
// carrier is back, it leads.
func TestCarrierLossFollowerNeverLeads(t *testing.T) {
	s := newAgentSet(t)
	rec := &vipRecord{}
	f1, f2 := &fakeVIPs{rec: rec}, &fakeVIPs{rec: rec}
	starts := filepath.Join(t.TempDir(), "starts")
	c1 := testConfig("node-1", 1)
	c1.Job, c1.JobGrace = carrierJob(starts, 0), 2*time.Second
	a1 := startVIPAgent(t, s, 0, c1, f1)
	c2 := testConfig("node-2", 2)
	c2.Job, c2.JobGrace = carrierJob(starts, 0), 2*time.Second
	c2.Join = []string{a1.GossipAddr().String()}
	a2 := startVIPAgent(t, s, 1, c2, f2)
	waitFor(t, "node-2 leads with its job, node-1 follows", electBound, func() (bool, string) {
		return a2.Job().State == "running" && a1.Status().LeaderID == 2, fmt.Sprint(a2.Job().State, a1.Status().LeaderID)
	})
	waitStarts(t, starts, 2, 1)
	f1.linkReport("lo", false)
	waitFor(t, "node-1 in fault for its carrier", electBound, func() (bool, string) {
		st := a1.Status()
		return hasFault(st, "no carrier (lo)"), fmt.Sprint(st.Fault)
	})
	a2.Crash()
	waitFor(t, "node-1 has lost its leader", electBound, func() (bool, string) {
		st := a1.Status()
		return st.LeaderID == 0, fmt.Sprint(st.State, st.LeaderID)
	})
	// Alone and without its leader, it would elect itself within an
	// answer timeout; it must not while the carrier is lost: an absence,
	// watched over a resign hold-off and two listen periods, more than
	// that timeout.
	waitfor.Holds(t, "node-1 does not lead without carrier", a1.machine.Config().ResignHoldoff+2*c1.SuspectAfter, 5*time.Millisecond, func() (bool, string) {
		st := a1.Status()
		return st.State != "leader" && jobStarts(t, starts, 1) == 0,
			fmt.Sprintf("node-1 led without carrier: %v, %d job starts", st.State, jobStarts(t, starts, 1))
	})
	f1.linkReport("lo", true)
	waitStarts(t, starts, 1, 1)
}

// A leader that loses its carrier steps down, and the other node takes
// over; with its carrier back, the larger node listens, follows that
// leader, and takes over (preemption) only once that leader's job has
// stopped.
func TestCarrierBackTakesOverAfterTheJob(t *testing.T) {
	s := newAgentSet(t)
	rec := &vipRecord{}
	f1, f2 := &fakeVIPs{rec: rec}, &fakeVIPs{rec: rec}
	starts := filepath.Join(t.TempDir(), "starts")
	const stopDelay = 500 * time.Millisecond
	c1 := testConfig("node-1", 1)
	c1.Job, c1.JobGrace = carrierJob(starts, stopDelay), 5*time.Second
	a1 := startVIPAgent(t, s, 0, c1, f1)
	c2 := testConfig("node-2", 2)
	c2.Job, c2.JobGrace = carrierJob(starts, 0), 5*time.Second
	c2.Join = []string{a1.GossipAddr().String()}
	a2 := startVIPAgent(t, s, 1, c2, f2)
	waitFor(t, "node-2 leads with its job", electBound, func() (bool, string) {
		return a2.Job().State == "running" && a1.Status().LeaderID == 2, fmt.Sprint(a2.Job().State, a1.Status().LeaderID)
	})
	waitStarts(t, starts, 2, 1)
	f2.linkReport("lo", false)
	waitStarts(t, starts, 1, 1)
	f2.linkReport("lo", true)
	waitStarts(t, starts, 2, 2)
	logs := s.logs.String()
	listen := strings.Index(logs, "listening for the leader before taking part")
	wait := strings.Index(logs, "waiting for the previous leader's job to stop")
	if listen < 0 || wait < listen || !strings.Contains(logs[wait:], "previous=node-1") {
		t.Errorf("want node-2 to listen, then wait for node-1's job before its own")
	}
	if st := a1.Status(); st.LeaderID != 2 || jobStarts(t, starts, 1) != 1 || a1.Job().State != "stopped" {
		t.Errorf("node-1 follows %d, job %s, %d starts; want node-2, stopped, 1", st.LeaderID, a1.Job().State, jobStarts(t, starts, 1))
	}
}
