//go:build linux

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// bigEnv turns on the big-cluster scenarios beyond CI's 32 hosts.
const bigEnv = "LANLEADER_E2E_BIG"

// TestBigCluster32: 32 hosts (the size CI runs) start one after another,
// all agree on host-32 after the last has started; host-32's agent is
// killed and the 31 others agree on host-31 with one leader. The test bed
// checks at the end that no host's kernel dropped a UDP send.
func TestBigCluster32(t *testing.T) { bigCluster(t, 32, nil) }

// TestBigCluster64 is TestBigCluster32 on 64 hosts (the neighbour table's
// limits raised), only with LANLEADER_E2E_BIG=1: it loads the machine for
// about a minute.
func TestBigCluster64(t *testing.T) {
	if os.Getenv(bigEnv) != "1" {
		t.Skip("64 hosts: set " + bigEnv + "=1 to run it")
	}
	bigCluster(t, 64, nil)
}

// TestBigCluster128 is TestBigCluster32 on 128 hosts, the size of the
// scale targets, only with LANLEADER_E2E_BIG=1.
func TestBigCluster128(t *testing.T) {
	if os.Getenv(bigEnv) != "1" {
		t.Skip("128 hosts: set " + bigEnv + "=1 to run it")
	}
	bigCluster(t, 128, nil)
}

// TestBigQuorum32 is TestBigCluster32 in quorum mode (--quorum 32: a
// leader needs 17 acknowledgements, and a crashed leader's successor
// waits for the guards of its followers, a lease and its margin after
// their last acknowledgement).
func TestBigQuorum32(t *testing.T) { bigQuorum(t, 32) }

// TestBigQuorum64 is TestBigQuorum32 on 64 hosts, only with
// LANLEADER_E2E_BIG=1.
func TestBigQuorum64(t *testing.T) {
	if os.Getenv(bigEnv) != "1" {
		t.Skip("64 hosts: set " + bigEnv + "=1 to run it")
	}
	bigQuorum(t, 64)
}

// TestBigQuorum128 is TestBigQuorum32 on 128 hosts (--quorum 128, 65
// acknowledgements), only with LANLEADER_E2E_BIG=1.
func TestBigQuorum128(t *testing.T) {
	if os.Getenv(bigEnv) != "1" {
		t.Skip("128 hosts: set " + bigEnv + "=1 to run it")
	}
	bigQuorum(t, 128)
}

// bigQuorum is bigCluster with --quorum hosts, each agent keeping its
// votes in a state file.
func bigQuorum(t *testing.T, hosts int) {
	dir := t.TempDir()
	bigCluster(t, hosts, func(i int) []string {
		return []string{"--quorum", strconv.Itoa(hosts), "--state-file", filepath.Join(dir, "state-"+strconv.Itoa(i+1))}
	})
}

// bigAgree bounds the waits for agreement: generous liveness bounds (the
// figures come from bench/lanfailover -scale), for a shared 2-core machine.
const bigAgree = 30 * time.Second

// bigCluster runs the scenario of TestBigCluster32 on hosts hosts; extra,
// when not nil, gives host i's agent more flags.
func bigCluster(t *testing.T, hosts int, extra func(i int) []string) {
	n := NewNet(t, hosts)
	RequireNFT(t)
	n.CountPackets(t)
	// /status polls of every host: slower for big LANs, not to load the
	// agents they watch.
	obs := n.Observe(t, time.Duration(hosts)*5*time.Millisecond)
	procs := make([]*Proc, hosts)
	begin, bound := time.Now(), StartBound(hosts, 0)
	var started time.Time
	for i := range hosts {
		if time.Since(begin) > bound {
			t.Fatalf("starting the agents took more than %v, %d of %d started (%d say they lead): the LAN saturates the machine",
				bound, i, hosts, obs.Leading(n.All()[:i]...))
		}
		// When the last start began: taken after it, on a machine that
		// the starting LAN saturates, the time came late, sometimes
		// after the agreement (a start-up of "0s").
		started = time.Now()
		args := []string{"run", "--bind", n.Addr(i), "--name", hostName(i),
			"--node-id", strconv.Itoa(i + 1), "--log-format", "json"}
		if extra != nil {
			args = append(args, extra(i)...)
		}
		procs[i] = n.Start(t, i, args...)
	}
	top := hosts - 1
	agree := func(after time.Time, leader uint64, hs []int) func() (bool, string) {
		return func() (bool, string) { return obs.Agree(after, leader, hs...) }
	}
	waitFor(t, fmt.Sprintf("%d hosts agree that host-%d leads", hosts, hosts), bigAgree, agree(started, uint64(hosts), n.All()))
	if at, ok := obs.LastChange(n.All()...); ok {
		t.Logf("start-up: all %d agree %v after the last agent's start", hosts, max(at.Sub(started), 0).Round(time.Millisecond))
	} else {
		t.Errorf("the hosts agree, but not every log names a leader")
	}
	before, _, err := obs.Status(0)
	if err != nil {
		t.Fatal(err)
	}
	p0, err := n.Packets()
	if err != nil {
		t.Fatal(err)
	}
	// The time of the kill is taken before it: a crashed agent's notice
	// guard tells the others as it dies, and they may elect before the
	// kill's Wait returns.
	killed := time.Now()
	if err := procs[top].Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := procs[top].Wait(killTimeout); !procs[top].Exited() {
		t.Fatalf("host-%d survived SIGKILL: %v", hosts, err)
	}
	others := n.All()[:top]
	waitFor(t, fmt.Sprintf("the %d others agree that host-%d leads", top, top), bigAgree, func() (bool, string) {
		if ok, why := obs.Agree(killed, uint64(top), others...); !ok {
			return false, why
		}
		if s, _, _ := obs.Status(0); s.Term <= before.Term {
			return false, fmt.Sprintf("host-1: term %d, not later than %d's", s.Term, before.Term)
		}
		return true, ""
	})
	p1, err := n.Packets()
	if err != nil {
		t.Fatal(err)
	}
	if _, all, ok := obs.Settle(killed, uint64(top), others...); ok {
		t.Logf("failover: all %d survivors name host-%d %v after the kill, %d election packets on the bridge",
			top, top, all.Round(time.Millisecond), p1.Sub(p0).Election)
	} else {
		t.Errorf("the survivors agree on host-%d, but not every log says so", top)
	}
	// One leader stays: the agreement holds over a few heartbeat timeouts.
	hold := time.Now().Add(bigHold)
	for time.Now().Before(hold) {
		if ok, why := obs.Agree(killed, uint64(top), others...); !ok {
			t.Fatalf("the agreement on host-%d broke: %s", top, why)
		}
		time.Sleep(pollEvery) // the observation's pace
	}
}

// bigHold is how long the agreement after the failover is watched.
const bigHold = 2 * time.Second
