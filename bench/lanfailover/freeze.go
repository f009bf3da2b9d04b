//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/lanleader/lanleader/bench/internal/procstat"
	"github.com/lanleader/lanleader/e2e"
)

// Mode freeze: the leader's whole host stops at once, as a frozen VM or a
// hung kernel with its cable out. Every process of the host's namespace
// (the agent, whatever it started, anything the benchmark runs there:
// keepalived and its VRRP child, vipecho) gets SIGSTOP, parents before
// their children, so that no process of the host runs to see another
// stopped; then the bridge's end of the host's veth goes down (as e2e's
// PullCable does: the host's eth0 loses its carrier), so nothing leaves it
// and nothing reaches it: no frame the processes had queued, no ARP or
// TCP answer of its kernel, which a SIGSTOP alone would leave running.
// The time runs from the first SIGSTOP (the processes are listed before
// it): from then on the host sends nothing of its own.
//
// After the trial the host thaws: its cable back in first, then SIGCONT
// to every process stopped, in the reverse order (children first), so
// that the processes wake on a working link and a parent wakes with its
// children running. The host is resumed, not restarted: a frozen host
// that comes back is the fault being modelled (lanleader's agent resumes
// believing it leads, hears the newer term and, by preemption, takes the
// lead back; host-K's keepalived, of the highest priority, takes the
// master role back, in about as long as a restarted one takes), and the
// next trial starts, as after a crash's restart, only once every host
// agrees that host-K leads again (keepalived: host-K master, the others
// backups, the virtual address on host-K alone). A restart instead would
// give the next trial the same start (an agreed LAN; nothing of the
// freeze lasts into the next fault but the resumed process itself) and
// would leave the way out of a freeze untried: a thaw that did not end
// in host-K's lead would abort the row.

// hostOps is what a freeze does to one host of the test bed (nsHost; a
// fake in the tests).
type hostOps interface {
	pids() ([]int, error)                     // the processes of the host's namespace
	parent(pid int) int                       // pid's parent, 0 when unknown
	signal(pid int, sig syscall.Signal) error // syscall.Kill
	cable(out bool) error                     // the host's bridge port down (out) or up
}

// sweepRounds bounds the re-listings of a freezing host's processes: a
// process may have forked between its listing and its SIGSTOP.
const sweepRounds = 5

// freezer freezes one host and thaws it. Not safe for concurrent use.
type freezer struct {
	ops      hostOps
	self     int   // this process: never stopped (it may be listed while a thread of it is in the namespace)
	stopped  []int // in the order stopped
	cableOut bool
}

func newFreezer(ops hostOps) *freezer { return &freezer{ops: ops, self: os.Getpid()} }

// freezeOrder is the processes of pids that a freeze stops, in the order
// it stops them: neither pid 1 (nor below) nor self, every parent before
// its children (by depth among pids: a process whose parent is not among
// them is at depth 0), and by pid within a depth.
func freezeOrder(pids []int, self int, parent func(int) int) []int {
	in := map[int]bool{}
	for _, p := range pids {
		if p > 1 && p != self {
			in[p] = true
		}
	}
	depth := map[int]int{}
	for p := range in {
		d := 0
		for q, seen := parent(p), map[int]bool{p: true}; in[q] && !seen[q]; q = parent(q) {
			seen[q] = true
			d++
		}
		depth[p] = d
	}
	out := make([]int, 0, len(in))
	for p := range in {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b int) int {
		if depth[a] != depth[b] {
			return depth[a] - depth[b]
		}
		return a - b
	})
	return out
}

// stop sends SIGSTOP to the processes of pids (listed before the freeze's
// t0, so that t0 is the first signal's), in freezeOrder. A process that has
// exited meanwhile is skipped.
func (f *freezer) stop(pids []int) error {
	for _, pid := range freezeOrder(pids, f.self, f.ops.parent) {
		if slices.Contains(f.stopped, pid) {
			continue
		}
		switch err := f.ops.signal(pid, syscall.SIGSTOP); {
		case errors.Is(err, syscall.ESRCH):
		case err != nil:
			return fmt.Errorf("SIGSTOP %d: %v", pid, err)
		default:
			f.stopped = append(f.stopped, pid)
		}
	}
	return nil
}

