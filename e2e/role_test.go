//go:build linux

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/internal/waitfor"
)

// Roles on real processes: two candidates and a witness with --quorum 3
// (majority 2), the witness with the largest key and given the job too
// (it must never run it), the fenced job on the candidates. Each trial:
// SIGKILL of the witness: nothing changes (same leader, same term, the
// leader's run of the job goes on) for several leases; it comes back and
// follows. SIGKILL of the leader: the other candidate leads, with the
// witness's vote, within the quorum liveness bound; the killed one comes
// back and follows (--preempt=false, so that the next trial kills the
// other candidate). Then the same leader crashes on a cluster of three
// candidates, for the comparison: the failover time (SIGKILL → every
// survivor's log names the new leader) of both, median over the trials.
// Over every run: no two runs of the job overlap, the sink's terms never
// go down (fenceVerdict). LANLEADER_ROLE_TRIALS sets the trials (default
// 3).

// roleLAN is a quorum cluster of three hosts with given roles.
type roleLAN struct {
	*quorumLAN
	roles []string
}

func startRoleLAN(t *testing.T, roles []string) *roleLAN {
	t.Helper()
	n := NewNet(t, len(roles))
	bin, err := Binary()
	if err != nil {
		t.Fatalf("e2e: %v", err)
	}
	if out, _ := exec.Command(bin, "run", "--help").CombinedOutput(); !strings.Contains(string(out), "--role") {
		t.Fatalf("lanleader run has no --role flag (lanleader run --help)")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	r := &roleLAN{quorumLAN: &quorumLAN{Net: n, t: t, dir: dir, job: buildFenceJob(t, dir), quorum: len(roles)}, roles: roles}
	r.sink = NewFenceSink(t, dir)
	r.stamps = &stampFile{path: dir + "/stamps"}
	r.obs = n.Observe(t, observeEvery)
	for i := range roles {
		r.procs = append(r.procs, r.start(i))
	}
	return r
}

func (r *roleLAN) start(i int) *Proc {
	args := []string{"run", "--bind", r.Addr(i), "--name", hostName(i), "--node-id", strconv.Itoa(i + 1),
		"--log-format", "json", "--job-grace", "1s", "--role", r.roles[i], "--preempt=false",
		"--quorum", strconv.Itoa(r.quorum), "--state-file", fmt.Sprintf("%s/state-%d", r.dir, i+1),
		"--lease", quorumLease.String(), "--lease-margin", quorumMarg.String(),
		"--", r.job, r.stamps.path, r.sink.Path}
	return r.Start(r.t, i, args...)
}

// leader is the leader every host agrees on now, and its term.
func (r *roleLAN) leader(t *testing.T, hosts []int) (uint64, uint64) {
	t.Helper()
	var leader, term uint64
	from := time.Now()
	waitFor(t, "the hosts agree on a leader", startBound, func() (bool, string) {
		st, _, err := r.obs.Status(hosts[0])
		if err != nil || st.LeaderID == 0 {
			return false, fmt.Sprintf("host-%d: %v leader %d", hosts[0]+1, err, st.LeaderID)
		}
		leader, term = st.LeaderID, st.Term
		return r.obs.Agree(from, leader, hosts...)
	})
	return leader, term
}

// crashLeader SIGKILLs the leader (node leader), waits until the other
// candidate leads and runs the job, and returns how long after the kill
// every survivor's log named it; then restarts the killed host and waits
// until all follow the new leader.
func (r *roleLAN) crashLeader(t *testing.T, leader uint64) time.Duration {
	t.Helper()
	next := uint64(0)
	var live []int
	for i, role := range r.roles {
		if uint64(i+1) != leader {
			live = append(live, i)
			if role == "candidate" {
				next = max(next, uint64(i+1))
			}
		}
	}
	t0 := r.kill(t, int(leader-1))
	waitFor(t, fmt.Sprintf("host-%d leads after host-%d's crash", next, leader), quorumLiveness, func() (bool, string) {
		return r.obs.Agree(t0, next, live...)
	})
	r.waitJobOn(t, fmt.Sprintf("host-%d's job runs", next), int(next), t0, quorumLiveness)
	_, all, ok := r.obs.Settle(t0, next, live...)
	if !ok {
		t.Fatalf("not every survivor's log names host-%d after the crash", next)
	}
	r.procs[leader-1] = r.start(int(leader - 1))
	back := time.Now()
	waitFor(t, fmt.Sprintf("host-%d back, following host-%d", leader, next), quorumHeal, func() (bool, string) {
		return r.obs.Agree(back, next, r.All()...)
	})
	// It follows as soon as it hears a heartbeat, but neither votes nor
	// leads until its guard after the start (lease + margin) is over, and
	// elects only among the members its gossip lists. A crashed agent's
	// notice elects at once: the next trial's crash waits until the
	// restarted host has voted in the leader's term and lists every
	// member; a crash before is another scenario (the largest candidate
	// stands aside, and with --preempt=false for good).
	waitFor(t, fmt.Sprintf("host-%d back, voting and listing every member", leader), quorumHeal, func() (bool, string) {
		lst, _, err := r.obs.Status(int(next - 1))
		if err != nil {
			return false, err.Error()
		}
		st, _, err := r.obs.Status(int(leader - 1))
		switch {
		case err != nil:
			return false, err.Error()
		case st.VotedTerm != lst.Term:
			return false, fmt.Sprintf("host-%d voted in term %d, want host-%d's term %d", leader, st.VotedTerm, next, lst.Term)
		case len(st.Members) != len(r.roles)-1:
			return false, fmt.Sprintf("host-%d lists %d members, want %d", leader, len(st.Members), len(r.roles)-1)
		}
		return true, ""
	})
	return all
}

// crashWitness SIGKILLs host i, a follower that votes, and checks that
// nothing changes for four leases: every live host polled names the same
// leader with the same term, and the leader's run of the job goes on.
// Then it restarts it and waits until it follows again. First every
// other host must have voted in the leader's term: a candidate that has
// just restarted votes only once its guard after the start (lease +
// margin) is over, and until then the leader's majority is the witness.
func (r *roleLAN) crashWitness(t *testing.T, i int) {
	t.Helper()
	live := slices.DeleteFunc(r.All(), func(h int) bool { return h == i })
	leader, term := r.leader(t, live)
	waitFor(t, "the candidates voted in the leader's term", quorumLiveness, func() (bool, string) {
		for _, h := range live {
			if st, _, err := r.obs.Status(h); err != nil || st.VotedTerm != term {
				return false, fmt.Sprintf("host-%d voted in term %d (%v), want %d", h+1, st.VotedTerm, err, term)
			}
		}
		return true, ""
	})
	run, ok := r.running(int(leader))
	if !ok {
		t.Fatalf("host-%d leads but its job does not run", leader)
	}
	t0 := r.kill(t, i)
	waitfor.Holds(t, "the leader and term through the witness's crash", max(time.Until(t0.Add(4*quorumLease)), 0), observeEvery, func() (bool, string) {
		for _, h := range live {
			if st, at, err := r.obs.Status(h); err == nil && at.After(t0) && (st.LeaderID != leader || st.Term != term) {
				return false, fmt.Sprintf("host-%d: %s, leader %d term %d; want leader %d term %d", h+1, st.State, st.LeaderID, st.Term, leader, term)
			}
		}
		return true, ""
	})
	if now, ok := r.running(int(leader)); !ok || !now.Start.Equal(run.Start) {
		t.Fatalf("the leader's job did not run on through the witness's crash: before %v, now %v (running %v)", run, now, ok)
	}
	r.procs[i] = r.start(i)
	back := time.Now()
	waitFor(t, fmt.Sprintf("host-%d back, following host-%d", i+1, leader), quorumHeal, func() (bool, string) {
		ok, why := r.obs.Agree(back, leader, r.All()...)
		if ok {
			if st, _, _ := r.obs.Status(i); st.Term != term {
				return false, fmt.Sprintf("term %d, want %d", st.Term, term)
			}
		}
		return ok, why
	})
}

// verdict checks the job's record and the sink over the whole run.
func (r *roleLAN) verdict(t *testing.T) {
	t.Helper()
	for _, v := range fenceVerdict(r.stamps.Stamps(), r.sink.Records()) {
		t.Error(v)
	}
	for _, run := range r.stamps.Runs() {
		if r.roles[run.Node-1] != "candidate" {
			t.Errorf("a %s ran the job: %v", r.roles[run.Node-1], run)
		}
	}
}

func roleTrials(t *testing.T) int {
	n := 3
	if s := os.Getenv("LANLEADER_ROLE_TRIALS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("LANLEADER_ROLE_TRIALS=%q: want a count of trials, at least 1", s)
		}
	}
	return n
}

