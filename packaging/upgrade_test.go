package packaging

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lanleader/lanleader/internal/cmdtest"
)

// postinst is one run of postinst.sh in a made-up host: systemctl,
// systemd-sysusers and chown are fakes first in PATH that record their
// arguments, one call a line, and getent knows the user lanleader when
// user is set; the places the script looks at (/run/systemd/system,
// /usr/bin/lanleader, /proc/PID/exe, /var/lib/lanleader) are moved into
// a temporary directory (root), where /usr/bin/lanleader is the new
// package's binary and /proc/PID/exe the running agent's, each a script
// that prints its version line.
type postinst struct {
	script  string   // the postinst's text
	args    []string // dpkg's arguments: configure [OLD-VERSION]
	systemd bool     // /run/systemd/system exists
	mainPID string   // what systemctl show says of MainPID
	running string   // the running agent's `version` line ("" no /proc/PID/exe)
	newBin  string   // the new binary's `version` line, or the path of a real one
	user    bool     // the system user lanleader exists
	root    string   // the made-up host's root; "": a new temporary directory
}

// run runs the script with dash (sh when there is none) and returns the
// calls of systemctl and systemd-sysusers, and what it printed on its
// standard output and error. It fails the test when the script fails.
func (p postinst) run(t *testing.T) (calls []string, stdout, stderr string) {
	t.Helper()
	tmp := p.root
	if tmp == "" {
		tmp = t.TempDir()
	}
	bin, log := filepath.Join(tmp, "bin"), filepath.Join(tmp, "calls")
	os.Remove(log)
	fake := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fake(filepath.Join(bin, "systemctl"), `echo "systemctl $*" >>"$CALLS"
case "$1" in show) echo "MainPID=`+p.mainPID+`" ;; esac
`)
	fake(filepath.Join(bin, "systemd-sysusers"), `echo "systemd-sysusers $*" >>"$CALLS"
`)
	fake(filepath.Join(bin, "chown"), `echo "chown $1 ${2#"$ROOT"}" >>"$CALLS"
`)
	user := ""
	if p.user {
		user = "1"
	}
	fake(filepath.Join(bin, "getent"), `[ "$*" = "passwd lanleader" ] && [ -n "$USER_EXISTS" ] || exit 2
echo "lanleader:x:999:999:lanleader agent:/:/usr/sbin/nologin"
`)
	newBin := filepath.Join(tmp, "usr/bin/lanleader")
	if strings.HasPrefix(p.newBin, "/") {
		newBin = p.newBin
	} else {
		fake(newBin, "echo '"+p.newBin+"'\n")
	}
	if p.running != "" {
		fake(filepath.Join(tmp, "proc", p.mainPID, "exe"), "echo '"+p.running+"'\n")
	}
	if p.systemd {
		os.MkdirAll(filepath.Join(tmp, "run/systemd/system"), 0o755)
	}
	s := strings.NewReplacer(
		"/run/systemd/system", filepath.Join(tmp, "run/systemd/system"),
		"/usr/bin/lanleader", newBin,
		"/proc/", filepath.Join(tmp, "proc")+"/",
		"/var/lib/lanleader", filepath.Join(tmp, "var/lib/lanleader"),
	).Replace(p.script)
	os.MkdirAll(filepath.Join(tmp, "var/lib"), 0o755)
	path := filepath.Join(tmp, "postinst")
	if err := os.WriteFile(path, []byte(s), 0o755); err != nil {
		t.Fatal(err)
	}
	shell, err := exec.LookPath("dash")
	if err != nil {
		shell = "/bin/sh"
	}
	cmd := exec.Command(shell, append([]string{path}, p.args...)...)
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "CALLS=" + log, "ROOT=" + tmp, "USER_EXISTS=" + user}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("postinst %s: %v\n%s%s", strings.Join(p.args, " "), err, out.String(), errb.String())
	}
	b, _ := os.ReadFile(log)
	if s := strings.TrimSpace(string(b)); s != "" {
		calls = strings.Split(s, "\n")
	}
	return calls, out.String(), errb.String()
}

const (
	wire1   = "lanleader 1.4.0 go1.26.8 wire 1"
	wire2   = "lanleader 1.5.0 (0123456789ab) go1.26.8 wire 2"
	wireNew = "lanleader 1.6.0 go1.26.9 wire 2"
	noWire  = "lanleader 1.3.0 go1.26.8" // before the version line said its wire
)

var (
	sysusers = "systemd-sysusers lanleader.conf"
	reload   = "systemctl daemon-reload"
	show     = "systemctl show --property MainPID lanleader.service"
	restart  = "systemctl try-restart lanleader.service"
)

