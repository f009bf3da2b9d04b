package packaging

import (
	"bytes"
	"compress/gzip"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lanleader/lanleader/internal/cmdtest"
)

// wantFiles is every file the package installs, with its mode.
var wantFiles = map[string]string{
	"./usr/bin/lanleader":                                 "-rwxr-xr-x",
	"./lib/systemd/system/lanleader.service":              "-rw-r--r--",
	"./usr/share/lanleader/lanleader-vip.conf":            "-rw-r--r--",
	"./usr/share/polkit-1/rules.d/50-lanleader-job.rules": "-rw-r--r--",
	"./usr/lib/sysusers.d/lanleader.conf":                 "-rw-r--r--",
	"./etc/lanleader/lanleader.yaml":                      "-rw-r--r--",
	"./etc/default/lanleader":                             "-rw-r--r--",
	"./usr/share/man/man8/lanleader.8.gz":                 "-rw-r--r--",
	"./usr/share/man/man5/lanleader.yaml.5.gz":            "-rw-r--r--",
	"./usr/share/doc/lanleader/README.md":                 "-rw-r--r--",
	"./usr/share/lanleader/lanleader-job.conf":            "-rw-r--r--",
	"./usr/share/lanleader/lanleader-realtime.conf":       "-rw-r--r--",
}

// docFiles is the documentation the package ships beside the README, as
// paths of the repository: ARCHITECTURE.md, every docs/ page and every
// example config, so that the README's links resolve in the installed
// copy too.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"ARCHITECTURE.md"}
	for _, pattern := range []string{"docs/*.md", "docs/design/*.md", "examples/*.yaml", "examples/*/*.yaml"} {
		m, err := filepath.Glob(filepath.Join("..", pattern))
		if err != nil || len(m) == 0 {
			t.Fatalf("no %s in the repository (%v)", pattern, err)
		}
		for _, f := range m {
			files = append(files, strings.TrimPrefix(filepath.ToSlash(f), "../"))
		}
	}
	return files
}

