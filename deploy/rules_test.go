package deploy

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const (
	rulesFile     = "prometheus/lanleader.rules.yml"
	ruleTestsFile = "prometheus/lanleader.rules.test.yml"
)

// needTool returns the path of a command from Debian's prometheus
// package, or skips the test, saying what to install.
func needTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not found: install Debian's prometheus package (apt-get install prometheus; ./test.sh does as root) to run this test", name)
	}
	return path
}

// runTool runs a command with stdin and returns its exit status and its
// stdout and stderr, interleaved as written.
func runTool(t *testing.T, dir string, stdin []byte, name string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String()
	case err != nil:
		t.Fatalf("%s %q: %v", name, args, err)
	}
	return 0, out.String()
}

// The alerts the issue asks for, in the order of the rules file.
var wantAlerts = []string{
	"LanleaderNoLeader",              // no leader for more than a few seconds
	"LanleaderSplitBrain",            // more than one leader
	"LanleaderFlapping",              // too many leader changes per 10 minutes
	"LanleaderAgentDown",             // an agent down
	"LanleaderAuthDrops",             // packets dropped for auth reasons (authentication issue)
	"LanleaderJobNotRunningOnLeader", // the job does not run on the leader (job issue)
}

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

type ruleTests struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		Name          string `yaml:"name"`
		AlertRuleTest []struct {
			EvalTime  string           `yaml:"eval_time"`
			Alertname string           `yaml:"alertname"`
			ExpAlerts []map[string]any `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestPromtoolCheckRules: promtool accepts the rules file and counts six
// rules.
func TestPromtoolCheckRules(t *testing.T) {
	promtool := needTool(t, "promtool")
	code, out := runTool(t, ".", nil, promtool, "check", "rules", rulesFile)
	want := "Checking " + rulesFile + "\n  SUCCESS: 6 rules found\n\n"
	if code != 0 || out != want {
		t.Fatalf("promtool check rules: exit %d, output\n%s\nwant exit 0 and\n%s", code, out, want)
	}
	t.Logf("promtool check rules %s:\n%s", rulesFile, out)
}

// TestPromtoolTestRules: every alert's unit tests pass.
func TestPromtoolTestRules(t *testing.T) {
	promtool := needTool(t, "promtool")
	code, out := runTool(t, ".", nil, promtool, "test", "rules", ruleTestsFile)
	want := "Unit Testing:  " + ruleTestsFile + "\n  SUCCESS\n\n"
	if code != 0 || out != want {
		t.Fatalf("promtool test rules: exit %d, output\n%s\nwant exit 0 and\n%s", code, out, want)
	}
	t.Logf("promtool test rules %s:\n%s", ruleTestsFile, out)
}

// TestRuleTestsCatchChanges: the unit tests bite. For each alert, one
// change to its rule (a shorter for:, a lower threshold, a dropped
// filter) makes `promtool test rules` fail on that alert.
func TestRuleTestsCatchChanges(t *testing.T) {
	promtool := needTool(t, "promtool")
	rules, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(ruleTestsFile)
	if err != nil {
		t.Fatal(err)
	}
	mutations := []struct {
		alert, what, old, new string
	}{
		{"LanleaderNoLeader", "for 5s", "(lanleader_is_leader) == 0\n        for: 10s", "(lanleader_is_leader) == 0\n        for: 5s"},
		{"LanleaderSplitBrain", "one leader", "(lanleader_is_leader) > 1", "(lanleader_is_leader) >= 1"},
		{"LanleaderSplitBrain", "for 10s", "(lanleader_is_leader) > 1\n        for: 30s", "(lanleader_is_leader) > 1\n        for: 10s"},
		{"LanleaderFlapping", "4 changes", "[10m])) >= 5", "[10m])) >= 4"},
		{"LanleaderAgentDown", "any job", `up{job="lanleader"} == 0`, `up == 0`},
		{"LanleaderAuthDrops", "any reason", `{reason="auth"}`, `{reason!="ttl"}`},
		{"LanleaderJobNotRunningOnLeader", "no job gate", "\n            and on (job) (max by (job) (max_over_time(lanleader_job_running[1h])) == 1)", ""},
		{"LanleaderJobNotRunningOnLeader", "for 30s", "(lanleader_job_running == 0)\n            and on (job) (max by (job) (max_over_time(lanleader_job_running[1h])) == 1)\n        for: 1m",
			"(lanleader_job_running == 0)\n            and on (job) (max by (job) (max_over_time(lanleader_job_running[1h])) == 1)\n        for: 30s"},
	}
	for _, m := range mutations {
		if strings.Count(string(rules), m.old) != 1 {
			t.Fatalf("%s: %q is not in the rules file exactly once", m.alert, m.old)
		}
		t.Run(m.alert+"/"+m.what, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			mutated := strings.Replace(string(rules), m.old, m.new, 1)
			if err := os.WriteFile(filepath.Join(dir, "lanleader.rules.yml"), []byte(mutated), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "lanleader.rules.test.yml"), tests, 0o644); err != nil {
				t.Fatal(err)
			}
			code, out := runTool(t, dir, nil, promtool, "test", "rules", "lanleader.rules.test.yml")
			if code != 1 || !strings.Contains(out, "FAILED") || !strings.Contains(out, "alertname: "+m.alert+",") {
				t.Errorf("after %q → %q, promtool test rules exits %d without failing on %s:\n%s", m.old, m.new, code, m.alert, out)
			}
		})
	}
}

// TestRulesFile: the rules file has exactly the alerts the issue asks
// for, each with a severity, a summary and a description, and expressions
// that name only what the agent exports (or, for the authentication
// alert, the label value the authentication issue adds); the unit tests
// cover every alert, each with a case that fires and one that stays
// silent.
func TestRulesFile(t *testing.T) {
	var rf ruleFile
	readYAML(t, rulesFile, &rf)
	var alerts []string
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Record != "" || r.Alert == "" {
				t.Errorf("group %s: rule %q is not an alert", g.Name, r.Record)
				continue
			}
			alerts = append(alerts, r.Alert)
			if s := r.Labels["severity"]; s != "critical" && s != "warning" {
				t.Errorf("%s: severity %q, want critical or warning", r.Alert, s)
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" || len(r.Annotations) != 2 {
				t.Errorf("%s: annotations %v, want exactly a summary and a description", r.Alert, r.Annotations)
			}
			if _, errs := checkNames(r.Expr, true); len(errs) > 0 {
				t.Errorf("%s: %v", r.Alert, errs)
			}
		}
	}
	if !slices.Equal(alerts, wantAlerts) {
		t.Errorf("alerts %q, want %q", alerts, wantAlerts)
	}

	var rt ruleTests
	readYAML(t, ruleTestsFile, &rt)
	if !slices.Equal(rt.RuleFiles, []string{filepath.Base(rulesFile)}) {
		t.Errorf("rule tests load %q, want %q", rt.RuleFiles, filepath.Base(rulesFile))
	}
	fires, silent := map[string]int{}, map[string]int{}
	for _, tc := range rt.Tests {
		for _, a := range tc.AlertRuleTest {
			if !slices.Contains(wantAlerts, a.Alertname) {
				t.Errorf("test %q: alert %q is not in the rules file", tc.Name, a.Alertname)
			}
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname]++
			} else {
				silent[a.Alertname]++
			}
		}
	}
	for _, a := range wantAlerts {
		if fires[a] == 0 || silent[a] == 0 {
			t.Errorf("%s: %d test cases expect it to fire and %d expect silence; want at least one of each", a, fires[a], silent[a])
		}
	}
}

// TestPromtoolLintsMetrics: `promtool check metrics`, which the scrape
// test runs on every live agent's /metrics, does reject names that break
// the conventions (so its silence there means something).
func TestPromtoolLintsMetrics(t *testing.T) {
	promtool := needTool(t, "promtool")
	bad := "# HELP lanleader_changes Leader changes.\n# TYPE lanleader_changes counter\nlanleader_changes 1\n" +
		"# HELP lanleader_failover_milliseconds Failover time.\n# TYPE lanleader_failover_milliseconds gauge\nlanleader_failover_milliseconds 250\n"
	code, out := runTool(t, ".", []byte(bad), promtool, "check", "metrics")
	want := "lanleader_changes counter metrics should have \"_total\" suffix\n" +
		"lanleader_failover_milliseconds use base unit \"seconds\" instead of \"milliseconds\"\n"
	if code == 0 || out != want {
		t.Errorf("promtool check metrics on bad names: exit %d, output\n%s\nwant a non-zero exit and\n%s", code, out, want)
	}
}
