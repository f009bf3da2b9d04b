//go:build linux

package main

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// fakeHost is a host's processes for a freezer: listings in turn (the
// last one repeats; an exited pid is not listed), parents, pids that have
// exited, and the calls made.
type fakeHost struct {
	listings [][]int
	parents  map[int]int
	gone     map[int]bool
	failSig  map[int]bool // signal fails with EPERM
	calls    []string
}

func (h *fakeHost) pids() ([]int, error) {
	h.calls = append(h.calls, "list")
	l := h.listings[0]
	if len(h.listings) > 1 {
		h.listings = h.listings[1:]
	}
	return slices.DeleteFunc(slices.Clone(l), func(p int) bool { return h.gone[p] }), nil
}

func (h *fakeHost) parent(pid int) int { return h.parents[pid] }

func (h *fakeHost) signal(pid int, sig syscall.Signal) error {
	name := map[syscall.Signal]string{syscall.SIGSTOP: "STOP", syscall.SIGCONT: "CONT"}[sig]
	switch {
	case h.gone[pid]:
		h.calls = append(h.calls, fmt.Sprintf("%s %d gone", name, pid))
		return syscall.ESRCH
	case h.failSig[pid]:
		return syscall.EPERM
	}
	h.calls = append(h.calls, fmt.Sprintf("%s %d", name, pid))
	return nil
}

func (h *fakeHost) cable(out bool) error {
	if out {
		h.calls = append(h.calls, "cable out")
	} else {
		h.calls = append(h.calls, "cable in")
	}
	return nil
}

// A keepalived-like tree: 10 the parent, 11 and 12 its children, 13 a
// child of 12; 20 another program (vipecho); 7 this process, with a
// thread in the namespace; 1 an init.
var freezeParents = map[int]int{10: 3, 11: 10, 12: 10, 13: 12, 20: 3, 7: 2, 1: 0}

func TestFreezeOrder(t *testing.T) {
	parent := func(p int) int { return freezeParents[p] }
	for _, c := range []struct {
		pids []int
		want []int
	}{
		{[]int{13, 1, 7, 12, 20, 11, 10}, []int{10, 20, 11, 12, 13}},
		{[]int{13, 12}, []int{12, 13}}, // 10 not listed: 12 is at depth 0
		{[]int{13, 11}, []int{11, 13}}, // neither parent listed
		{[]int{7, 1}, []int{}},
		{nil, []int{}},
	} {
		if got := freezeOrder(c.pids, 7, parent); !slices.Equal(got, c.want) {
			t.Errorf("freezeOrder(%v): %v, want %v", c.pids, got, c.want)
		}
	}
	// A loop of parents (a pid reused) ends.
	loop := func(p int) int { return map[int]int{4: 5, 5: 4}[p] }
	if got := freezeOrder([]int{5, 4}, 7, loop); len(got) != 2 {
		t.Errorf("freezeOrder with a loop of parents: %v", got)
	}
}

// The freeze: parents stopped first, the cable out, the host listed again
// until every process of it is stopped (14, forked by 13 before its stop,
// is found by the sweep); the thaw: the cable in, then SIGCONT children
// first, and a second thaw does nothing.
func TestFreezeThawSequence(t *testing.T) {
	h := &fakeHost{
		listings: [][]int{{13, 1, 7, 12, 20, 11, 10, 14}, {13, 1, 7, 12, 20, 11, 10, 14}},
		parents:  map[int]int{10: 3, 11: 10, 12: 10, 13: 12, 14: 13, 20: 3, 7: 2},
		gone:     map[int]bool{11: true}, // exited before its SIGSTOP
	}
	f := &freezer{ops: h, self: 7}
	if err := f.stop([]int{13, 1, 7, 12, 20, 11, 10}); err != nil {
		t.Fatal(err)
	}
	if err := f.cut(); err != nil {
		t.Fatal(err)
	}
	want := []string{"STOP 10", "STOP 20", "STOP 11 gone", "STOP 12", "STOP 13", "cable out", "list", "STOP 14", "list"}
	if !slices.Equal(h.calls, want) {
		t.Errorf("freeze:\n%s\nwant\n%s", strings.Join(h.calls, "\n"), strings.Join(want, "\n"))
	}
	if !f.cableOut || !slices.Equal(f.stopped, []int{10, 20, 12, 13, 14}) {
		t.Errorf("after the freeze: cable out %v, stopped %v", f.cableOut, f.stopped)
	}

	h.calls = nil
	h.gone = map[int]bool{20: true}
	if err := f.thaw(); err != nil {
		t.Fatal(err)
	}
	want = []string{"cable in", "CONT 14", "CONT 13", "CONT 12", "CONT 20 gone", "CONT 10"}
	if !slices.Equal(h.calls, want) {
		t.Errorf("thaw:\n%s\nwant\n%s", strings.Join(h.calls, "\n"), strings.Join(want, "\n"))
	}
	h.calls = nil
	if err := f.thaw(); err != nil || len(h.calls) != 0 || f.cableOut || len(f.stopped) != 0 {
		t.Errorf("a second thaw: %v, calls %v, cable out %v, stopped %v", err, h.calls, f.cableOut, f.stopped)
	}
}

// A host whose processes keep forking ends the freeze with an error, and
// a signal that fails names the pid; the thaw still resumes what was
// stopped.
func TestFreezeErrors(t *testing.T) {
	next := 100
	h := &fakeHost{listings: [][]int{{10}}, parents: map[int]int{}}
	forking := &forkingHost{fakeHost: h, next: &next}
	f := &freezer{ops: forking, self: 7}
	if err := f.stop([]int{10}); err != nil {
		t.Fatal(err)
	}
	err := f.cut()
	if err == nil || !strings.Contains(err.Error(), "new processes still appear after 5 listings") {
		t.Errorf("a host that keeps forking: %v", err)
	}
	h.calls = nil
	if err := f.thaw(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"cable in", "CONT 105", "CONT 104", "CONT 103", "CONT 102", "CONT 101", "CONT 10"}; !slices.Equal(h.calls, want) {
		t.Errorf("thaw after a failed cut: %v, want %v", h.calls, want)
	}

	h = &fakeHost{listings: [][]int{{10}}, failSig: map[int]bool{10: true}}
	f = &freezer{ops: h, self: 7}
	if err := f.stop([]int{10}); err == nil || err.Error() != "SIGSTOP 10: operation not permitted" || len(f.stopped) != 0 {
		t.Errorf("a failing SIGSTOP: %v", err)
	}
}

// forkingHost lists one new process more at every listing.
type forkingHost struct {
	*fakeHost
	next *int
}

func (h *forkingHost) pids() ([]int, error) {
	h.calls = append(h.calls, "list")
	*h.next++
	return []int{10, *h.next}, nil
}
