package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/internal/roff"
)

// manPages are the pages kept under man/, each with what writes it.
var manPages = map[string]func() string{
	"../../man/lanleader.8":      manPage,
	"../../man/lanleader.yaml.5": config.YAMLPage,
}

// TestManPagesAreCurrent: man/lanleader.8 and man/lanleader.yaml.5 are
// what the program writes now from its help texts and the settings
// table. go test ./cmd/lanleader -run TestManPagesAreCurrent -update
// rewrites them.
func TestManPagesAreCurrent(t *testing.T) {
	for path, write := range manPages {
		want := write()
		if *update {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s is stale: look at the difference, then rewrite it with go test ./cmd/lanleader -run TestManPagesAreCurrent -update", path)
		}
	}
}

// manSection is the text of section name (.SH) of page, up to the next.
func manSection(page, name string) string {
	_, after, ok := strings.Cut(page, ".SH "+roff.Quote(name)+"\n")
	if !ok {
		_, after, ok = strings.Cut(page, ".SH "+name+"\n")
	}
	if !ok {
		return ""
	}
	if i := strings.Index(after, "\n.SH "); i >= 0 {
		after = after[:i+1]
	}
	return after
}

// TestManPageSections: lanleader(8) has the usual sections, a
// subsection for every command that `lanleader help` lists, run's every
// option with its default and key, an exit status of run for every one
// that run.go and once.go return, and in SEE ALSO the file's page.
func TestManPageSections(t *testing.T) {
	page := manPage()
	for _, s := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "EXIT STATUS", "SIGNALS",
		"ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO", "JOB", "QUORUM MODE", "ROLES", "VIRTUAL IP", "AUTHENTICATION"} {
		if manSection(page, s) == "" {
			t.Errorf("lanleader(8) has no section %s", s)
		}
	}
	// Every command of `lanleader help`: "  run       run the agent".
	commands := regexp.MustCompile(`(?m)^  ([a-z][a-z-]+)\b`).FindAllStringSubmatch(usage, -1)
	if len(commands) < 8 {
		t.Fatalf("the usage lists %d commands", len(commands))
	}
	synopsis := manSection(page, "SYNOPSIS")
	for _, c := range append(commands, []string{"", "help"}) {
		if !strings.Contains(page, ".SS "+roff.Quote("lanleader "+c[1])+"\n") {
			t.Errorf("lanleader(8) has no subsection of the command %s", c[1])
		}
		if !strings.Contains(synopsis, `\fBlanleader\fR \fB`+roff.Escape(c[1])+`\fR`) {
			t.Errorf("lanleader(8)'s SYNOPSIS lacks the command %s", c[1])
		}
	}
	options := manSection(page, "OPTIONS")
	for _, g := range config.Groups {
		if !regexp.MustCompile(`(?m)^\.SS "` + regexp.QuoteMeta(roff.Escape(g)) + `\b`).MatchString(options) {
			t.Errorf("OPTIONS has no subsection %q", g)
		}
	}
	for i := range config.Settings {
		s := &config.Settings[i]
		entry := ".TP\n" + roff.Term(s.Synopsis()) + "\n"
		at := strings.Index(options, entry)
		if at < 0 {
			t.Errorf("OPTIONS has no entry %q", entry)
			continue
		}
		text := options[at+len(entry):]
		text = text[:strings.Index(text+".TP\n", ".TP\n")]
		for _, want := range []string{"Key: " + s.Key + "; " + s.ReloadText() + ".", "Default", strings.Fields(s.Doc)[0]} {
			if !strings.Contains(strings.Join(strings.Fields(text), " "), roff.Escape(want)) {
				t.Errorf("OPTIONS: %s does not say %q:\n%s", s.Synopsis(), want, text)
			}
		}
	}
	for _, flag := range []string{"--config FILE", "--once[=true|false]", "--once-timeout DURATION"} {
		if !strings.Contains(options, ".TP\n"+roff.Term(flag)+"\n") {
			t.Errorf("OPTIONS has no entry of %s", flag)
		}
	}
	status := manSection(page, "EXIT STATUS")
	for _, code := range []int{exitStopped, exitFailed, exitConfig, exitNotReady, exitTempFail, exitAborted} {
		if !strings.Contains(status, fmt.Sprintf(".TP\n\\fB%d\\fR\n", code)) {
			t.Errorf("EXIT STATUS has no entry of %d:\n%s", code, status)
		}
	}
	for _, sig := range []string{"SIGINT", "SIGTERM", "SIGHUP", "SIGABRT"} {
		if !strings.Contains(manSection(page, "SIGNALS"), sig) {
			t.Errorf("SIGNALS does not name %s", sig)
		}
	}
	for _, see := range []string{`.BR lanleader.yaml (5)`, `.BR systemd.service (5)`, `.BR keepalived (8)`, `.BR keepalived.conf (5)`} {
		if !strings.Contains(manSection(page, "SEE ALSO"), see) {
			t.Errorf("SEE ALSO lacks %q", see)
		}
	}
	// Documentation addresses only, in what the page adds of its own.
	for _, text := range []string{manTail, manIntro, manEnvironment} {
		for _, a := range regexp.MustCompile(`\b\d+\.\d+\.\d+\.\d+\b`).FindAllString(text, -1) {
			if !strings.HasPrefix(a, "192.0.2.") && !strings.HasPrefix(a, "127.") {
				t.Errorf("the page's own text has the address %s: use 192.0.2.0/24", a)
			}
		}
	}
}

