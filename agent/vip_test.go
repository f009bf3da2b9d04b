package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/vip"
	"github.com/lanleader/lanleader/agent/part/vips"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/waitfor"
	"github.com/lanleader/lanleader/wire"
)

// The virtual addresses' order, with a fake holder in place of package
// vip (no netlink): each call records what the agent was doing then. The
// holder is called on the event loop, so it may read the machine.

var testVIP = VIP{Prefix: netip.MustParsePrefix("198.18.0.100/24")}

// vipCall is one call of the fake, with the agent's state at that moment.
type vipCall struct {
	node  string
	op    string         // remove, acquire, release, reannounce
	state election.State // the machine's
	job   string         // the job's state ("" without a job)
	at    time.Duration  // the agent's clock
}

func (c vipCall) String() string {
	return fmt.Sprintf("%s %s (%v, job %q)", c.node, c.op, c.state, c.job)
}

// vipRecord is the calls of every fake of a test, in order.
type vipRecord struct {
	mu    sync.Mutex
	calls []vipCall
}

func (r *vipRecord) all() []vipCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

func (r *vipRecord) String() string {
	var b strings.Builder
	for _, c := range r.all() {
		b.WriteString("\n\t" + c.String())
	}
	return b.String()
}

// fakeVIPs is one agent's addresses: its holder and its driver.
type fakeVIPs struct {
	rec  *vipRecord
	node string
	a    *Agent

	mu      sync.Mutex
	cfg     vip.Config
	held    bool
	left    []vip.Addr       // what remove finds at the start
	removed [][]vip.Addr     // what each remove was asked to remove
	answer  net.HardwareAddr // the probe's answer
	kept    []*os.File       // the hold each keeper was started with
	report  func(dev string, up bool)
	// noCarrier: the interfaces without carrier now, reported or not.
	noCarrier map[string]bool
}

func (f *fakeVIPs) record(op string) {
	c := vipCall{node: f.node, op: op}
	if f.a != nil && op != "remove" {
		c.state, c.at = f.a.machine.Status().State, f.a.now()
		if j := f.a.Job(); j != nil {
			c.job = j.State
		}
	}
	f.rec.mu.Lock()
	f.rec.calls = append(f.rec.calls, c)
	f.rec.mu.Unlock()
}

func (f *fakeVIPs) Acquire() error {
	f.record("acquire")
	f.mu.Lock()
	f.held = true
	f.mu.Unlock()
	return nil
}

func (f *fakeVIPs) Release() error {
	f.record("release")
	f.mu.Lock()
	f.held = false
	f.mu.Unlock()
	return nil
}

func (f *fakeVIPs) Reannounce(bool) { f.record("reannounce") }

func (f *fakeVIPs) States() []vip.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []vip.State
	for _, a := range f.cfg.Addrs {
		out = append(out, vip.State{Addr: a, Up: f.held})
	}
	return out
}

func (f *fakeVIPs) Close() {}

func (f *fakeVIPs) driver() *vips.Driver {
	return &vips.Driver{
		Hold: func(c vip.Config) (vips.Holder, error) {
			f.mu.Lock()
			f.cfg = c
			f.mu.Unlock()
			return f, nil
		},
		Remove: func(addrs []vip.Addr) ([]vip.Addr, error) {
			f.record("remove")
			f.mu.Lock()
			f.removed = append(f.removed, slices.Clone(addrs))
			f.mu.Unlock()
			return f.left, nil
		},
		Probe: func(vip.Addr, time.Duration) (net.HardwareAddr, error) { return f.answer, nil },
		Keep: func(addrs []vip.Addr, hold *os.File) (func(), error) {
			f.mu.Lock()
			f.kept = append(f.kept, hold)
			f.mu.Unlock()
			return func() {}, nil
		},
	}
}

