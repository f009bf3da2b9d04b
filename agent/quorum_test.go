package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lanleader/lanleader/internal/waitfor"
)

// TestQuorumCluster: three agents with --quorum 3 elect node-3, whose job
// runs with the term; every node keeps the term it voted in on disk. With
// two of them down node-1 alone is a minority: it shows no leader and never
// runs the job. node-2 back: {1, 2} is a majority again, node-2 leads under
// a term later than any voted before, and starts the job with it.
func TestQuorumCluster(t *testing.T) {
	dir := t.TempDir()
	stamps := filepath.Join(dir, "stamps")
	job := writeScript(t, "job.sh", stampJob)
	l := startLocal(t, LocalOptions{Nodes: 3, HTTP: true, StateDir: dir, Base: func(c *Config) {
		c.Quorum = 3
		c.DeriveTimeouts()
		c.Job, c.JobGrace = []string{job, stamps}, 2*time.Second
	}})
	first := waitLeader(t, l, electBound, 2)
	s := startedAfter(t, stamps, 0, 3, electBound)
	if s.term != first.Term {
		t.Errorf("the job's LANLEADER_TERM %d, want the leader's term %d", s.term, first.Term)
	}
	for i, a := range l.Agents {
		st := a.Status()
		if st.Quorum != 3 || st.VotedTerm != first.Term {
			t.Errorf("node-%d: /status quorum %d voted_term %d, want 3 and %d", i+1, st.Quorum, st.VotedTerm, first.Term)
		}
		kept, err := LoadVotedTerm(filepath.Join(dir, st.Name+".state"))
		if err != nil || kept != first.Term {
			t.Errorf("node-%d: state file holds %d (%v), want %d", i+1, kept, err, first.Term)
		}
	}

	// node-1 alone: a minority. A crash of the agent in this process
	// kills its job's group (no stop stamp): check that it is gone.
	pid3 := l.Agents[2].Status().Job.Pid
	l.Crash(2)
	waitFor(t, "node-3's job gone with its agent", 5*time.Second, func() (bool, string) { return !alive(pid3), "" })
	l.Crash(1)
	n := len(readStamps(t, stamps))
	// Until node-3's lease has surely run out node-1 may still name it.
	waitFor(t, "node-1 alone to name no leader", 5*time.Second, func() (bool, string) {
		st := l.Agents[0].Status()
		return st.LeaderID == 0, fmt.Sprintf("%s leader_id %d", st.State, st.LeaderID)
	})
	// Several leases (300ms) and claim waits: node-1 must never lead.
	waitfor.Holds(t, "node-1 alone (1 of 3): a minority has no leader", 3*time.Second, 10*time.Millisecond, func() (bool, string) {
		st := l.Agents[0].Status()
		return st.State != "leader" && st.LeaderID == 0, fmt.Sprintf("%s with leader_id %d", st.State, st.LeaderID)
	})
	if got := readStamps(t, stamps)[n:]; len(got) > 0 && got[len(got)-1].start {
		t.Errorf("a job started while no majority was up: %+v", got)
	}
	votedAlone := l.Agents[0].Status().VotedTerm

	// node-2 returns with the term it kept.
	if err := l.Start(1); err != nil {
		t.Fatal(err)
	}
	second := waitLeader(t, l, 10*time.Second, 1)
	if second.Term <= first.Term || second.Term <= votedAlone {
		t.Errorf("node-2 leads with term %d; want more than node-3's %d and than node-1's votes alone (%d)", second.Term, first.Term, votedAlone)
	}
	s2 := startedAfter(t, stamps, n, 2, 10*time.Second)
	if s2.term != second.Term {
		t.Errorf("node-2's job: term %d, want %d", s2.term, second.Term)
	}
	if ov := overlaps(readStamps(t, stamps)[n:]); len(ov) > 0 {
		t.Errorf("the job ran twice at once: %q", ov)
	}
}

