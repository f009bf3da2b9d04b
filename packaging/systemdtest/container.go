package systemdtest

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ProbeScript is probe.sh, the checks run inside the container; Boot's
// probeDir holds it.
//
//go:embed probe.sh
var ProbeScript []byte

// probeUnit runs probe.sh once the container has booted, and powers it
// off when the script ends, however it ends.
const probeUnit = `[Unit]
Description=lanleader systemd suite: the checks
After=multi-user.target dbus.service
SuccessAction=poweroff
FailureAction=poweroff

[Service]
Type=oneshot
Environment="PROBE_CHECKS=%s"
ExecStart=/bin/bash /probe/probe.sh
StandardOutput=append:/probe/probe.log
StandardError=append:/probe/probe.log
TimeoutStartSec=%d

[Install]
WantedBy=multi-user.target
`

// Boot boots root under systemd-nspawn, on an overlay (root itself is
// never written), with probeDir bound at /probe, and returns when the
// container has powered off. probeDir must hold probe.sh; checks names
// the checks to run (empty: all). If the container has not stopped after
// timeout, nspawn gets SIGTERM (a poweroff), and 20 seconds later nspawn
// and the container's processes get SIGKILL, by pid. The overlay is
// unmounted and removed in every case. log receives nspawn's output.
func Boot(root, probeDir string, checks []string, timeout time.Duration, log io.Writer) error {
	work, err := os.MkdirTemp("", "lanleader-systemd-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	merged := filepath.Join(work, "root")
	for _, d := range []string{"upper", "work", "root"} {
		if err := os.Mkdir(filepath.Join(work, d), 0o755); err != nil {
			return err
		}
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", root, filepath.Join(work, "upper"), filepath.Join(work, "work"))
	if err := unix.Mount("overlay", merged, "overlay", 0, opts); err != nil {
		return fmt.Errorf("mount overlay %s: %w", opts, err)
	}
	defer unmount(merged)
	if err := installProbe(merged, checks, timeout); err != nil {
		return err
	}
	cmd := exec.Command("systemd-nspawn", "-b", "-D", merged, "--register=no", "--keep-unit",
		"--private-network", "--bind="+probeDir+":/probe", "--console=passive", "systemd.show_status=0")
	cmd.Env = append(os.Environ(), "SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
	}
	fmt.Fprintf(log, "systemdtest: the container still runs after %v: SIGTERM to systemd-nspawn (pid %d)\n", timeout, cmd.Process.Pid)
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		pids := descendants(cmd.Process.Pid)
		fmt.Fprintf(log, "systemdtest: still running: SIGKILL to systemd-nspawn (pid %d) and its processes %v\n", cmd.Process.Pid, pids)
		cmd.Process.Kill()
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
		<-done
	}
	return fmt.Errorf("the container did not power off within %v", timeout)
}

// installProbe enables probeUnit in the overlay.
func installProbe(merged string, checks []string, timeout time.Duration) error {
	unit := fmt.Sprintf(probeUnit, strings.Join(checks, " "), int(timeout.Seconds()))
	if len(checks) == 0 {
		unit = strings.Replace(unit, "Environment=\"PROBE_CHECKS=\"\n", "", 1)
	}
	etc := filepath.Join(merged, "etc/systemd/system")
	if err := os.WriteFile(filepath.Join(etc, "lanleader-probe.service"), []byte(unit), 0o644); err != nil {
		return err
	}
	wants := filepath.Join(etc, "multi-user.target.wants")
	if err := os.MkdirAll(wants, 0o755); err != nil {
		return err
	}
	return os.Symlink("/etc/systemd/system/lanleader-probe.service", filepath.Join(wants, "lanleader-probe.service"))
}

// descendants are pid's children, theirs, and so on (from
// /proc/PID/task/TID/children), children first.
func descendants(pid int) []int {
	var out []int
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
				out = append(out, descendants(c)...)
			}
		}
	}
	return out
}

// unmount unmounts the overlay, lazily if something still holds it.
func unmount(dir string) {
	if err := unix.Unmount(dir, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		unix.Unmount(dir, unix.MNT_DETACH)
	}
}
