//go:build linux

package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A pulled cable (the election interface without carrier) must never run
// the job on two hosts. 3 hosts, host-3 leading, the fencejob as the job
// (stamps of every run on the shared wall clock):
//
//   - a follower's cable (host-1's) pulled for 1 s, 10 times: host-1
//     takes no part in elections while its carrier is lost; it never
//     starts the job, no two runs overlap, and host-3's job runs on;
//   - the leader's cable pulled for 1 s, 3 times: host-3's job stops at
//     once, before the others can have elected (suspect-after), and no
//     two runs overlap while host-2 leads and when host-3 takes over
//     again (preemption, after host-2's job has stopped).
//
// Default mode, and --quorum 3. TestPulledCableSlowJob measures the same
// leader's pull with a job that takes 3 s to stop.

const (
	cableHosts = 3
	cablePull  = time.Second // how long a cable stays out
	// cableStop bounds the stop of the old leader's job after its pull:
	// before the others can elect. They suspect it --suspect-after (300
	// ms, the default) after its last heartbeat, which may have gone a
	// heartbeat (100 ms) before the pull.
	cableStop = 300*time.Millisecond - 100*time.Millisecond
	// cableBack: from the cable plugged in until the host is out of
	// fault and every host agrees on the leader again: the host listens
	// for the leader (suspect-after), and, the leader's, waits out its
	// resign hold-off (1 s from the pull) and the takeover's wait for
	// the other job's stop. A liveness bound, generous.
	cableBack = 15 * time.Second
)

// cableLAN is the cluster of the pulled-cable tests.
type cableLAN struct {
	*Net
	t         *testing.T
	obs       *Observer
	sink      *FenceSink
	stamps    *stampFile
	job       string
	dir       string
	quorum    int
	stopDelay time.Duration // the job's -stop-delay
}

func startCableLAN(t *testing.T, quorum int, stopDelay time.Duration) *cableLAN {
	t.Helper()
	n := NewNet(t, cableHosts)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	c := &cableLAN{Net: n, t: t, dir: dir, job: buildFenceJob(t, dir), quorum: quorum, stopDelay: stopDelay}
	c.sink = NewFenceSink(t, dir)
	c.stamps = &stampFile{path: dir + "/stamps"}
	c.obs = n.Observe(t, observeEvery)
	t.Cleanup(func() {
		if t.Failed() {
			var b strings.Builder
			for _, r := range c.stamps.Runs() {
				fmt.Fprintf(&b, "%v\n", r)
			}
			t.Logf("job runs:\n%s", b.String())
		}
	})
	for i := range cableHosts {
		args := []string{"run", "--bind", c.Addr(i), "--name", hostName(i), "--node-id", strconv.Itoa(i + 1),
			"--log-format", "json", "--job-grace", "5s"}
		if quorum > 0 {
			args = append(args, "--quorum", strconv.Itoa(quorum), "--state-file", fmt.Sprintf("%s/state-%d", dir, i+1))
		}
		args = append(args, "--", c.job, "-stop-delay", stopDelay.String(), c.stamps.path, c.sink.Path)
		c.Start(t, i, args...)
	}
	waitFor(t, "all agree on host-3, its job running", startBound, func() (bool, string) {
		if ok, why := c.obs.Agree(c.obs.Start, 3, c.All()...); !ok {
			return false, why
		}
		return c.jobOnlyOn(3)
	})
	return c
}

// jobOnlyOn says whether node's job runs and no other node's does.
func (c *cableLAN) jobOnlyOn(node int) (bool, string) {
	runs := c.stamps.Runs()
	if _, ok := running(runs, node); !ok {
		return false, fmt.Sprintf("node %d's job does not run", node)
	}
	for h := range cableHosts {
		if r, ok := running(runs, h+1); ok && h+1 != node {
			return false, fmt.Sprintf("node %d's job runs too: %v", h+1, r)
		}
	}
	return true, ""
}

// pull pulls host i's cable for cablePull and plugs it back in; it
// returns when it was pulled and plugged back. The first pull checks that
// the host's eth0 lost its carrier and stayed up, as with a real cable.
func (c *cableLAN) pull(t *testing.T, i int, check bool) (out, in time.Time) {
	t.Helper()
	out = time.Now()
	c.PullCable(t, i, true)
	plugged := false
	defer func() {
		if !plugged {
			c.PullCable(t, i, false)
		}
	}()
	if check {
		up, carrier, err := c.Carrier(i)
		if err != nil || !up || carrier {
			t.Fatalf("host-%d's eth0 with its cable pulled: up %v, carrier %v (%v); want up without carrier", i+1, up, carrier, err)
		}
	}
	// The fault's duration, not a wait for a condition.
	time.Sleep(time.Until(out.Add(cablePull)))
	in = time.Now()
	c.PullCable(t, i, false)
	plugged = true
	return out, in
}

// waitBack waits until host i is out of fault and every host agrees on
// leader with its job running alone; it returns how long that took.
func (c *cableLAN) waitBack(t *testing.T, what string, i, leader int, from time.Time) time.Duration {
	t.Helper()
	return waitFor(t, what, cableBack, func() (bool, string) {
		st, at, err := c.obs.Status(i)
		switch {
		case err != nil:
			return false, err.Error()
		case at.Before(from):
			return false, fmt.Sprintf("host-%d not polled since", i+1)
		case len(st.Fault) > 0:
			return false, fmt.Sprintf("host-%d in fault: %q", i+1, st.Fault)
		}
		if ok, why := c.obs.Agree(from, uint64(leader), c.All()...); !ok {
			return false, why
		}
		return c.jobOnlyOn(leader)
	})
}

