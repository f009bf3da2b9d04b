// Package links is the part of the agent that tracks the carrier of the
// interfaces its part in the elections depends on (keepalived's
// interface tracking), one watch for all:
//
//   - The election interface (the one of the election address; with a
//     wildcard bind, of the address announced), always: a node that has
//     lost it hears no one and no one hears it. It takes no part in
//     elections (the driver's standby) until the carrier is back and it
//     has listened for the leader as long as a starting node does; a
//     leader steps down at once, without the hand-over of a resign: its
//     RESIGN cannot be heard, and the others elect when their detectors
//     fire, so its job must stop now, not when the hand-over is done. The
//     listen after the carrier returns lets the node follow the leader
//     the others elected meanwhile before it takes over (preemption), so
//     that the takeover waits for that leader's job to stop; electing at
//     once, knowing no leader, it would start its job beside that one.
//   - The interfaces of the virtual addresses (Config.VIPTrackLink): a
//     node that cannot hold them should not lead; a leader hands over as
//     a resign does.
//
// The loopback interface has carrier whenever it is up (LOWER_UP), so a
// cluster on 127.0.0.1 is tracked as any other.
package links

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/vip"
	"github.com/lanleader/lanleader/agent/part"
)

// Watcher starts a watch of the carrier of devs: report gets each dev's
// state before it returns, then every change, from one goroutine at a
// time, and must not block; stop ends the watch, after which report is
// not called; up reads a watched dev's carrier now, ahead of its report.
// System, or a test's fake.
type Watcher func(devs []string, report func(dev string, up bool)) (stop func(), up func(dev string) bool, err error)

// System watches the kernel's interfaces.
func System(devs []string, report func(string, bool)) (func(), func(string) bool, error) {
	w, err := vip.WatchLinks(devs, report)
	if err != nil {
		return nil, nil, err
	}
	return w.Close, w.Up, nil
}

// Links is the part. Its methods run on the event loop, but report.
type Links struct {
	host     part.Host
	watch    Watcher
	listen   time.Duration // how long a node whose carrier came back listens
	onChange func()        // the standby's reasons changed: the driver judges them again

	electionDev string   // the election interface
	vipDevs     []string // the virtual addresses' interfaces tracked
	devs        []string // the interfaces watched now
	stop        func()   // ends the watch; nil without one
	up          func(dev string) bool

	mu   sync.Mutex
	down map[string]bool // the interfaces reported down
	kick chan struct{}   // capacity 1: the loop reads down again (Kick)

	vipDown []string // the virtual addresses' interfaces that are down, sorted
	// lost: the election interface has no carrier, or had none until
	// listenUntil (the listen after it came back).
	lost        bool
	back        bool // the carrier is back: listening until listenUntil
	listenUntil time.Duration
	leaderName  string // the leader the node's status last named, for the log
}

// New is the part, watching with watch; a node whose carrier comes back
// listens for listen (a starting node's StartupWait) before it takes part
// again, and onChange runs on the loop when the standby's reasons change.
func New(h part.Host, watch Watcher, listen time.Duration, onChange func()) *Links {
	return &Links{host: h, watch: watch, listen: listen, onChange: onChange, kick: make(chan struct{}, 1)}
}

// Kick is signalled when the watch reported a change: the driver's loop
// then calls Update.
func (k *Links) Kick() <-chan struct{} { return k.kick }

// Watch (re)starts the watch for the election interface electionDev and
// the virtual addresses' interfaces vipDevs (nil: none tracked). A watch
// of the same interfaces is kept; a new one starts with every state
// afresh.
func (k *Links) Watch(electionDev string, vipDevs []string) error {
	devs := []string{electionDev}
	for _, d := range vipDevs {
		if !slices.Contains(devs, d) {
			devs = append(devs, d)
		}
	}
	k.electionDev, k.vipDevs = electionDev, slices.Clone(vipDevs)
	if k.stop != nil && slices.Equal(devs, k.devs) {
		return nil
	}
	k.Close()
	stop, up, err := k.watch(devs, k.report)
	if err != nil {
		return fmt.Errorf("watching the links of %s: %w", strings.Join(devs, ", "), err)
	}
	k.stop, k.up, k.devs = stop, up, devs
	return nil
}

