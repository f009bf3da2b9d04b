package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lanleader/lanleader/agent/config"
)

// flagParagraph is the text run -h gives flag: from its line to the next
// flag's.
func flagParagraph(flag string) string {
	m := regexp.MustCompile(`(?m)^    --` + regexp.QuoteMeta(flag) + `\b.*\n((?:        .*\n|\n)*)`).FindStringSubmatch(runUsage)
	if m == nil {
		return ""
	}
	return strings.Join(strings.Fields(m[0]), " ")
}

// TestRunHelpDefaults: run -h states each setting's default as the
// settings table does (config.Settings, which config's own test holds to
// DefaultConfig): the manual and the table cannot drift apart.
func TestRunHelpDefaults(t *testing.T) {
	checked := 0
	for i := range config.Settings {
		s := &config.Settings[i]
		if !s.IsFlag() {
			continue
		}
		p := flagParagraph(s.Flag)
		if p == "" {
			t.Errorf("run -h has no paragraph for --%s", s.Flag)
			continue
		}
		def := strings.Trim(s.Default, "`")
		if strings.ContainsAny(def, " `/") || def == "none" {
			continue // a default that follows another setting, or none: said in words
		}
		checked++
		if !regexp.MustCompile(`Default:? ` + regexp.QuoteMeta(def) + `\b`).MatchString(p) {
			t.Errorf("--%s: run -h does not say \"Default %s\" (the table's): %q", s.Flag, def, p)
		}
	}
	if checked < 30 {
		t.Errorf("only %d defaults checked", checked)
	}
}

var update = flag.Bool("update", false, "rewrite testdata/run-h.txt from the settings table and run.txt")

// golden is `lanleader run -h` as reviewed: a change of the table or of
// run.txt shows in its diff.
const golden = "testdata/run-h.txt"

// TestRunHelpGolden: `lanleader run -h` prints what the golden file
// holds, and the golden file is the settings table's (TestRunHelpIsTheTable
// checks both). go test -run TestRunHelpGolden -update rewrites it.
func TestRunHelpGolden(t *testing.T) {
	code, out, errs := runCmd("run", "-h")
	if code != 0 || errs != "" || out != runUsage {
		t.Fatalf("run -h: exit %d, stderr %q, stdout runUsage %v", code, errs, out == runUsage)
	}
	if *update {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != out {
		t.Errorf("run -h is not %s: look at the difference, then rewrite it with go test ./cmd/lanleader -run TestRunHelpGolden -update", golden)
	}
}

// TestRunHelpIsTheTable: run -h, and its golden file, give every setting
// of the table, in its group, with its synopsis, its range, its default,
// its key and what a reload does with it; and the flags it names are the
// flags of run: the table's, --config, --once and --once-timeout.
func TestRunHelpIsTheTable(t *testing.T) {
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"runUsage": runUsage, golden: string(b)} {
		checkHelpHasTable(t, name, text)
		checkHelpNamesRunFlags(t, name, text)
	}
}

// checkHelpHasTable: text has every setting of the table, under its
// group's heading, in the table's order within the group.
func checkHelpHasTable(t *testing.T, name, text string) {
	t.Helper()
	at := map[string]int{}
	for _, g := range config.Groups {
		i := strings.Index(text, "\n  "+g)
		if i < 0 {
			t.Errorf("%s has no heading %q", name, g)
		}
		at[g] = i
	}
	last := map[string]int{}
	for i := range config.Settings {
		s := &config.Settings[i]
		m := regexp.MustCompile(`(?m)^    ` + regexp.QuoteMeta(s.Synopsis()) + `\n((?:        .*\n)+)`).FindStringSubmatchIndex(text)
		if m == nil {
			t.Errorf("%s has no entry %q", name, s.Synopsis())
			continue
		}
		next := len(text)
		if j := slices.Index(config.Groups, s.Group); j+1 < len(config.Groups) {
			next = at[config.Groups[j+1]]
		}
		if m[0] < at[s.Group] || m[0] > next || m[0] < last[s.Group] {
			t.Errorf("%s: %s is not in its place in group %q", name, s.Synopsis(), s.Group)
		}
		last[s.Group] = m[0]
		entry := strings.Join(strings.Fields(text[m[2]:m[3]]), " ")
		want := []string{"Key: " + s.Key + "; " + s.ReloadText() + ".", strings.Join(strings.Fields(s.Doc), " ")}
		if s.Range != nil {
			want = append(want, fmt.Sprintf("Range %d to %d.", s.Range.Min, s.Range.Max))
		}
		if def := strings.ReplaceAll(s.Default, "`", ""); def == "none" || strings.Contains(def, " ") {
			want = append(want, "Default: "+def+".")
		} else {
			want = append(want, "Default "+def+".")
		}
		for _, w := range want {
			if !strings.Contains(entry, w) {
				t.Errorf("%s: the entry of %s does not say %q: %q", name, s.Synopsis(), w, entry)
			}
		}
	}
}