func TestRoleWitness(t *testing.T) {
	RequireNFT(t)
	trials := roleTrials(t)
	var witness, candidates []time.Duration
	t.Run("two candidates and a witness", func(t *testing.T) {
		r := startRoleLAN(t, []string{"candidate", "candidate", "witness"})
		waitFor(t, "host-2 leads, the largest candidate (the witness, host-3, is larger)", startBound, func() (bool, string) {
			return r.obs.Agree(r.obs.Start, 2, r.All()...)
		})
		r.waitJobOn(t, "host-2's job runs", 2, time.Time{}, startBound)
		r.checkRoles(t)
		for k := range trials {
			r.crashWitness(t, 2)
			leader, _ := r.leader(t, r.All())
			d := r.crashLeader(t, leader)
			t.Logf("trial %d: the witness's crash changed nothing; host-%d's crash: the other candidate led after %v", k+1, leader, d.Round(time.Millisecond))
			witness = append(witness, d)
		}
		r.verdict(t)
	})
	t.Run("three candidates", func(t *testing.T) {
		r := startRoleLAN(t, []string{"candidate", "candidate", "candidate"})
		waitFor(t, "host-3 leads", startBound, func() (bool, string) { return r.obs.Agree(r.obs.Start, 3, r.All()...) })
		r.waitJobOn(t, "host-3's job runs", 3, time.Time{}, startBound)
		for k := range trials {
			leader, _ := r.leader(t, r.All())
			d := r.crashLeader(t, leader)
			t.Logf("trial %d: host-%d's crash: the next led after %v", k+1, leader, d.Round(time.Millisecond))
			candidates = append(candidates, d)
		}
		r.verdict(t)
	})
	if len(witness) > 0 && len(candidates) > 0 {
		t.Logf("failover after a leader's SIGKILL (all survivors' logs name the new leader), %d trials each: 2 candidates + witness: %s; 3 candidates: %s",
			trials, orderStats(witness), orderStats(candidates))
	}
}

