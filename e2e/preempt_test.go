//go:build linux

package e2e

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// A preferred host that comes back, as systemd's Restart= brings a
// crashed agent back: the job it displaces takes seconds to stop
// (fencejob -stop-delay), and the returning host's job must not start
// before that one has ended. Each trial: SIGKILL of the preferred host's
// agent, the next candidate leads and runs the job, 5 s later the agent
// is started again, preempts, and its job runs; the gap between the
// displaced run's last stamp and the returning host's first is measured
// from the jobs' own stamps, and a negative gap (two jobs at once) fails.
//
//   - quorum mode, two candidates and a witness (--quorum 3): the deposed
//     leader's vote must not complete the returning host's majority while
//     its lease, and so its job, may still run;
//   - default mode, three candidates found by multicast discovery (no
//     --join): the returning host must not lead before its membership has
//     joined, so that it waits for the displaced job to stop.
//
// In default mode the crash itself leaves the dead agent's job to its
// guard (SIGTERM, then SIGKILL after --job-grace) while the next leader
// starts at once: that overlap is default mode's documented limit, and
// is logged, not asserted, unless --takeover-wait (longer than the job's
// shutdown) trades failover time for it: then it is asserted too.
// LANLEADER_PREEMPT_TRIALS sets the trials (default 1, 3 with
// LANLEADER_E2E_LONG=1).

const (
	slowStop        = 3 * time.Second // fencejob -stop-delay: the displaced job's shutdown
	slowStopGrace   = 10 * time.Second
	preemptComeback = 5 * time.Second // from the SIGKILL to the agent's restart
)

type preemptLAN struct {
	*quorumLAN
	roles []string
	extra []string // more flags of every agent
}

func startPreemptLAN(t *testing.T, roles []string, quorum int, extra ...string) *preemptLAN {
	t.Helper()
	n := NewNet(t, len(roles))
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	p := &preemptLAN{quorumLAN: &quorumLAN{Net: n, t: t, dir: dir, job: buildFenceJob(t, dir), quorum: quorum}, roles: roles, extra: extra}
	p.sink = NewFenceSink(t, dir)
	p.stamps = &stampFile{path: dir + "/stamps"}
	p.obs = n.Observe(t, observeEvery)
	for i := range roles {
		p.procs = append(p.procs, p.start(i))
	}
	return p
}

func (p *preemptLAN) start(i int) *Proc {
	args := []string{"run", "--bind", p.Addr(i), "--name", hostName(i), "--node-id", strconv.Itoa(i + 1),
		"--log-format", "json", "--job-grace", slowStopGrace.String(), "--role", p.roles[i]}
	if p.quorum > 0 {
		args = append(args, "--quorum", strconv.Itoa(p.quorum), "--state-file", fmt.Sprintf("%s/state-%d", p.dir, i+1),
			"--lease", quorumLease.String(), "--lease-margin", quorumMarg.String())
	}
	args = append(args, p.extra...)
	args = append(args, "--", p.job, "-stop-delay", slowStop.String(), p.stamps.path, p.sink.Path)
	return p.Start(p.t, i, args...)
}

// jobOn waits until node's job runs in a run started at or after from
// (another node's may still be stopping) and returns that run.
func (p *preemptLAN) jobOn(t *testing.T, what string, node int, from time.Time, bound time.Duration) JobRun {
	t.Helper()
	var got JobRun
	waitFor(t, what, bound, func() (bool, string) {
		r, ok := running(p.stamps.Runs(), node)
		if !ok || r.Start.Before(from) {
			return false, fmt.Sprintf("node %d's job does not run in a run started after %s", node, from.Format("15:04:05.000"))
		}
		got = r
		return true, ""
	})
	return got
}

