package udp

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

// TestElectionAddr: a loopback bind is its own address on the loopback
// interface; an address of no interface here is ErrNotOnHost (the agent
// retries it), naming the host's addresses; an IPv6 wildcard or
// link-local bind is refused with why.
func TestElectionAddr(t *testing.T) {
	ip, ifi, err := ElectionAddr(netip.MustParseAddrPort("127.0.0.1:7946"))
	if err != nil || ip != netip.MustParseAddr("127.0.0.1") || ifi == nil || ifi.Flags&net.FlagLoopback == 0 {
		t.Fatalf("127.0.0.1: %v %v %v, want itself on the loopback interface", ip, ifi, err)
	}
	_, _, err = ElectionAddr(netip.MustParseAddrPort("198.18.255.254:7946"))
	if !errors.Is(err, ErrNotOnHost) || !strings.Contains(err.Error(), "bind 198.18.255.254: address not on this host (it has ") {
		t.Errorf("an address not here: %v, want ErrNotOnHost naming the host's addresses", err)
	}
	for bind, want := range map[string]string{
		"[::]:7946":      "give an IPv6 agent its address",
		"[fe80::1]:7946": "link-local IPv6 addresses are not supported",
	} {
		_, _, err := ElectionAddr(netip.MustParseAddrPort(bind))
		if err == nil || errors.Is(err, ErrNotOnHost) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", bind, err, want)
		}
	}
}
