//go:build linux

package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStartWaitsForAddress: an agent started before its bind address is
// on the host (a boot where the network comes up late) retries, one log
// line a second, and starts normally once the address appears; with an
// address that never comes it exits 3 after --start-timeout, a status
// systemd restarts. `lanleader status --is-leader` tells the leader.
func TestStartWaitsForAddress(t *testing.T) {
	n := NewNet(t, 1)
	addr := n.Addr(0)
	n.ip(t, "-n", n.Namespace(0), "addr", "del", addr+"/24", "dev", "eth0")
	p := n.Start(t, 0, "run", "--bind", addr, "--name", "host-1", "--node-id", "1", "--start-timeout", "30s")
	waitFor(t, "a retry logged", 10*time.Second, func() (bool, string) {
		return strings.Contains(p.Log(), "trying again"), ""
	})
	if p.Exited() {
		t.Fatal("the agent exited while its address was missing")
	}
	n.ip(t, "-n", n.Namespace(0), "addr", "add", addr+"/24", "dev", "eth0")
	waitFor(t, "it leads once the address is there", 15*time.Second, func() (bool, string) {
		out, err := n.Exec(0, "lanleader", "status", "--is-leader")
		return err == nil && strings.HasPrefix(out, "leader, term "), out
	})
	if log := p.Log(); !strings.Contains(log, "address not on this host") || !strings.Contains(log, `msg=started`) {
		t.Errorf("the log lacks the retries' reason or the start")
	}
	p.Signal(syscall.SIGTERM)
	if code, err := p.Wait(10 * time.Second); err != nil || code != 0 {
		t.Errorf("after SIGTERM: exit %d, %v; want 0", code, err)
	}

	// 198.18.0.250 never comes to host-1: exit 3 after the window.
	q := n.Start(t, 0, "run", "--bind", "198.18.0.250", "--name", "host-1", "--node-id", "1", "--start-timeout", "2s")
	if code, err := q.Wait(15 * time.Second); err != nil || code != 3 {
		t.Errorf("an address that never comes: exit %d, %v; want 3", code, err)
	}
	if n := strings.Count(q.Log(), "trying again"); n < 1 {
		t.Errorf("%d retries logged, want about one a second", n)
	}
}
