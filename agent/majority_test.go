package agent

import (
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/internal/meta"
	"github.com/lanleader/lanleader/agent/part/majority"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/waitfor"
)

// majorityLines returns the log's lines about the majority, each as its
// msg.
func majorityLines(log string) []string {
	var got []string
	for _, l := range strings.Split(log, "\n") {
		if i := strings.Index(l, `msg="`); i >= 0 && strings.Contains(l, "majority of") {
			msg := l[i+len(`msg="`):]
			got = append(got, msg[:strings.Index(msg, `"`)])
		}
	}
	return got
}

// TestMajorityWaitLogged: a node of --quorum 3 that hears only itself
// says so once its startup wait is over, not again at every heartbeat nor
// every housekeeping round, again when the count of voters it hears
// changes or a minute passes, and once when a majority is heard. An
// observer does not count; a witness does.
func TestMajorityWaitLogged(t *testing.T) {
	var buf logs
	cfg := testConfig("node-1", 1)
	cfg.Quorum = 3
	cfg.DeriveTimeouts()
	cfg.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	set := func(name string, id uint64, role election.Role, status string) {
		a.loop.members[name] = &member{name: name, status: status, metaOK: true,
			meta: meta.Meta{NodeID: id, Priority: 100, Role: role, Election: netip.MustParseAddrPort(fmt.Sprintf("198.18.0.%d:7947", id))}}
	}
	expect := func(step string, want ...string) {
		t.Helper()
		got := majorityLines(buf.String())
		buf.mu.Lock()
		buf.buf.Reset()
		buf.mu.Unlock()
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s: lines %q, want %q", step, got, want)
		}
	}
	wait := a.machine.Config().StartupWait
	a.noteMajority(wait / 2)
	expect("within the startup wait")

	now := wait
	set("node-9", 9, election.RoleObserver, "alive")
	a.noteMajority(now)
	expect("alone but for an observer", "waiting for a majority of 3 (2 votes): 1 heard")
	for range 100 { // heartbeats and housekeeping rounds: under a minute
		now += cfg.Heartbeat
		a.noteMajority(now)
	}
	expect("the same count for 100 heartbeats")
	now += majority.LogEvery
	a.noteMajority(now)
	expect("a minute later", "waiting for a majority of 3 (2 votes): 1 heard")

	set("node-3", 3, election.RoleWitness, "alive")
	now += time.Second
	a.noteMajority(now)
	a.noteMajority(now + time.Second)
	expect("a witness heard", "a majority of 3 (2 votes) is heard: 2; a leader can be elected")

	set("node-3", 3, election.RoleWitness, "dead")
	now += 2 * time.Second
	a.noteMajority(now)
	expect("the witness gone", "waiting for a majority of 3 (2 votes): 1 heard")
}

// TestMajorityWaitAlone: a lone agent of --quorum 3 logs that it waits
// for a majority, and not again at each heartbeat while nothing changes.
func TestMajorityWaitAlone(t *testing.T) {
	set := newAgentSet(t)
	c := testConfig("node-1", 1)
	c.Quorum = 3
	c.DeriveTimeouts()
	set.start(0, c)
	const want = "waiting for a majority of 3 (2 votes): 1 heard"
	waitfor.Until(t, "the wait for a majority logged", 10*time.Second, 10*time.Millisecond, func() (bool, string) {
		got := majorityLines(set.logs.String())
		return len(got) > 0, fmt.Sprintf("lines %q", got)
	})
	// Twenty heartbeats and a few housekeeping rounds: one line still.
	waitfor.Holds(t, "one line while the count is the same", 20*c.Heartbeat+2*housekeepEvery, 10*time.Millisecond, func() (bool, string) {
		got := majorityLines(set.logs.String())
		return len(got) == 1 && got[0] == want, fmt.Sprintf("lines %q, want one %q", got, want)
	})
}
