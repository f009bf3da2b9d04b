package lead

import (
	"slices"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/agent/part"
	"github.com/lanleader/lanleader/agent/part/parttest"
	"github.com/lanleader/lanleader/election"
)

// fakeDriver is the driver's side for the part's tests: a machine's
// status the test sets, members it lists, and what the part asked of it.
type fakeDriver struct {
	p       *Lead
	status  election.Status
	members map[string]Member
	synced  []string // the members a state exchange was asked with
	// penalised: the part's Penalised at each ApplyPriority.
	penalised []bool
	resigned  int // the machine's RESIGN steps
}

func (f *fakeDriver) driver() Driver {
	return Driver{
		Status:  func() election.Status { return f.status },
		Leaving: func() bool { return false },
		Members: func() []Member {
			var ms []Member
			for _, m := range f.members {
				ms = append(ms, m)
			}
			return ms
		},
		Member: func(name string) (Member, bool) {
			m, ok := f.members[name]
			return m, ok
		},
		Sync:          func(name string) { f.synced = append(f.synced, name) },
		Resign:        func() { f.resigned++ },
		VIPsReady:     func() bool { return true },
		VIPHeld:       func() bool { return false },
		AcquireVIPs:   func() {},
		ReleaseVIPs:   func(string) {},
		UpdateVIPs:    func() {},
		LinksGone:     func() bool { return false },
		PushMeta:      func() {},
		ApplyPriority: func() { f.penalised = append(f.penalised, f.p.Penalised()) },
		ApplyStandby:  func() {},
		CountHook:     func(string, string) {},
	}
}

// newFixture is the part of node-1 with a job (a supervisor that never
// runs it), cfg changed by set, on a fake host.
func newFixture(t *testing.T, set func(*config.Config)) (*Lead, *fakeDriver, *parttest.FakeHost) {
	t.Helper()
	cfg := config.DefaultConfig()
	cfg.NodeID, cfg.Name, cfg.Job = 1, "node-1", []string{"true"}
	set(&cfg)
	h := parttest.NewFakeHost()
	f := &fakeDriver{members: map[string]Member{}}
	f.p = New(h, &cfg, proc.New(proc.Config{Argv: cfg.Job}), f.driver())
	return f.p, f, h
}

// lead makes node-1 the leader after prev.
func (f *fakeDriver) lead(prev election.Status) {
	f.status = election.Status{State: election.StateLeader, Term: prev.Term + 1, Leader: 1}
	f.p.LeadershipChanged(prev, f.status, true)
}

// due moves the host's clock to at and hands the part its deadline.
func due(h *parttest.FakeHost, p *Lead, at time.Duration) {
	h.Set(at)
	part.RunDue([]part.Part{p}, at)
}

// A leadership without a hand-over (no previous leader known) waits
// --takeover-wait before it asks for the job: the job is not wanted
// until the deadline, which Next gives, and wanted from then on.
func TestTakeoverWait(t *testing.T) {
	p, f, h := newFixture(t, func(c *config.Config) { c.TakeoverWait, c.JobGrace = 3*time.Second, time.Second })
	f.status = election.Status{State: election.StateLeader, Term: 1, Leader: 1}
	if first := p.LeadershipChanged(election.Status{}, f.status, true); !first {
		t.Error("the first leadership: LeadershipChanged does not say it is the first")
	}
	if p.JobWanted() || !p.Waiting() {
		t.Fatalf("leading without a hand-over: job wanted %v, waiting %v; want no job yet, a wait", p.JobWanted(), p.Waiting())
	}
	if at, ok := p.Next(); !ok || at != 3*time.Second || h.Rearms() == 0 {
		t.Fatalf("Next %v %v (rearmed %d times); want the takeover wait's end, 3s, and the timer rearmed", at, ok, h.Rearms())
	}
	due(h, p, 3*time.Second-time.Millisecond)
	if p.JobWanted() {
		t.Fatal("a millisecond before the wait's end: the job is wanted")
	}
	due(h, p, 3*time.Second)
	if !p.JobWanted() || p.Waiting() {
		t.Errorf("at the wait's end: job wanted %v, waiting %v; want the job, no wait", p.JobWanted(), p.Waiting())
	}
	if at, ok := p.Next(); ok {
		t.Errorf("after the wait: Next %v; want no deadline", at)
	}
}

