// Package vips is the part of the agent that holds the cluster's virtual
// addresses (Config.VIPs) while the node leads. Package vip adds,
// announces, removes, probes and watches them; this part says when, on
// the event loop, as the driver tells it the leadership, in this order
// (the agent's vip_test.go pins it):
//
//   - Becoming leader: the addresses are added (Acquire) before the job
//     starts: the driver asks for the job only once they are held (Ready).
//   - A resign or a graceful stop: the job stops, then the addresses are
//     removed (Release), then RESIGN goes out, so that the next leader
//     takes them at once and never beside a job of ours.
//   - Losing the leadership to a claim (a larger key, a partition that
//     heals, a higher term): released at once, in the step that lost it,
//     while the job stops (Update).
//   - Quorum mode: the addresses go with the lease. The machine steps
//     down one heartbeat before the lease ends when no majority renewed
//     it (election.Config.StopBefore), which releases them; the job's
//     guard removes them at the lease's end if the agent has not (it is
//     paused), and when the agent dies.
//   - A leader that hears a stale claim (a COORDINATOR or HEARTBEAT of
//     another node, which it outlives) announces them again two heartbeats
//     later if it still leads in the same term: the stale leader's hosts
//     may have learnt its MAC for them (StaleClaim, stale.go).
//   - A leader that keeps leading in a later term of its own (it outranked
//     a claim of a higher term: the other side of a healed partition,
//     whose leader held the addresses there, perhaps announced them after
//     the heal) announces them again at once: the hosts that heard the
//     other leader come back (Update).
//   - A link of theirs down (VIPTrackLink): the node takes no part in
//     elections until it is up again; a leader hands over as a resign
//     does (the driver's standby, told by agent/part/links, which watches
//     the interfaces Devs names). The election interface without carrier:
//     the leader steps down at once, and they go at once.
//   - The agent's death (SIGKILL, a crash): the address keeper, a child
//     started with the agent (proc.StartKeeper), is told by the kernel
//     and removes the addresses; the job's guard does too. The keeper
//     holds the notice guard's pipe (Node.Hold) until it has removed
//     them: the crashed leader's NOTICE, which the next leader takes
//     them at, goes out only once they are gone, in the order of a
//     graceful stop (the job stops, the addresses go, then RESIGN).
//   - At the start, before joining: the addresses an earlier run left on
//     this host (one whose keeper could not remove them: killed with it,
//     as a whole unit's SIGKILL does) are removed, each logged at warn;
//     then each is probed (RFC 5227), and one that another host answers
//     for is logged and counted once the first election has settled,
//     unless another node led meanwhile: a node that takes the addresses
//     over from the leader it heard (a preemption) found them on that
//     leader's host (HeardLeader, JudgeProbes).
//   - A reload: a leader adds the new addresses before it removes those
//     no longer listed (reload.go).
//
// Acquire and Release are netlink calls, fast enough for the loop; the
// announcements after the first are sent by the vip.Manager's goroutine.
package vips

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/agent/internal/vip"
	"github.com/lanleader/lanleader/agent/part"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/metrics"
	"github.com/lanleader/lanleader/wire"
)

// Holder holds the addresses: a *vip.Manager, or a test's fake. Close
// ends its goroutine and removes nothing.
type Holder interface {
	Acquire() error
	Release() error
	Reannounce(delayed bool)
	States() []vip.State
	Close()
}

// Driver is package vip's side of the part, replaced by the tests.
type Driver struct {
	Hold   func(vip.Config) (Holder, error)
	Remove func([]vip.Addr) ([]vip.Addr, error)
	Probe  func(vip.Addr, time.Duration) (net.HardwareAddr, error)
	// Keep starts the address keeper (a child that removes the addresses
	// when the agent dies: proc.StartKeeper), holding hold (the notice
	// guard's pipe, nil: none) until it has; nil: no keeper.
	Keep func(addrs []vip.Addr, hold *os.File) (stop func(), err error)
}

// System is package vip itself.
var System = Driver{
	Hold: func(c vip.Config) (Holder, error) {
		m, err := vip.New(c)
		if err != nil {
			return nil, err
		}
		return m, nil
	},
	Remove: vip.Remove,
	Probe:  vip.Probe,
	Keep: func(addrs []vip.Addr, hold *os.File) (func(), error) {
		k, err := proc.StartKeeper(addrs, hold)
		if err != nil {
			return nil, err
		}
		return k.Stop, nil
	},
}

