package systemdtest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// DebootstrapArgs make the Debian root the suite boots: systemd as init,
// D-Bus and polkit (job_unit: starts units over D-Bus), libpam-systemd
// (the logind polkitd needs), iproute2 (ip addr add) and procps (the
// .deb depends on it: /bin/kill, the unit's ExecReload=).
var DebootstrapArgs = []string{
	"--variant=minbase",
	"--include=systemd,systemd-sysv,dbus,libpam-systemd,polkitd,iproute2,procps",
	"bookworm",
}

// Mirror is where debootstrap gets the packages: $LANLEADER_DEBIAN_MIRROR,
// or "" for debootstrap's own default (Debian's archive).
func Mirror() string { return os.Getenv("LANLEADER_DEBIAN_MIRROR") }

// debootstrapArgs are debootstrap's arguments that make a root in dir.
func debootstrapArgs(dir string) []string {
	args := append(slices.Clone(DebootstrapArgs), dir)
	if m := Mirror(); m != "" {
		args = append(args, m)
	}
	return args
}

// MaxAge is how old a cached root may be before it is built again (it
// then gets the point release's and the security fixes).
const MaxAge = 30 * 24 * time.Hour

// CacheDir is where the root is kept between runs: $LANLEADER_SYSTEMD_CACHE,
// or /var/cache/lanleader/systemd-bookworm. It holds root/ (pristine:
// every boot runs on an overlay of it) and stamp (the debootstrap command
// that made it).
func CacheDir() string {
	if d := os.Getenv("LANLEADER_SYSTEMD_CACHE"); d != "" {
		return d
	}
	return "/var/cache/lanleader/systemd-bookworm"
}

func stamp() string {
	return "debootstrap " + strings.Join(debootstrapArgs("ROOT"), " ") + "\n"
}

// Root returns the cached pristine root, built first with debootstrap if
// it is missing, made by another command, or older than MaxAge. The new
// root is built beside the old one and renamed over it, so that a build
// cut short leaves no half root behind. log receives debootstrap's
// output.
func Root(log io.Writer) (string, error) {
	dir := CacheDir()
	root := filepath.Join(dir, "root")
	if fresh(dir) {
		return root, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp := filepath.Join(dir, "root.new")
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	args := debootstrapArgs(tmp)
	cmd := exec.Command("debootstrap", args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("debootstrap %s: %w", strings.Join(args, " "), err)
	}
	os.Remove(filepath.Join(dir, "stamp"))
	if err := os.RemoveAll(root); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, root); err != nil {
		return "", err
	}
	return root, os.WriteFile(filepath.Join(dir, "stamp"), []byte(stamp()), 0o644)
}

// fresh: dir has a root made by this stamp's command within MaxAge.
func fresh(dir string) bool {
	st, err := os.ReadFile(filepath.Join(dir, "stamp"))
	if err != nil || string(st) != stamp() {
		return false
	}
	fi, err := os.Stat(filepath.Join(dir, "stamp"))
	if err != nil || time.Since(fi.ModTime()) > MaxAge {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, "root", "lib", "systemd", "systemd"))
	return err == nil
}