// watch is the fake link watch (Config.linkWatch): every link up at
// first, then what linkReport says; its reading now is the carrier that
// linkReport or silentCarrier set last (up until then).
func (f *fakeVIPs) watch(devs []string, report func(string, bool)) (func(), func(string) bool, error) {
	f.mu.Lock()
	f.report = report
	f.mu.Unlock()
	for _, d := range devs {
		report(d, true)
	}
	up := func(dev string) bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return !f.noCarrier[dev]
	}
	return func() {}, up, nil
}

// linkReport is what the link watch reports.
func (f *fakeVIPs) linkReport(dev string, up bool) {
	f.silentCarrier(dev, up)
	f.mu.Lock()
	r := f.report
	f.mu.Unlock()
	r(dev, up)
}

// silentCarrier sets dev's carrier as the kernel has it, its report still
// to come.
func (f *fakeVIPs) silentCarrier(dev string, up bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.noCarrier == nil {
		f.noCarrier = map[string]bool{}
	}
	f.noCarrier[dev] = !up
}

// startVIPAgent starts an agent of cfg with the fake f.
func startVIPAgent(t *testing.T, s *agentSet, i int, cfg Config, f *fakeVIPs) *Agent {
	t.Helper()
	return startVIPAgentOn(t, s, i, cfg, f, "")
}

// startVIPAgentOn is startVIPAgent with the addresses on the interface
// dev instead: one that need not exist on this host (New checks that an
// address's interface does; the fakes need none). "": as configured.
func startVIPAgentOn(t *testing.T, s *agentSet, i int, cfg Config, f *fakeVIPs, dev string) *Agent {
	t.Helper()
	cfg.Logger = loggerTo(s.logs, i)
	a, err := newAgent(cfg, seams{vipDrv: f.driver(), linkWatch: f.watch})
	if err != nil {
		t.Fatal(err)
	}
	if dev != "" {
		for k := range a.cfg.VIPs {
			a.cfg.VIPs[k].Dev = dev
		}
	}
	f.a, f.node = a, cfg.Name
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Crash)
	return a
}

// loopJob runs until SIGTERM.
var loopJob = []string{"/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 0.05; done"}

func vipConfig(name string, id uint64, job bool) Config {
	c := testConfig(name, id)
	c.VIPs = []VIP{testVIP}
	if job {
		c.Job, c.JobGrace = loopJob, 2*time.Second
	}
	return c
}

func waitState(t *testing.T, a *Agent, state string) {
	t.Helper()
	waitFor(t, a.cfg.Name+" is "+state, electBound, func() (bool, string) {
		st := a.Status()
		return st.State == state, st.State
	})
}

func waitJob(t *testing.T, a *Agent, state string) {
	t.Helper()
	waitFor(t, a.cfg.Name+"'s job is "+state, electBound, func() (bool, string) {
		j := a.Job()
		return j.State == state, j.State
	})
}

// index is the position of the first call of node's op at or after
// from, -1 when there is none.
func index(calls []vipCall, from int, node, op string) int {
	for i := from; i < len(calls); i++ {
		if calls[i].node == node && calls[i].op == op {
			return i
		}
	}
	return -1
}

// A leader adds the addresses before its job starts (on the interface of
// the bind address when none is given); a graceful stop stops the job,
// then removes the addresses, then resigns.
func TestVIPLeadThenStop(t *testing.T) {
	s := newAgentSet(t)
	rec := &vipRecord{}
	f := &fakeVIPs{rec: rec}
	a := startVIPAgent(t, s, 0, vipConfig("node-1", 1, true), f)
	waitJob(t, a, "running")
	calls := rec.all()
	if len(calls) < 2 || calls[0].op != "remove" {
		t.Fatalf("calls %v: want the start's remove first", rec)
	}
	if i := index(calls, 0, "node-1", "acquire"); i < 0 || calls[i].state != election.StateLeader || calls[i].job != "stopped" {
		t.Fatalf("calls %v: want an acquire as leader before the job started", rec)
	}
	if got := f.cfg.Addrs; len(got) != 1 || got[0].Prefix != testVIP.Prefix || got[0].Dev != "lo" {
		t.Errorf("the holder's addresses %v, want %v on lo (the bind address's interface)", got, testVIP.Prefix)
	}
	if c := f.cfg.Announce; c.Repeat != config.DefaultVIPAnnounceRepeat || c.Interval != config.DefaultVIPAnnounceInterval ||
		c.Delay != config.DefaultVIPAnnounceDelay || c.Refresh != config.DefaultVIPAnnounceRefresh {
		t.Errorf("announce %+v, want the defaults", c)
	}
	st := a.Status()
	if want := []VIPStatus{{Address: "198.18.0.100/24", Dev: "lo", Up: true}}; !slices.Equal(st.VIPs, want) {
		t.Errorf("/status vips %+v, want %+v", st.VIPs, want)
	}
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls = rec.all()
	last := calls[len(calls)-1]
	// Released while still the leader, that is before RESIGN, and after
	// the job had stopped.
	if last.op != "release" || last.state != election.StateLeader || last.job != "stopped" {
		t.Errorf("calls %v: want the last a release, as leader (before RESIGN), the job stopped", rec)
	}
}