// trial crashes the preferred host (node preferred), waits for next to
// lead and run the job, brings the preferred host back after
// preemptComeback, waits until it leads and runs the job, and returns
// the gaps from the end of the displaced runs to the start of the next
// one at the crash and at the return (negative: two jobs at once).
func (p *preemptLAN) trial(t *testing.T, preferred, next int) (crash, back time.Duration) {
	t.Helper()
	p.jobOn(t, fmt.Sprintf("host-%d's job runs", preferred), preferred, time.Time{}, quorumLiveness)
	t0 := p.kill(t, preferred-1)
	var live []int
	for i := range p.roles {
		if i != preferred-1 {
			live = append(live, i)
		}
	}
	waitFor(t, fmt.Sprintf("host-%d leads after host-%d's crash", next, preferred), quorumLiveness, func() (bool, string) {
		return p.obs.Agree(t0, uint64(next), live...)
	})
	p.jobOn(t, fmt.Sprintf("host-%d's job runs", next), next, t0, quorumLiveness+slowStopGrace)
	restartAt := t0.Add(preemptComeback)
	time.Sleep(time.Until(restartAt)) // the outage the scenario is about, not a wait for a condition
	p.procs[preferred-1] = p.start(preferred - 1)
	waitFor(t, fmt.Sprintf("host-%d back and leading", preferred), quorumHeal, func() (bool, string) {
		return p.obs.Agree(restartAt, uint64(preferred), p.All()...)
	})
	p.jobOn(t, fmt.Sprintf("host-%d's job runs again", preferred), preferred, restartAt, quorumLiveness+slowStopGrace)
	// The displaced job must have ended before the returning one starts:
	// wait for its last stamp, then measure.
	waitFor(t, fmt.Sprintf("host-%d's job stopped", next), slowStopGrace+quorumLiveness, func() (bool, string) {
		if r, ok := running(p.stamps.Runs(), next); ok {
			return false, fmt.Sprintf("still running: %v", r)
		}
		return true, ""
	})
	runs := p.stamps.Runs()
	crash, _ = smallestGap(runs, t0, restartAt)
	back, ok := smallestGap(runs, restartAt, time.Now())
	if !ok {
		t.Fatalf("no run started after host-%d's return: %v", preferred, runs)
	}
	return crash, back
}

func preemptTrials(t *testing.T) int {
	n := longOr(1, 3)
	if s := os.Getenv("LANLEADER_PREEMPT_TRIALS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("LANLEADER_PREEMPT_TRIALS=%q: want a count of trials, at least 1", s)
		}
	}
	return n
}

func TestPreferredReturns(t *testing.T) {
	trials := preemptTrials(t)
	t.Run("quorum, two candidates and a witness", func(t *testing.T) {
		p := startPreemptLAN(t, []string{"candidate", "candidate", "witness"}, 3)
		waitFor(t, "host-2 leads", startBound, func() (bool, string) { return p.obs.Agree(p.obs.Start, 2, p.All()...) })
		for k := range trials {
			crash, back := p.trial(t, 2, 1)
			t.Logf("trial %d: gap at the crash %v, at the return %v (negative: two jobs at once)", k+1, crash.Round(time.Millisecond), back.Round(time.Millisecond))
			if crash < 0 || back < 0 {
				t.Errorf("trial %d: two jobs at once: gap at the crash %v, at the return %v", k+1, crash, back)
			}
		}
		for _, v := range fenceVerdict(p.stamps.Stamps(), p.sink.Records()) {
			t.Error(v)
		}
	})
	t.Run("default mode, multicast discovery", func(t *testing.T) {
		p := startPreemptLAN(t, []string{"candidate", "candidate", "candidate"}, 0)
		waitFor(t, "host-3 leads", startBound, func() (bool, string) { return p.obs.Agree(p.obs.Start, 3, p.All()...) })
		for k := range trials {
			crash, back := p.trial(t, 3, 2)
			t.Logf("trial %d: gap at the crash %v (default mode: the guard's SIGTERM, the job's own %v shutdown), at the return %v",
				k+1, crash.Round(time.Millisecond), slowStop, back.Round(time.Millisecond))
			if back < 0 {
				t.Errorf("trial %d: the returning host's job started %v before the displaced one ended", k+1, -back)
			}
		}
	})
	t.Run("default mode, --takeover-wait", func(t *testing.T) {
		if !longE2E() {
			t.Skip("LANLEADER_E2E_LONG=1 runs it (agent's TestTakeoverWait checks the wait itself in CI)")
		}
		wait := slowStop + time.Second
		p := startPreemptLAN(t, []string{"candidate", "candidate", "candidate"}, 0, "--takeover-wait", wait.String())
		waitFor(t, "host-3 leads", startBound, func() (bool, string) { return p.obs.Agree(p.obs.Start, 3, p.All()...) })
		crash, back := p.trial(t, 3, 2)
		t.Logf("--takeover-wait %v: gap at the crash %v, at the return %v", wait, crash.Round(time.Millisecond), back.Round(time.Millisecond))
		if crash < 0 || back < 0 {
			t.Errorf("two jobs at once with --takeover-wait %v: gap at the crash %v, at the return %v", wait, crash, back)
		}
	})
}
