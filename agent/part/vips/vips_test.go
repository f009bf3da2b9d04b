package vips

import (
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/vip"
	"github.com/lanleader/lanleader/agent/part"
	"github.com/lanleader/lanleader/agent/part/parttest"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/metrics"
	"github.com/lanleader/lanleader/wire"
)

// The part on a fake host, with a fake driver whose holders and removals
// record each call, in order, with the addresses it concerned.

var (
	addrA = config.VIP{Prefix: netip.MustParsePrefix("198.18.0.100/24")}
	addrB = config.VIP{Prefix: netip.MustParsePrefix("198.18.0.101/24"), Dev: "eth1"}
	self  = netip.MustParseAddr("198.18.0.1")
)

type fixture struct {
	h   *parttest.FakeHost
	v   *VIPs
	met *metrics.Metrics
	st  election.Status // the machine's, as Node.Status reads it
	ops []string        // "hold A B", "acquire A", "remove B", "close A"...
	set [][]vip.Addr    // what Node.SetVIPs was given
	// left is what the start's remove finds; answer is every probe's.
	left   []vip.Addr
	answer net.HardwareAddr
}

// holder is a fake Holder of addrs.
type holder struct {
	f     *fixture
	addrs []vip.Addr
	held  bool
}

func (h *holder) Acquire() error { h.f.op("acquire", h.addrs); h.held = true; return nil }
func (h *holder) Release() error { h.f.op("release", h.addrs); h.held = false; return nil }
func (h *holder) Reannounce(delayed bool) {
	if delayed {
		h.f.op("reannounce+delayed", h.addrs)
		return
	}
	h.f.op("reannounce", h.addrs)
}
func (h *holder) Close() { h.f.op("close", h.addrs) }

func (h *holder) States() []vip.State {
	var out []vip.State
	for _, a := range h.addrs {
		out = append(out, vip.State{Addr: a, Up: h.held})
	}
	return out
}

// op records a call: its name, then each address's prefix.
func (f *fixture) op(name string, addrs []vip.Addr) {
	for _, a := range addrs {
		name += " " + a.Prefix.String()
	}
	f.ops = append(f.ops, name)
}

// take returns the calls since the last take.
func (f *fixture) take() []string {
	ops := f.ops
	f.ops = nil
	return ops
}

func newFixture(t *testing.T) *fixture { t.Helper(); return newFixtureOf(t, nil) }

// newFixtureOf is newFixture with the configuration changed by edit.
func newFixtureOf(t *testing.T, edit func(*config.Config)) *fixture {
	t.Helper()
	f := &fixture{h: parttest.NewFakeHost(),
		st: election.Status{State: election.StateLeader, Term: 3, Self: election.Key{Priority: 100, ID: 1}}}
	f.met = metrics.New(prometheus.NewRegistry(), "test", func() metrics.View { return metrics.View{} })
	cfg := config.DefaultConfig()
	cfg.NodeID, cfg.Bind, cfg.Heartbeat = 1, "198.18.0.1:7946", 100*time.Millisecond
	if edit != nil {
		edit(&cfg)
	}
	drv := Driver{
		Hold: func(c vip.Config) (Holder, error) {
			f.op("hold", c.Addrs)
			return &holder{f: f, addrs: c.Addrs}, nil
		},
		Remove: func(addrs []vip.Addr) ([]vip.Addr, error) {
			f.op("remove", addrs)
			return f.left, nil
		},
		Probe: func(vip.Addr, time.Duration) (net.HardwareAddr, error) { return f.answer, nil },
	}
	f.v = New(f.h, &cfg, drv, f.met, Node{
		Status:  func() election.Status { return f.st },
		SetVIPs: func(addrs []vip.Addr) { f.set = append(f.set, slices.Clone(addrs)) },
		Name:    func(id uint64) string { return map[uint64]string{2: "node-2", 3: "node-3"}[id] },
	})
	return f
}

// start starts the part with list on eth0, and makes it hold them as the
// leader.
func (f *fixture) start(t *testing.T, list ...config.VIP) {
	t.Helper()
	if err := f.v.Start(list, self, "eth0"); err != nil {
		t.Fatal(err)
	}
	f.v.Update(true)
	if !f.v.Held() || !f.v.Ready() {
		t.Fatalf("a leader's addresses: held %v, ready %v", f.v.Held(), f.v.Ready())
	}
	f.take()
}