// TestVIPKeeperHoldsTheNotice: the addresses' keeper is started once the
// notice guard runs, and holds its pipe: a crashed leader's notice goes
// out only once the keeper has removed them.
func TestVIPKeeperHoldsTheNotice(t *testing.T) {
	s := newAgentSet(t)
	f := &fakeVIPs{rec: &vipRecord{}}
	a := startVIPAgent(t, s, 0, vipConfig("node-1", 1, true), f)
	if a.notice == nil {
		t.Fatal("no notice guard")
	}
	f.mu.Lock()
	kept := slices.Clone(f.kept)
	f.mu.Unlock()
	// Hold hands out copies: the same pipe is the same inode.
	hold := a.notice.Hold()
	if hold == nil {
		t.Fatal("the notice guard hands out no hold")
	}
	defer hold.Close()
	want := inode(t, hold)
	if len(kept) != 1 || kept[0] == nil || inode(t, kept[0]) != want {
		t.Fatalf("the keepers were given %v, want one given a copy of the notice guard's pipe (inode %d)", kept, want)
	}
}

// inode is the inode of f's file (a pipe's: the same in every copy).
func inode(t *testing.T, f *os.File) uint64 {
	t.Helper()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// A resign: the job stops, the addresses go, then RESIGN, and the next
// leader takes them; the resigned node, larger, takes the leadership
// back after its hold-off, and the other releases at once on losing it.
func TestVIPResignAndLoss(t *testing.T) {
	s := newAgentSet(t)
	rec := &vipRecord{}
	f1, f2 := &fakeVIPs{rec: rec}, &fakeVIPs{rec: rec}
	a1 := startVIPAgent(t, s, 0, vipConfig("node-1", 1, true), f1)
	c2 := vipConfig("node-2", 2, true)
	c2.Join = []string{a1.GossipAddr().String()}
	a2 := startVIPAgent(t, s, 1, c2, f2)
	waitFor(t, "node-2 leads with its job", electBound, func() (bool, string) {
		return a2.Status().State == "leader" && a2.Job().State == "running" && a1.Status().LeaderID == 2,
			fmt.Sprint(a2.Status().State, a2.Job().State, a1.Status().LeaderID)
	})
	from := len(rec.all())
	if !a2.Resign() {
		t.Fatal("node-2 did not resign")
	}
	waitJob(t, a1, "running")
	calls := rec.all()
	rel := index(calls, from, "node-2", "release")
	acq := index(calls, from, "node-1", "acquire")
	if rel < 0 || calls[rel].state != election.StateLeader || calls[rel].job != "stopped" {
		t.Fatalf("calls %v: want node-2's release as leader (before its RESIGN), its job stopped", rec)
	}
	if acq < rel || calls[acq].job != "stopped" {
		t.Fatalf("calls %v: want node-1's acquire after node-2's release, before node-1's job", rec)
	}
	if got := testutil.ToFloat64(a1.met.MessagesReceived.WithLabelValues("RESIGN")); got < 1 {
		t.Errorf("node-1 received %v RESIGN", got)
	}
	// node-2's hold-off ends; it takes over (preemption): node-1 loses
	// the leadership to its claim and releases at once.
	waitFor(t, "node-2 leads again", electBound, func() (bool, string) {
		return a2.Status().State == "leader" && a1.Status().LeaderID == 2, a2.Status().State
	})
	waitFor(t, "node-1 released", electBound, func() (bool, string) {
		return index(rec.all(), acq, "node-1", "release") > 0, rec.String()
	})
	calls = rec.all()
	if i := index(calls, acq, "node-1", "release"); calls[i].state == election.StateLeader {
		t.Errorf("calls %v: node-1 released while still leading, want on losing the leadership", rec)
	}
	// node-2's winning claim was not stale: node-1 did not announce for it.
	if i := index(calls, acq, "node-1", "reannounce"); i >= 0 && i < index(calls, acq, "node-1", "release") {
		t.Errorf("calls %v: node-1 announced again for the claim it lost to", rec)
	}
}

// A leader that hears a stale claim announces its addresses again two
// heartbeats later if it still leads in its term, and at most once a
// second.
func TestVIPStaleClaimReannounces(t *testing.T) {
	s := newAgentSet(t)
	rec := &vipRecord{}
	f := &fakeVIPs{rec: rec}
	cfg := vipConfig("node-5", 5, false)
	a := startVIPAgent(t, s, 0, cfg, f)
	waitState(t, a, "leader")
	term := a.Status().Term
	stale := wire.Message{Type: wire.TypeHeartbeat, From: 3, Priority: config.DefaultPriority, Term: term - 1}
	from := len(rec.all())
	a.call(func() { a.onPacket(packet{msg: stale, at: a.now()}) })
	if i := index(rec.all(), from, "node-5", "reannounce"); i >= 0 {
		t.Fatalf("calls %v: a reannounce at once, before this node knows it stays the leader", rec)
	}
	waitFor(t, "the reannounce two heartbeats after the stale claim", electBound, func() (bool, string) {
		return index(rec.all(), from, "node-5", "reannounce") >= 0, rec.String()
	})
	calls := rec.all()
	if c := calls[len(calls)-1]; c.op != "reannounce" || c.state != election.StateLeader {
		t.Fatalf("calls %v: want a reannounce as leader after a stale heartbeat", rec)
	}
	// At most once a second.
	a.call(func() { a.onPacket(packet{msg: stale, at: a.now()}) })
	waitFor(t, "nothing pending", electBound, func() (bool, string) {
		var pending bool
		a.call(func() { _, pending = a.vips.Next() })
		return !pending, "a stale claim's burst pending"
	})
	if n := len(rec.all()); n != len(calls) {
		t.Errorf("calls %v: a second stale claim at once announced again", rec)
	}
	if a.Status().State != "leader" {
		t.Fatalf("a stale claim deposed the leader: %v", a.Status().State)
	}
	// (A claim that wins is no reason to announce: TestVIPResignAndLoss.)
}

// A stale claim heard by a leader that then stops leading (the claimant
// outranked it after all, or it resigned) brings no announcement.
func TestVIPStaleClaimThenLoss(t *testing.T) {
	s := newAgentSet(t)
	rec := &vipRecord{}
	f := &fakeVIPs{rec: rec}
	a := startVIPAgent(t, s, 0, vipConfig("node-5", 5, false), f)
	waitState(t, a, "leader")
	stale := wire.Message{Type: wire.TypeHeartbeat, From: 3, Priority: config.DefaultPriority, Term: a.Status().Term - 1}
	from := len(rec.all())
	a.call(func() {
		a.onPacket(packet{msg: stale, at: a.now()})
		a.beginResign("a test")
	})
	waitFor(t, "the stale claim's wait ends", electBound, func() (bool, string) {
		var pending bool
		a.call(func() { _, pending = a.vips.Next() })
		return !pending, "a stale claim's burst pending"
	})
	if i := index(rec.all(), from, "node-5", "reannounce"); i >= 0 {
		t.Fatalf("calls %v: a resigned leader announced its addresses for a stale claim", rec)
	}
	if i := index(rec.all(), from, "node-5", "release"); i < 0 {
		t.Fatalf("calls %v: the resign released nothing", rec)
	}
}

// A link of the addresses down takes the node out of the elections: the
// leader releases and resigns, and does not lead again, alone as it is,
// until the link is up. (The addresses' interface is not the election's,
// whose carrier loss makes a leader step down at once: carrier_test.go.)
func TestVIPLinkDown(t *testing.T) {
	s := newAgentSet(t)
	rec := &vipRecord{}
	f := &fakeVIPs{rec: rec}
	a := startVIPAgentOn(t, s, 0, vipConfig("node-1", 1, true), f, "vip0")
	waitJob(t, a, "running")
	from := len(rec.all())
	f.linkReport("vip0", false)
	waitFor(t, "node-1 stops leading", electBound, func() (bool, string) {
		st := a.Status()
		return st.State != "leader" && slices.Equal(st.LinksDown, []string{"vip0"}), fmt.Sprint(st.State, st.LinksDown)
	})
	calls := rec.all()
	if i := index(calls, from, "node-1", "release"); i < 0 || calls[i].job != "stopped" {
		t.Fatalf("calls %v: want a release after the job stopped", rec)
	}
	// Alone, it would lead again after its hold-off (1s); it must not.
	waitfor.Holds(t, "node-1 out with its link down", 1500*time.Millisecond, 10*time.Millisecond, func() (bool, string) {
		st := a.Status()
		return st.State != "leader" && index(rec.all(), from, "node-1", "acquire") < 0 && a.Job().State == "stopped",
			fmt.Sprintf("%v, job %v, calls %v", st.State, a.Job().State, rec)
	})
	f.linkReport("vip0", true)
	waitJob(t, a, "running")
	if index(rec.all(), from, "node-1", "acquire") < 0 {
		t.Errorf("calls %v: no acquire once the link was up", rec)
	}
}

// At the start: what an earlier run left is removed, before anything; an
// address another host answers for is counted as a conflict when this
// node leads, and the agent starts.
func TestVIPStartRemovesAndProbes(t *testing.T) {
	s := newAgentSet(t)
	rec := &vipRecord{}
	f := &fakeVIPs{rec: rec}
	f.left = []vip.Addr{{Prefix: testVIP.Prefix, Dev: "lo"}}
	f.answer = net.HardwareAddr{0x02, 0, 0, 0, 0, 1}
	a := startVIPAgent(t, s, 0, vipConfig("node-1", 1, false), f)
	waitState(t, a, "leader")
	if calls := rec.all(); calls[0].op != "remove" {
		t.Errorf("calls %v: want the remove first", rec)
	}
	if !strings.Contains(s.logs.String(), "removed a virtual address an earlier run left") {
		t.Errorf("the removal is not logged")
	}
	waitFor(t, "the conflict is counted", electBound, func() (bool, string) {
		n := testutil.ToFloat64(a.met.VIPConflicts.WithLabelValues("198.18.0.100/24"))
		return n == 1, fmt.Sprint(n)
	})
}

// Validate: the virtual addresses and their announcements.
func TestValidateVIPs(t *testing.T) {
	ok := func() Config {
		c := config.DefaultConfig()
		c.Name, c.NodeID, c.Bind, c.Logger = "a", 1, "198.18.0.1:7946", quiet()
		c.VIPs = []VIP{{Prefix: netip.MustParsePrefix("198.18.0.100/24")}, {Prefix: netip.MustParsePrefix("198.18.0.101/24"), Dev: "lo"}}
		return c
	}
	if c := ok(); c.Validate() != nil {
		t.Fatalf("a good config: %v", c.Validate())
	}
	p := netip.MustParsePrefix
	for _, tc := range []struct {
		name    string
		edit    func(*Config)
		want    string
		setting bool // a *config.SettingError of vip…
	}{
		{"no prefix", func(c *Config) { c.VIPs = []VIP{{}} }, `vip: "invalid Prefix" is not an address with a prefix length`, true},
		{"loopback", func(c *Config) { c.VIPs = []VIP{{Prefix: p("127.0.0.5/8")}} }, "vip: 127.0.0.5/8 is not a unicast address that hosts can share", true},
		{"multicast", func(c *Config) { c.VIPs = []VIP{{Prefix: p("239.1.1.1/24")}} }, "is not a unicast address", true},
		{"prefix 0", func(c *Config) { c.VIPs = []VIP{{Prefix: p("198.18.0.100/0")}} }, "vip: 198.18.0.100/0: a prefix length of 0", true},
		// A fault of the address with the role: a node that never leads
		// may have another host's interfaces (TestValidateVIPsNeverLeads).
		{"no such interface", func(c *Config) { c.VIPs[1].Dev = "nosuch0" }, `vip: 198.18.0.101/24: no interface "nosuch0" on this host (it has `, false},
		{"bad interface name", func(c *Config) { c.VIPs[1].Dev = "../lo" }, `vip: "../lo" is not an interface name`, true},
		{"mixed families", func(c *Config) { c.VIPs = append(c.VIPs, VIP{Prefix: p("fd00::100/64")}) },
			"vip: 198.18.0.100/24 and fd00::100/64 are not of one IP family", true},
		{"the bind address", func(c *Config) { c.VIPs[0].Prefix = p("198.18.0.1/24") }, "vip: 198.18.0.1 is the bind address (198.18.0.1:7946)", false},
		{"twice", func(c *Config) { c.VIPs[1].Prefix = p("198.18.0.100/25") }, "vip: 198.18.0.100 is given twice", true},
		{"repeat 0", func(c *Config) { c.VIPAnnounceRepeat = 0 }, "vip-announce-repeat: 0 out of range 1…100", true},
		{"repeat 101", func(c *Config) { c.VIPAnnounceRepeat = 101 }, "vip-announce-repeat: 101 out of range 1…100", true},
		{"negative interval", func(c *Config) { c.VIPAnnounceInterval = -time.Millisecond }, "vip-announce-interval: -1ms must not be negative", true},
		{"negative delay", func(c *Config) { c.VIPAnnounceDelay = -time.Second }, "vip-announce-delay: -1s must not be negative", true},
		{"negative refresh", func(c *Config) { c.VIPAnnounceRefresh = -time.Second }, "vip-announce-refresh: -1s must not be negative", true},
	} {
		c := ok()
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
			continue
		}
		var found bool
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			var se *config.SettingError
			if errors.As(e, &se) && strings.HasPrefix(se.Setting, "vip") {
				found = true
			}
		}
		if found != tc.setting {
			t.Errorf("%s: a config.SettingError: %v, want %v (%v)", tc.name, found, tc.setting, err)
		}
	}
	// 0 is none for the announcements' durations.
	c := ok()
	c.VIPAnnounceInterval, c.VIPAnnounceDelay, c.VIPAnnounceRefresh = 0, 0, 0
	if err := c.Validate(); err != nil {
		t.Errorf("announcement durations of 0: %v", err)
	}
}