// TestDeb builds the package with the one command, ./packaging/deb.sh,
// and inspects it: dpkg-deb -c lists exactly the files above (root-owned,
// with their modes), dpkg-deb -I has the control fields and the two
// conffiles, the extracted binary says its version, the man pages are
// man/'s, of man(7) macros, and the unit passes systemd-analyze verify
// (with ExecStart pointed at the extracted binary) and rates 2.0 or
// better in systemd-analyze security --offline=true, with the drop-in
// for --vip too, which grants CAP_NET_ADMIN and CAP_NET_RAW and no other,
// and with each of the drop-ins for a JIT job and for --realtime.
func TestDeb(t *testing.T) {
	for _, tool := range []string{"dpkg-deb", "gzip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: the package is built on Debian", tool)
		}
	}
	const version = "9.8.7"
	out := strings.TrimSpace(cmdtest.Run(t, "..", []string{"LANLEADER_VERSION=" + version}, "./packaging/deb.sh"))
	deb := filepath.Join("..", out)
	t.Cleanup(func() { os.Remove(deb) })
	if !strings.HasSuffix(out, "lanleader_"+version+"_"+runtimeArch(t)+".deb") {
		t.Errorf("deb.sh printed %q", out)
	}

	// dpkg-deb -c: "-rwxr-xr-x root/root 12599458 2026-11-22 10:40 ./usr/bin/lanleader"
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(cmdtest.Run(t, "", nil, "dpkg-deb", "-c", deb)), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || strings.HasPrefix(f[0], "d") {
			continue
		}
		if f[1] != "root/root" {
			t.Errorf("%s is owned by %s", f[5], f[1])
		}
		got[f[5]] = f[0]
	}
	want := maps.Clone(wantFiles)
	for _, path := range docFiles(t) {
		want["./usr/share/doc/lanleader/"+path] = "-rw-r--r--"
	}
	for path, mode := range want {
		if got[path] != mode {
			t.Errorf("dpkg-deb -c: %s has mode %q, want %q", path, got[path], mode)
		}
	}
	for path := range got {
		if _, ok := want[path]; !ok {
			t.Errorf("dpkg-deb -c: unexpected file %s", path)
		}
	}

	info := cmdtest.Run(t, "", nil, "dpkg-deb", "-I", deb)
	for _, want := range []string{"Package: lanleader\n", "Version: " + version + "\n", "Architecture: " + runtimeArch(t) + "\n", "Section: net\n", "Maintainer: ", "Depends: procps\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("dpkg-deb -I lacks %q:\n%s", want, info)
		}
	}
	ctl := t.TempDir()
	cmdtest.Run(t, "", nil, "dpkg-deb", "-e", deb, ctl)
	cf, _ := os.ReadFile(filepath.Join(ctl, "conffiles"))
	if lines := strings.Fields(string(cf)); !slices.Equal(lines, []string{"/etc/default/lanleader", "/etc/lanleader/lanleader.yaml"}) &&
		!slices.Equal(lines, []string{"/etc/lanleader/lanleader.yaml", "/etc/default/lanleader"}) {
		t.Errorf("conffiles %q", lines)
	}

	root := t.TempDir()
	cmdtest.Run(t, "", nil, "dpkg-deb", "-x", deb, root)
	bin := filepath.Join(root, "usr/bin/lanleader")
	if v := cmdtest.Run(t, "", nil, bin, "version"); !strings.HasPrefix(v, "lanleader "+version+" ") {
		t.Errorf("lanleader version: %q", v)
	}
	// The example config is one the agent accepts (-h after it: parse,
	// print the help, start nothing).
	cmdtest.Run(t, "", nil, bin, "run", "--config", filepath.Join(root, "etc/lanleader/lanleader.yaml"), "-h")

	// The man pages are man/'s, gzipped: man(7) macros, with each
	// command and the settings.
	for page, want := range map[string][]string{
		"man8/lanleader.8":      {".TH LANLEADER 8 ", `.SS "lanleader run"`, `.SS "lanleader resign"`, ".SH \"EXIT STATUS\"\n", `\fB\-\-job\-grace\fR \fIDURATION\fR`},
		"man5/lanleader.yaml.5": {".TH LANLEADER.YAML 5 ", ".SH KEYS\n", `\fBjob_grace:\fR \fIDURATION\fR`, ".BR lanleader (8)"},
	} {
		man := gunzip(t, filepath.Join(root, "usr/share/man", page+".gz"))
		committed, err := os.ReadFile(filepath.Join("../man", filepath.Base(page)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(man, committed) {
			t.Errorf("the package's %s is not man/%s", page, filepath.Base(page))
		}
		for _, w := range want {
			if !bytes.Contains(man, []byte(w)) {
				t.Errorf("%s lacks %q", page, w)
			}
		}
		// A line that begins with . or ' is a request: one of the man(7)
		// macros the pages use, never a line of text that roff would take
		// for one; and no blank line (a fault in filled text).
		for i, line := range strings.Split(strings.TrimSuffix(string(man), "\n"), "\n") {
			if (strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'")) && !manMacro.MatchString(line) {
				t.Errorf("%s:%d: a line that roff takes for a request: %q", page, i+1, line)
			}
			if strings.TrimSpace(line) == "" {
				t.Errorf("%s:%d: a blank line", page, i+1)
			}
		}
	}

	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("no systemd-analyze: the unit is not verified")
	}
	unit, err := os.ReadFile(filepath.Join(root, "lib/systemd/system/lanleader.service"))
	if err != nil {
		t.Fatal(err)
	}
	// What the unit promises in its comments and docs/install.md.
	for _, want := range []string{
		"ExecReload=/bin/kill -HUP $MAINPID\n", "RestartPreventExitStatus=2\n", "Restart=on-failure\n",
		"WatchdogSec=10s\n", "TimeoutAbortSec=10s\n", "OOMScoreAdjust=-500\n", "RuntimeDirectory=lanleader\n",
		"RestrictRealtime=yes\n", "MemoryDenyWriteExecute=yes\n",
	} {
		if !bytes.Contains(unit, []byte(want)) {
			t.Errorf("the unit lacks %q", want)
		}
	}
	units := t.TempDir()
	path := filepath.Join(units, "lanleader.service")
	os.WriteFile(path, bytes.ReplaceAll(unit, []byte("ExecStart=/usr/bin/lanleader"), []byte("ExecStart="+bin)), 0o644)
	// --man=no: lanleader(8) is not installed here.
	if out, err := exec.Command("systemd-analyze", "verify", "--man=no", path).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	score := exposure(t, path)
	t.Logf("systemd-analyze security --offline=true: exposure %.1f", score)
	if score > 2.0 {
		t.Errorf("exposure %.1f, want 2.0 or less", score)
	}

	// With the drop-in for --vip: the unit and the drop-in verify, and the
	// sandbox keeps what the drop-in does not open. systemd-analyze reads
	// no drop-in of a unit given by path, so the drop-in is appended to
	// the unit: a drop-in's lines are read as if they followed the unit's.
	dropIn, err := os.ReadFile(filepath.Join(root, "usr/share/lanleader/lanleader-vip.conf"))
	if err != nil {
		t.Fatal(err)
	}
	vipUnits := t.TempDir()
	vipPath := filepath.Join(vipUnits, "lanleader.service")
	merged, _ := os.ReadFile(path)
	os.WriteFile(vipPath, append(append(merged, '\n'), dropIn...), 0o644)
	if out, err := exec.Command("systemd-analyze", "verify", "--man=no", vipPath).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify with the drop-in: %v\n%s", err, out)
	}
	vipScore := exposure(t, vipPath)
	t.Logf("with lanleader-vip.conf: exposure %.1f", vipScore)
	if vipScore > 2.0 || vipScore < score {
		t.Errorf("exposure with the drop-in %.1f, want at most 2.0 and no less than without (%.1f)", vipScore, score)
	}
	for _, want := range []string{
		"CapabilityBoundingSet=CAP_NET_ADMIN CAP_NET_RAW\n",
		"AmbientCapabilities=CAP_NET_ADMIN CAP_NET_RAW\n",
		"RestrictAddressFamilies=AF_INET AF_INET6 AF_NETLINK AF_PACKET AF_UNIX\n",
		"PrivateUsers=no\n",
	} {
		if !bytes.Contains(dropIn, []byte(want)) {
			t.Errorf("the drop-in lacks %q", want)
		}
	}
	// Exactly these two capabilities: every assignment after the reset.
	var caps []string
	for _, line := range strings.Split(string(dropIn), "\n") {
		for _, key := range []string{"CapabilityBoundingSet=", "AmbientCapabilities="} {
			if v, ok := strings.CutPrefix(line, key); ok {
				caps = append(caps, strings.Fields(v)...)
			}
		}
	}
	slices.Sort(caps)
	if want := []string{"CAP_NET_ADMIN", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_NET_RAW"}; !slices.Equal(caps, want) {
		t.Errorf("the drop-in's capabilities %q, want %q", caps, want)
	}

	// The drop-ins for a forked job with a JIT and for --realtime: each
	// verifies with the unit, opens what it says and no capability.
	for _, d := range []struct {
		file string
		want []string
	}{
		{"lanleader-job.conf", []string{"MemoryDenyWriteExecute=no\n", "SystemCallFilter=\nSystemCallFilter=@system-service\n"}},
		{"lanleader-realtime.conf", []string{"RestrictRealtime=no\n", "LimitRTPRIO=10\n", "SystemCallFilter=sched_setattr\n"}},
	} {
		dropIn, err := os.ReadFile(filepath.Join(root, "usr/share/lanleader", d.file))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range d.want {
			if !bytes.Contains(dropIn, []byte(want)) {
				t.Errorf("%s lacks %q", d.file, want)
			}
		}
		if regexp.MustCompile(`(?m)^(CapabilityBoundingSet|AmbientCapabilities)=`).Match(dropIn) {
			t.Errorf("%s grants capabilities", d.file)
		}
		p := filepath.Join(t.TempDir(), "lanleader.service")
		os.WriteFile(p, append(append(merged, '\n'), dropIn...), 0o644)
		if out, err := exec.Command("systemd-analyze", "verify", "--man=no", p).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("systemd-analyze verify with %s: %v\n%s", d.file, err, out)
		}
		s := exposure(t, p)
		t.Logf("with %s: exposure %.1f", d.file, s)
		if s > 2.0 || s < score {
			t.Errorf("exposure with %s %.1f, want at most 2.0 and no less than without (%.1f)", d.file, s, score)
		}
	}
}

// manMacro is a line of one of the man(7) macros the pages use.
var manMacro = regexp.MustCompile(`^\.(TH|SH|SS|TP|PP|IP|RS|RE|EX|EE|br|B|BR|I|IR|RB)( |$)`)

// gunzip is the content of the gzipped file at path.
func gunzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// exposure is systemd-analyze security --offline=true's overall exposure
// of the unit at path.
func exposure(t *testing.T, path string) float64 {
	t.Helper()
	sec, err := exec.Command("systemd-analyze", "security", "--offline=true", path).CombinedOutput()
	m := regexp.MustCompile(`Overall exposure level for lanleader.service: ([0-9.]+)`).FindSubmatch(sec)
	if m == nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, sec)
	}
	score, _ := strconv.ParseFloat(string(m[1]), 64)
	return score
}

func runtimeArch(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOARCH").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