// due moves the clock to now and runs the deadlines due, as the loop's
// aux timer does.
func (f *fixture) due(now time.Duration) {
	f.h.Set(now)
	part.RunDue([]part.Part{f.v}, now)
}

func staleAt(term uint64) *wire.Message {
	return &wire.Message{Type: wire.TypeHeartbeat, From: 3, Priority: 100, Term: term}
}

// A stale claim's burst waits two heartbeats as the part's deadline, and
// goes then since the node still leads in the same term; another claim
// within a second of it brings none.
func TestStaleClaimBurst(t *testing.T) {
	f := newFixture(t)
	f.start(t, addrA)
	m := staleAt(2)
	if !f.v.IsStaleClaim(m) {
		t.Fatal("a heartbeat of a lower term is not stale to the leader")
	}
	if f.v.IsStaleClaim(staleAt(4)) || f.v.IsStaleClaim(&wire.Message{Type: wire.TypeHeartbeat, From: 1, Priority: 100, Term: 2}) {
		t.Fatal("a claim of a higher term, or this node's own, is stale")
	}
	f.h.Set(time.Second)
	f.v.StaleClaim(m)
	if at, ok := f.v.Next(); !ok || at != time.Second+200*time.Millisecond || f.h.Rearms() != 1 {
		t.Fatalf("next %v %v, timer set again %d times; want the burst two heartbeats on, the timer set once", at, ok, f.h.Rearms())
	}
	f.due(time.Second + 199*time.Millisecond)
	if ops := f.take(); len(ops) != 0 {
		t.Fatalf("before the deadline: %q", ops)
	}
	f.due(time.Second + 200*time.Millisecond)
	if ops := f.take(); !slices.Equal(ops, []string{"reannounce 198.18.0.100/24"}) {
		t.Fatalf("at the deadline: %q, want one reannounce", ops)
	}
	if _, ok := f.v.Next(); ok {
		t.Fatal("a deadline left after the burst")
	}
	f.h.Set(1500 * time.Millisecond)
	f.v.StaleClaim(m)
	if _, ok := f.v.Next(); ok {
		t.Error("a second claim within a second of the burst set a deadline")
	}
	if !strings.Contains(f.h.LogText(), "announcing the virtual addresses again after a stale claim") {
		t.Errorf("log %q", f.h.LogText())
	}
}

// A leader that keeps leading in a later term of its own (it outranked
// a higher term's claim, a healed partition's other leader, which held
// the addresses there) announces them again at once, once a term; a
// step in the same term announces nothing.
func TestNewTermAnnounces(t *testing.T) {
	f := newFixture(t)
	f.st.Term = 1
	f.start(t, addrA)
	f.v.Update(true)
	if ops := f.take(); len(ops) != 0 {
		t.Fatalf("a step in the same term: %q", ops)
	}
	f.st.Term = 3
	f.v.Update(true)
	if ops := f.take(); !slices.Equal(ops, []string{"reannounce+delayed 198.18.0.100/24"}) {
		t.Fatalf("leading in term 3 after term 1: %q, want one reannounce with the delayed burst", ops)
	}
	f.v.Update(true)
	if ops := f.take(); len(ops) != 0 {
		t.Fatalf("a second step in term 3: %q", ops)
	}
	if !strings.Contains(f.h.LogText(), "leading in a new term: announcing the virtual addresses again") {
		t.Errorf("log %q", f.h.LogText())
	}
	// Released and taken again in a later term: the acquisition
	// announces; no second burst.
	f.v.Update(false)
	f.st.Term = 5
	f.v.Update(true)
	if ops := f.take(); !slices.Equal(ops, []string{"release 198.18.0.100/24", "acquire 198.18.0.100/24"}) {
		t.Fatalf("released, then leading in term 5: %q, want a release and an acquire", ops)
	}
}

