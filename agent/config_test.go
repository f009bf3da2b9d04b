package agent

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/internal/waitfor"
)

// testConfig is DefaultConfig for a test agent on loopback named name,
// with node_id id: free ports, the unicast transport (loopback has no
// multicast), no HTTP listener, a quiet log.
func testConfig(name string, id uint64) Config {
	c := config.DefaultConfig()
	c.Name, c.NodeID = name, id
	c.Bind, c.ElectionPort, c.Transport, c.HTTP = "127.0.0.1:0", 0, config.TransportUnicast, ""
	c.Logger = quiet()
	return c
}

// TestStartRefusesIPv6Unspecified: an IPv6 agent must be given its
// address; a link-local one is refused with a reason.
func TestStartRefusesIPv6Binds(t *testing.T) {
	for bind, want := range map[string]string{
		"[::]:0":       "bind ::: give an IPv6 agent its address",
		"[fe80::1]:0":  "bind fe80::1: link-local IPv6 addresses are not supported",
		"127.0.0.1:0x": `bind "127.0.0.1:0x"`,
	} {
		c := testConfig("a", 1)
		c.Priority, c.Bind, c.Transport = 1, bind, config.TransportMulticast
		a, err := New(c)
		if err == nil {
			err = a.Start()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bind %s: %v, want %q", bind, err, want)
		}
		if a != nil {
			a.Crash() // must not hang after a failed Start
			a.Stop(context.Background())
		}
	}
}

// TestLifecycle: Stop and Crash before Start, after a failed Start, and
// twice, return at once; Start twice is refused.
func TestLifecycle(t *testing.T) {
	mk := func() *Agent {
		c := testConfig("a", 1)
		c.Priority = 1
		a, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		a := mk()
		a.Stop(context.Background()) // before Start: nothing to do
		a.Crash()
		// A failed Start (the HTTP port is taken by a first agent).
		first := mk()
		first.cfg.HTTP = "127.0.0.1:0"
		if err := first.Start(); err != nil {
			t.Error(err)
			return
		}
		second := mk()
		second.cfg.HTTP = first.HTTPAddr()
		if err := second.Start(); err == nil || !strings.Contains(err.Error(), "port already in use") {
			t.Errorf("second Start: %v", err)
		}
		second.Crash()
		second.Stop(context.Background())
		<-second.Done()
		if err := first.Start(); err == nil || !strings.Contains(err.Error(), "started twice") {
			t.Errorf("Start twice: %v", err)
		}
		first.Stop(context.Background())
		first.Stop(context.Background())
		first.Crash()
		<-first.Done()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Stop or Crash hangs")
	}
}

// TestStopBoundedByContext: a seed that accepts connections but never
// answers holds memberlist's join for its TCP timeout (10 s); Stop still
// returns when its context ends.
func TestStopBoundedByContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0") // never accepts: the handshake completes, nothing answers
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c := testConfig("a", 1)
	c.Priority, c.Join = 1, []string{ln.Addr().String()}
	a, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the join is under way: the seed's backlog holds it.
	waitfor.Until(t, "the join is under way", 5*time.Second, time.Millisecond, func() (bool, string) {
		return a.joiner.Attempts() > 0, "no join attempt yet"
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	t0 := time.Now()
	a.Stop(ctx)
	if d := time.Since(t0); d > 3*time.Second {
		t.Fatalf("Stop took %v with a 1s context", d)
	}
}
