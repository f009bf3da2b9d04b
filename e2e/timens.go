//go:build linux

package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Time namespaces: each host of the test bed may get its own
// CLOCK_MONOTONIC, shifted from the machine's by an offset of its own
// (ClockOffsets), so that an agent that compares a monotonic time of one
// host with one of another (a lease, a deadline sent in a packet) is
// caught: on one machine every host would otherwise share one monotonic
// clock, and such a bug would go unseen. CLOCK_REALTIME (the wall clock of
// the logs and of the job's stamps) is not shifted by time namespaces: it
// stays the one clock every host and the test share.
//
// A time namespace is kept by a bind mount of its nsfs file on a file of
// timeNSDir, named like host i's network namespace (llt-<i+1>-<pid><letter>),
// made by `unshare --time=FILE --monotonic SECONDS true`. A process enters
// it with `nsenter --time=FILE`, which then execs `ip netns exec`, which
// execs the program: the pid is the program's, as without a time namespace.
// The files are unmounted and removed with the test bed, and those of a
// killed run by the next one (removeLeftovers).

// timeNSDir holds the bind mounts of the time namespaces, as /run/netns
// holds those of the network namespaces.
const timeNSDir = "/run/" + Prefix + "timens"

// RequireTimeNS skips the test when this machine cannot give a host its
// own time namespace: a kernel without CONFIG_TIME_NS (5.6 or later), or
// no unshare or nsenter command (util-linux).
func RequireTimeNS(t TB) {
	t.Helper()
	if _, err := os.Stat("/proc/self/ns/time"); err != nil {
		t.Skip("e2e: needs time namespaces (Linux 5.6 or later, CONFIG_TIME_NS): /proc/self/ns/time: ", err)
	}
	for _, cmd := range []string{"unshare", "nsenter"} {
		if _, err := exec.LookPath(cmd); err != nil {
			t.Skip("e2e: needs the " + cmd + " command for time namespaces: install util-linux (apt-get install util-linux)")
		}
	}
}

// timeNSAvailable says whether RequireTimeNS would let a test run.
func timeNSAvailable() bool {
	if _, err := os.Stat("/proc/self/ns/time"); err != nil {
		return false
	}
	_, err1 := exec.LookPath("unshare")
	_, err2 := exec.LookPath("nsenter")
	return err1 == nil && err2 == nil
}

// ClockOffsets gives host i a time namespace of its own whose
// CLOCK_MONOTONIC is the machine's plus seconds[i] seconds (0 too is a
// namespace of its own). It must be called before any process is started
// on those hosts: Start, StartProgram and Exec then run their programs in
// it. Fewer offsets than hosts leave the rest in this process's time
// namespace.
func (n *Net) ClockOffsets(t TB, seconds ...int64) {
	t.Helper()
	RequireTimeNS(t)
	if len(seconds) > len(n.hosts) {
		t.Fatalf("ClockOffsets: %d offsets for %d hosts", len(seconds), len(n.hosts))
	}
	if err := os.MkdirAll(timeNSDir, 0o755); err != nil {
		t.Fatalf("e2e: %v", err)
	}
	for i, s := range seconds {
		n.mu.Lock()
		if n.timens == nil {
			n.timens = make([]string, len(n.hosts))
		}
		if n.timens[i] != "" {
			n.mu.Unlock()
			t.Fatalf("ClockOffsets: host-%d has a time namespace already", i+1)
		}
		for _, p := range n.procs {
			if p.Host == i {
				n.mu.Unlock()
				t.Fatalf("ClockOffsets: host-%d runs processes already", i+1)
			}
		}
		n.mu.Unlock()
		path := filepath.Join(timeNSDir, n.hosts[i])
		if err := makeTimeNS(path, s); err != nil {
			removeTimeNS(path)
			t.Fatalf("e2e: host-%d's time namespace: %v", i+1, err)
		}
		n.mu.Lock()
		n.timens[i] = path
		n.mu.Unlock()
	}
}

// TimeNamespace is the file of host i's time namespace ("" when it has
// none), and the namespace's inode number, the one /proc/PID/ns/time of
// the processes in it shows.
func (n *Net) TimeNamespace(i int) (path string, ino uint64, err error) {
	n.mu.Lock()
	if n.timens != nil {
		path = n.timens[i]
	}
	n.mu.Unlock()
	if path == "" {
		return "", 0, nil
	}
	ino, err = nsInode(path)
	return path, ino, err
}

// ProcTimeNS is the inode number of the time namespace of process pid.
func ProcTimeNS(pid int) (uint64, error) {
	return nsInode(fmt.Sprintf("/proc/%d/ns/time", pid))
}

func nsInode(path string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// makeTimeNS makes a time namespace with a CLOCK_MONOTONIC offset of
// seconds, kept by a bind mount on path.
func makeTimeNS(path string, seconds int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	f.Close()
	out, err := exec.Command("unshare", "--time="+path, "--monotonic", strconv.FormatInt(seconds, 10), "true").CombinedOutput()
	if err != nil {
		return fmt.Errorf("unshare --time=%s --monotonic %d: %v: %s", path, seconds, err, strings.TrimSpace(string(out)))
	}
	if !isMounted(path) {
		return fmt.Errorf("unshare --time=%s: no bind mount on it", path)
	}
	return nil
}

// removeTimeNS unmounts and removes path. A path that does not exist is no
// error.
func removeTimeNS(path string) error {
	var errs []error
	for isMounted(path) {
		// The namespace lives on while processes are in it; the mount
		// goes at once.
		if err := syscall.Unmount(path, syscall.MNT_DETACH); err != nil {
			errs = append(errs, fmt.Errorf("umount %s: %v", path, err))
			break
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// isMounted says whether something is mounted on path (in this process's
// mount namespace).
func isMounted(path string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		// "43 27 0:4 time:[4026532177] /run/llt-timens/llt-1-42a rw - nsfs nsfs rw"
		if f := strings.Fields(l); len(f) > 4 && unescapeMount(f[4]) == path {
			return true
		}
	}
	return false
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, …).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// closeTimeNamespaces removes the test bed's time namespaces (after its
// processes are gone).
func (n *Net) closeTimeNamespaces() error {
	n.mu.Lock()
	paths := append([]string(nil), n.timens...)
	n.mu.Unlock()
	var errs []error
	for _, p := range paths {
		if p != "" {
			errs = append(errs, removeTimeNS(p))
		}
	}
	return errors.Join(errs...)
}

// staleTimeNamespaces is the time namespace files that test processes
// which no longer run left behind.
func staleTimeNamespaces() []string {
	entries, err := os.ReadDir(timeNSDir)
	if err != nil {
		return nil
	}
	var left []string
	for _, e := range entries {
		if stale(e.Name()) {
			left = append(left, filepath.Join(timeNSDir, e.Name()))
		}
	}
	return left
}

// argv is how host i runs bin with args: the command and its arguments,
// through ip netns exec, and nsenter first when the host has a time
// namespace. Each execs the next: the process started is bin's.
func (n *Net) argv(i int, bin string, args ...string) (string, []string) {
	n.mu.Lock()
	tns := ""
	if n.timens != nil {
		tns = n.timens[i]
	}
	n.mu.Unlock()
	a := append([]string{"netns", "exec", n.hosts[i], bin}, args...)
	if tns == "" {
		return "ip", a
	}
	return "nsenter", append([]string{"--time=" + tns, "ip"}, a...)
}
