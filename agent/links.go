package agent

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lanleader/lanleader/agent/internal/vip"
	"github.com/lanleader/lanleader/election"
)

// The carrier of the interfaces this node's part in the elections
// depends on (keepalived's interface tracking), one watch for all:
//
//   - The election interface (the one of the election address; with a
//     wildcard bind, of the address announced), always: a node that has
//     lost it hears no one and no one hears it. It takes no part in
//     elections (a standby, standby.go) until the carrier is back and it
//     has listened for the leader as long as a starting node does; a
//     leader steps down at once, without the hand-over of a resign: its
//     RESIGN cannot be heard, and the others elect when their detectors
//     fire, so its job must stop now, not when the hand-over is done. The
//     listen after the carrier returns lets the node follow the leader
//     the others elected meanwhile before it takes over (preemption), so
//     that the takeover waits for that leader's job to stop (lead.go);
//     electing at once, knowing no leader, it would start its job beside
//     that one.
//   - The interfaces of the virtual addresses (Config.VIPTrackLink): a
//     node that cannot hold them should not lead; a leader hands over as
//     a resign does (vip.go).
//
// The loopback interface has carrier whenever it is up (LOWER_UP), so a
// cluster on 127.0.0.1 is tracked as any other.

// linkWatcher starts a watch of the carrier of devs: report gets each
// dev's state before it returns, then every change, from one goroutine
// at a time, and must not block; stop ends the watch, after which report
// is not called; up reads a watched dev's carrier now, ahead of its
// report. vip.WatchLinks, or a test's fake (Config.linkWatch).
type linkWatcher func(devs []string, report func(dev string, up bool)) (stop func(), up func(dev string) bool, err error)

// systemLinks watches the kernel's interfaces.
func systemLinks(devs []string, report func(string, bool)) (func(), func(string) bool, error) {
	w, err := vip.WatchLinks(devs, report)
	if err != nil {
		return nil, nil, err
	}
	return w.Close, w.Up, nil
}

// linkAgent is the agent's part of the watch, set up by Start.
type linkAgent struct {
	watch       linkWatcher
	electionDev string   // the election interface
	devs        []string // the interfaces watched now
	stop        func()   // ends the watch; nil without one
	up          func(dev string) bool

	mu   sync.Mutex
	down map[string]bool // the interfaces reported down
	kick chan struct{}   // capacity 1: the loop reads down again
}

// linkLoopState is the part of loopState this file owns.
type linkLoopState struct {
	linksDown []string // the VIPs' interfaces that are down, sorted
	// carrierLost: the election interface has no carrier, or had none
	// until carrierListen (the listen after it came back).
	carrierLost   bool
	carrierBack   bool // the carrier is back: listening until carrierListen
	carrierListen time.Duration
}

// watchLinks (re)starts the watch for the interfaces tracked now: the
// election's, and with VIPTrackLink the virtual addresses'. A watch of the
// same interfaces is kept; a new one starts with every state afresh.
func (a *Agent) watchLinks() error {
	k := &a.links
	devs := []string{k.electionDev}
	if a.cfg.VIPTrackLink {
		for _, ad := range a.vips.addrs {
			if !slices.Contains(devs, ad.Dev) {
				devs = append(devs, ad.Dev)
			}
		}
	}
	if k.stop != nil && slices.Equal(devs, k.devs) {
		return nil
	}
	a.stopLinks()
	stop, up, err := k.watch(devs, a.onLinkReport)
	if err != nil {
		return fmt.Errorf("watching the links of %s: %w", strings.Join(devs, ", "), err)
	}
	k.stop, k.up, k.devs = stop, up, devs
	return nil
}

// stopLinks ends the watch and forgets what it reported.
func (a *Agent) stopLinks() {
	k := &a.links
	if k.stop != nil {
		k.stop()
		k.stop, k.up, k.devs = nil, nil, nil
	}
	k.mu.Lock()
	k.down = nil
	k.mu.Unlock()
}

// onLinkReport is the watch's report, from its goroutine (or from
// watchLinks, on the loop or before it runs): it must not block.
func (a *Agent) onLinkReport(dev string, up bool) {
	k := &a.links
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

// onLinks runs on the loop when a link changed, and at the start.
func (a *Agent) onLinks() {
	k := &a.links
	k.mu.Lock()
	down := slices.Sorted(maps.Keys(k.down))
	k.mu.Unlock()
	l := &a.loop
	changed := false
	if lost := slices.Contains(down, k.electionDev); lost {
		if !l.carrierLost || l.carrierBack {
			a.log.Warn("the election interface has no carrier: this node takes no part in elections until it has, and stops leading now",
				"dev", k.electionDev)
			l.carrierLost, l.carrierBack, changed = true, false, true
		}
	} else if l.carrierLost && !l.carrierBack {
		listen := a.machine.Config().StartupWait
		a.log.Info("the election interface has carrier again: listening for the leader before taking part in elections",
			"dev", k.electionDev, "for", listen)
		l.carrierBack, l.carrierListen, changed = true, a.now()+listen, true
		a.rearmAux()
	}
	var vipDown []string
	if a.cfg.VIPTrackLink {
		for _, d := range down {
			if slices.ContainsFunc(a.vips.addrs, func(ad vip.Addr) bool { return ad.Dev == d }) {
				vipDown = append(vipDown, d)
			}
		}
	}
	if !slices.Equal(vipDown, l.linksDown) {
		switch {
		case len(vipDown) > 0:
			a.log.Warn("a link of the virtual addresses is down: this node takes no part in elections until it is up", "down", strings.Join(vipDown, ","))
		default:
			a.log.Info("the links of the virtual addresses are up: this node takes part in elections again")
		}
		l.linksDown, changed = vipDown, true
	}
	if changed {
		l.dirty = true
		a.applyStandby()
	}
}

// carrierGone reads the election interface's carrier now, ahead of the
// watch's report, and reports whether it is lost: then onLinks has taken
// the node out of the elections (a leader steps down). The loop can reach
// a step that makes this node lead before the report of a carrier lost
// meanwhile: an agent resumed from a pause (SIGSTOP, a frozen VM) finds
// its election timer and the kernel's notice due together, and handles
// them in either order. updateJob calls it before the job starts.
func (a *Agent) carrierGone() bool {
	k := &a.links
	if k.up == nil || a.loop.carrierLost || k.up(k.electionDev) {
		return false
	}
	a.onLinkReport(k.electionDev, false)
	a.onLinks()
	return true
}

// carrierDue ends the listen after the carrier came back (aux timer).
func (a *Agent) carrierDue(now time.Duration) {
	l := &a.loop
	if !l.carrierBack || now < l.carrierListen {
		return
	}
	l.carrierLost, l.carrierBack, l.dirty = false, false, true
	st := a.machine.Status()
	a.log.Info("listened for the leader after the carrier came back: this node takes part in elections again",
		"dev", a.links.electionDev, "leader", a.nameOf(st.Leader))
	a.applyStandby()
}

// carrierReason is the standby's reason for the election interface, ""
// when there is none.
func (a *Agent) carrierReason() string {
	l := &a.loop
	switch {
	case l.carrierBack:
		return "the election interface's carrier came back: listening for the leader (" + a.links.electionDev + ")"
	case l.carrierLost:
		return "the election interface has no carrier (" + a.links.electionDev + ")"
	}
	return ""
}

// carrierStepDown: the node leads and its election interface lost its
// carrier: it steps down at once (standby.go).
func (a *Agent) carrierStepDown() bool {
	return a.loop.carrierLost && !a.loop.carrierBack && a.machine.Status().State == election.StateLeader
}
