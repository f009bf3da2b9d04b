//go:build linux

package udp

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netns"
)

// A send to a neighbour that does not answer ARP (a pulled cable, a dead
// host) waits in the kernel's neighbour queue, up to 3 s, charged to the
// socket's send buffer. Once the buffer is full the socket cannot take
// another datagram: a write that waited for room (the net package's)
// stalled the agent's loop until the neighbour failed. Send returns at
// once with ErrWouldBlock instead.
//
// The bed: a network namespace holding a veth pair, both ends up, one
// with 198.18.77.1/24; the socket, bound there with a small SO_SNDBUF,
// sends to 198.18.77.2, which nobody holds, so every datagram waits for
// ARP. Nothing leaves the namespace.
func TestSendNeverWaits(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root (a network namespace)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("skipped: needs the ip command (iproute2)")
	}
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	ns := fmt.Sprintf("udp-sndbuf-%d", os.Getpid())
	ip("netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	ip("-n", ns, "link", "add", "sa0", "type", "veth", "peer", "name", "sb0")
	ip("-n", ns, "link", "set", "sa0", "up")
	ip("-n", ns, "link", "set", "sb0", "up")
	ip("-n", ns, "addr", "add", "198.18.77.1/24", "dev", "sa0")
	h, err := netns.GetFromName(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()

	// The socket is opened on a thread of the namespace, and keeps it.
	var tr *Transport
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := netns.Set(h); err != nil {
			errc <- err
			return
		}
		var err error
		tr, err = Open(netip.MustParseAddrPort("198.18.77.1:0"), netip.Addr{}, nil)
		errc <- err
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	// The kernel's minimum (it doubles the value asked, and raises it to
	// SOCK_MIN_SNDBUF): a few datagrams fill it.
	var serr error
	if err := tr.Uni.(conn4).raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, 1024)
	}); err != nil || serr != nil {
		t.Fatal(err, serr)
	}

	dst := netip.MustParseAddrPort("198.18.77.2:7947")
	b := make([]byte, 200)
	const sends = 64
	var sent, blocked int
	var longest time.Duration
	for i := range sends {
		start := time.Now()
		err := tr.Send(b, dst)
		longest = max(longest, time.Since(start))
		switch {
		case err == nil:
			sent++
		case errors.Is(err, ErrWouldBlock):
			blocked++
		default:
			t.Fatalf("send %d: %v", i+1, err)
		}
	}
	t.Logf("%d sends to a neighbour that does not answer: %d taken, %d would block; the longest took %v", sends, sent, blocked, longest)
	if sent == 0 || blocked == 0 || sent+blocked != sends {
		t.Errorf("want the first sends taken and the rest refused once the buffer is full")
	}
	// Sends are microseconds; a wait for the neighbour is seconds.
	if longest > 500*time.Millisecond {
		t.Errorf("a send took %v: it waited for room in the buffer", longest)
	}
}
