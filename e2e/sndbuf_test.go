//go:build linux

package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// recordTB is a TB whose errors are recorded, not reported, and whose
// cleanups run when cleanup is called: to check what a test bed's
// teardown says.
type recordTB struct {
	*testing.T
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (r *recordTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *recordTB) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.errs) > 0
}

func (r *recordTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

func (r *recordTB) cleanup() {
	for k := len(r.cleanups) - 1; k >= 0; k-- {
		r.cleanups[k]()
	}
	r.cleanups = nil
}

// TestBedFailsOnSendFailures: a host whose kernel drops UDP sends for want
// of buffers (here a token bucket of 8 kbit/s on its eth0, whose queue
// overflows at once) fails the test when the bed is torn down, naming the
// host; a healthy bed does not.
func TestBedFailsOnSendFailures(t *testing.T) {
	if _, err := exec.LookPath("tc"); err != nil {
		t.Skip("needs tc (iproute2)")
	}
	for _, choke := range []bool{false, true} {
		r := &recordTB{T: t}
		n := NewNet(r, 2)
		if choke {
			if out, err := exec.Command("ip", "netns", "exec", n.Namespace(0), "tc", "qdisc", "add", "dev", "eth0", "root",
				"tbf", "rate", "8kbit", "burst", "1600", "limit", "1600").CombinedOutput(); err != nil {
				r.cleanup()
				t.Skipf("tc qdisc tbf: %v: %s", err, out)
			}
		}
		for range 50 {
			if err := n.SendUDP(0, n.Addr(1)+":9", 64, make([]byte, 200)); err != nil {
				r.cleanup()
				t.Fatal(err)
			}
		}
		counts, err := n.SendFailures()
		r.cleanup()
		if err != nil {
			t.Fatal(err)
		}
		errs := strings.Join(r.errs, "\n")
		switch {
		case !choke && (counts[0] != 0 || errs != ""):
			t.Errorf("healthy bed: send failures %v, errors %q", counts, errs)
		case choke && counts[0] == 0:
			t.Errorf("choked host-1: no send failure counted (%v)", counts)
		case choke && !strings.Contains(errs, "SndbufErrors: host-1 ") || choke && counts[1] != 0:
			t.Errorf("choked host-1 (failures %v): the teardown said %q, want an error naming host-1", counts, errs)
		}
	}
}

// TestBedPulledCableSendFailures: the send failures of a host whose cable
// the test pulled are the pull's (PullCable): the teardown leaves that
// host out, and still names another host whose sends failed.
func TestBedPulledCableSendFailures(t *testing.T) {
	if _, err := exec.LookPath("tc"); err != nil {
		t.Skip("needs tc (iproute2)")
	}
	r := &recordTB{T: t}
	n := NewNet(r, 3)
	for _, i := range []int{0, 1} {
		if out, err := exec.Command("ip", "netns", "exec", n.Namespace(i), "tc", "qdisc", "add", "dev", "eth0", "root",
			"tbf", "rate", "8kbit", "burst", "1600", "limit", "1600").CombinedOutput(); err != nil {
			r.cleanup()
			t.Skipf("tc qdisc tbf: %v: %s", err, out)
		}
		for range 50 {
			if err := n.SendUDP(i, n.Addr(2)+":9", 64, make([]byte, 200)); err != nil {
				r.cleanup()
				t.Fatal(err)
			}
		}
	}
	n.PullCable(r, 0, true)
	n.PullCable(r, 0, false)
	counts, err := n.SendFailures()
	r.cleanup()
	if err != nil {
		t.Fatal(err)
	}
	errs := strings.Join(r.errs, "\n")
	if counts[0] == 0 || counts[1] == 0 || !strings.Contains(errs, "SndbufErrors: host-2 ") || strings.Contains(errs, "host-1") {
		t.Errorf("failures %v: the teardown said %q, want an error naming host-2 and not host-1 (its cable was pulled)", counts, errs)
	}
}
