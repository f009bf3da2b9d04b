package agent

import (
	"slices"

	"github.com/lanleader/lanleader/agent/internal/vip"
)

// reloadVIPs applies a reload's list of virtual addresses, on the loop. A
// leader that holds the addresses adds the new ones (and announces them)
// before it removes those no longer listed, and the addresses in both
// lists stay on the host throughout; a follower only changes what it will
// take. It reports whether the list changed; an error (an address that
// cannot be one) is logged and keeps the running list.
func (a *Agent) reloadVIPs(list []VIP) bool {
	v := &a.vips
	next, err := a.resolveVIPs(list)
	if err != nil {
		a.log.Error("reload: the virtual addresses are kept", "err", err)
		return false
	}
	if slices.Equal(next, v.addrs) {
		return false
	}
	old, held := v.holder, a.loop.vipHeld
	var gone []vip.Addr
	for _, ad := range v.addrs {
		if !slices.Contains(next, ad) {
			gone = append(gone, ad)
		}
	}
	var h addrHolder
	if len(next) > 0 {
		if h, err = a.holdVIPs(next); err != nil {
			a.log.Error("reload: the virtual addresses are kept", "err", err)
			return false
		}
	}
	a.stopVIPWorkers()
	switch {
	case held && h != nil:
		if err := h.Acquire(); err != nil {
			a.log.Error("cannot add every virtual address", "err", err)
		}
		if len(gone) > 0 {
			if _, err := v.drv.remove(gone); err != nil {
				a.log.Error("cannot remove every virtual address no longer configured", "err", err)
			}
		}
	case held:
		a.releaseVIPs("no longer configured")
	}
	if old != nil {
		old.Close()
	}
	v.holder, v.addrs = h, next
	a.loop.vipHeld = held && h != nil
	if a.procs.sup != nil {
		a.procs.sup.SetVIPs(v.addrs)
	}
	if len(next) > 0 {
		a.startKeeper()
	}
	if err := a.watchLinks(a.links.ElectionDev()); err != nil {
		a.log.Error("reload: links not watched", "err", err)
	}
	a.log.Info("virtual addresses reloaded", "vips", a.vipList(), "removed", len(gone))
	a.loop.dirty = true
	a.updateVIPs() // a leader that had none takes them now
	a.onLinks()
	return true
}

// stopVIPWorkers ends the keeper of the addresses before a reload
// replaces them. The link watch is restarted for the new addresses'
// interfaces by watchLinks, which keeps one of the same interfaces.
func (a *Agent) stopVIPWorkers() {
	v := &a.vips
	if v.stopKeeper != nil {
		v.stopKeeper()
		v.stopKeeper = nil
	}
}
