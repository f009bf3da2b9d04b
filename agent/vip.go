package agent

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/agent/internal/vip"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

// The cluster's virtual addresses (Config.VIPs): the leader holds them.
// Package vip adds, announces, removes, probes and watches them; this file
// says when, on the event loop, in this order (vip_test.go pins it):
//
//   - Becoming leader: the addresses are added (Acquire) before the job
//     starts: updateJob asks for the job only once Acquire has returned.
//   - A resign or a graceful stop: the job stops, then the addresses are
//     removed (Release), then RESIGN goes out, so that the next leader
//     takes them at once and never beside a job of ours.
//   - Losing the leadership to a claim (a larger key, a partition that
//     heals, a higher term): released at once, in the step that lost it,
//     while the job stops.
//   - Quorum mode: the addresses go with the lease. The machine steps
//     down one heartbeat before the lease ends when no majority renewed
//     it (election.Config.StopBefore), which releases them; the job's
//     guard removes them at the lease's end if the agent has not (it is
//     paused), and when the agent dies.
//   - A leader that hears a stale claim (a COORDINATOR or HEARTBEAT of
//     another node, which it outlives) announces them again two heartbeats
//     later if it still leads in the same term: the stale leader's hosts
//     may have learnt its MAC for them (staleClaim).
//   - A link of theirs down (VIPTrackLink): the node takes no part in
//     elections until it is up again; a leader hands over as a resign
//     does (election.EvStandby, applyStandby). The election interface
//     without carrier (agent/part/links): the leader steps down at once, and
//     they go at once.
//   - The agent's death (SIGKILL, a crash): the address keeper, a child
//     started with the agent (proc.StartKeeper), is told by the kernel
//     and removes the addresses; the job's guard does too.
//   - At the start, before joining: the addresses an earlier run left on
//     this host (one whose keeper could not remove them: killed with it,
//     as a whole unit's SIGKILL does) are removed, each logged at warn;
//     then each is probed (RFC 5227), and one that another host answers
//     for is logged and counted once the first election has settled.
//
// Acquire and Release are netlink calls, fast enough for the loop; the
// announcements after the first are sent by the vip.Manager's goroutine.

// VIP is one virtual address (Config.VIPs).
type VIP = config.VIP

// addrHolder holds the addresses: a *vip.Manager, or a test's fake.
type addrHolder interface {
	Acquire() error
	Release() error
	Reannounce()
	States() []vip.State
	Close()
}

// vipDriver is package vip's side of the agent, replaced by the tests.
type vipDriver struct {
	hold   func(vip.Config) (addrHolder, error)
	remove func([]vip.Addr) ([]vip.Addr, error)
	probe  func(vip.Addr, time.Duration) (net.HardwareAddr, error)
	// keep starts the address keeper (a child that removes the addresses
	// when the agent dies: proc.StartKeeper); nil: none.
	keep func([]vip.Addr) (stop func(), err error)
}

// systemVIPs is package vip itself.
var systemVIPs = vipDriver{
	hold: func(c vip.Config) (addrHolder, error) {
		m, err := vip.New(c)
		if err != nil {
			return nil, err
		}
		return m, nil
	},
	remove: vip.Remove,
	probe:  vip.Probe,
	keep: func(addrs []vip.Addr) (func(), error) {
		k, err := proc.StartKeeper(addrs)
		if err != nil {
			return nil, err
		}
		return k.Stop, nil
	},
}

// vipProbeWait is how long the start waits for an answer to its probes
// (all at once): a host of the LAN answers within a millisecond; RFC
// 5227's own PROBE_WAIT of 1s is for a host that must not take an
// address in use, which the leader does anyway.
const vipProbeWait = 500 * time.Millisecond

// vipReannounceEvery bounds the bursts for stale claims: a stale leader
// that cannot hear us claims every heartbeat.
const vipReannounceEvery = time.Second