// A takeover from a live leader (node-2, whose metadata says its job
// runs) waits for that job: a state exchange with node-2 at once and
// every jobWaitSyncEvery, at most node-2's grace (longer than ours) and
// JobWaitMargin; it ends when node-2's metadata says its job stopped.
func TestPreviousLeaderJobWaitEndsOnMemberChange(t *testing.T) {
	p, f, h := newFixture(t, func(c *config.Config) { c.JobGrace = 2 * time.Second })
	f.members["node-2"] = Member{Name: "node-2", NodeID: 2, Alive: true, MetaOK: true, Job: true, Grace: 5 * time.Second, HasGrace: true}
	f.members["node-3"] = Member{Name: "node-3", NodeID: 3, Alive: true, MetaOK: true}
	f.lead(election.Status{State: election.StateFollower, Term: 4, Leader: 2})
	name, until, most := p.JobWait()
	if name != "node-2" || until != 5*time.Second+JobWaitMargin || most != until || p.JobWanted() {
		t.Fatalf("took over from node-2: wait for %q until %v (at most %v), job wanted %v; want node-2 until %v, no job",
			name, until, most, p.JobWanted(), 5*time.Second+JobWaitMargin)
	}
	if !slices.Equal(f.synced, []string{"node-2"}) {
		t.Errorf("state exchanges %v; want one with node-2 at once", f.synced)
	}
	if at, ok := p.Next(); !ok || at != jobWaitSyncEvery {
		t.Errorf("Next %v %v; want the next exchange, %v", at, ok, jobWaitSyncEvery)
	}
	due(h, p, jobWaitSyncEvery)
	if !slices.Equal(f.synced, []string{"node-2", "node-2"}) || p.JobWanted() {
		t.Errorf("at the next exchange's time: exchanges %v, job wanted %v; want a second exchange, no job", f.synced, p.JobWanted())
	}
	p.MemberChanged("node-3")
	if name, _, _ := p.JobWait(); name != "node-2" {
		t.Fatalf("node-3 changed: the wait is for %q; want node-2 still", name)
	}
	h.TakeDirty()
	m := f.members["node-2"]
	m.Job = false
	f.members["node-2"] = m
	p.MemberChanged("node-2")
	if name, _, _ := p.JobWait(); name != "" || !p.JobWanted() || !h.TakeDirty() {
		t.Errorf("node-2's job stopped: wait for %q, job wanted %v; want no wait, the job, and the status dirty", name, p.JobWanted())
	}
	if at, ok := p.Next(); ok {
		t.Errorf("after the wait: Next %v; want no deadline", at)
	}
}

// A job that fails too often penalises the node: priority 1 (the driver
// judges it again while the part says Penalised) and a resign, until
// --job-failure-window from then, when the priority is restored.
func TestPenaltyEndRestoresPriority(t *testing.T) {
	p, f, h := newFixture(t, func(c *config.Config) { c.JobFailureWindow = 10 * time.Second })
	f.status = election.Status{State: election.StateLeader, Term: 1, Leader: 1}
	h.Set(time.Second)
	p.JobEvent(proc.Event{Kind: proc.CrashLoop})
	if until, ok := p.Penalty(); !ok || until != 11*time.Second || !p.Penalised() {
		t.Fatalf("penalty until %v (%v); want 11s", until, ok)
	}
	if !slices.Equal(f.penalised, []bool{true}) || f.resigned != 1 {
		t.Fatalf("the priority judged with the penalty %v, RESIGN %d times; want once penalised and one RESIGN", f.penalised, f.resigned)
	}
	if at, ok := p.Next(); !ok || at != 11*time.Second {
		t.Errorf("Next %v %v; want the penalty's end, 11s", at, ok)
	}
	due(h, p, 11*time.Second-time.Millisecond)
	if !p.Penalised() || len(f.penalised) != 1 {
		t.Fatal("a millisecond before the penalty's end: it is over")
	}
	due(h, p, 11*time.Second)
	if p.Penalised() || !slices.Equal(f.penalised, []bool{true, false}) {
		t.Errorf("at the penalty's end: penalised %v, the priority judged with %v; want it over and the priority restored", p.Penalised(), f.penalised)
	}
	if _, ok := p.Penalty(); ok {
		t.Error("Penalty still reports one")
	}
}

// A reload reports the settings of the hooks and of the job's limits
// that changed, in the order a reload names them.
func TestReloadApplied(t *testing.T) {
	p, _, _ := newFixture(t, func(*config.Config) {})
	t.Cleanup(p.StopHooks)
	old := p.cfg
	cfg := old
	cfg.JobFailureWindow, cfg.OnLeader, cfg.JobGrace = 3*time.Minute, "true", 7*time.Second
	got := p.Reload(&old, &cfg)
	if want := []string{"on-leader", "job-grace", "job-failure-window"}; !slices.Equal(got, want) {
		t.Errorf("Reload applied %v, want %v", got, want)
	}
	if p.GraceOf(1) != 7*time.Second || p.hooks.run == nil {
		t.Errorf("after the reload: own grace %v, hook runner %v; want 7s and a runner", p.GraceOf(1), p.hooks.run)
	}
}
