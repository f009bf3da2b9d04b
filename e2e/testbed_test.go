//go:build linux

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBedCleansUp: what a test creates (namespaces, veths, the bridge, its
// packet counters, nftables fault rules, time namespaces, processes) is
// gone when the test ends, and what a killed run left behind is removed
// by the next one.
func TestBedCleansUp(t *testing.T) {
	var (
		names  []string
		bridge string
		table  string
		pids   []int
		timens []string
	)
	withTime := timeNSAvailable()
	if !withTime {
		t.Log("no time namespaces here (Linux 5.6+, unshare and nsenter): their cleanup is not tested")
	}
	t.Run("a test", func(t *testing.T) {
		n := NewNet(t, 2)
		RequireNFT(t)
		n.CountPackets(t)
		n.Partition(t, []int{0}, []int{1})
		n.Loss(t, 50, 0, 1)
		if withTime {
			n.ClockOffsets(t, 1000, 0)
		}
		for i := range 2 {
			names = append(names, n.Namespace(i))
			p := n.StartProgram(t, i, "sleep", "300")
			pids = append(pids, p.Pid)
			if withTime {
				path, ino, err := n.TimeNamespace(i)
				if err != nil {
					t.Fatal(err)
				}
				timens = append(timens, path)
				// The process gets in it (started through nsenter, which
				// enters it, then execs ip, which execs sleep: one pid).
				var got uint64
				for try := 0; try < 200; try++ {
					if got, err = ProcTimeNS(p.Pid); err != nil || got == ino {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
				if err != nil || got != ino {
					t.Errorf("host-%d's sleep (pid %d) is in time namespace %d (%v), want %d", i+1, p.Pid, got, err, ino)
				}
			}
		}
		bridge, table = n.bridge, n.countTable()
		if _, err := n.Packets(); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if out, err := n.nft(i, "list chain inet "+faultTable+" input\n"); err != nil || strings.Count(out, " drop") != 2 {
				t.Fatalf("host-%d's fault rules: %v\n%s", i+1, err, out)
			}
		}
	})
	assertGone(t, names, bridge, table, pids)
	assertTimeNSGone(t, timens)

	// A run killed before its cleanups: objects named after a pid that no
	// test process has, with a process still running in a namespace.
	dead := deadPid(t)
	suffix := strconv.Itoa(dead) + "a"
	ns, br, tbl := Prefix+hostLabel(maxHosts)+"-"+suffix, Prefix+"br"+suffix, strings.ReplaceAll(Prefix+"br"+suffix, "-", "_")
	for _, args := range [][]string{
		{"link", "add", "name", br, "type", "bridge"},
		{"netns", "add", ns},
		{"link", "add", "name", ns, "type", "veth", "peer", "name", "eth0", "netns", ns},
		{"link", "set", ns, "master", br},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	if _, err := rootNFT("table bridge " + tbl + " {\n\tcounter election {}\n}\n"); err != nil {
		t.Fatal(err)
	}
	leftTime := filepath.Join(timeNSDir, ns)
	if withTime {
		if err := os.MkdirAll(timeNSDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := makeTimeNS(leftTime, 5000); err != nil {
			t.Fatal(err)
		}
	}
	left := exec.Command("ip", "netns", "exec", ns, "sleep", "300")
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- left.Wait() }()
	t.Cleanup(func() { // should the removal below fail
		left.Process.Signal(syscall.SIGKILL)
		deleteNamespace(ns)
		deleteLink(br)
		deleteCountTable(tbl)
		removeTimeNS(leftTime)
	})

	t.Run("the next test", func(t *testing.T) {
		NewNet(t, 1)
		select {
		case err := <-waited:
			if ws, ok := left.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
				t.Errorf("the leftover process ended with %v, want killed by SIGKILL", err)
			}
		case <-time.After(killTimeout):
			t.Errorf("the leftover process (pid %d) still runs after the next test bed started", left.Process.Pid)
		}
	})
	assertGone(t, []string{ns}, br, tbl, nil)
	if withTime {
		assertTimeNSGone(t, []string{leftTime})
	}
}

// assertTimeNSGone: the files of time namespaces are unmounted and gone.
func assertTimeNSGone(t *testing.T, paths []string) {
	t.Helper()
	for _, p := range paths {
		if isMounted(p) {
			t.Errorf("time namespace %s is still mounted", p)
		}
		if _, err := os.Stat(p); err == nil {
			t.Errorf("time namespace file %s is still there", p)
		}
	}
}

func assertGone(t *testing.T, namespaces []string, bridge, table string, pids []int) {
	t.Helper()
	if len(namespaces) == 0 || bridge == "" {
		t.Fatal("nothing was created")
	}
	for _, ns := range namespaces {
		if slices.Contains(listNamespaces(), ns) {
			t.Errorf("namespace %s is still there", ns)
		}
		if exec.Command("ip", "link", "show", "dev", ns).Run() == nil {
			t.Errorf("veth %s is still there", ns)
		}
	}
	if exec.Command("ip", "link", "show", "dev", bridge).Run() == nil {
		t.Errorf("bridge %s is still there", bridge)
	}
	if out, err := rootNFT("list tables bridge\n"); err != nil || strings.Contains(out, table+"\n") {
		t.Errorf("nftables table bridge %s is still there (%v):\n%s", table, err, out)
	}
	for _, pid := range pids {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			t.Errorf("process %d is still there", pid)
		}
	}
}

// deadPid is a pid that no process has (near the top of the pid range,
// which the kernel hands out last).
func deadPid(t *testing.T) int {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Fatal(err)
	}
	top, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for pid := top - 1; pid > top-1000 && pid > 1; pid-- {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) && len(strconv.Itoa(pid)) <= 7 {
			return pid
		}
	}
	t.Fatal("no free pid near pid_max")
	return 0
}

// longE2E says whether LANLEADER_E2E_LONG asks for the long versions of
// the scenarios (more rounds, the measuring runs), which CI leaves out
// to stay within its time.
func longE2E() bool { return os.Getenv("LANLEADER_E2E_LONG") != "" }

// longOr is short in CI and long with LANLEADER_E2E_LONG.
func longOr(short, long int) int {
	if longE2E() {
		return long
	}
	return short
}
