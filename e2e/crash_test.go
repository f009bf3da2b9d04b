//go:build linux

package e2e

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// TestCrashThreeHosts: three hosts over multicast, found by beacons; the
// leader's process is killed (SIGKILL: no RESIGN, no leave); the next
// largest node leads with a later term on both survivors, and the others
// see the dead host as failed, not left. Then it comes back and, with
// preemption, leads again.
func TestCrashThreeHosts(t *testing.T) {
	c := startCluster(t, 3)
	all := func(leader uint64, hosts ...int) func() (bool, string) {
		return func() (bool, string) {
			sts, err := c.statuses(hosts...)
			if err != nil {
				return false, err.Error()
			}
			for _, s := range sts {
				alive := 0
				for _, m := range s.Members {
					if m.Alive {
						alive++
					}
				}
				if s.LeaderID != leader || alive != len(hosts)-1 || s.Term != sts[0].Term {
					return false, fmt.Sprintf("%s: state %s term %d leader %d, %d alive members", s.Name, s.State, s.Term, s.LeaderID, alive)
				}
			}
			return true, ""
		}
	}
	waitFor(t, "three hosts agree that node 3 leads", 15*time.Second, all(3, 0, 1, 2))
	before, err := c.status(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.procs[2].Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.procs[2].Wait(5 * time.Second) // reports the kill as an error
	if !c.procs[2].Exited() {
		t.Fatal("host-3 survived SIGKILL")
	}
	took := waitFor(t, "host-2 leads after host-3 is killed", 5*time.Second, func() (bool, string) {
		sts, err := c.statuses(0, 1)
		if err != nil {
			return false, err.Error()
		}
		for _, s := range sts {
			if s.LeaderID != 2 || s.Term <= before.Term || s.Term != sts[0].Term {
				return false, fmt.Sprintf("%s: state %s term %d leader %d", s.Name, s.State, s.Term, s.LeaderID)
			}
		}
		return true, ""
	})
	t.Logf("host-2 leads %v after host-3 was killed (polled every %v)", took.Round(time.Millisecond), pollEvery)
	waitFor(t, "the survivors see host-3 failed", 20*time.Second, func() (bool, string) {
		sts, err := c.statuses(0, 1)
		if err != nil {
			return false, err.Error()
		}
		for _, s := range sts {
			if m, ok := s.Member("host-3"); !ok || m.Alive || m.Status != "dead" {
				return false, fmt.Sprintf("%s sees host-3 as %+v", s.Name, m)
			}
		}
		return true, ""
	})
	// host-3 returns on the same address: beacons bring it back, and it
	// takes over (preemption is the default).
	c.procs[2] = c.Start(t, 2, "run", "--bind", c.Addr(2), "--name", hostName(2), "--node-id", "3")
	waitFor(t, "host-3 is back and leads", 20*time.Second, all(3, 0, 1, 2))
}
