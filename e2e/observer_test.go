//go:build linux

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// AgreeLogs reads agreement from the agents' logs alone: every host has a
// line since the moment asked about, the latest of each names one leader
// with one term, and that leader alone says it leads. No namespace is
// needed: the logs are files, as the agents write them.
func TestObserverAgreeLogs(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	line := func(ms int, msg, state string, term, leader int) string {
		return fmt.Sprintf(`{"time":%q,"level":"INFO","msg":%q,"state":%q,"term":%d,"leader_id":%d}`+"\n",
			at.Add(time.Duration(ms)*time.Millisecond).Format(time.RFC3339Nano), msg, state, term, leader)
	}
	n := &Net{}
	write := func(host int, lines ...string) {
		p := filepath.Join(dir, fmt.Sprintf("host-%d.log", host+1))
		if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, q := range n.procs {
			if q.Path == p {
				return
			}
		}
		n.procs = append(n.procs, &Proc{Host: host, Path: p, Args: []string{"run"}})
	}
	o := &Observer{n: n, latest: make([]Sample, 3), status: make([]Status, 3),
		last: make(map[string]Sample), offsets: make(map[string]int64), stop: make(chan struct{})}
	hosts := []int{0, 1, 2}
	agree := func(after int, want uint64) string {
		o.readLogs()
		ok, why := o.AgreeLogs(at.Add(time.Duration(after)*time.Millisecond), want, hosts...)
		if ok {
			return "ok"
		}
		return why
	}
	write(0, line(0, "following", "follower", 1, 3))
	write(1, line(0, "following", "follower", 1, 3))
	write(2, line(0, "became leader", "leader", 1, 3))
	if got := agree(0, 3); got != "ok" {
		t.Errorf("host-3 leads term 1, the others follow it: %q", got)
	}
	write(0, line(0, "following", "follower", 1, 3), line(10, "no leader", "follower", 2, 0))
	if got := agree(0, 3); !strings.Contains(got, "host-1: follower, term 2, leader 0") {
		t.Errorf("host-1 lost its leader: %q", got)
	}
	// host-3 is gone; host-1 leads term 2.
	hosts = []int{0, 1}
	write(0, line(0, "following", "follower", 1, 3), line(10, "no leader", "follower", 2, 0), line(20, "became leader", "leader", 2, 1))
	write(1, line(0, "following", "follower", 1, 3), line(25, "following", "follower", 2, 1))
	if got := agree(5, 1); got != "ok" {
		t.Errorf("host-1 leads term 2, host-2 follows it: %q", got)
	}
	if got := agree(22, 1); !strings.Contains(got, "host-1: no line since") {
		t.Errorf("host-1's last line is older than the moment asked about: %q", got)
	}
	write(1, line(0, "following", "follower", 1, 3), line(25, "following", "follower", 2, 1), line(30, "following", "follower", 3, 1))
	if got := agree(5, 1); !strings.Contains(got, "term 3") {
		t.Errorf("the two name leader 1 with terms 2 and 3: %q", got)
	}
}