// Node is what the part asks of the driver, beside its Host.
type Node struct {
	// Status is the election machine's status now: whether this node
	// leads, in which term, and its key.
	Status func() election.Status
	// SetVIPs gives the job's guard the addresses held, which it removes
	// when the agent dies; nil: no job.
	SetVIPs func([]vip.Addr)
	// Name is the member name of a node_id, for the log ("" unknown); nil:
	// none known.
	Name func(id uint64) string
	// Hold is the notice guard's pipe (proc.Notifier.Hold), which the
	// address keeper holds until it has removed the addresses; nil (or a
	// nil func): no notice guard.
	Hold func() *os.File
}

// probeWait is how long the start waits for an answer to its probes
// (all at once): a host of the LAN answers within a millisecond; RFC
// 5227's own PROBE_WAIT of 1s is for a host that must not take an
// address in use, which the leader does anyway.
const probeWait = 500 * time.Millisecond

// Status is one virtual address in /status.
type Status struct {
	Address string `json:"address"` // 198.18.0.100/24
	Dev     string `json:"dev"`
	Up      bool   `json:"up"` // on this host now
}

// VIPs is the part. Every method runs on the event loop.
type VIPs struct {
	host part.Host
	drv  Driver
	met  *metrics.Metrics
	node Node
	// What the configuration says that needs a restart.
	nodeID   uint64
	bind     string
	announce vip.Announce
	confirm  time.Duration // how long a stale claim's burst waits: two heartbeats
	// neverLeads: the node's role (witness, observer) never leads, so
	// its addresses are never held: nothing is probed, removed or kept,
	// and an interface of another host's list need not exist here (one
	// configuration file serves every host; the start warns instead).
	neverLeads bool

	addrs  []vip.Addr // Config.VIPs with their Dev set
	holder Holder     // nil without addresses
	// stopKeeper ends the address keeper (it removes the addresses when
	// the agent dies); nil without one.
	stopKeeper func()
	// holders: addresses another host answered for at the start (its
	// MAC), judged when the first election has settled (JudgeProbes).
	holders map[string]string
	// leaders: the other nodes heard to lead (a claim, a heartbeat, a
	// resign) since the start, until the probes are judged (HeardLeader).
	leaders []uint64
	judged  bool
	// self and dev are the election's address and interface (set by
	// Start), for the addresses a reload adds.
	self netip.Addr
	dev  string

	held bool // Acquire was called, Release not since
	// heldTerm is the term this node led in when it took the addresses,
	// or last announced them for a new term of its own (Update).
	heldTerm uint64
	stale
}

// New is the part for cfg's node; it holds nothing until Start.
func New(h part.Host, cfg *config.Config, drv Driver, met *metrics.Metrics, node Node) *VIPs {
	return &VIPs{host: h, drv: drv, met: met, node: node, nodeID: cfg.NodeID, bind: cfg.Bind,
		announce: vip.Announce{Repeat: cfg.VIPAnnounceRepeat, Interval: cfg.VIPAnnounceInterval,
			Delay: cfg.VIPAnnounceDelay, Refresh: cfg.VIPAnnounceRefresh},
		confirm: 2 * cfg.Heartbeat, neverLeads: !cfg.ElectionRole().MayLead()}
}

// Start sets the interfaces of list's addresses, removes what an earlier
// run left, probes them, and starts their holder; Keep starts their
// keeper. ip and dev are the election's address and interface ("" when
// unknown).
func (v *VIPs) Start(list []config.VIP, ip netip.Addr, dev string) error {
	v.self, v.dev = ip.Unmap(), dev
	if len(list) == 0 || v.neverLeads {
		return nil
	}
	addrs, err := v.resolve(list)
	if err != nil {
		return err
	}
	v.addrs = addrs
	removed, err := v.drv.Remove(v.addrs)
	for _, r := range removed {
		v.host.Log().Warn("removed a virtual address an earlier run left on this host (it was killed before it could)", "vip", r.String())
	}
	if err != nil {
		v.host.Log().Warn("cannot remove the virtual addresses an earlier run may have left", "err", err)
	}
	v.probe()
	h, err := v.hold(v.addrs)
	if err != nil {
		return err
	}
	v.holder = h
	v.setVIPs()
	return nil
}

// resolve checks the addresses against the election's own and gives
// those without a dev= the election's interface.
func (v *VIPs) resolve(list []config.VIP) ([]vip.Addr, error) {
	addrs := slices.Clone(list)
	for i := range addrs {
		ad := &addrs[i]
		if ad.Prefix.Addr() == v.self {
			return nil, fmt.Errorf("vip %v: the address this agent announces for its elections; a virtual address must be one no host owns", ad.Prefix)
		}
		if ad.Dev == "" {
			if v.dev == "" {
				return nil, fmt.Errorf("vip %v: no dev= and no interface known for bind %s; give dev=IFACE", ad.Prefix, v.bind)
			}
			ad.Dev = v.dev
		}
	}
	return addrs, nil
}

