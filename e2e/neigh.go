//go:build linux

package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Linux keeps one neighbour (ARP) table for every network namespace, and
// its size limits, net.ipv4.neigh.default.gc_thresh1/2/3, are the initial
// namespace's. A bed of n hosts on one bridge fills it with up to n·(n−1)
// entries; past gc_thresh3 (1024 by default: about 32 hosts) the kernel
// refuses new entries, and sends to the addresses they would resolve fail
// with ENOBUFS, which UDP does not report to the sender (only the
// SndbufErrors counter of /proc/net/snmp grows): every host then loses
// its peers and elects itself. So a bed of bigNeighBed hosts or more
// raises the three limits (never lowers them) for as long as it lives.
//
// Several test processes may hold beds at once (every engineer's tests on
// one machine), so the raise is shared: neighFile, under an exclusive
// flock, holds the limits found before the first raise and one line per
// bed that wants more (its pid, letter and wanted limits). The limits are
// always the largest of the originals and every live bed's wants; when the
// last bed goes, the originals come back. A limit whose value is no longer
// the one the beds wrote was changed by someone else: that value becomes
// its original (kept, never lowered below). A bed of a killed process is
// forgotten by the next bed that takes or releases the file.

// bigNeighBed is the number of hosts from which a bed raises the limits.
const bigNeighBed = 40

// neighFile and neighPaths are variables for the tests only.
var neighFile = "/run/" + Prefix + "neigh"

var neighPaths = [3]string{
	"/proc/sys/net/ipv4/neigh/default/gc_thresh1",
	"/proc/sys/net/ipv4/neigh/default/gc_thresh2",
	"/proc/sys/net/ipv4/neigh/default/gc_thresh3",
}

// neighWant is the limits a bed of hosts hosts asks for: room for every
// pair of hosts (and the bridge's own), twice over for thresh3.
func neighWant(hosts int) [3]int {
	pairs := (hosts + 1) * (hosts + 1)
	return [3]int{pairs, 2 * pairs, 4 * pairs}
}

// neighState is neighFile's content.
type neighState struct {
	orig  [3]int // the limits before the first bed raised them
	set   [3]int // what the beds last wrote
	holds []neighHold
}

type neighHold struct {
	pid, letter int
	want        [3]int
}

// raiseNeigh registers the bed (this process, letter) as wanting the
// limits for hosts hosts and raises them; releaseNeigh undoes it.
func raiseNeigh(letter, hosts int) error {
	return withNeighFile(func(s *neighState) {
		s.holds = append(s.holds, neighHold{os.Getpid(), letter, neighWant(hosts)})
	})
}

// releaseNeigh forgets the bed's wish; the limits go down to what the
// other beds still want, or back to the originals.
func releaseNeigh(letter int) error {
	return withNeighFile(func(s *neighState) {
		for k, h := range s.holds {
			if h.pid == os.Getpid() && h.letter == letter {
				s.holds = append(s.holds[:k], s.holds[k+1:]...)
				break
			}
		}
	})
}

// withNeighFile locks neighFile, reads it (or the current limits, when
// there is none), lets change edit the bed list, drops the beds of gone
// processes, writes the limits the list calls for and the file (removed
// once the list is empty).
func withNeighFile(change func(*neighState)) error {
	f, err := os.OpenFile(neighFile+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("neighbour table limits: %v", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("neighbour table limits: lock %s: %v", f.Name(), err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	s, err := readNeighState()
	if err != nil {
		return err
	}
	change(s)
	live := s.holds[:0]
	for _, h := range s.holds {
		if h.pid == os.Getpid() || !gone(h.pid) {
			live = append(live, h)
		}
	}
	s.holds = live
	return applyNeigh(s)
}

// applyNeigh writes the limits s calls for, then s itself.
func applyNeigh(s *neighState) error {
	cur, err := readNeighLimits()
	if err != nil {
		return err
	}
	for k, path := range neighPaths {
		if cur[k] != s.set[k] {
			s.orig[k] = cur[k] // changed by someone else since: the new baseline
		}
		want := s.orig[k]
		for _, h := range s.holds {
			want = max(want, h.want[k])
		}
		if want != cur[k] {
			if err := os.WriteFile(path, []byte(strconv.Itoa(want)+"\n"), 0); err != nil {
				return fmt.Errorf("neighbour table limits: %v", err)
			}
		}
		s.set[k] = want
	}
	if len(s.holds) == 0 {
		if err := os.Remove(neighFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("neighbour table limits: %v", err)
		}
		return nil
	}
	return writeNeighState(s)
}

func readNeighLimits() ([3]int, error) {
	var v [3]int
	for k, path := range neighPaths {
		b, err := os.ReadFile(path)
		if err != nil {
			return v, fmt.Errorf("neighbour table limits: %v", err)
		}
		if v[k], err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
			return v, fmt.Errorf("neighbour table limits: %s: %q is not a number", path, b)
		}
	}
	return v, nil
}

// readNeighState reads neighFile: "orig T1 T2 T3", "set T1 T2 T3", then
// "bed PID LETTER T1 T2 T3" lines. No file: the current limits, no bed.
func readNeighState() (*neighState, error) {
	b, err := os.ReadFile(neighFile)
	if errors.Is(err, os.ErrNotExist) {
		cur, err := readNeighLimits()
		return &neighState{orig: cur, set: cur}, err
	}
	if err != nil {
		return nil, fmt.Errorf("neighbour table limits: %v", err)
	}
	s := &neighState{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		nums := make([]int, len(f))
		for k := 1; k < len(f); k++ {
			if nums[k], err = strconv.Atoi(f[k]); err != nil {
				return nil, fmt.Errorf("neighbour table limits: %s: bad line %q", neighFile, line)
			}
		}
		switch {
		case len(f) == 4 && f[0] == "orig":
			s.orig = [3]int(nums[1:])
		case len(f) == 4 && f[0] == "set":
			s.set = [3]int(nums[1:])
		case len(f) == 6 && f[0] == "bed":
			s.holds = append(s.holds, neighHold{nums[1], nums[2], [3]int(nums[3:])})
		default:
			return nil, fmt.Errorf("neighbour table limits: %s: bad line %q", neighFile, line)
		}
	}
	return s, nil
}

func writeNeighState(s *neighState) error {
	var b strings.Builder
	fmt.Fprintf(&b, "orig %d %d %d\nset %d %d %d\n", s.orig[0], s.orig[1], s.orig[2], s.set[0], s.set[1], s.set[2])
	for _, h := range s.holds {
		fmt.Fprintf(&b, "bed %d %d %d %d %d\n", h.pid, h.letter, h.want[0], h.want[1], h.want[2])
	}
	tmp := filepath.Join(filepath.Dir(neighFile), "."+filepath.Base(neighFile)+".tmp")
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("neighbour table limits: %v", err)
	}
	if err := os.Rename(tmp, neighFile); err != nil {
		return fmt.Errorf("neighbour table limits: %v", err)
	}
	return nil
}