// cut pulls the host's cable out, then stops any process of the host not
// stopped yet (started between the listing and its parent's SIGSTOP),
// until a listing finds none.
func (f *freezer) cut() error {
	if err := f.ops.cable(true); err != nil {
		return err
	}
	f.cableOut = true
	for range sweepRounds {
		pids, err := f.ops.pids()
		if err != nil {
			return err
		}
		left := slices.DeleteFunc(freezeOrder(pids, f.self, f.ops.parent), func(p int) bool { return slices.Contains(f.stopped, p) })
		if len(left) == 0 {
			return nil
		}
		if err := f.stop(left); err != nil {
			return err
		}
	}
	return fmt.Errorf("new processes still appear after %d listings of the host's", sweepRounds)
}

// thaw undoes the freeze: the cable back in, then SIGCONT to every process
// stopped, the last stopped first. A process that has exited meanwhile is
// skipped. A second thaw does nothing.
func (f *freezer) thaw() error {
	if f.cableOut {
		if err := f.ops.cable(false); err != nil {
			return err
		}
		f.cableOut = false
	}
	for len(f.stopped) > 0 {
		pid := f.stopped[len(f.stopped)-1]
		if err := f.ops.signal(pid, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("SIGCONT %d: %v", pid, err)
		}
		f.stopped = f.stopped[:len(f.stopped)-1]
	}
	return nil
}

// nsHost is host i of the test bed n, for a freezer.
type nsHost struct {
	n *e2e.Net
	i int
}

func (h nsHost) pids() ([]int, error) { return h.n.NamespacePids(h.i) }

func (h nsHost) parent(pid int) int { return procstat.Parent(pid) }

func (h nsHost) signal(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// cable sets the bridge's end of the host's veth down (out) or up: the
// link that e2e names after the host's namespace (see e2e.Net.PullCable,
// which ends the test bed's setting on an error; a thaw in a cleanup must
// not).
func (h nsHost) cable(out bool) error {
	state := "up"
	if out {
		state = "down"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if b, err := exec.CommandContext(ctx, "ip", "link", "set", h.n.Namespace(h.i), state).CombinedOutput(); err != nil {
		return fmt.Errorf("cable of %s %s: %v: %s", hostName(h.i), state, err, strings.TrimSpace(string(b)))
	}
	return nil
}

// hostFreeze is a freeze of host i that the setting's end undoes, should
// the setting abort while the host is frozen (the test bed's cleanup, which
// runs after, kills its processes by pid anyway).
func hostFreeze(r *runner, n *e2e.Net, i int) *freezer {
	f := newFreezer(nsHost{n, i})
	r.Cleanup(func() {
		if err := f.thaw(); err != nil {
			r.Logf("thawing %s: %v", hostName(i), err)
		}
	})
	return f
}

// list is the host's processes, before a freeze; it aborts the setting
// when they cannot be listed or there are none.
func (f *freezer) list(r *runner, what string) []int {
	pids, err := f.ops.pids()
	if err != nil {
		r.Fatalf("%s: %v", what, err)
	}
	if len(freezeOrder(pids, f.self, f.ops.parent)) == 0 {
		r.Fatalf("%s: no process to freeze in the host's namespace", what)
	}
	return pids
}

// freeze stops pids (see stop) and pulls the cable: the trial's fault.
// stopped is when the last SIGSTOP returned. It aborts the setting on an
// error.
func (f *freezer) freeze(r *runner, pids []int, what string) (stopped time.Time) {
	if err := f.stop(pids); err != nil {
		r.Fatalf("%s: %v", what, err)
	}
	stopped = time.Now()
	if err := f.cut(); err != nil {
		r.Fatalf("%s: %v", what, err)
	}
	return stopped
}

// unfreeze thaws the host; it aborts the setting on an error.
func (f *freezer) unfreeze(r *runner, what string) {
	if err := f.thaw(); err != nil {
		r.Fatalf("%s: thaw: %v", what, err)
	}
}
