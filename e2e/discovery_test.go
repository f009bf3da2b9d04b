//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lanleader/lanleader/internal/waitfor"
	"github.com/lanleader/lanleader/wire"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// cluster is a Net of hosts each running `lanleader run` with only --bind,
// --name host-<i+1> and --node-id <i+1>: no --join, so they must find each
// other by multicast beacons.
type cluster struct {
	*Net
	t     *testing.T
	procs []*Proc

	mu   sync.Mutex
	last []string // the last `lanleader status --json` output (or error) of each host
}

func startCluster(t *testing.T, hosts int) *cluster {
	n := NewNet(t, hosts)
	c := &cluster{Net: n, t: t, last: make([]string, hosts)}
	// Registered before the processes' cleanups, so it runs after them;
	// the Net's cleanup, which shows the logs, runs after this one.
	t.Cleanup(func() {
		if t.Failed() {
			c.mu.Lock()
			defer c.mu.Unlock()
			for i, s := range c.last {
				t.Logf("last `lanleader status --json` of host-%d:\n%s", i+1, s)
			}
		}
	})
	for i := range hosts {
		c.procs = append(c.procs, n.Start(t, i, "run",
			"--bind", n.Addr(i), "--name", hostName(i), "--node-id", strconv.Itoa(i+1)))
	}
	return c
}

func hostName(i int) string { return fmt.Sprintf("host-%d", i+1) }

// status runs `lanleader status --json` in host i and decodes it.
func (c *cluster) status(i int) (Status, error) {
	out, err := c.Exec(i, "lanleader", "status", "--json")
	c.mu.Lock()
	if err != nil {
		c.last[i] = "error: " + err.Error()
	} else {
		c.last[i] = out
	}
	c.mu.Unlock()
	var s Status
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		return s, fmt.Errorf("host-%d: bad JSON: %v", i+1, err)
	}
	return s, nil
}

// statuses is the status of every host given, in that order.
func (c *cluster) statuses(hosts ...int) ([]Status, error) {
	out := make([]Status, len(hosts))
	for k, i := range hosts {
		s, err := c.status(i)
		if err != nil {
			return nil, err
		}
		out[k] = s
	}
	return out, nil
}

const pollEvery = 50 * time.Millisecond

// waitFor polls cond every pollEvery until it holds, at most timeout, and
// returns the time it took; it fails the test with cond's last reason
// when it does not hold in time.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() (bool, string)) time.Duration {
	t.Helper()
	return waitfor.Until(t, what, timeout, pollEvery, cond)
}

// converged says whether hosts a and b see each other alive and both say
// that leader leads.
func (c *cluster) converged(a, b int, leader uint64) (bool, string) {
	sts, err := c.statuses(a, b)
	if err != nil {
		return false, err.Error()
	}
	for k, s := range sts {
		other := hostName([]int{b, a}[k])
		m, ok := s.Member(other)
		switch {
		case !ok:
			return false, fmt.Sprintf("%s does not know %s (members %+v)", s.Name, other, s.Members)
		case !m.Alive:
			return false, fmt.Sprintf("%s sees %s %s", s.Name, other, m.Status)
		case s.LeaderID != leader:
			return false, fmt.Sprintf("%s: state %s, term %d, leader_id %d, want leader_id %d", s.Name, s.State, s.Term, s.LeaderID, leader)
		}
	}
	return true, ""
}

// stop sends SIGTERM to host i's agent and checks it exits 0 within
// timeout.
func (c *cluster) stop(i int, timeout time.Duration, start time.Time) {
	t := c.t
	t.Helper()
	code, err := c.procs[i].Wait(timeout - time.Since(start))
	if err != nil {
		t.Fatalf("%s after SIGTERM: %v", hostName(i), err)
	}
	if code != 0 {
		t.Fatalf("%s after SIGTERM: exit status %d, want 0", hostName(i), code)
	}
	t.Logf("%s exited 0, %v after SIGTERM", hostName(i), time.Since(start).Round(time.Millisecond))
}