// TestPostinstUpgrade: an upgrade restarts a running agent only when the
// new binary speaks the running agent's wire version; across a change of
// wire version (or when the running agent does not say its version) it
// leaves the agent alone and says what to do, since a host-by-host
// upgrade would otherwise elect a leader on each version. An install,
// an agent that is not running, or a host without systemd: as before,
// and quiet.
func TestPostinstUpgrade(t *testing.T) {
	script, err := os.ReadFile("postinst.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		p          postinst
		calls      []string
		message    []string // what stderr must say; none: it says nothing
		notMessage []string
	}{
		{"same wire: restarted", postinst{args: []string{"configure", "1.5.0"}, systemd: true, mainPID: "4242", running: wire2, newBin: wireNew},
			[]string{sysusers, reload, show, restart}, nil, nil},
		{"wire 1 to 2: not restarted", postinst{args: []string{"configure", "1.4.0"}, systemd: true, mainPID: "4242", running: wire1, newBin: wireNew},
			[]string{sysusers, reload, show},
			[]string{"the running agent (pid 4242) was NOT restarted: it speaks wire version 1,", "speaks wire version 2.",
				"stop the agent on every\nhost (systemctl stop lanleader), then start it on every host", "See /usr/share/doc/lanleader/docs/upgrading.md."},
			[]string{"already speaks"}},
		{"wire 2 back to 1: not restarted", postinst{args: []string{"configure", "1.5.0"}, systemd: true, mainPID: "77", running: wire2, newBin: wire1},
			[]string{sysusers, reload, show},
			[]string{"(pid 77) was NOT restarted: it speaks wire version 2,", "speaks wire version 1."}, nil},
		{"running agent of unknown wire: not restarted", postinst{args: []string{"configure", "1.3.0"}, systemd: true, mainPID: "4242", running: noWire, newBin: wireNew},
			[]string{sysusers, reload, show},
			[]string{"NOT restarted: it does not say which wire version it speaks", "If every agent of the cluster already speaks wire version 2, restart\nthis one: systemctl restart lanleader."}, nil},
		{"running agent's binary unreadable: not restarted", postinst{args: []string{"configure", "1.5.0"}, systemd: true, mainPID: "4242", newBin: wireNew},
			[]string{sysusers, reload, show},
			[]string{"NOT restarted: it does not say which wire version it speaks"}, nil},
		{"agent not running", postinst{args: []string{"configure", "1.5.0"}, systemd: true, mainPID: "0", newBin: wireNew},
			[]string{sysusers, reload, show, restart}, nil, nil},
		{"install", postinst{args: []string{"configure"}, systemd: true, mainPID: "4242", running: wire1, newBin: wireNew},
			[]string{sysusers, reload}, nil, nil},
		{"reconfigure with the same version", postinst{args: []string{"configure", "1.6.0"}, systemd: true, mainPID: "4242", running: wireNew, newBin: wireNew},
			[]string{sysusers, reload, show, restart}, nil, nil},
		{"no systemd", postinst{args: []string{"configure", "1.4.0"}, mainPID: "4242", running: wire1, newBin: wireNew},
			[]string{sysusers}, nil, nil},
		{"abort-upgrade", postinst{args: []string{"abort-upgrade", "1.6.0"}, systemd: true, mainPID: "4242", running: wire1, newBin: wireNew},
			[]string{sysusers, reload}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.p.script = string(script)
			// Twice: the script is idempotent (dpkg may run it again).
			for range 2 {
				calls, stdout, stderr := tc.p.run(t)
				if !slices.Equal(calls, tc.calls) {
					t.Errorf("calls:\n  %s\nwant:\n  %s", strings.Join(calls, "\n  "), strings.Join(tc.calls, "\n  "))
				}
				if stdout != "" {
					t.Errorf("stdout %q, want nothing", stdout)
				}
				if len(tc.message) == 0 && stderr != "" {
					t.Errorf("stderr %q, want nothing", stderr)
				}
				for _, want := range tc.message {
					if !strings.Contains(stderr, want) {
						t.Errorf("stderr lacks %q:\n%s", want, stderr)
					}
				}
				for _, not := range tc.notMessage {
					if strings.Contains(stderr, not) {
						t.Errorf("stderr has %q:\n%s", not, stderr)
					}
				}
			}
		})
	}
}

