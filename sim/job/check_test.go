package job

import (
	"strings"
	"testing"
	"time"
)

// fakeCluster is a cluster of nodes whose state each test sets.
type fakeCluster struct {
	asleep, down, leads map[int]bool
	cut                 bool // no node hears another
}

func (c fakeCluster) Awake(i int) bool        { return !c.asleep[i] }
func (c fakeCluster) LinkDown(i int) bool     { return c.down[i] }
func (c fakeCluster) Connected(i, j int) bool { return !c.cut }
func (c fakeCluster) Leads(i int) bool        { return c.leads[i] }

// Invariant 8 holds a takeover's start to the displaced leader's job when
// both are awake, linked and connected and the displaced one knows, and
// to no other job; invariant 7 to the starting node's link.
func TestCheckStart(t *testing.T) {
	// n2 (index 1) ran a job since 100ms; n3 (index 2) took over from it
	// at 400ms.
	lives := func() Lives {
		var ls Lives
		ls.Start(1, 2, 1, 100*ms)
		ls.Start(0, 1, 1, 50*ms) // a job of another node: not n3's concern
		return ls
	}
	takeover := Driver{From: 2, WaitSince: 400 * ms}
	for _, c := range []struct {
		name   string
		c      fakeCluster
		d      Driver
		quorum bool
		orphan bool
		want   []string
	}{
		{"preemption", fakeCluster{}, takeover, false, false, []string{"invariant 8: n3 took over from n2 and started its job while n2's job (started 100ms) still runs"}},
		{"quorum mode: the leases keep them apart", fakeCluster{}, takeover, true, false, nil},
		{"no takeover from a live leader", fakeCluster{}, Driver{WaitSince: 400 * ms}, false, false, nil},
		{"the displaced leader does not know yet", fakeCluster{leads: map[int]bool{1: true}}, takeover, false, false, nil},
		{"the displaced leader is paused", fakeCluster{asleep: map[int]bool{1: true}}, takeover, false, false, nil},
		{"the displaced leader's link is down", fakeCluster{down: map[int]bool{1: true}}, takeover, false, false, nil},
		{"cut off", fakeCluster{cut: true}, takeover, false, false, nil},
		{"its job was orphaned by a crash", fakeCluster{}, takeover, false, true, nil},
		{"its job started after the takeover", fakeCluster{}, Driver{From: 2, WaitSince: 90 * ms}, false, false, nil},
		{"link down", fakeCluster{down: map[int]bool{2: true}}, Driver{}, true, false, []string{"invariant 7: n3 started its job with its link down"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ls := lives()
			ls.All[0].Orphan = c.orphan
			got := ls.CheckStart(c.c, 2, 3, &c.d, c.quorum)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

// A node whose link went down has its job stopping or gone, and not
// wanted.
func TestCheckLinkDown(t *testing.T) {
	p := Params{Stop: 100 * ms, Grace: time.Second}
	j := Job{P: p}
	j.Set(0, true)
	if v := CheckLinkDown(3, &j); !strings.Contains(v, "invariant 7: n3's job is running") {
		t.Fatalf("a running job: %q", v)
	}
	j.Set(10*ms, false)
	if v := CheckLinkDown(3, &j); v != "" || j.Phase != Stopping {
		t.Fatalf("a stopping job: %q (%v)", v, j.Phase)
	}
	s := Job{P: Params{Start: 50 * ms, Grace: time.Second}}
	s.Set(0, true)
	if v := CheckLinkDown(3, &s); !strings.Contains(v, "is starting") {
		t.Fatalf("a starting job: %q", v)
	}
}

// Invariant 9: a NOTICE's job must be dead at its sending and when a node
// that acted on it starts its own.
func TestCheckNotice(t *testing.T) {
	open := Life{Node: 4, ID: 5, Term: 7, Start: time.Second, Open: true, Orphan: true}
	if v := CheckNotice(open, 0); !strings.Contains(v, "invariant 9: n5's NOTICE of term 7 went out while its job (n5 term 7 [1s, …] orphaned) still runs") {
		t.Errorf("open job, at the sending: %q", v)
	}
	if v := CheckNotice(open, 2); !strings.Contains(v, "invariant 9: n2 acted on n5's NOTICE of term 7 and started its job while that job") {
		t.Errorf("open job, at n2's start: %q", v)
	}
	dead := open
	dead.Open, dead.End = false, 2*time.Second
	if v := CheckNotice(dead, 2); v != "" {
		t.Errorf("dead job: %q, want none", v)
	}
}