// checkHelpNamesRunFlags: every --flag that text names is a flag of run
// (or --help), and every flag of run is named.
func checkHelpNamesRunFlags(t *testing.T, name, text string) {
	t.Helper()
	known := map[string]bool{"help": true}
	newRunFlags().set.VisitAll(func(f *flag.Flag) { known[f.Name] = true })
	jobs := map[string]bool{"fast": true, "term": true} // the example jobs' own flags
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?:^|[^-\w])--([a-z][a-z0-9-]*)`).FindAllStringSubmatch(text, -1) {
		named[m[1]] = true
		if !known[m[1]] && !jobs[m[1]] {
			t.Errorf("%s names --%s, which run does not have", name, m[1])
		}
	}
	for f := range known {
		if !named[f] {
			t.Errorf("%s does not name --%s", name, f)
		}
	}
	if len(known) != len(runOptions)+3 { // the job has no flag; --config, --once, --once-timeout and --help are not the table's
		t.Errorf("run has %d flags and --help, the table %d settings", len(known)-1, len(runOptions))
	}
}

// TestRunHelpFileKeys: what run -h says of the file's keys is true: each
// flag whose key is not its name with '_' for '-' is listed with its key,
// which the file reads, and each flag said to have no key is refused in
// the file.
func TestRunHelpFileKeys(t *testing.T) {
	_, section, _ := strings.Cut(runUsage, "\nCONFIG FILE\n")
	section, _, _ = strings.Cut(section, "For example:")
	if strings.Contains(section, "every flag but --config has one") {
		t.Errorf("run -h still says every flag but --config has a key")
	}
	for _, want := range []string{"--check is checks", "--track-file is track_files", "-- JOB [ARGS...] is job",
		"--config, --once and --once-timeout have no key"} {
		if !strings.Contains(section, "\n        "+want) {
			t.Errorf("run -h's CONFIG FILE does not say %q:\n%s", want, section)
		}
	}
	listed := 0
	for _, o := range runOptions {
		if o.IsFlag() && o.Key != strings.ReplaceAll(o.Flag, "-", "_") {
			listed++
			if !strings.Contains(section, "--"+o.Flag+" is "+o.Key+"\n") {
				t.Errorf("run -h does not say that --%s is %s in the file", o.Flag, o.Key)
			}
		}
	}
	if listed < 2 {
		t.Errorf("only %d flags with a key of another name", listed)
	}
	// The file reads the keys said, and refuses the flags said to have none.
	cfg, _, _ := parseOK(t, "--config", writeConfig(t, "checks: [\"true\"]\ntrack_files: [/run/maintenance]\n"))
	if len(cfg.Checks) != 1 || len(cfg.TrackFiles) != 1 {
		t.Errorf("checks and track_files: %+v, %q", cfg.Checks, cfg.TrackFiles)
	}
	for _, key := range []string{"config", "once", "once_timeout", "once-timeout", "track_file"} {
		_, _, err := parseRunConfig([]string{"--config", writeConfig(t, key+": x\n")}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "unknown key \""+key+"\"") {
			t.Errorf("the key %s in the file: %v, want an unknown key", key, err)
		}
	}
}