// Keep starts the address keeper of the addresses Start set, if any, once
// the notice guard runs (Node.Hold), after Start and before the loop:
// nothing is held before.
func (v *VIPs) Keep() {
	if len(v.addrs) > 0 && v.stopKeeper == nil {
		v.startKeeper()
	}
}

// startKeeper starts the address keeper of the addresses, when the
// driver has one, holding the notice guard's pipe when there is one.
func (v *VIPs) startKeeper() {
	if v.drv.Keep == nil {
		return
	}
	var hold *os.File
	if v.node.Hold != nil {
		hold = v.node.Hold()
	}
	var err error
	if v.stopKeeper, err = v.drv.Keep(v.addrs, hold); err != nil {
		v.host.Log().Warn("no address keeper: a SIGKILL of this agent leaves its virtual addresses on this host until its next start", "err", err)
	}
}

// endKeeper ends the address keeper without removing anything: after the
// last Release, or before a reload starts one for other addresses.
func (v *VIPs) endKeeper() {
	if v.stopKeeper != nil {
		v.stopKeeper()
		v.stopKeeper = nil
	}
}

// setVIPs tells the job's guard the addresses.
func (v *VIPs) setVIPs() {
	if v.node.SetVIPs != nil {
		v.node.SetVIPs(v.addrs)
	}
}

// hold is the holder of addrs, their series of the metrics created.
func (v *VIPs) hold(addrs []vip.Addr) (Holder, error) {
	for _, ad := range addrs {
		v.met.VIPInit(ad.Prefix.String())
	}
	h, err := v.drv.Hold(vip.Config{
		Addrs:    addrs,
		Announce: v.announce,
		Log:      v.host.Log(),
		Sent:     func(ad vip.Addr) { v.met.VIPAnnouncements.WithLabelValues(ad.Prefix.String()).Inc() },
	})
	if err != nil {
		return nil, fmt.Errorf("vip: %w", err)
	}
	return h, nil
}

// probe asks the LAN, for every address at once, whether another host
// holds it, and remembers who answered.
func (v *VIPs) probe() {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, ad := range v.addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mac, err := v.drv.Probe(ad, probeWait)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				v.host.Log().Warn("cannot probe a virtual address", "vip", ad.String(), "err", err)
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

// HeardLeader runs for every election packet before its step, until the
// probes are judged: another node's claim to lead (COORDINATOR,
// HEARTBEAT) or its resignation (RESIGN) says that it led since this
// node started, and presumably held the addresses.
func (v *VIPs) HeardLeader(m *wire.Message) {
	if v.judged || len(v.holders) == 0 || m.From == v.nodeID || m.From == 0 || slices.Contains(v.leaders, m.From) {
		return
	}
	switch m.Type {
	case wire.TypeCoordinator, wire.TypeHeartbeat, wire.TypeResign:
		v.leaders = append(v.leaders, m.From)
	}
}

// JudgeProbes runs once, when the first election has settled (st: this
// node leads, or follows a leader, named leader). The probe cannot tell
// whose an answer is (no member's MAC is known), so the answer is judged
// by who led:
//   - this node follows another leader: presumably the leader's (info);
//   - this node leads, and another node was heard to lead since the
//     start (HeardLeader): a hand-over, a preemption or the takeover
//     from a leader that resigned; the answer was presumably that
//     leader's, which released the address when this node's claim came
//     (info). An ordinary preemption logged an error here before;
//   - this node leads and heard no other leader: a host that is not this
//     cluster's leader holds the address. That is a conflict: logged at
//     error and counted (lanleader_vip_conflicts_total); this node takes
//     the address over, the other host keeps its copy.
//
// Without answers it logs nothing.
func (v *VIPs) JudgeProbes(st election.Status, leader string) {
	if v.judged {
		return
	}
	v.judged = true
	for _, addr := range slices.Sorted(maps.Keys(v.holders)) {
		mac := v.holders[addr]
		switch {
		case st.State == election.StateFollower && st.Leader != 0 && st.Leader != v.nodeID:
			v.host.Log().Info("a virtual address answered from another host at the start: presumably the leader's", "vip", addr, "holder", mac, "leader", leader)
		case len(v.leaders) > 0:
			v.host.Log().Info("a virtual address answered from another host at the start: presumably the previous leader's, which this node took over from",
				"vip", addr, "holder", mac, "previous", v.names(v.leaders))
		default:
			v.met.VIPConflicts.WithLabelValues(addr).Inc()
			v.host.Log().Error("another host held a virtual address of this cluster at the start, and no other leader does: the addresses conflict (this node's leader takes the address over, the other host keeps its copy until it is removed there)",
				"vip", addr, "holder", mac)
		}
	}
	v.holders, v.leaders = nil, nil
}

// names are the member names of ids, a node_id where none is known.
func (v *VIPs) names(ids []uint64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		if v.node.Name != nil {
			s[i] = v.node.Name(id)
		}
		if s[i] == "" {
			s[i] = fmt.Sprintf("node_id %d", id)
		}
	}
	return strings.Join(s, " ")
}

