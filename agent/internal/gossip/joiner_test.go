package gossip

import (
	"testing"
	"time"
)

// A seed without a port gets memberlist's default; an IPv6 address is
// bracketed.
func TestNormalizeSeed(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"198.18.0.1", "198.18.0.1:7946"},
		{"198.18.0.1:8000", "198.18.0.1:8000"},
		{"host-a", "host-a:7946"},
		{"fd00::1", "[fd00::1]:7946"},
		{"[fd00::1]", "[fd00::1]:7946"},
		{"[fd00::1]:8000", "[fd00::1]:8000"},
	} {
		if got := normalizeSeed(c.in, 7946); got != c.want {
			t.Errorf("normalizeSeed(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A kick is dropped while another waits; Stop ends Run (twice is
// harmless), and Done says so.
func TestJoinerKickStop(t *testing.T) {
	j := NewJoiner(nil, nil, nil, nil)
	if !j.Kick([]string{"198.18.0.2:7946"}) || j.Kick([]string{"198.18.0.3:7946"}) {
		t.Fatal("want the first kick taken and the second, while the first waits, dropped")
	}
	<-j.kick
	go j.Run()
	j.Stop()
	j.Stop()
	select {
	case <-j.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after Stop")
	}
	if n := j.Attempts(); n != 0 {
		t.Fatalf("%d joins begun without a seed or a kick", n)
	}
}