// checkRoles: /status shows each host's role, and each member's.
func (r *roleLAN) checkRoles(t *testing.T) {
	t.Helper()
	waitFor(t, "every host shows the roles", startBound, func() (bool, string) {
		for i := range r.roles {
			st, _, err := r.obs.Status(i)
			if err != nil || st.Role != r.roles[i] {
				return false, fmt.Sprintf("host-%d: role %q (%v), want %q", i+1, st.Role, err, r.roles[i])
			}
			for _, m := range st.Members {
				if m.NodeID == 0 || int(m.NodeID) > len(r.roles) {
					return false, fmt.Sprintf("host-%d sees %s with node_id %d", i+1, m.Name, m.NodeID)
				}
				if want := r.roles[m.NodeID-1]; m.Role != want {
					return false, fmt.Sprintf("host-%d sees %s as %q, want %q", i+1, m.Name, m.Role, want)
				}
			}
			if len(st.Members) != len(r.roles)-1 {
				return false, fmt.Sprintf("host-%d sees %d members", i+1, len(st.Members))
			}
		}
		return true, ""
	})
}

// orderStats is the median, nearest-rank 90th percentile and largest of
// ds (not empty).
func orderStats(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	p90 := s[min(max((90*len(s)+99)/100, 1), len(s))-1]
	return fmt.Sprintf("median %v, p90 %v, max %v", median(s).Round(time.Millisecond), p90.Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond))
}
