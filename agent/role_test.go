package agent

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/config"
)

func TestRoleConfig(t *testing.T) {
	c := testConfig("w", 1)
	c.Role = "witness"
	var se *config.SettingError
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "role: a witness only votes in quorum mode") {
		t.Errorf("witness without quorum: %v", err)
	}
	c.Quorum = 3
	c.DeriveTimeouts()
	if err := c.Validate(); err != nil {
		t.Errorf("witness with quorum: %v", err)
	}
	c.Role = "arbiter"
	if err := c.Validate(); !errors.As(err, &se) || se.Setting != "role" || !strings.Contains(err.Error(), `"arbiter" is not candidate, witness or observer`) {
		t.Errorf("unknown role: %v", err)
	}

	c = testConfig("o", 2)
	if w := c.RoleWarnings(); len(w) != 0 {
		t.Errorf("candidate: warnings %q", w)
	}
	c.Role, c.Job, c.OnLeader = "observer", []string{"/bin/true"}, "echo lead"
	c.VIPs = []VIP{{Prefix: netip.MustParsePrefix("198.18.0.100/24")}}
	want := []string{
		"role observer: this node never leads, so the job never runs here",
		"role observer: this node never leads, so the on_leader hook never runs here",
		"role observer: this node never leads, so the virtual addresses (--vip) are never held here",
	}
	if w := c.RoleWarnings(); !slices.Equal(w, want) {
		t.Errorf("observer warnings %q\nwant %q", w, want)
	}
	if err := c.Validate(); err != nil && strings.Contains(err.Error(), "role") {
		t.Errorf("an observer with a job is allowed: %v", err)
	}
}

// TestRoleWitnessCluster: two candidates and a witness with the largest
// key, quorum 3. The larger candidate leads and runs the job; the witness
// votes but never leads nor runs it; /status and the metrics show the
// roles. The leader's crash leaves the other candidate and the witness,
// a majority: the other candidate leads under a later term.
func TestRoleWitnessCluster(t *testing.T) {
	dir := t.TempDir()
	stamps := filepath.Join(dir, "stamps")
	job := writeScript(t, "job.sh", stampJob)
	l := startLocal(t, LocalOptions{Nodes: 3, HTTP: true, StateDir: dir, Base: func(c *Config) {
		c.Quorum = 3
		c.DeriveTimeouts()
		c.Job, c.JobGrace = []string{job, stamps}, 2*time.Second
	}, Role: func(i int) string { return []string{"candidate", "candidate", "witness"}[i] }})
	first := waitLeader(t, l, electBound, 1)
	startedAfter(t, stamps, 0, 2, electBound)
	waitFor(t, "every node to see the others' roles", electBound, func() (bool, string) {
		var seen []string
		for _, a := range l.Agents {
			st := a.Status()
			s := st.Name + "=" + st.Role + ":"
			for _, m := range st.Members {
				s += " " + m.Name + "=" + m.Role
			}
			seen = append(seen, s)
		}
		got := strings.Join(seen, "; ")
		return got == "node-1=candidate: node-2=candidate node-3=witness; "+
			"node-2=candidate: node-1=candidate node-3=witness; "+
			"node-3=witness: node-1=candidate node-2=candidate", got
	})
	if st := l.Agents[2].Status(); st.VotedTerm != first.Term {
		t.Errorf("the witness voted in term %d, want %d", st.VotedTerm, first.Term)
	}
	if got := roleSeries(t, l.Agents[2]); got != `lanleader_member_roles{role="candidate"} 2; lanleader_member_roles{role="observer"} 0; `+
		`lanleader_member_roles{role="witness"} 0; lanleader_role{role="candidate"} 0; lanleader_role{role="observer"} 0; lanleader_role{role="witness"} 1` {
		t.Errorf("the witness's role metrics: %s", got)
	}

	// A crash of the agent in this process kills its job's group, with
	// no stop stamp: check that it is gone instead.
	pid2 := l.Agents[1].Status().Job.Pid
	l.Crash(1)
	waitFor(t, "node-2's job gone with its agent", 5*time.Second, func() (bool, string) { return !alive(pid2), "" })
	n := len(readStamps(t, stamps))
	second := waitLeader(t, l, electBound, 0)
	if second.Term <= first.Term {
		t.Errorf("node-1 leads with term %d, not above node-2's %d", second.Term, first.Term)
	}
	startedAfter(t, stamps, n, 1, electBound)
	for _, s := range readStamps(t, stamps) {
		if s.node == 3 {
			t.Errorf("the witness ran the job: %+v", s)
		}
	}
	if ov := overlaps(readStamps(t, stamps)[n:]); len(ov) > 0 {
		t.Errorf("the job ran twice at once: %q", ov)
	}
	if st := l.Agents[2].Status(); st.State != "follower" || st.LeaderID != 1 {
		t.Errorf("the witness: %s, leader %d; want a follower of node-1", st.State, st.LeaderID)
	}
}

