package vips

import (
	"slices"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/vip"
)

// Reload applies cfg's list of virtual addresses when it differs from
// old's, named "vip"; the announcements' settings and vip-track-link need
// a restart. The driver then watches the links of the new addresses and
// tells the part the leadership (Update): a leader that had none takes
// them then.
func (v *VIPs) Reload(old, cfg *config.Config) []string {
	if slices.Equal(cfg.VIPs, old.VIPs) || v.neverLeads || !v.reload(cfg.VIPs) {
		return nil
	}
	return []string{"vip"}
}

// reload applies a reload's list of virtual addresses. A leader that
// holds the addresses adds the new ones (and announces them) before it
// removes those no longer listed, and the addresses in both lists stay
// on the host throughout; a follower only changes what it will take. It
// reports whether the list changed; an error (an address that cannot be
// one) is logged and keeps the running list.
func (v *VIPs) reload(list []config.VIP) bool {
	log := v.host.Log()
	next, err := v.resolve(list)
	if err != nil {
		log.Error("reload: the virtual addresses are kept", "err", err)
		return false
	}
	if slices.Equal(next, v.addrs) {
		return false
	}
	old, held := v.holder, v.held
	var gone []vip.Addr
	for _, ad := range v.addrs {
		if !slices.Contains(next, ad) {
			gone = append(gone, ad)
		}
	}
	var h Holder
	if len(next) > 0 {
		if h, err = v.hold(next); err != nil {
			log.Error("reload: the virtual addresses are kept", "err", err)
			return false
		}
	}
	// The keeper of the old addresses ends; one for the new starts below.
	v.endKeeper()
	switch {
	case held && h != nil:
		if err := h.Acquire(); err != nil {
			log.Error("cannot add every virtual address", "err", err)
		}
		if len(gone) > 0 {
			if _, err := v.drv.Remove(gone); err != nil {
				log.Error("cannot remove every virtual address no longer configured", "err", err)
			}
		}
	case held:
		v.Release("no longer configured")
	}
	if old != nil {
		old.Close()
	}
	v.holder, v.addrs = h, next
	v.held = held && h != nil
	v.setVIPs()
	if len(next) > 0 {
		v.startKeeper()
	}
	log.Info("virtual addresses reloaded", "vips", v.List(), "removed", len(gone))
	v.host.MarkDirty()
	return true
}