// TestManPageEnvironment: ENVIRONMENT names every variable that the
// program reads (os.Getenv, os.LookupEnv in cmd/ and agent/, main's
// getenv, and those of
// systemd's watchdog that go-systemd reads), but the ones the agent sets
// for the processes it starts of itself (its guard, its address keeper).
func TestManPageEnvironment(t *testing.T) {
	env := manSection(manPage(), "ENVIRONMENT")
	read := map[string]bool{"WATCHDOG_USEC": true, "WATCHDOG_PID": true}
	getenv := regexp.MustCompile(`(?:os\.Getenv|os\.LookupEnv|getenv)\(("[A-Z_]+"|[a-zA-Z]+)\)`)
	constant := regexp.MustCompile(`\b([a-zA-Z]+)\s*=\s*"([A-Z_]+)"`)
	consts := map[string]string{} // a package's constants of a variable's name
	var names []string
	for _, dir := range []string{"..", "../../agent"} {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range constant.FindAllStringSubmatch(string(src), -1) {
				consts[m[1]] = m[2]
			}
			for _, m := range getenv.FindAllStringSubmatch(string(src), -1) {
				names = append(names, strings.Trim(m[1], `"`))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		if v, ok := consts[name]; ok {
			name = v
		}
		read[name] = true
	}
	for _, own := range []string{"LANLEADER_JOB_GUARD", "LANLEADER_JOB_GUARD_GRACE", "LANLEADER_JOB_GUARD_LEASE", "LANLEADER_JOB_GUARD_VIPS", "LANLEADER_VIP_KEEPER",
		"LANLEADER_JOB_GUARD_HOLD", "LANLEADER_JOB_GUARD_LIFE", "LANLEADER_NOTICE_GUARD", "LANLEADER_NOTICE_FROM", "LANLEADER_NOTICE_IFACE", "LANLEADER_VIP_KEEPER_HOLD"} {
		if !read[own] {
			t.Errorf("no os.Getenv(%s) found: the walk missed the agent's own variables", own)
		}
		delete(read, own)
	}
	if !read["GOMAXPROCS"] || !read["NOTIFY_SOCKET"] || !read["RUNTIME_DIRECTORY"] {
		t.Errorf("the walk found %v", read)
	}
	for name := range read {
		if !strings.Contains(env, roff.Escape(name)) {
			t.Errorf("ENVIRONMENT does not name %s, which the program reads", name)
		}
	}
}

// TestManPageFiles: FILES names every file the package installs but the
// program, the pages and the README.
func TestManPageFiles(t *testing.T) {
	files := manSection(manPage(), "FILES")
	nfpm, err := os.ReadFile("../../packaging/nfpm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dsts := regexp.MustCompile(`(?m)^\s+dst: (\S+)$`).FindAllStringSubmatch(string(nfpm), -1)
	if len(dsts) < 10 {
		t.Fatalf("nfpm.yaml has %d files", len(dsts))
	}
	for _, m := range dsts {
		dst := m[1]
		if dst == "/usr/bin/lanleader" || strings.HasPrefix(dst, "/usr/share/man/") || strings.HasPrefix(dst, "/usr/share/doc/") {
			continue
		}
		if !strings.Contains(files, ".I "+roff.Escape(dst)+"\n") {
			t.Errorf("FILES does not name %s, which the package installs", dst)
		}
	}
}

// TestManPageCheckFields: lanleader.yaml(5) names each key of a check's
// mapping that the file's reader knows.
func TestManPageCheckFields(t *testing.T) {
	checks := manSection(config.YAMLPage(), "CHECKS")
	for _, f := range checkFields {
		if !strings.Contains(checks, ".TP\n.B "+f+"\n") {
			t.Errorf("lanleader.yaml(5)'s CHECKS has no entry of %s", f)
		}
	}
}

// TestManPagesLint: mandoc -T lint finds nothing to say of either page.
func TestManPagesLint(t *testing.T) {
	if _, err := exec.LookPath("mandoc"); err != nil {
		t.Skip("no mandoc (Debian: apt-get install mandoc): the pages are not linted")
	}
	for path := range manPages {
		out, err := exec.Command("mandoc", "-T", "lint", path).CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("mandoc -T lint %s: %v\n%s", path, err, out)
		}
	}
}

// TestManPagesRender: man -l renders each page, without a word on
// stderr, with its sections, in 80 columns.
func TestManPagesRender(t *testing.T) {
	if _, err := exec.LookPath("man"); err != nil {
		t.Skip("no man: the pages are not rendered")
	}
	for path, sections := range map[string][]string{
		"../../man/lanleader.8":      {"LANLEADER(8)", "NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "EXIT STATUS", "SIGNALS", "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"},
		"../../man/lanleader.yaml.5": {"LANLEADER.YAML(5)", "NAME", "SYNOPSIS", "DESCRIPTION", "VALUES", "CHECKS", "KEYS", "EXAMPLES", "SEE ALSO"},
	} {
		cmd := exec.Command("man", "-l", path)
		cmd.Env = append(os.Environ(), "MANWIDTH=80", "MANPAGER=cat", "PAGER=cat", "LANG=C.UTF-8")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Errorf("man -l %s: %v\n%s", path, err, stderr.String())
			continue
		}
		lines := strings.Split(string(out), "\n")
		for _, s := range sections {
			if !slices.ContainsFunc(lines, func(l string) bool { return l == s || strings.HasPrefix(l, s+" ") }) {
				t.Errorf("man -l %s has no line %q", path, s)
			}
		}
		for _, l := range lines {
			if n := len([]rune(l)); n > 80 {
				t.Errorf("man -l %s: a line of %d columns: %q", path, n, l)
			}
		}
	}
}
