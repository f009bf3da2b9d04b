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

// postinst is one run of postinst.sh in a made-up host: systemctl and
// systemd-sysusers are fakes first in PATH that record their arguments,
// one call a line; the places the script looks at (/run/systemd/system,
// /usr/bin/lanleader, /proc/PID/exe) are moved into a temporary
// directory, where /usr/bin/lanleader is the new package's binary and
// /proc/PID/exe the running agent's, each a script that prints its
// version line.
type postinst struct {
	script  string   // the postinst's text
	args    []string // dpkg's arguments: configure [OLD-VERSION]
	systemd bool     // /run/systemd/system exists
	mainPID string   // what systemctl show says of MainPID
	running string   // the running agent's `version` line ("" no /proc/PID/exe)
	newBin  string   // the new binary's `version` line, or the path of a real one
}

// run runs the script with dash (sh when there is none) and returns the
// calls of systemctl and systemd-sysusers, and what it printed on its
// standard output and error. It fails the test when the script fails.
func (p postinst) run(t *testing.T) (calls []string, stdout, stderr string) {
	t.Helper()
	tmp := t.TempDir()
	bin, log := filepath.Join(tmp, "bin"), filepath.Join(tmp, "calls")
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
	).Replace(p.script)
	path := filepath.Join(tmp, "postinst")
	if err := os.WriteFile(path, []byte(s), 0o755); err != nil {
		t.Fatal(err)
	}
	shell, err := exec.LookPath("dash")
	if err != nil {
		shell = "/bin/sh"
	}
	cmd := exec.Command(shell, append([]string{path}, p.args...)...)
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "CALLS=" + log}
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