// The burst does not go when, by its deadline, the node leads no more, or
// leads in another term, or released the addresses; and no burst waits
// for a claim heard while the addresses are not held.
func TestStaleClaimNoLongerLeads(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(f *fixture)
	}{
		{"a follower", func(f *fixture) { f.st.State, f.st.Leader = election.StateFollower, 3 }},
		{"another term", func(f *fixture) { f.st.Term = 5 }},
		{"released", func(f *fixture) { f.v.Release("a test"); f.take() }},
	} {
		f := newFixture(t)
		f.start(t, addrA)
		f.v.StaleClaim(staleAt(2))
		tc.change(f)
		at, ok := f.v.Next()
		if !ok {
			t.Fatalf("%s: no deadline for the claim", tc.name)
		}
		f.due(at)
		if ops := f.take(); len(ops) != 0 {
			t.Errorf("%s: %q at the deadline, want nothing", tc.name, ops)
		}
		if _, ok := f.v.Next(); ok || !strings.Contains(f.h.LogText(), "no announcement for the stale claim") {
			t.Errorf("%s: deadline left %v, log %q", tc.name, ok, f.h.LogText())
		}
	}
	f := newFixture(t)
	f.start(t, addrA)
	f.v.Update(false)
	f.v.StaleClaim(staleAt(2))
	if _, ok := f.v.Next(); ok {
		t.Error("a claim heard without the addresses set a deadline")
	}
}

// A leader's reload adds the new addresses before it removes those no
// longer listed, and never releases those it keeps; a list emptied
// releases them; a follower only changes what it will take.
func TestReload(t *testing.T) {
	f := newFixture(t)
	f.start(t, addrA)
	reload := func(from, to []config.VIP) []string {
		old, next := config.DefaultConfig(), config.DefaultConfig()
		old.VIPs, next.VIPs = from, to
		return f.v.Reload(&old, &next)
	}
	if got := reload([]config.VIP{addrA}, []config.VIP{addrA}); got != nil || len(f.take()) != 0 {
		t.Fatalf("the same list: applied %q", got)
	}
	if got := reload([]config.VIP{addrA}, []config.VIP{addrA, addrB}); !slices.Equal(got, []string{"vip"}) {
		t.Fatalf("adding one: applied %q", got)
	}
	if ops, want := f.take(), []string{"hold 198.18.0.100/24 198.18.0.101/24", "acquire 198.18.0.100/24 198.18.0.101/24", "close 198.18.0.100/24"}; !slices.Equal(ops, want) {
		t.Errorf("adding one: %q, want %q", ops, want)
	}
	want := []Status{{Address: "198.18.0.100/24", Dev: "eth0", Up: true}, {Address: "198.18.0.101/24", Dev: "eth1", Up: true}}
	if got := f.v.Status(); !slices.Equal(got, want) || !f.v.Held() || !slices.Equal(f.v.Devs(), []string{"eth0", "eth1"}) {
		t.Errorf("adding one: status %+v, held %v, devs %q", got, f.v.Held(), f.v.Devs())
	}

	reload([]config.VIP{addrA, addrB}, []config.VIP{addrB})
	ops := f.take()
	if want := []string{"hold 198.18.0.101/24", "acquire 198.18.0.101/24", "remove 198.18.0.100/24", "close 198.18.0.100/24 198.18.0.101/24"}; !slices.Equal(ops, want) {
		t.Errorf("removing one: %q, want %q (the new held before the old removed)", ops, want)
	}
	if last := f.set[len(f.set)-1]; len(last) != 1 || last[0].Prefix != addrB.Prefix {
		t.Errorf("the job's guard was given %v, want %v", last, addrB)
	}

	reload([]config.VIP{addrB}, nil)
	if ops, want := f.take(), []string{"release 198.18.0.101/24", "close 198.18.0.101/24"}; !slices.Equal(ops, want) || f.v.Held() || f.v.On() || f.v.Status() != nil || !f.v.Ready() {
		t.Errorf("removing all: %q (want %q), held %v, on %v", ops, want, f.v.Held(), f.v.On())
	}

	// A list that cannot be (this node's own address) keeps the running
	// one.
	bad := config.VIP{Prefix: netip.PrefixFrom(self, 24)}
	if got := reload(nil, []config.VIP{bad}); got != nil || f.v.On() || !strings.Contains(f.h.LogText(), "reload: the virtual addresses are kept") {
		t.Errorf("this node's address: applied %q, on %v", got, f.v.On())
	}

	// Addresses come to a leader that had none as the driver says (Update,
	// after the reload), and to a follower not at all.
	reload(nil, []config.VIP{addrA})
	if ops := f.take(); !slices.Equal(ops, []string{"hold 198.18.0.100/24"}) || f.v.Ready() {
		t.Errorf("adding to none: %q, ready %v; want only a holder, not ready", ops, f.v.Ready())
	}
	f.v.Update(false)
	reload([]config.VIP{addrA}, []config.VIP{addrB})
	if ops := f.take(); !slices.Equal(ops, []string{"hold 198.18.0.101/24", "close 198.18.0.100/24"}) {
		t.Errorf("a follower's reload: %q, want only the holder replaced", ops)
	}
}