// Quorum mode: the addresses go with the lease. A leader whose
// followers are gone cannot renew its lease; it steps down a heartbeat
// before the lease ends, and releases the addresses then, before the
// lease's end.
func TestVIPQuorumReleaseWithinLease(t *testing.T) {
	s := newAgentSet(t)
	rec := &vipRecord{}
	var agents []*Agent
	var fakes []*fakeVIPs
	for i := range 3 {
		c := vipConfig(fmt.Sprintf("node-%d", i+1), uint64(i+1), true)
		c.Quorum = 3
		c.DeriveTimeouts()
		if i > 0 {
			c.Join = []string{agents[0].GossipAddr().String()}
		}
		f := &fakeVIPs{rec: rec}
		agents, fakes = append(agents, startVIPAgent(t, s, i, c, f)), append(fakes, f)
	}
	leader := agents[2]
	waitJob(t, leader, "running")
	lease := leader.cfg.Lease
	var crashedAt time.Duration
	leader.call(func() { crashedAt = leader.now() })
	agents[0].Crash()
	agents[1].Crash()
	waitFor(t, "node-3 releases", electBound, func() (bool, string) {
		return index(rec.all(), 0, "node-3", "release") >= 0, rec.String()
	})
	calls := rec.all()
	rel := calls[index(calls, 0, "node-3", "release")]
	if rel.state == election.StateLeader {
		t.Errorf("calls %v: node-3 released while leading, want on its step-down", rec)
	}
	// Its last acknowledged heartbeat went out before the crash: the lease
	// ended by crashedAt + lease at the latest.
	if rel.at >= crashedAt+lease {
		t.Errorf("released at %v, after the lease's end (at the latest %v)", rel.at, crashedAt+lease)
	}
	if i := index(calls, 0, "node-3", "acquire"); i < 0 || calls[i].job != "stopped" {
		t.Errorf("calls %v: want node-3's acquire before its job", rec)
	}
	// node-3 alone is a minority: it never takes them again.
	waitfor.Holds(t, "node-3, a minority, never takes the addresses again", time.Second, 10*time.Millisecond, func() (bool, string) {
		return index(rec.all(), index(rec.all(), 0, "node-3", "release"), "node-3", "acquire") < 0, fmt.Sprintf("calls %v", rec)
	})
}

