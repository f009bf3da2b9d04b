//go:build linux

package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// keepalived on the test bed: the reference the VIP tests check the
// harness with, and the benchmark (bench/lanfailover) compares lanleader
// with.
//
// Every host runs `keepalived --dont-fork --vrrp` in its namespace with its
// own configuration: one VRRP instance on eth0, the given virtual_router_id,
// priority 100+i (the last host is the master; the one before takes over),
// the given advert_int, preemption on (keepalived's default), and one
// virtual address. Every host's initial state is BACKUP: keepalived 2.2.7
// starts an instance that does not own the address (priority below 255)
// in BACKUP even when told MASTER ("Entering BACKUP STATE (init)", then a
// master-down interval before it preempts), so MASTER on the last host
// would change nothing but the look of the configuration.
//
// VRRPv2 (keepalived's default) has whole-second adverts only: keepalived
// rounds a sub-second advert_int up to 1 s. So a setting that is not whole
// seconds runs VRRPv3 (centiseconds).
//
// Every path keepalived writes (its configuration's temporary copy, the
// pid files of the parent and of each child it may start) is in a
// directory per host: the namespaces share this machine's file system.
// It logs to its standard output, never to syslog. It runs no script.

// KeepalivedBinary is keepalived's path, or an error that says how to
// install it.
func KeepalivedBinary() (string, error) {
	if bin, err := exec.LookPath("keepalived"); err == nil {
		return bin, nil
	}
	if _, err := os.Stat("/usr/sbin/keepalived"); err == nil {
		return "/usr/sbin/keepalived", nil
	}
	return "", errors.New("keepalived: not installed (Debian, Ubuntu: apt-get install keepalived; ./test.sh does, as root)")
}

// KeepalivedAdvert is the VRRP version and keepalived's advert_int text
// for advert: VRRPv2 (keepalived's default) when it is whole seconds, up
// to 255 s; VRRPv3 otherwise, whose unit is the centisecond, up to
// 40.95 s.
func KeepalivedAdvert(advert time.Duration) (version int, text string, err error) {
	switch {
	case advert%time.Second == 0 && advert >= time.Second && advert <= 255*time.Second:
		return 2, strconv.FormatInt(int64(advert/time.Second), 10), nil
	case advert%(10*time.Millisecond) == 0 && advert >= 10*time.Millisecond && advert <= 4095*10*time.Millisecond:
		return 3, strconv.FormatFloat(advert.Seconds(), 'f', 2, 64), nil
	}
	return 0, "", fmt.Errorf("keepalived: advert_int %v: VRRP needs whole seconds up to 255 s (v2) or centiseconds up to 40.95 s (v3)", advert)
}

// Keepalived is one VRRP instance on every agent host of a Net.
type Keepalived struct {
	Bin    string        // keepalived's path
	VRID   int           // virtual_router_id
	VIP    string        // the virtual address, with /24, on eth0
	Advert time.Duration // advert_int
}

// KeepalivedInstances writes the configuration of every agent host's
// keepalived in a directory of its own (removed at the end of the test)
// and returns the function that starts host i's, with StartProgram.
func (n *Net) KeepalivedInstances(t TB, k Keepalived) func(i int) *Proc {
	t.Helper()
	version, advertText, err := KeepalivedAdvert(k.Advert)
	if err != nil {
		t.Fatalf("%v", err)
	}
	dir := t.TempDir()
	name := func(i int) string { return "host-" + strconv.Itoa(i+1) }
	hostDir := func(i int) string { return filepath.Join(dir, name(i)) }
	for i := range n.Hosts() {
		if err := os.Mkdir(hostDir(i), 0o700); err != nil {
			t.Fatalf("%v", err)
		}
		conf := fmt.Sprintf(`! the test bed's %s of %d, written for one run
global_defs {
	router_id %s
	tmp_config_directory %s
}
vrrp_instance VI_1 {
	state BACKUP
	interface eth0
	virtual_router_id %d
	priority %d
	advert_int %s
	version %d
	virtual_ipaddress {
		%s/24 dev eth0
	}
}
`, name(i), n.Hosts(), name(i), hostDir(i), k.VRID, 100+i, advertText, version, k.VIP)
		if err := os.WriteFile(filepath.Join(hostDir(i), "keepalived.conf"), []byte(conf), 0o600); err != nil {
			t.Fatalf("%v", err)
		}
	}
	return func(i int) *Proc {
		d := hostDir(i)
		// A SIGKILLed keepalived leaves its pid files, and a pid file naming
		// a live process (the pid reused) would stop the new one.
		for _, f := range []string{"keepalived.pid", "vrrp.pid", "checkers.pid", "bfd.pid"} {
			if err := os.Remove(filepath.Join(d, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%v", err)
			}
		}
		return n.StartProgram(t, i, k.Bin, "--dont-fork", "--log-console", "--log-detail", "--no-syslog", "--vrrp",
			"--use-file", filepath.Join(d, "keepalived.conf"),
			"--pid", filepath.Join(d, "keepalived.pid"), "--vrrp_pid", filepath.Join(d, "vrrp.pid"),
			"--checkers_pid", filepath.Join(d, "checkers.pid"), "--bfd_pid", filepath.Join(d, "bfd.pid"))
	}
}