// The keeper starts at Keep, not at Start (the driver calls Keep once
// the notice guard runs), with the addresses and the notice guard's pipe
// (Node.Hold); a reload's keeper gets the pipe too; without a notice
// guard it holds none; a witness keeps nothing.
func TestKeeperHoldsTheNotice(t *testing.T) {
	type kept struct {
		addrs []vip.Addr
		hold  *os.File
	}
	keeping := func(f *fixture, hold *os.File) *[]kept {
		var got []kept
		f.v.drv.Keep = func(addrs []vip.Addr, h *os.File) (func(), error) {
			got = append(got, kept{slices.Clone(addrs), h})
			return func() { f.op("stop keeper", addrs) }, nil
		}
		if hold != nil {
			f.v.node.Hold = func() *os.File { return hold }
		}
		return &got
	}
	pipe, err := os.Open(os.DevNull) // stands for the pipe: only its identity counts
	if err != nil {
		t.Fatal(err)
	}
	defer pipe.Close()

	f := newFixture(t)
	got := keeping(f, pipe)
	if err := f.v.Start([]config.VIP{addrA}, self, "eth0"); err != nil {
		t.Fatal(err)
	}
	if len(*got) != 0 {
		t.Fatalf("Start started a keeper, before the notice guard: %v", *got)
	}
	f.v.Keep()
	f.v.Keep() // one keeper
	if len(*got) != 1 || (*got)[0].hold != pipe || len((*got)[0].addrs) != 1 || (*got)[0].addrs[0].Prefix != addrA.Prefix {
		t.Fatalf("keepers %v, want one of %v holding the notice guard's pipe", *got, addrA.Prefix)
	}
	old, next := config.DefaultConfig(), config.DefaultConfig()
	old.VIPs, next.VIPs = []config.VIP{addrA}, []config.VIP{addrB}
	f.v.Reload(&old, &next)
	if len(*got) != 2 || (*got)[1].hold != pipe || (*got)[1].addrs[0].Prefix != addrB.Prefix || !slices.Contains(f.take(), "stop keeper 198.18.0.100/24") {
		t.Fatalf("after a reload: keepers %v, want the old one stopped and one of %v holding the pipe", *got, addrB.Prefix)
	}

	f = newFixture(t)
	got = keeping(f, nil)
	f.v.Start([]config.VIP{addrA}, self, "eth0")
	f.v.Keep()
	if len(*got) != 1 || (*got)[0].hold != nil {
		t.Fatalf("without a notice guard: keepers %v, want one holding nothing", *got)
	}

	f = newFixtureOf(t, func(c *config.Config) { c.Role, c.Quorum = "witness", 3 })
	got = keeping(f, pipe)
	f.v.Start([]config.VIP{addrA}, self, "eth0")
	f.v.Keep()
	if len(*got) != 0 {
		t.Fatalf("a witness started keepers %v", *got)
	}
}

