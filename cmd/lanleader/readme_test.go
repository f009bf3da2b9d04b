package main

import (
	"os"
	"strings"
	"testing"

	"github.com/lanleader/lanleader/metrics"
)

// TestREADMEIsTrue: every flag of `lanleader run` (with its YAML key) and
// every lanleader metric, with its type, its labels and the values of its
// fixed-list labels, is in the README's tables, and the README names no
// flag of run or metric that does not exist.
func TestREADMEIsTrue(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	flags := map[string]bool{"config": true, "once": true, "once-timeout": true} // and those of run alone
	for _, o := range runOptions {
		row := "| `--" + o.Flag + "` (`" + o.Key + "`) |"
		if !o.IsFlag() {
			// The job: after --, or its key in the file.
			row = "| `-- JOB [ARGS...]` (`" + o.Key + "`) |"
		} else {
			flags[o.Flag] = true
		}
		if !strings.Contains(readme, row+" "+o.Default+" |") {
			t.Errorf("README has no row %q with the settings table's default %q", row, o.Default)
		}
	}
	// Every "| `--x`" row of the flag table is a flag of run.
	for _, line := range strings.Split(readme, "\n") {
		if rest, ok := strings.CutPrefix(line, "| `--"); ok {
			name, _, _ := strings.Cut(rest, "`")
			name, _, _ = strings.Cut(name, " ")
			if name == "" && strings.HasPrefix(rest, " JOB") {
				continue
			}
			if !flags[name] {
				t.Errorf("README's flag table has --%s, which run does not have", name)
			}
		}
	}
	// Each metric's row names its type and its labels, and lists the values
	// of its fixed-list labels.
	names := map[string]bool{}
	values := map[string][]string{"state": metrics.States, "status": metrics.MemberStatuses,
		"result": metrics.ElectionResults, "reason": metrics.DropReasons,
		"hook": metrics.Hooks, "outcome": metrics.HookOutcomes, "check_result": metrics.CheckResults}
	for _, m := range metrics.Describe() {
		names[m.Name] = true
		labels := ""
		if m.Labels != "" {
			labels = " `" + strings.ReplaceAll(m.Labels, ",", "`, `") + "`"
		}
		prefix := "| `" + m.Name + "` | " + m.Type + " |" + labels + " | "
		row := ""
		for _, line := range strings.Split(readme, "\n") {
			if strings.HasPrefix(line, prefix) {
				row = line
			}
		}
		if row == "" {
			t.Errorf("README has no metric row starting %q", prefix)
			continue
		}
		if meaning := strings.TrimSuffix(strings.TrimPrefix(row, prefix), " |"); strings.TrimSpace(meaning) == "" {
			t.Errorf("README's row of %s says nothing about it", m.Name)
		}
		for _, l := range strings.Split(m.Labels, ",") {
			vs := values[l]
			if m.Name == "lanleader_config_reloads_total" {
				vs = metrics.ReloadResults // its result label is not the elections'
			}
			for _, v := range vs {
				if !strings.Contains(row, "`"+v+"`") {
					t.Errorf("README's row of %s does not list the %s value `%s`", m.Name, l, v)
				}
			}
		}
	}
	for _, line := range strings.Split(readme, "\n") {
		if rest, ok := strings.CutPrefix(line, "| `lanleader_"); ok {
			name, _, _ := strings.Cut(rest, "`")
			if !names["lanleader_"+name] {
				t.Errorf("README's metric table has lanleader_%s, which the agent does not export", name)
			}
		}
	}
}