// runsFrom is the runs of the job started at or after from.
func runsFrom(runs []JobRun, from time.Time) []JobRun {
	var out []JobRun
	for _, r := range runs {
		if !r.Start.Before(from) {
			out = append(out, r)
		}
	}
	return out
}

// overlapIn is the total time within [from, to) that two runs of the
// job ran at once.
func overlapIn(runs []JobRun, from, to time.Time) time.Duration {
	var sum time.Duration
	for i := range runs {
		for j := i + 1; j < len(runs); j++ {
			a, b := runs[i], runs[j]
			if d := earliest(a.End, b.End, to).Sub(latest(a.Start, b.Start, from)); d > 0 {
				sum += d
			}
		}
	}
	return sum
}

// followerPulls pulls host-1's cable n times; host-1 must never run the
// job, and no two runs overlap.
func (c *cableLAN) followerPulls(t *testing.T, n int) {
	from := time.Now()
	var back []string
	for k := range n {
		_, in := c.pull(t, 0, k == 0)
		took := c.waitBack(t, fmt.Sprintf("pull %d: host-1 back, following host-3", k+1), 0, 3, in)
		back = append(back, ms(took))
	}
	runs := c.stamps.Runs()
	starts := 0
	for _, r := range runsFrom(runs, from) {
		if r.Node == 1 {
			starts++
		}
	}
	ov := overlapIn(runs, from, time.Now())
	t.Logf("follower's cable pulled %d × %v: host-1's job started %d times, two jobs at once %s; host-1 back (out of fault, following) after %s",
		n, cablePull, starts, ms(ov), strings.Join(back, " "))
	if starts != 0 || ov != 0 {
		t.Errorf("host-1 started the job %d times with its cable pulled; two jobs ran at once for %s: %q",
			starts, ms(ov), runOverlaps(runs))
	}
	if rs := runsFrom(runs, from); len(rs) > 0 {
		t.Errorf("runs started while only a follower's cable was pulled: %v", rs)
	}
}

// leaderPulls pulls host-3's cable n times and logs the figures of each
// pull; with strict, the old leader's job must stop before the others
// can elect, and no two runs may overlap.
func (c *cableLAN) leaderPulls(t *testing.T, n int, strict bool) {
	from := time.Now()
	for k := range n {
		out, in := c.pull(t, 2, false)
		took := c.waitBack(t, fmt.Sprintf("pull %d: host-3 leads again", k+1), 2, 3, in)
		runs := c.stamps.Runs()
		// host-3's run at the pull, and the first run of another node
		// after it.
		var old, next JobRun
		var haveOld, haveNext bool
		for _, r := range runs {
			if r.Node == 3 && !r.Start.After(out) && !r.End.Before(out.Add(-jobFresh)) {
				old, haveOld = r, true
			}
			if r.Node != 3 && r.Start.After(out) && !haveNext {
				next, haveNext = r, true
			}
		}
		stop, failover := "not found", "none"
		switch {
		case haveOld && old.Stopped:
			stop = ms(old.End.Sub(out)) + " after the pull"
		case haveOld:
			stop = "not stopped, still running"
		}
		if haveNext {
			failover = fmt.Sprintf("%s (node %d)", ms(next.Start.Sub(out)), next.Node)
		}
		ov := overlapIn(runs, out, time.Now())
		t.Logf("leader's cable pulled %v (pull %d): host-3's job stopped: %s; next job started %s, two jobs at once %s; host-3 leads again %s after the cable is back",
			cablePull, k+1, stop, failover, ms(ov), ms(took))
		if !strict {
			continue
		}
		if !haveOld || !old.Stopped || old.End.Sub(out) >= cableStop {
			t.Errorf("pull %d: host-3's job at the pull %v (found %v): want it stopped within %v, before another host may elect",
				k+1, old, haveOld, cableStop)
		}
	}
	if ov := overlapIn(c.stamps.Runs(), from, time.Now()); strict && ov != 0 {
		t.Errorf("two jobs ran at once for %s: %q", ms(ov), runOverlaps(c.stamps.Runs()))
	}
}

func TestPulledCable(t *testing.T) {
	for _, mode := range []struct {
		name   string
		quorum int
	}{{"default", 0}, {"quorum3", 3}} {
		t.Run(mode.name, func(t *testing.T) {
			c := startCableLAN(t, mode.quorum, 0)
			c.followerPulls(t, longOr(4, 10))
			c.leaderPulls(t, longOr(2, 3), true)
		})
	}
}

// TestPulledCableSlowJob measures the leader's pull with a job that takes
// 3 s to stop after SIGTERM: in default mode the next leader does not
// wait for a leader it lost (it cannot ask it), so the two jobs overlap
// by about the stop time less the failover, the documented limit of
// default mode. Figures only: it asserts that a follower's pull still
// starts no job.
func TestPulledCableSlowJob(t *testing.T) {
	if !longE2E() {
		t.Skip("measures, asserts nothing of its own: LANLEADER_E2E_LONG=1 runs it")
	}
	c := startCableLAN(t, 0, 3*time.Second)
	c.followerPulls(t, 2)
	c.leaderPulls(t, 3, false)
}