// TestPostinstReadsTheVersionLine: the script reads the wire version
// from the line the real `lanleader version` prints (built here), so the
// two cannot drift apart: the same wire restarts, another does not.
func TestPostinstReadsTheVersionLine(t *testing.T) {
	script, err := os.ReadFile("postinst.sh")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "lanleader")
	cmdtest.Run(t, "..", nil, "go", "build", "-o", bin, "./cmd/lanleader")
	line := strings.TrimSpace(cmdtest.Run(t, "", nil, bin, "version"))
	i := strings.LastIndex(line, " wire ")
	if i < 0 {
		t.Fatalf("lanleader version: %q has no wire field", line)
	}
	wire := line[i+len(" wire "):]
	other := "lanleader 0.1.0 go1.26.8 wire 1" + wire // never this binary's
	p := postinst{script: string(script), args: []string{"configure", "0.1.0"}, systemd: true, mainPID: "9", newBin: bin}

	p.running = "lanleader 0.1.0 go1.26.8 wire " + wire
	if calls, _, stderr := p.run(t); !slices.Contains(calls, restart) || stderr != "" {
		t.Errorf("running agent of wire %s, new binary %q: calls %q, stderr %q; want a restart, quietly", wire, line, calls, stderr)
	}
	p.running = other
	if calls, _, stderr := p.run(t); slices.Contains(calls, restart) || !strings.Contains(stderr, "speaks wire version "+wire+".") {
		t.Errorf("running agent %q, new binary %q: calls %q, stderr %q; want no restart and the new wire named", other, line, calls, stderr)
	}
}

// TestPostinstStateDirectory: when the system user exists, the script
// makes the unit's StateDirectory, /var/lib/lanleader, as systemd would
// (owner lanleader, 0755), so that check-config finds the directory of
// state_file: /var/lib/lanleader/state before the unit's first start; a
// second run, and a path that exists already (the symbolic link to
// /var/lib/private/lanleader that the unit's first start leaves, a
// directory of the admin's), are left as they are; without the user
// nothing is made.
func TestPostinstStateDirectory(t *testing.T) {
	script, err := os.ReadFile("postinst.sh")
	if err != nil {
		t.Fatal(err)
	}
	chown := "chown lanleader:lanleader /var/lib/lanleader"
	for _, tc := range []struct {
		name     string
		user     bool
		existing string // "", "link" or "dir": what is at /var/lib/lanleader before
		made     bool   // the script makes the directory (and chowns it)
	}{
		{"install", true, "", true},
		{"after the unit's first start: a symbolic link", true, "link", false},
		{"a directory already", true, "dir", false},
		{"no user", false, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "var/lib/lanleader")
			os.MkdirAll(filepath.Join(root, "var/lib/private/lanleader"), 0o700)
			switch tc.existing {
			case "link":
				if err := os.Symlink("private/lanleader", dir); err != nil {
					t.Fatal(err)
				}
			case "dir":
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			p := postinst{script: string(script), args: []string{"configure"}, systemd: true, newBin: wireNew, user: tc.user, root: root}
			calls, _, stderr := p.run(t)
			if stderr != "" {
				t.Errorf("stderr %q, want nothing", stderr)
			}
			if got := slices.Contains(calls, chown); got != tc.made {
				t.Errorf("calls:\n  %s\nwant %q: %v", strings.Join(calls, "\n  "), chown, tc.made)
			}
			fi, err := os.Lstat(dir)
			switch {
			case tc.existing == "link":
				if err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Errorf("the symbolic link was not kept: %v %v", fi, err)
				}
			case tc.existing == "dir":
				if err != nil || fi.Mode().Perm() != 0o700 {
					t.Errorf("the directory was changed: %v %v", fi, err)
				}
			case tc.made:
				if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755 {
					t.Fatalf("/var/lib/lanleader: %v %v, want a directory of mode 0755", fi, err)
				}
				// Again, as dpkg may run it: nothing more is done.
				if calls, _, _ := p.run(t); slices.Contains(calls, chown) {
					t.Errorf("second run: calls %q, want no chown", calls)
				}
			default:
				if err == nil {
					t.Errorf("/var/lib/lanleader made without the user: %v", fi.Mode())
				}
			}
		})
	}
}

// TestUpgradingQuotesTheMessage: docs/upgrading.md quotes the message of
// an upgrade across a wire change as the script prints it, line by line.
func TestUpgradingQuotesTheMessage(t *testing.T) {
	script, err := os.ReadFile("postinst.sh")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/upgrading.md")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	p := postinst{script: string(script), args: []string{"configure", "1.4.0"}, systemd: true, mainPID: "4242", running: wire1, newBin: wireNew, root: root}
	_, _, stderr := p.run(t)
	stderr = strings.ReplaceAll(stderr, root, "") // the made-up host's paths back to the real ones
	if stderr == "" {
		t.Fatal("the script printed nothing")
	}
	quoted := "  ```\n  " + strings.ReplaceAll(strings.TrimSuffix(stderr, "\n"), "\n", "\n  ") + "\n  ```\n"
	if !strings.Contains(string(doc), quoted) {
		t.Errorf("docs/upgrading.md does not quote the message as printed:\n%s", quoted)
	}
}