// vipAgent is the agent's part of the addresses, set up by Start.
type vipAgent struct {
	drv    vipDriver
	addrs  []vip.Addr // Config.VIPs with their Dev set
	holder addrHolder // nil without VIPs
	// stopKeeper ends the address keeper (it removes the addresses when
	// the agent dies); nil without one.
	stopKeeper func()
	// holders: addresses another host answered for at the start (its
	// MAC), judged when the first election has settled (judgeProbes).
	holders map[string]string
	// self and dev are the election's address and interface (set by
	// Start), for the addresses a reload adds.
	self netip.Addr
	dev  string
}

// vipLoopState is the part of loopState this file owns.
type vipLoopState struct {
	vipHeld       bool          // Acquire was called, Release not since
	reannouncedAt time.Duration // the last burst for a stale claim
	stalePending  bool          // a stale claim's burst waits until staleDue
	staleDue      time.Duration
	staleTerm     uint64 // the term this node led when it heard the stale claim
	reannounced   bool
}

// startVIPs sets the addresses' interfaces, removes what an earlier run
// left, probes them, and starts their holder. ip and ifi are the
// election's address and interface.
func (a *Agent) startVIPs(ip netip.Addr, ifi *net.Interface) error {
	cfg := &a.cfg
	v := &a.vips
	v.self = ip.Unmap()
	if ifi != nil {
		v.dev = ifi.Name
	}
	if len(cfg.VIPs) == 0 {
		return nil
	}
	addrs, err := a.resolveVIPs(cfg.VIPs)
	if err != nil {
		return err
	}
	v.addrs = addrs
	removed, err := v.drv.remove(v.addrs)
	for _, r := range removed {
		a.log.Warn("removed a virtual address an earlier run left on this host (it was killed before it could)", "vip", r.String())
	}
	if err != nil {
		a.log.Warn("cannot remove the virtual addresses an earlier run may have left", "err", err)
	}
	a.startKeeper()
	a.probeVIPs()
	h, err := a.holdVIPs(v.addrs)
	if err != nil {
		return err
	}
	v.holder = h
	if a.procs.sup != nil {
		a.procs.sup.SetVIPs(v.addrs)
	}
	return nil
}

// resolveVIPs checks the addresses against the election's own and gives
// those without a dev= the election's interface.
func (a *Agent) resolveVIPs(list []VIP) ([]vip.Addr, error) {
	v := &a.vips
	addrs := slices.Clone(list)
	for i := range addrs {
		ad := &addrs[i]
		if ad.Prefix.Addr() == v.self {
			return nil, fmt.Errorf("vip %v: the address this agent announces for its elections; a virtual address must be one no host owns", ad.Prefix)
		}
		if ad.Dev == "" {
			if v.dev == "" {
				return nil, fmt.Errorf("vip %v: no dev= and no interface known for bind %s; give dev=IFACE", ad.Prefix, a.cfg.Bind)
			}
			ad.Dev = v.dev
		}
	}
	return addrs, nil
}

// startKeeper starts the address keeper of the addresses, when the
// driver has one.
func (a *Agent) startKeeper() {
	v := &a.vips
	if v.drv.keep == nil {
		return
	}
	var err error
	if v.stopKeeper, err = v.drv.keep(v.addrs); err != nil {
		a.log.Warn("no address keeper: a SIGKILL of this agent leaves its virtual addresses on this host until its next start", "err", err)
	}
}

// holdVIPs is the holder of addrs, their series of the metrics created.
func (a *Agent) holdVIPs(addrs []vip.Addr) (addrHolder, error) {
	cfg := &a.cfg
	for _, ad := range addrs {
		a.met.VIPInit(ad.Prefix.String())
	}
	h, err := a.vips.drv.hold(vip.Config{
		Addrs: addrs,
		Announce: vip.Announce{Repeat: cfg.VIPAnnounceRepeat, Interval: cfg.VIPAnnounceInterval,
			Delay: cfg.VIPAnnounceDelay, Refresh: cfg.VIPAnnounceRefresh},
		Log:  a.log,
		Sent: func(ad vip.Addr) { a.met.VIPAnnouncements.WithLabelValues(ad.Prefix.String()).Inc() },
	})
	if err != nil {
		return nil, fmt.Errorf("vip: %w", err)
	}
	return h, nil
}

