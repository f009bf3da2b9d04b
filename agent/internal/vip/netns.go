package vip

import (
	"runtime"

	"github.com/vishvananda/netns"
)

// home is the network namespace of the thread that made a Manager or a
// LinkWatch. Their own goroutines may run on threads of another namespace
// (only when a caller moved its thread to another namespace, as tests do):
// do runs the namespace-bound calls (netlink, opening sockets) there. A
// process whose threads all share one namespace (the agent) never switches,
// and so needs no CAP_SYS_ADMIN.
type home struct{ ns netns.NsHandle }

// hereHome is the calling thread's namespace; none (do runs f where it
// is) when it cannot be read.
func hereHome() home {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ns, err := netns.Get()
	if err != nil {
		return home{ns: netns.None()}
	}
	return home{ns: ns}
}

// do runs f on a thread of h's namespace.
func (h home) do(f func() error) error {
	if !h.ns.IsOpen() {
		return f()
	}
	runtime.LockOSThread()
	cur, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return f()
	}
	defer cur.Close()
	if cur.Equal(h.ns) {
		runtime.UnlockOSThread()
		return f()
	}
	if err := netns.Set(h.ns); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	ferr := f()
	if netns.Set(cur) == nil {
		runtime.UnlockOSThread()
	} // else the thread stays locked and ends with its goroutine: it never runs another one in the wrong namespace
	return ferr
}

func (h *home) close() {
	if h.ns.IsOpen() {
		h.ns.Close()
	}
}