// TestDiscoveryTwoHosts: two agents on two hosts, nothing configured but
// their address, name and node_id, find each other by multicast beacons,
// elect the larger node_id, and fail over when the leader stops.
func TestDiscoveryTwoHosts(t *testing.T) {
	c := startCluster(t, 2)
	took := waitFor(t, "host-1 and host-2 find each other and agree that node 2 leads", 15*time.Second,
		func() (bool, string) { return c.converged(0, 1, 2) })
	t.Logf("discovered and converged %v after the start", took.Round(time.Millisecond))

	sts, err := c.statuses(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	s1, s2 := sts[0], sts[1]
	for i, s := range sts {
		if s.Name != hostName(i) || s.NodeID != uint64(i+1) {
			t.Errorf("host %d: name %q node_id %d, want %q %d", i+1, s.Name, s.NodeID, hostName(i), i+1)
		}
		if s.Cluster != "lanleader" || s.Transport != "multicast" {
			t.Errorf("%s: cluster %q transport %q, want lanleader multicast", s.Name, s.Cluster, s.Transport)
		}
		if want := c.Addr(i) + ":7946"; s.GossipAddr != want {
			t.Errorf("%s: gossip_addr %q, want %q", s.Name, s.GossipAddr, want)
		}
		if want := c.Addr(i) + ":7947"; s.ElectionAddr != want {
			t.Errorf("%s: election_addr %q, want %q", s.Name, s.ElectionAddr, want)
		}
		if s.LeaderID != 2 || s.LeaderName != "host-2" {
			t.Errorf("%s: leader_id %d leader_name %q, want 2 \"host-2\"", s.Name, s.LeaderID, s.LeaderName)
		}
		other := 1 - i
		m, ok := s.Member(hostName(other))
		want := Member{Name: hostName(other), NodeID: uint64(other + 1), Addr: c.Addr(other) + ":7946", Alive: true, Status: "alive", Role: "candidate"}
		if !ok || m != want {
			t.Errorf("%s: member %s is %+v, want %+v", s.Name, hostName(other), m, want)
		}
		if len(s.Members) != 1 {
			t.Errorf("%s: %d members, want 1 (the other host): %+v", s.Name, len(s.Members), s.Members)
		}
	}
	if s1.State != "follower" || s2.State != "leader" {
		t.Errorf("states host-1 %q host-2 %q, want follower leader", s1.State, s2.State)
	}
	if s1.Term != s2.Term || s1.Term == 0 {
		t.Errorf("terms host-1 %d host-2 %d, want equal and > 0", s1.Term, s2.Term)
	}
	if t.Failed() {
		t.FailNow()
	}

	// The leader stops: it resigns, and host-1 takes over at once.
	start := time.Now()
	if err := c.procs[1].Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var s1b Status
	took = waitFor(t, "host-1 leads after host-2's SIGTERM", 5*time.Second, func() (bool, string) {
		s, err := c.status(0)
		if err != nil {
			return false, err.Error()
		}
		s1b = s
		return s.State == "leader" && s.LeaderID == 1, fmt.Sprintf("state %s, term %d, leader_id %d", s.State, s.Term, s.LeaderID)
	})
	t.Logf("host-1 leads (term %d) %v after host-2's SIGTERM", s1b.Term, took.Round(time.Millisecond))
	if s1b.Term <= s1.Term {
		t.Errorf("host-1's term %d after the failover, want > %d", s1b.Term, s1.Term)
	}
	if s1b.LeaderName != "host-1" {
		t.Errorf("host-1's leader_name %q, want host-1", s1b.LeaderName)
	}
	c.stop(1, 10*time.Second, start)
	// host-2 left the membership gracefully: host-1 shows it "left" (a
	// leaving agent says so in its metadata before it leaves).
	var gone Member
	waitFor(t, "host-1 sees host-2 gone", 5*time.Second, func() (bool, string) {
		s, err := c.status(0)
		if err != nil {
			return false, err.Error()
		}
		m, ok := s.Member("host-2")
		gone = m
		return ok && !m.Alive && m.Status == "left", fmt.Sprintf("host-2 is %+v (known: %v)", m, ok)
	})
	t.Logf("host-1 sees host-2 %s", gone.Status)

	start = time.Now()
	if err := c.procs[0].Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	c.stop(0, 10*time.Second, start)
}

// metric reads the value of the sample whose line starts with name (a
// metric name with its labels) from the /metrics of host i.
func (c *cluster) metric(i int, name string) (float64, error) {
	body, err := c.Get(i, "http://127.0.0.1:9947/metrics")
	if err != nil {
		return 0, err
	}
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`)
	m := re.FindStringSubmatch(body)
	if m == nil {
		return 0, fmt.Errorf("host-%d: no %s in /metrics", i+1, name)
	}
	return strconv.ParseFloat(m[1], 64)
}

// TestMulticastTTL: an election message that crossed a router (IP TTL
// below 255), by unicast or multicast, and one of another cluster, are
// dropped and counted, and change nothing: they claim node 99, priority
// 65535, term 1000, which would otherwise take the leadership.
func TestMulticastTTL(t *testing.T) {
	c := startCluster(t, 2)
	took := waitFor(t, "host-1 and host-2 find each other and agree that node 2 leads", 15*time.Second,
		func() (bool, string) { return c.converged(0, 1, 2) })
	t.Logf("discovered and converged %v after the start", took.Round(time.Millisecond))
	before, err := c.status(1)
	if err != nil {
		t.Fatal(err)
	}

	forge := func(cluster string) []byte {
		m := wire.Message{Type: wire.TypeCoordinator, Cluster: wire.ClusterID(cluster), From: 99, Priority: 65535, Term: 1000}
		b, err := m.Append(nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	const (
		ttlDrops     = `lanleader_packets_dropped_total{reason="ttl"}`
		clusterDrops = `lanleader_packets_dropped_total{reason="cluster"}`
	)
	for _, name := range []string{ttlDrops, clusterDrops} {
		if v, err := c.metric(1, name); err != nil || v != 0 {
			t.Fatalf("host-2 before any forged packet: %s %v (%v), want 0", name, v, err)
		}
	}
	steps := []struct {
		what    string
		dst     string
		ttl     int
		cluster string
		metric  string
		want    float64
	}{
		{"unicast, TTL 1", c.Addr(1) + ":7947", 1, "lanleader", ttlDrops, 1},
		{"multicast to the group, TTL 1", "239.255.76.76:7947", 1, "lanleader", ttlDrops, 2},
		{"unicast, TTL 255, cluster other", c.Addr(1) + ":7947", 255, "other", clusterDrops, 1},
	}
	for _, st := range steps {
		if err := c.SendUDP(0, st.dst, st.ttl, forge(st.cluster)); err != nil {
			t.Fatalf("%s: %v", st.what, err)
		}
		waitFor(t, fmt.Sprintf("%s: host-2 counts %s %v", st.what, st.metric, st.want), 5*time.Second, func() (bool, string) {
			v, err := c.metric(1, st.metric)
			if err != nil {
				return false, err.Error()
			}
			return v == st.want, fmt.Sprintf("%s %v", st.metric, v)
		})
		t.Logf("%s to %s: dropped and counted by host-2", st.what, st.dst)
	}
	// Nothing else was dropped for these reasons (a packet counted late
	// would show here).
	waitfor.Holds(t, "host-2's drop counters stay", 200*time.Millisecond, 20*time.Millisecond, func() (bool, string) {
		for _, w := range []struct {
			name string
			want float64
		}{{ttlDrops, 2}, {clusterDrops, 1}} {
			if v, err := c.metric(1, w.name); err != nil || v != w.want {
				return false, fmt.Sprintf("%s %v (%v), want %v", w.name, v, err, w.want)
			}
		}
		return true, ""
	})

	sts, err := c.statuses(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sts {
		if s.LeaderID != 2 || s.Term != before.Term {
			t.Errorf("%s after the forged packets: state %s, leader_id %d, term %d; want leader_id 2, term %d",
				s.Name, s.State, s.LeaderID, s.Term, before.Term)
		}
		for _, m := range s.Members {
			if m.NodeID == 99 {
				t.Errorf("%s: member %+v from a forged packet", s.Name, m)
			}
		}
	}
	if sts[1].State != "leader" {
		t.Errorf("host-2: state %q, want leader", sts[1].State)
	}
	if v, err := c.metric(0, ttlDrops); err != nil || v != 0 {
		t.Errorf("host-1: %s %v (%v), want 0 (the sender does not loop its multicast back)", ttlDrops, v, err)
	}

	for i := range 2 {
		start := time.Now()
		if err := c.procs[i].Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		c.stop(i, 10*time.Second, start)
	}
}