// roleSeries is a's lanleader_role and lanleader_member_roles series.
func roleSeries(t *testing.T, a *Agent) string {
	t.Helper()
	mfs, err := a.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		if mf.GetName() != "lanleader_role" && mf.GetName() != "lanleader_member_roles" {
			continue
		}
		for _, m := range mf.GetMetric() {
			out = append(out, fmt.Sprintf("%s{role=%q} %v", mf.GetName(), m.GetLabel()[0].GetValue(), m.GetGauge().GetValue()))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// TestRoleObserverCluster: two candidates and an observer with the
// largest key, bully without quorum mode. The observer follows (its
// on_follower hook runs at its first leader, on_change at each) but never
// leads; the leader's crash moves the leadership to the other candidate,
// which the observer follows.
func TestRoleObserverCluster(t *testing.T) {
	dir := t.TempDir()
	hooks := filepath.Join(dir, "hooks")
	l := startLocal(t, LocalOptions{Nodes: 3, Base: func(c *Config) {
		c.OnLeader = "echo leader $LANLEADER_NODE_ID >> " + hooks
		c.OnFollower = "echo follower $LANLEADER_NODE_ID $LANLEADER_LEADER_ID >> " + hooks
		c.OnChange = "echo change $LANLEADER_NODE_ID $LANLEADER_LEADER_ID >> " + hooks
	}, Role: func(i int) string { return []string{"candidate", "candidate", "observer"}[i] }})
	waitLeader(t, l, electBound, 1)
	l.Crash(1)
	waitLeader(t, l, electBound, 0)
	waitFor(t, "the observer's hooks name node 2, then node 1", electBound, func() (bool, string) {
		b, _ := os.ReadFile(hooks)
		return strings.Contains(string(b), "follower 3 2\n") && strings.Contains(string(b), "change 3 1\n"), string(b)
	})
	b, _ := os.ReadFile(hooks)
	if strings.Contains(string(b), "leader 3") {
		t.Errorf("the observer ran on_leader: %q", b)
	}
	if st := l.Agents[2].Status(); st.Role != "observer" || st.State != "follower" || st.LeaderID != 1 {
		t.Errorf("the observer: role %s, %s of %d", st.Role, st.State, st.LeaderID)
	}
}

// TestRoleTooManyVoters: three candidates alive with --quorum 1 is a
// misconfiguration (three disjoint majorities of one): each agent warns
// once.
func TestRoleTooManyVoters(t *testing.T) {
	l := startLocal(t, LocalOptions{Nodes: 3, Base: func(c *Config) {
		c.Quorum, c.AllowSmallQuorum = 1, true
		c.DeriveTimeouts()
	}})
	const warning = "more voting members are alive than --quorum counts"
	waitFor(t, "every agent warns", electBound, func() (bool, string) {
		return strings.Count(l.logs.String(), warning) >= 3, ""
	})
	// Once only while it stays so: not again at the /status updates of
	// a leadership.
	l.Crash(2)
	waitLeader(t, l, electBound, 1)
	if n := strings.Count(l.logs.String(), warning); n != 3 {
		t.Errorf("%d warnings, want 3", n)
	}
}
