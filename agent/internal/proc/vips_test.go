package proc

import (
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/lanleader/lanleader/agent/internal/vip"
)

// The guard is given the virtual addresses in its environment, in
// vip.Addr's form, and takes the variable out of the job's.
func TestGuardVIPsEnv(t *testing.T) {
	s := New(Config{Argv: []string{"true"}})
	if v := s.vipsEnv(); v != "" {
		t.Errorf("without addresses: %q, want none", v)
	}
	addrs := []vip.Addr{
		{Prefix: netip.MustParsePrefix("198.18.0.100/24"), Dev: "eth0"},
		{Prefix: netip.MustParsePrefix("198.18.0.101/32"), Dev: "eth1"},
	}
	s.SetVIPs(addrs)
	addrs[0].Dev = "changed" // SetVIPs keeps a copy
	const want = guardVIPsEnv + "=198.18.0.100/24,dev=eth0 198.18.0.101/32,dev=eth1"
	if v := s.vipsEnv(); v != want {
		t.Errorf("vipsEnv %q, want %q", v, want)
	}
	cmd := s.guardCommand("/bin/true", Want{Run: true, Gen: 1})
	if !slices.Contains(cmd.Env, want) {
		t.Errorf("the guard's environment lacks %q", want)
	}

	// The guard's side: read back, and gone from the environment.
	t.Setenv(guardVIPsEnv, strings.TrimPrefix(want, guardVIPsEnv+"="))
	got, err := guardVIPs()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Prefix != netip.MustParsePrefix("198.18.0.100/24") || got[0].Dev != "eth0" || got[1].Dev != "eth1" {
		t.Errorf("guardVIPs %v", got)
	}
	if _, set := os.LookupEnv(guardVIPsEnv); set {
		t.Errorf("%s is left for the job", guardVIPsEnv)
	}
}

// removeVIPs removes through vipRemove and says what it removed.
func TestGuardRemovesVIPs(t *testing.T) {
	var got [][]vip.Addr
	old := vipRemove
	t.Cleanup(func() { vipRemove = old })
	vipRemove = func(addrs []vip.Addr) ([]vip.Addr, error) {
		got = append(got, addrs)
		return addrs[:1], nil
	}
	addrs := []vip.Addr{{Prefix: netip.MustParsePrefix("198.18.0.100/24"), Dev: "eth0"}}
	removeVIPs(nil, "none")
	removeVIPs(addrs, "the lease ran out")
	if len(got) != 1 || !slices.Equal(got[0], addrs) {
		t.Errorf("removed %v, want one call with %v", got, addrs)
	}
}