// probeVIPs asks the LAN, for every address at once, whether another
// host holds it, and remembers who answered.
func (a *Agent) probeVIPs() {
	v := &a.vips
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, ad := range v.addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mac, err := v.drv.probe(ad, vipProbeWait)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				a.log.Warn("cannot probe a virtual address", "vip", ad.String(), "err", err)
			case mac != nil:
				if v.holders == nil {
					v.holders = map[string]string{}
				}
				v.holders[ad.Prefix.String()] = mac.String()
			}
		}()
	}
	wg.Wait()
}

// judgeProbes runs once, when the first election has settled (this node
// leads, or follows a leader): an address another host answered for at
// the start is a conflict when this node leads (it takes the address
// over; the other host keeps a copy); when it follows another leader,
// the holder is presumably that leader, and the answer is logged at info
// only. (The probe cannot tell: no member's MAC is known.)
func (a *Agent) judgeProbes(st election.Status) {
	v := &a.vips
	for _, addr := range slices.Sorted(maps.Keys(v.holders)) {
		mac := v.holders[addr]
		if st.State == election.StateFollower && st.Leader != 0 && st.Leader != a.cfg.NodeID {
			a.log.Info("a virtual address answered from another host at the start: presumably the leader's", "vip", addr, "holder", mac, "leader", a.nameOf(st.Leader))
			continue
		}
		a.met.VIPConflicts.WithLabelValues(addr).Inc()
		a.log.Error("another host held a virtual address of this cluster at the start, and no other leader does: the addresses conflict (this node's leader takes the address over, the other host keeps its copy until it is removed there)",
			"vip", addr, "holder", mac)
	}
	v.holders = nil
}

// wantVIPs: the addresses belong on this host now. A resign or a stop
// releases them itself, between the job's stop and RESIGN.
func (a *Agent) wantVIPs() bool {
	return a.machine.Status().State == election.StateLeader && !a.loop.leaving
}

// updateVIPs takes or drops the addresses as the leadership says; it runs
// before updateJob, which starts the job only once they are held.
func (a *Agent) updateVIPs() {
	if a.vips.holder == nil {
		return
	}
	switch want := a.wantVIPs(); {
	case want && !a.loop.vipHeld:
		a.acquireVIPs()
	case !want && a.loop.vipHeld:
		a.releaseVIPs("no longer the leader")
	}
}

// vipsReady: the job may run as far as the addresses go.
func (a *Agent) vipsReady() bool { return a.vips.holder == nil || a.loop.vipHeld }

func (a *Agent) acquireVIPs() {
	l := &a.loop
	l.vipHeld, l.dirty = true, true
	if err := a.vips.holder.Acquire(); err != nil {
		a.log.Error("cannot add every virtual address", "err", err)
		return
	}
	a.log.Info("virtual addresses up", "vips", a.vipList())
}

func (a *Agent) releaseVIPs(why string) {
	l := &a.loop
	if a.vips.holder == nil || !l.vipHeld {
		return
	}
	l.vipHeld, l.dirty = false, true
	if err := a.vips.holder.Release(); err != nil {
		a.log.Error("cannot remove every virtual address", "why", why, "err", err)
		return
	}
	a.log.Info("virtual addresses down", "why", why, "vips", a.vipList())
}

func (a *Agent) vipList() string {
	s := make([]string, len(a.vips.addrs))
	for i, ad := range a.vips.addrs {
		s[i] = ad.String()
	}
	return strings.Join(s, " ")
}