// A preemption is no conflict: node-2, larger, starts while node-1 leads
// and holds the address (it answers node-2's probe), and takes over. The
// answer was the previous leader's: logged at info, not counted.
func TestVIPPreemptionIsNoConflict(t *testing.T) {
	s := newAgentSet(t)
	rec := &vipRecord{}
	f1, f2 := &fakeVIPs{rec: rec}, &fakeVIPs{rec: rec}
	a1 := startVIPAgent(t, s, 0, vipConfig("node-1", 1, false), f1)
	waitState(t, a1, "leader")
	c2 := vipConfig("node-2", 2, false)
	c2.Join = []string{a1.GossipAddr().String()}
	f2.answer = net.HardwareAddr{0x02, 0, 0, 0, 0, 1} // node-1's host
	a2 := startVIPAgent(t, s, 1, c2, f2)
	waitFor(t, "node-2 takes over", electBound, func() (bool, string) {
		return a2.Status().State == "leader" && a1.Status().LeaderID == 2, fmt.Sprintf("node-2 %s, node-1 follows %d", a2.Status().State, a1.Status().LeaderID)
	})
	const want = "presumably the previous leader's, which this node took over from"
	waitFor(t, "the answer judged", electBound, func() (bool, string) {
		return strings.Contains(s.logs.String(), want), "no line " + want
	})
	if n := testutil.ToFloat64(a2.met.VIPConflicts.WithLabelValues("198.18.0.100/24")); n != 0 || strings.Contains(s.logs.String(), "the addresses conflict") {
		t.Errorf("a preemption counted %v conflicts, or logged one", n)
	}
}

// TestValidateVIPsNeverLeads: a witness or an observer never holds the
// addresses, so an interface of another host's list is no fault of its
// configuration (the candidates' file serves it too); a candidate's is.
func TestValidateVIPsNeverLeads(t *testing.T) {
	for _, role := range []string{"candidate", "witness", "observer"} {
		c := config.DefaultConfig()
		c.Name, c.NodeID, c.Bind, c.Logger, c.Role, c.Quorum = "a", 1, "198.18.0.1:7946", quiet(), role, 3
		c.Lease, c.LeaseMargin = 400*time.Millisecond, 40*time.Millisecond
		c.VIPs = []VIP{{Prefix: netip.MustParsePrefix("198.18.0.100/24"), Dev: "nosuch0"}}
		err := c.Validate()
		if got, want := err != nil, role == "candidate"; got != want {
			t.Errorf("role %s: %v; want an error: %v", role, err, want)
		}
	}
}
