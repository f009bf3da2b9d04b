package agent

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/internal/waitfor"
)

// TestJobModeOnce: with job mode once the leader runs the job a single
// time per leadership: it exits 3 and is not restarted (the restart
// would come within 200ms), /status says it finished with status 3, and
// the agent stays leader. A resign hands the leadership over: the other
// node runs it once in its term; when the first node takes over again
// (after its hold-off), in a new term, it runs it again.
func TestJobModeOnce(t *testing.T) {
	stamps := filepath.Join(t.TempDir(), "stamps")
	job := writeScript(t, "job.sh", `echo "start $LANLEADER_NODE_ID $(date +%s.%N) $LANLEADER_TERM $LANLEADER_LEADER_ID" >> "$1"
exit 3
`)
	l := startLocal(t, LocalOptions{Nodes: 2, Base: func(c *Config) {
		c.Job, c.JobMode, c.PreemptDelay = []string{job, stamps}, config.JobModeOnce, time.Second
	}})
	first := waitLeader(t, l, electBound, 1)
	b := l.Agents[1]
	<-b.JobRan()
	select {
	case <-b.JobEnded():
	case <-time.After(5 * time.Second):
		t.Fatalf("node-2's job did not end: %+v", b.Job())
	}
	waitFor(t, "node-2's job finished in /status", 5*time.Second, func() (bool, string) {
		js := b.Status().Job
		return js != nil && js.State == "finished" && js.ExitCode != nil && *js.ExitCode == 3 && js.LastExit == "exit status 3", fmt.Sprintf("%+v", js)
	})
	if code, ok := b.JobExitStatus(); !ok || code != 3 {
		t.Errorf("JobExitStatus %d %v, want 3", code, ok)
	}
	// Well past the first restart's backoff: still one run, still leader.
	waitfor.Holds(t, "one run on node 2, which stays leader", time.Second, 10*time.Millisecond, func() (bool, string) {
		st, ss := b.Status(), readStamps(t, stamps)
		return len(ss) == 1 && ss[0].node == 2 && ss[0].term == first.Term && st.State == "leader" && st.Job.Restarts == 0 && st.Job.Failures == 0,
			fmt.Sprintf("stamps %+v (want one run on node 2 in term %d); %s, job %+v", ss, first.Term, st.State, st.Job)
	})
	if led, _, _ := b.resign(); !led {
		t.Fatal("node-2 did not resign")
	}
	s1 := startedAfter(t, stamps, 1, 1, failoverBound)
	// Node-2 takes over again after its hold-off (preempt), in a new term.
	s2 := startedAfter(t, stamps, 2, 2, failoverBound+2*time.Second)
	if s1.term <= first.Term || s2.term <= s1.term {
		t.Errorf("terms %d, %d, %d: want each run in a newer term", first.Term, s1.term, s2.term)
	}
}