// isStaleClaim: m is another node's claim to lead (a COORDINATOR or a
// HEARTBEAT) that this leader outranks: a lower term, or its own term
// from a smaller key (the other side of a healed partition). A claim
// that outranks it is the machine's to follow, and may take a probe of
// the claimant first: no reason to announce.
func (a *Agent) isStaleClaim(m *wire.Message) bool {
	if m.Type != wire.TypeCoordinator && m.Type != wire.TypeHeartbeat || m.From == a.cfg.NodeID {
		return false
	}
	st := a.machine.Status()
	return st.State == election.StateLeader &&
		(m.Term < st.Term || m.Term == st.Term && (election.Key{Priority: m.Priority, ID: m.From}).Less(st.Self))
}

// staleClaim runs after the step of a stale claim heard while this node
// held the addresses. The hosts that heard the stale leader may have
// learnt its MAC for them, so this leader announces them again, but only
// once it is clear that it stays the leader: a stale claimant with a
// larger key takes over when it hears this leader (a preemption, a healed
// partition's other side), and an announcement from here meanwhile would
// draw the traffic away from it and back. So the burst waits
// vipStaleConfirm, and goes only if this node still leads in the same
// term (staleDue).
func (a *Agent) staleClaim(m *wire.Message) {
	l := &a.loop
	if !l.vipHeld || l.stalePending {
		return
	}
	now := a.now()
	if l.reannounced && now-l.reannouncedAt < vipReannounceEvery {
		return
	}
	l.stalePending, l.staleDue, l.staleTerm = true, now+a.vipStaleConfirm(), a.machine.Status().Term
	a.log.Info("a stale leader claims: announcing the virtual addresses again if this node still leads", "from", m.From,
		"type", m.Type.String(), "term", m.Term, "in", a.vipStaleConfirm())
	a.rearmAux()
}

// vipStaleConfirm is how long a stale claim's burst waits: two
// heartbeats, by when a stale claimant that outranks this leader has
// heard it and claimed.
func (a *Agent) vipStaleConfirm() time.Duration { return 2 * a.cfg.Heartbeat }

// staleDue sends the burst staleClaim deferred, if this node still holds
// the addresses as the leader of the same term.
func (a *Agent) staleDue(now time.Duration) {
	l := &a.loop
	if !l.stalePending || now < l.staleDue {
		return
	}
	l.stalePending = false
	st := a.machine.Status()
	if !l.vipHeld || st.State != election.StateLeader || st.Term != l.staleTerm {
		a.log.Info("no announcement for the stale claim: this node no longer leads in its term", "term", l.staleTerm)
		return
	}
	l.reannounced, l.reannouncedAt = true, now
	a.log.Info("announcing the virtual addresses again after a stale claim", "term", st.Term)
	a.vips.holder.Reannounce()
}

// VIPStatus is one virtual address in /status.
type VIPStatus struct {
	Address string `json:"address"` // 198.18.0.100/24
	Dev     string `json:"dev"`
	Up      bool   `json:"up"` // on this host now
}

// vipStatus reads the addresses' states for /status and the metrics.
func (a *Agent) vipStatus() []VIPStatus {
	if a.vips.holder == nil {
		return nil
	}
	sts := a.vips.holder.States()
	out := make([]VIPStatus, len(sts))
	for i, s := range sts {
		out[i] = VIPStatus{Address: s.Addr.Prefix.String(), Dev: s.Addr.Dev, Up: s.Up}
	}
	return out
}

// closeVIPs ends the holder's goroutine; it removes nothing.
func (a *Agent) closeVIPs() {
	if a.vips.holder != nil {
		a.vips.holder.Close()
	}
	if a.vips.stopKeeper != nil {
		// After the last Release (a graceful stop): the keeper ends
		// without removing anything.
		a.vips.stopKeeper()
		a.vips.stopKeeper = nil
	}
}
