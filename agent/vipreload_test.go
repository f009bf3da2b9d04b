package agent

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/lanleader/lanleader/agent/internal/vip"
)

// TestReloadVIPs: a leader reloaded with another list of virtual
// addresses adds the new ones and removes only those no longer listed,
// without releasing the ones it keeps; an empty list releases them all.
func TestReloadVIPs(t *testing.T) {
	s := newAgentSet(t)
	rec := &vipRecord{}
	f := &fakeVIPs{rec: rec}
	a := startVIPAgent(t, s, 0, vipConfig("node-1", 1, false), f)
	waitState(t, a, "leader")
	second := VIP{Prefix: netip.MustParsePrefix("198.18.0.101/24")}
	reload := func(vips ...VIP) {
		t.Helper()
		next := a.Config()
		next.VIPs = vips
		if err := a.Reload(func() (Config, error) { return next, nil }); err != nil {
			t.Fatal(err)
		}
	}
	ops := func(from int) (out []string) {
		for _, c := range rec.all()[from:] {
			out = append(out, c.op)
		}
		return out
	}
	vips := func(up bool, addrs ...string) []VIPStatus {
		var out []VIPStatus
		for _, ad := range addrs {
			out = append(out, VIPStatus{Address: ad, Dev: "lo", Up: up})
		}
		return out
	}

	n := len(rec.all())
	reload(testVIP, second)
	if got := ops(n); !slices.Equal(got, []string{"acquire"}) {
		t.Errorf("adding one: calls %v, want one acquire (no release)", got)
	}
	if st := a.Status(); !slices.Equal(st.VIPs, vips(true, "198.18.0.100/24", "198.18.0.101/24")) ||
		!slices.Contains(st.LastReload.Applied, "vip") {
		t.Errorf("adding one: /status vips %+v, reload %+v", st.VIPs, st.LastReload)
	}

	n = len(rec.all())
	reload(second)
	f.mu.Lock()
	removed := f.removed[len(f.removed)-1]
	f.mu.Unlock()
	want := []vip.Addr{{Prefix: testVIP.Prefix, Dev: "lo"}}
	if got := ops(n); !slices.Equal(got, []string{"acquire", "remove"}) || !slices.Equal(removed, want) {
		t.Errorf("removing one: calls %v removing %v, want acquire then a remove of %v only", got, removed, want)
	}
	if st := a.Status(); !slices.Equal(st.VIPs, vips(true, "198.18.0.101/24")) {
		t.Errorf("removing one: /status vips %+v", st.VIPs)
	}

	n = len(rec.all())
	reload()
	if got := ops(n); !slices.Equal(got, []string{"release"}) || len(a.Status().VIPs) != 0 {
		t.Errorf("removing all: calls %v, vips %+v; want one release, none left", got, a.Status().VIPs)
	}
	reload(testVIP)
	if st := a.Status(); !slices.Equal(st.VIPs, vips(true, "198.18.0.100/24")) {
		t.Errorf("adding to none: /status vips %+v, want it held by the leader", st.VIPs)
	}
}