// report is the watch's news, from its goroutine (or from Watch, on the
// loop or before it runs): it must not block.
func (k *Links) report(dev string, up bool) {
	k.mu.Lock()
	if k.down == nil {
		k.down = map[string]bool{}
	}
	if up {
		delete(k.down, dev)
	} else {
		k.down[dev] = true
	}
	k.mu.Unlock()
	select {
	case k.kick <- struct{}{}:
	default:
	}
}

// Update reads what the watch reported, on the loop when Kick fired and
// at the start, and tells the driver when the standby's reasons changed.
func (k *Links) Update() {
	k.mu.Lock()
	down := slices.Sorted(maps.Keys(k.down))
	k.mu.Unlock()
	changed := false
	if slices.Contains(down, k.electionDev) {
		if !k.lost || k.back {
			k.host.Log().Warn("the election interface has no carrier: this node takes no part in elections until it has, and stops leading now",
				"dev", k.electionDev)
			k.lost, k.back, changed = true, false, true
		}
	} else if k.lost && !k.back {
		k.host.Log().Info("the election interface has carrier again: listening for the leader before taking part in elections",
			"dev", k.electionDev, "for", k.listen)
		k.back, k.listenUntil, changed = true, k.host.Now()+k.listen, true
	}
	var vipDown []string
	for _, d := range down {
		if slices.Contains(k.vipDevs, d) {
			vipDown = append(vipDown, d)
		}
	}
	if !slices.Equal(vipDown, k.vipDown) {
		if len(vipDown) > 0 {
			k.host.Log().Warn("a link of the virtual addresses is down: this node takes no part in elections until it is up", "down", strings.Join(vipDown, ","))
		} else {
			k.host.Log().Info("the links of the virtual addresses are up: this node takes part in elections again")
		}
		k.vipDown, changed = vipDown, true
	}
	if changed {
		k.host.MarkDirty()
		k.host.Rearm() // the listen's deadline came or went
		k.onChange()
	}
}

// Gone reads the election interface's carrier now, ahead of the watch's
// report, and reports whether it is lost: then Update has told the
// driver (a leader steps down). The loop can reach a step that makes
// this node lead before the report of a carrier lost meanwhile: an agent
// resumed from a pause (SIGSTOP, a frozen VM) finds its election timer
// and the kernel's notice due together, and handles them in either
// order. The driver calls it before the job starts.
func (k *Links) Gone() bool {
	if k.up == nil || k.lost || k.up(k.electionDev) {
		return false
	}
	k.report(k.electionDev, false)
	k.Update()
	return true
}

// CarrierLost reports whether the election interface has no carrier now
// (not counting the listen after it came back): a leader steps down at
// once rather than hand over.
func (k *Links) CarrierLost() bool { return k.lost && !k.back }

// Reason is the standby's reason for the election interface, "" when
// there is none.
func (k *Links) Reason() string {
	switch {
	case k.back:
		return "the election interface's carrier came back: listening for the leader (" + k.electionDev + ")"
	case k.lost:
		return "the election interface has no carrier (" + k.electionDev + ")"
	}
	return ""
}

// VIPDown are the virtual addresses' interfaces that are down, sorted.
func (k *Links) VIPDown() []string { return k.vipDown }

// ElectionDev is the election interface.
func (k *Links) ElectionDev() string { return k.electionDev }

// Changed notes the leader's name, which the end of a listen logs.
func (k *Links) Changed(v *part.View) { k.leaderName = v.LeaderName }

// Next is the end of the listen after the carrier came back.
func (k *Links) Next() (time.Duration, bool) { return k.listenUntil, k.back }

// Due ends the listen after the carrier came back: the node takes part
// in elections again.
func (k *Links) Due(now time.Duration) {
	if !k.back || now < k.listenUntil {
		return
	}
	k.lost, k.back = false, false
	k.host.Log().Info("listened for the leader after the carrier came back: this node takes part in elections again",
		"dev", k.electionDev, "leader", k.leaderName)
	k.host.MarkDirty()
	k.onChange()
}

// Reload does nothing: which interfaces are watched is the driver's to
// say (Watch), after the addresses' part took a reload's addresses, and
// vip-track-link needs a restart.
func (k *Links) Reload(_, _ *config.Config) []string { return nil }

// Close ends the watch and forgets what it reported.
func (k *Links) Close() {
	if k.stop != nil {
		k.stop()
		k.stop, k.up, k.devs = nil, nil, nil
	}
	k.mu.Lock()
	k.down = nil
	k.mu.Unlock()
}

var _ part.Part = (*Links)(nil)
