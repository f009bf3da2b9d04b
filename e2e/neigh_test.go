//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestHostLabel: every name of a 128-host bed fits Linux's 15 bytes with
// the longest pid, is unique, and is one the leftover removal recognises
// (with its pid).
func TestHostLabel(t *testing.T) {
	suffix := "4194303z" // pid_max's largest pid, the last letter
	seen := map[string]bool{}
	for k := 1; k <= maxHosts; k++ {
		name := Prefix + hostLabel(k) + "-" + suffix
		if len(name) > 15 {
			t.Errorf("host %d: %q is %d bytes, more than 15", k, name, len(name))
		}
		if seen[name] {
			t.Errorf("host %d: %q twice", k, name)
		}
		seen[name] = true
		if m := leftoverName.FindStringSubmatch(name); m == nil || m[1] != "4194303" {
			t.Errorf("host %d: %q: leftover pattern gives %q, want pid 4194303", k, name, m)
		}
	}
	for k, want := range map[int]string{1: "1", 99: "99", 100: "a0", 109: "a9", 110: "b0", 128: "c8"} {
		if got := hostLabel(k); got != want {
			t.Errorf("hostLabel(%d) = %q, want %q", k, got, want)
		}
	}
}

func TestSndbufErrors(t *testing.T) {
	snmp := "Ip: Forwarding DefaultTTL\nIp: 1 64\n" +
		"Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n" +
		"Udp: 96966 23402 0 120965 0 17 0 0 0\n" +
		"UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n" +
		"UdpLite: 0 0 0 0 0 5 0 0 0\n"
	if got, err := sndbufErrors(snmp); err != nil || got != 17 {
		t.Errorf("sndbufErrors = %d, %v; want 17", got, err)
	}
	if _, err := sndbufErrors("Ip: Forwarding\nIp: 1\n"); err == nil {
		t.Error("sndbufErrors without a Udp line: no error")
	}
	if got := sendFailureText([]uint64{0, 12, 0, 1}); got != "host-2 12, host-4 1" {
		t.Errorf("sendFailureText = %q", got)
	}
	if got := sendFailureText([]uint64{0, 0}); got != "" {
		t.Errorf("sendFailureText of zeros = %q, want empty", got)
	}
}

// TestNeighShared: the limits of the neighbour table, on files standing
// for /proc's: two beds raise them to the larger want, the first one's
// release keeps the other's, the last release brings the originals back;
// a value changed by someone else is never lowered; a bed of a gone
// process is forgotten.
func TestNeighShared(t *testing.T) {
	dir := t.TempDir()
	oldFile, oldPaths := neighFile, neighPaths
	t.Cleanup(func() { neighFile, neighPaths = oldFile, oldPaths })
	neighFile = filepath.Join(dir, "neigh")
	for k := range neighPaths {
		neighPaths[k] = filepath.Join(dir, "gc_thresh"+strconv.Itoa(k+1))
	}
	set := func(vals ...int) {
		for k, v := range vals {
			if err := os.WriteFile(neighPaths[k], []byte(strconv.Itoa(v)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(what string, want [3]int) {
		t.Helper()
		got, err := readNeighLimits()
		if err != nil || got != want {
			t.Fatalf("%s: limits %v (%v), want %v", what, got, err, want)
		}
	}
	set(128, 512, 1024)
	small, big := neighWant(40), neighWant(128)
	if err := raiseNeigh(0, 40); err != nil {
		t.Fatal(err)
	}
	check("one bed of 40", small)
	if err := raiseNeigh(1, 128); err != nil {
		t.Fatal(err)
	}
	check("beds of 40 and 128", big)
	if err := releaseNeigh(1); err != nil {
		t.Fatal(err)
	}
	check("the 128 bed gone", small)
	// Someone raises thresh3 beyond every want meanwhile: theirs stays.
	set(small[0], small[1], 9*small[2])
	if err := releaseNeigh(0); err != nil {
		t.Fatal(err)
	}
	check("every bed gone", [3]int{128, 512, 9 * small[2]})
	if _, err := os.Stat(neighFile); !os.IsNotExist(err) {
		t.Errorf("%s still there with no bed (%v)", neighFile, err)
	}

	// A bed of a process that no longer runs is dropped by the next one.
	set(128, 512, 1024)
	if err := raiseNeigh(0, 128); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(neighFile)
	dead := strings.Replace(string(b), "bed "+strconv.Itoa(os.Getpid())+" ", "bed "+strconv.Itoa(deadPid(t))+" ", 1)
	if err := os.WriteFile(neighFile, []byte(dead), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := raiseNeigh(2, 40); err != nil {
		t.Fatal(err)
	}
	check("the dead bed dropped", small)
	if b, _ := os.ReadFile(neighFile); strings.Count(string(b), "\nbed ") != 1 {
		t.Errorf("%s after the dead bed's removal:\n%s", neighFile, b)
	}
	if err := releaseNeigh(2); err != nil {
		t.Fatal(err)
	}
	check("all gone again", [3]int{128, 512, 1024})
}

// TestBigBedRaisesNeigh: a bed of bigNeighBed hosts has the kernel's
// neighbour table limits at least at its wants while it lives, and the
// limits are back when it is gone (unless a bed of another process still
// holds a raise: then they must still cover that one's).
func TestBigBedRaisesNeigh(t *testing.T) {
	before, err := readNeighLimits()
	if err != nil {
		t.Skip(err)
	}
	r := &recordTB{T: t}
	NewNet(r, bigNeighBed)
	during, err := readNeighLimits()
	r.cleanup()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.errs) > 0 {
		t.Fatalf("the bed: %v", r.errs)
	}
	want := neighWant(bigNeighBed)
	for k := range want {
		if during[k] < want[k] {
			t.Errorf("gc_thresh%d during a bed of %d: %d, want at least %d", k+1, bigNeighBed, during[k], want[k])
		}
	}
	after, err := readNeighLimits()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(neighFile); err == nil {
		t.Logf("another process holds a raise (%s): limits %v before, %v after", neighFile, before, after)
		return
	}
	if after != before {
		t.Errorf("limits after the bed: %v, want %v as before", after, before)
	}
}
