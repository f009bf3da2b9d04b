package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent"
	"github.com/lanleader/lanleader/agent/config"
)

// shippedConfig is the file the .deb installs as
// /etc/lanleader/lanleader.yaml.
const shippedConfig = "../../systemd/lanleader.yaml"

// hostFree is the text of a config file with the paths it reads at once
// (key_file, accept_key_file, state_file) pointed at files of this test,
// so that the file is checked as check-config would check it on a host
// that has them.
func hostFree(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	if err := os.WriteFile(key, []byte(strings.Repeat("k", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"key_file": key, "accept_key_file": key, "state_file": filepath.Join(dir, "state")} {
		text = regexp.MustCompile(`(?m)^(`+k+`:) \S+`).ReplaceAllString(text, "${1} "+v)
	}
	return text
}

// loadConfigText loads text as the --config file of run, with the real
// reader and Validate, as check-config does (but the host's own checks:
// its addresses and the job's program).
func loadConfigText(t *testing.T, text string) (agent.Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lanleader.yaml")
	if err := os.WriteFile(path, []byte(hostFree(t, text)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := parseRunConfig([]string{"--config", path}, nil, os.Stderr)
	return cfg, err
}

// TestShippedConfigStartsWithDefaults: the shipped file, as installed,
// leaves every setting at its default: a fresh install starts an agent
// of priority 100 without a job, quorum or address.
func TestShippedConfigStartsWithDefaults(t *testing.T) {
	b, err := os.ReadFile(shippedConfig)
	if err != nil {
		t.Fatal(err)
	}
	got, err := loadConfigText(t, string(b))
	if err != nil {
		t.Fatalf("the shipped file: %v", err)
	}
	want, err := loadConfigText(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Priority != 100 || len(got.Job) != 0 || got.Quorum != 0 || len(got.VIPs) != 0 || got.Key != nil {
		t.Errorf("the shipped file sets priority %d, job %q, quorum %d, vips %v, a key %v", got.Priority, got.Job, got.Quorum, got.VIPs, got.Key != nil)
	}
	for i := range config.Settings {
		if s := &config.Settings[i]; s.Differs(&got, &want) {
			t.Errorf("the shipped file sets %s", s.Key)
		}
	}
}

// commentedKey is a commented-out setting of the shipped file: "# key:
// value", maybe with "# default: X" after it; item is set for the lines
// of a check's mapping ("#   - name: db", "#     command: ...").
var (
	commentedKey  = regexp.MustCompile(`^# ([a-z_]+):(?: (.*))?$`)
	commentedItem = regexp.MustCompile(`^#   (?:- |  )([a-z_]+): `)
	defaultNote   = regexp.MustCompile(`#\s+default: ([^;]+?)(?:;.*)?$`)
)

// TestShippedConfigComments: every commented-out "# key: value" of the
// shipped file names a key of the file (a check's mapping, a key of a
// check), every key of the settings table is there (the file's first
// lines say so), every "default: X" beside one is the settings table's
// default of that key, and the example is whole: with every line
// uncommented (but job_unit, the job's other form) the file is valid and
// sets what it shows.
func TestShippedConfigComments(t *testing.T) {
	b, err := os.ReadFile(shippedConfig)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]*config.Setting{}
	for i := range config.Settings {
		byKey[config.Settings[i].Key] = &config.Settings[i]
	}
	var uncommented []string
	shown := map[string]bool{}
	keys, defaults := 0, 0
	list := false // in the items of a commented key without a value (checks:)
	for n, line := range strings.Split(string(b), "\n") {
		if list && strings.HasPrefix(line, "#   ") {
			if m := commentedItem.FindStringSubmatch(line); m != nil && !slices.Contains(checkFields, m[1]) {
				t.Errorf("line %d: %q is no key of a check's mapping", n+1, m[1])
			}
			uncommented = append(uncommented, strings.TrimPrefix(line, "# "))
			continue
		}
		m := commentedKey.FindStringSubmatch(line)
		list = m != nil && m[2] == ""
		if m == nil {
			continue
		}
		keys++
		shown[m[1]] = true
		s := byKey[m[1]]
		if s == nil {
			t.Errorf("line %d: %q is no key of the file", n+1, m[1])
			continue
		}
		if d := defaultNote.FindStringSubmatch(line); d != nil {
			defaults++
			if want := strings.ReplaceAll(s.Default, "`", ""); d[1] != want {
				t.Errorf("line %d: %s: says default %q, the settings table %q", n+1, s.Key, d[1], want)
			}
		}
		if s.Key != "job_unit" {
			uncommented = append(uncommented, strings.TrimPrefix(line, "# "))
		}
	}
	for i := range config.Settings {
		if k := config.Settings[i].Key; !shown[k] {
			t.Errorf("the shipped file does not show %s (a commented-out line: # key: value)", k)
		}
	}
	if keys < 35 || defaults < 20 {
		t.Errorf("the shipped file shows %d keys, %d with their default", keys, defaults)
	}
	cfg, err := loadConfigText(t, strings.Join(uncommented, "\n"))
	if err != nil {
		t.Fatalf("the shipped file with every key uncommented: %v\n%s", err, strings.Join(uncommented, "\n"))
	}
	if cfg.Priority != 150 || cfg.NodeID != 3 || cfg.Quorum != 3 || cfg.Role != "witness" || cfg.Lease != 400*time.Millisecond ||
		len(cfg.Checks) != 2 || cfg.Checks[0].Command != "test -e /run/myapp/healthy" || cfg.Checks[1].Name != "db" || !cfg.Checks[1].Fault || len(cfg.VIPs) != 1 || len(cfg.Job) != 3 || cfg.Key == nil {
		t.Errorf("the uncommented file gives priority %d, node_id %d, quorum %d, role %q, lease %v, checks %+v, vips %v, job %q",
			cfg.Priority, cfg.NodeID, cfg.Quorum, cfg.Role, cfg.Lease, cfg.Checks, cfg.VIPs, cfg.Job)
	}
}

// TestExamples: each file of examples/ is a valid config, as
// check-config reads it, and sets what its comments promise; every
// address in it is a documentation address (192.0.2.0/24).
func TestExamples(t *testing.T) {
	checks := map[string]func(c agent.Config) bool{
		"vip-pair.yaml": func(c agent.Config) bool {
			return c.Priority == 150 && len(c.VIPs) == 1 && c.VIPs[0].Prefix.String() == "192.0.2.100/24" && c.Preempt &&
				len(c.Checks) == 1 && c.Checks[0].Weight == 100 && c.Checks[0].Fall == 3
		},
		"two-plus-witness/candidate.yaml": func(c agent.Config) bool {
			return c.Quorum == 3 && c.Role == "candidate" && c.StateFile != "" && c.Key != nil && len(c.Job) == 3
		},
		"two-plus-witness/witness.yaml": func(c agent.Config) bool {
			return c.Quorum == 3 && c.Role == "witness" && c.StateFile != "" && c.Key != nil && len(c.Job) == 0
		},
		"cron-once.yaml": func(c agent.Config) bool {
			return c.JobMode == config.JobModeOnce && c.Cluster == "nightly" && slices.Equal(c.Job[:2], []string{"/bin/sh", "-c"})
		},
	}
	var found []string
	err := filepath.WalkDir("../../examples", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel("../../examples", path)
			found = append(found, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(found)
	for name, check := range checks {
		if !slices.Contains(found, name) {
			t.Errorf("examples/%s is missing", name)
			continue
		}
		b, err := os.ReadFile(filepath.Join("../../examples", name))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := loadConfigText(t, string(b))
		if err != nil {
			t.Errorf("examples/%s: %v", name, err)
			continue
		}
		if !check(cfg) {
			t.Errorf("examples/%s does not set what it says: %+v", name, cfg)
		}
		for _, a := range regexp.MustCompile(`\b\d+\.\d+\.\d+\.\d+\b`).FindAllString(string(b), -1) {
			if !strings.HasPrefix(a, "192.0.2.") && !strings.HasPrefix(a, "127.") {
				t.Errorf("examples/%s has the address %s: use 192.0.2.0/24", name, a)
			}
		}
	}
	for _, f := range found {
		if _, ok := checks[f]; !ok {
			t.Errorf("examples/%s is not checked here", f)
		}
	}
}