// TestQuorumPausedLoop: the guard holds the lease. The event loop of a
// leading agent is held (as a SIGSTOP would hold the whole agent): it
// cannot renew its lease nor stop its job, and the job's guard kills the
// job when the lease runs out. Once the loop runs again the agent sees its
// lease lost, steps down, and (a cluster of one is its own majority) leads
// again under a later term with a new run of the job.
func TestQuorumPausedLoop(t *testing.T) {
	dir := t.TempDir()
	stamps := filepath.Join(dir, "stamps")
	job := writeScript(t, "job.sh", stampJob)
	set := newAgentSet(t)
	c := testConfig("node-1", 1)
	c.Quorum, c.AllowSmallQuorum = 1, true
	c.DeriveTimeouts()
	c.StateFile, c.Job, c.JobGrace = filepath.Join(dir, "state"), []string{job, stamps}, 5*time.Second
	a := set.start(0, c)
	first := startedAfter(t, stamps, 0, 1, electBound)
	var pid int
	waitFor(t, "the job running", 5*time.Second, func() (bool, string) {
		js := a.Status().Job
		pid = js.Pid
		return js.State == "running" && pid > 0, fmt.Sprintf("%+v", js)
	})
	lease := a.machine.Config().Lease

	release := make(chan struct{})
	held := make(chan time.Time)
	go a.call(func() {
		held <- time.Now()
		<-release
	})
	t0 := <-held
	var once sync.Once
	unhold := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unhold) // a failed wait leaves the loop held otherwise
	waitfor.Until(t, "the guard kills the job of a lease the held loop no longer renews", lease+5*time.Second, time.Millisecond, func() (bool, string) {
		return !alive(pid), fmt.Sprintf("the job (pid %d) still runs %v after the loop stopped renewing a lease of %v", pid, time.Since(t0).Round(time.Millisecond), lease)
	})
	died := time.Since(t0)
	unhold()
	t.Logf("the guard killed the job %v after the loop was held (lease %v)", died.Round(time.Millisecond), lease)
	if died > lease+time.Second {
		t.Errorf("the job died %v after the loop was held; the lease is %v", died, lease)
	}
	if st := a.Status(); st.State == "leader" && st.Term == first.term {
		// Fine only until the loop has run: it must step down.
		waitFor(t, "a new term after the lease was lost", electBound, func() (bool, string) {
			st := a.Status()
			return st.Term > first.term, fmt.Sprintf("%s term %d", st.State, st.Term)
		})
	}
	second := startedAfter(t, stamps, 1, 1, electBound)
	if second.term <= first.term {
		t.Errorf("the job started again under term %d, want more than %d", second.term, first.term)
	}
	log := set.logs.String()
	// The supervisor reports the guard's kill as such, or, when the loop
	// ran first and asked the job to stop, as a stop: either way, not as
	// a failure (below).
	for _, want := range []string{"the leader's lease ran out: SIGKILL", "lease_lost=true"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %q", want)
		}
	}
	if js := a.Status().Job; js.Failures != 0 {
		t.Errorf("a job killed at the end of the lease counted as a failure: %+v", js)
	}
}

// TestQuorumResignGivesTheJobItsGrace: a leader that resigns still holds
// its lease while its job stops, and keeps renewing it in the job's
// guard: a job that takes a second to stop after SIGTERM gets that second
// (within --job-grace), not the rest of one lease.
func TestQuorumResignGivesTheJobItsGrace(t *testing.T) {
	dir := t.TempDir()
	stamps := filepath.Join(dir, "stamps")
	job := writeScript(t, "slow.sh", `echo "start $LANLEADER_NODE_ID $(date +%s.%N) $LANLEADER_TERM $LANLEADER_LEADER_ID" >> "$1"
trap 'sleep 1; echo "stop $LANLEADER_NODE_ID $(date +%s.%N)" >> "$1"; exit 0' TERM
while :; do sleep 0.05; done
`)
	set := newAgentSet(t)
	c := testConfig("node-1", 1)
	c.Quorum, c.AllowSmallQuorum = 1, true
	c.DeriveTimeouts()
	c.Job, c.JobGrace = []string{job, stamps}, 5*time.Second
	a := set.start(0, c)
	startedAfter(t, stamps, 0, 1, electBound)
	waitFor(t, "the job running", 5*time.Second, func() (bool, string) {
		js := a.Status().Job
		return js.State == "running", js.State
	})
	lease := a.machine.Config().Lease
	t0 := time.Now()
	if !a.Resign() {
		t.Fatal("Resign: not leading")
	}
	waitFor(t, "the job stopped", 10*time.Second, func() (bool, string) {
		js := a.Status().Job
		return js.State == "stopped" || js.State == "backoff", js.State
	})
	took := time.Since(t0)
	st := readStamps(t, stamps)
	if len(st) < 2 || st[1].start || st[1].node != 1 {
		t.Fatalf("the job did not stop by its own trap (killed at the end of a %v lease?): %+v, after %v", lease, st, took)
	}
	if js := a.Status().Job; js.LastExit != "exit status 0" || took < time.Second {
		t.Errorf("the job stopped after %v with %q; want its second of grace and exit status 0", took.Round(time.Millisecond), js.LastExit)
	}
}

// TestBadStateFileRefused: New refuses a state file that is not one
// (package statefile tests the file itself).
func TestBadStateFileRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	os.WriteFile(path, []byte("voted_term x\n"), 0o600)
	c := testConfig("n", 1)
	c.Quorum = 3
	c.DeriveTimeouts()
	c.StateFile = path
	if _, err := New(c); err == nil {
		t.Error("New accepted a bad state file")
	}
}