// Update takes or drops the addresses: want, they belong on this host
// now (it leads, and no graceful stop is under way: a resign or a stop
// releases them itself, between the job's stop and RESIGN). The driver
// calls it before it decides the job, which starts only once they are
// held.
func (v *VIPs) Update(want bool) {
	if v.holder == nil {
		return
	}
	switch {
	case want && !v.held:
		v.Acquire()
	case want && v.node.Status().Term > v.heldTerm:
		// Still the leader, in a later term: it outranked a leader of a
		// higher term, which held the addresses on its side and may have
		// drawn this side's hosts to its MAC. A stale claim's deferred
		// burst is for the same term; this one goes now.
		v.heldTerm = v.node.Status().Term
		v.host.Log().Info("leading in a new term: announcing the virtual addresses again", "term", v.heldTerm)
		v.holder.Reannounce(true)
	case !want && v.held:
		v.Release("no longer the leader")
	}
}

// Ready: the job may run as far as the addresses go.
func (v *VIPs) Ready() bool { return v.holder == nil || v.held }

// Held: the addresses were acquired and not released since.
func (v *VIPs) Held() bool { return v.held }

// On: there are addresses to hold.
func (v *VIPs) On() bool { return v.holder != nil }

// Acquire adds the addresses and announces them; an address it cannot
// add is logged, and the addresses count as held (Release removes what
// is there).
func (v *VIPs) Acquire() {
	v.held, v.heldTerm = true, v.node.Status().Term
	v.host.MarkDirty()
	if err := v.holder.Acquire(); err != nil {
		v.host.Log().Error("cannot add every virtual address", "err", err)
		return
	}
	v.host.Log().Info("virtual addresses up", "vips", v.List())
}

// Release removes the addresses, if held, saying why in the log.
func (v *VIPs) Release(why string) {
	if v.holder == nil || !v.held {
		return
	}
	v.held = false
	v.host.MarkDirty()
	if err := v.holder.Release(); err != nil {
		v.host.Log().Error("cannot remove every virtual address", "why", why, "err", err)
		return
	}
	v.host.Log().Info("virtual addresses down", "why", why, "vips", v.List())
}

// Addrs are the addresses, each with its interface.
func (v *VIPs) Addrs() []vip.Addr { return v.addrs }

// Devs are the addresses' interfaces, one an address, for the links'
// watch.
func (v *VIPs) Devs() []string {
	var devs []string
	for _, ad := range v.addrs {
		devs = append(devs, ad.Dev)
	}
	return devs
}

// List is the addresses as the log gives them, separated by spaces.
func (v *VIPs) List() string {
	s := make([]string, len(v.addrs))
	for i, ad := range v.addrs {
		s[i] = ad.String()
	}
	return strings.Join(s, " ")
}

// Status reads the addresses' states for /status and the metrics: the
// holder looks at the host, where an operator may have removed one by
// hand.
func (v *VIPs) Status() []Status {
	if v.holder == nil {
		return nil
	}
	sts := v.holder.States()
	out := make([]Status, len(sts))
	for i, s := range sts {
		out[i] = Status{Address: s.Addr.Prefix.String(), Dev: s.Addr.Dev, Up: s.Up}
	}
	return out
}

// Changed does nothing: the driver tells the part the leadership itself
// (Update), in the step that changed it, before the job.
func (v *VIPs) Changed(*part.View) {}

// Close ends the holder's goroutine and the keeper; it removes nothing
// (after the last Release of a graceful stop, the keeper ends without
// removing anything). A second Close does nothing more.
func (v *VIPs) Close() {
	if v.holder != nil {
		v.holder.Close()
	}
	v.endKeeper()
}

var _ part.Part = (*VIPs)(nil)