// The start removes what an earlier run left, before it holds anything.
// An address another host answers for is the leader's when this node
// follows another, and when it leads after another node led (a
// preemption, a takeover after a resign: the hand-over, logged at info);
// a conflict, counted and logged at error, when this node leads and no
// other node was heard to lead: a host outside the cluster's leadership
// holds it.
func TestStartProbes(t *testing.T) {
	leading := election.Status{State: election.StateLeader, Term: 1, Leader: 1}
	msg := func(typ wire.Type, from uint64) wire.Message {
		return wire.Message{Type: typ, From: from, Priority: 100, Term: 1}
	}
	for _, tc := range []struct {
		name      string
		heard     []wire.Message
		st        election.Status
		conflicts float64
		log       string
	}{
		{"leading", nil, leading, 1, "level=ERROR msg=\"another host held a virtual address of this cluster at the start, and no other leader does: the addresses conflict"},
		{"leading, having heard only elections and itself", []wire.Message{msg(wire.TypeElection, 2), msg(wire.TypeAnswer, 3), msg(wire.TypeHeartbeat, 1)}, leading, 1, "the addresses conflict"},
		{"following", nil, election.Status{State: election.StateFollower, Term: 1, Leader: 2}, 0, "presumably the leader's"},
		{"preempting", []wire.Message{msg(wire.TypeHeartbeat, 2), msg(wire.TypeHeartbeat, 2)}, leading, 0, "level=INFO msg=\"a virtual address answered from another host at the start: presumably the previous leader's, which this node took over from\" vip=198.18.0.100/24 holder=02:00:00:00:00:01 previous=node-2"},
		{"after a claim", []wire.Message{msg(wire.TypeCoordinator, 3)}, leading, 0, "previous=node-3"},
		{"after a resign", []wire.Message{msg(wire.TypeResign, 2)}, leading, 0, "presumably the previous leader's"},
	} {
		f := newFixture(t)
		f.left = []vip.Addr{{Prefix: addrA.Prefix, Dev: "eth0"}}
		f.answer = net.HardwareAddr{2, 0, 0, 0, 0, 1}
		if err := f.v.Start([]config.VIP{addrA}, self, "eth0"); err != nil {
			t.Fatal(err)
		}
		if ops := f.take(); !slices.Equal(ops, []string{"remove 198.18.0.100/24", "hold 198.18.0.100/24"}) {
			t.Errorf("%s: the start's calls %q", tc.name, ops)
		}
		if !strings.Contains(f.h.LogText(), "removed a virtual address an earlier run left") {
			t.Errorf("%s: the removal is not logged", tc.name)
		}
		for _, m := range tc.heard {
			f.v.HeardLeader(&m)
		}
		f.v.JudgeProbes(tc.st, "node-2")
		f.v.JudgeProbes(tc.st, "node-2") // judged once
		log := f.h.LogText()
		if n := testutil.ToFloat64(f.met.VIPConflicts.WithLabelValues("198.18.0.100/24")); n != tc.conflicts || !strings.Contains(log, tc.log) {
			t.Errorf("%s: %v conflicts (want %v), log %q, want %q", tc.name, n, tc.conflicts, log, tc.log)
		}
		if strings.Count(log, "at the start") != 1 {
			t.Errorf("%s: want one line about the answer, log %q", tc.name, log)
		}
	}
}

// TestNeverLeads: a witness's or an observer's addresses are the
// candidates' (one file for every host): its start neither removes nor
// probes nor holds them, even on an interface this host lacks, and a
// reload of the list changes nothing.
func TestNeverLeads(t *testing.T) {
	for _, role := range []string{"witness", "observer"} {
		f := newFixtureOf(t, func(c *config.Config) { c.Role, c.Quorum = role, 3 })
		f.answer = net.HardwareAddr{2, 0, 0, 0, 0, 9}
		missing := config.VIP{Prefix: addrA.Prefix, Dev: "nosuch0"}
		if err := f.v.Start([]config.VIP{missing, addrB}, self, "eth0"); err != nil {
			t.Fatalf("%s: start: %v", role, err)
		}
		f.v.Update(true)
		old, next := config.DefaultConfig(), config.DefaultConfig()
		old.VIPs, next.VIPs = []config.VIP{missing, addrB}, []config.VIP{addrB}
		if got := f.v.Reload(&old, &next); got != nil {
			t.Errorf("%s: a reload applied %q", role, got)
		}
		if ops := f.take(); len(ops) != 0 || f.v.Held() || len(f.set) != 0 || len(f.v.Status()) != 0 {
			t.Errorf("%s: calls %q, held %v, guard given %v, status %+v; want none", role, ops, f.v.Held(), f.set, f.v.Status())
		}
		if log := f.h.LogText(); strings.Contains(log, "conflict") {
			t.Errorf("%s: logged %s", role, log)
		}
	}
}
