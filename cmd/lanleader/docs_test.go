package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lanleader/lanleader/metrics"
)

// userDocs reads README.md and every docs/*.md: the pages a user reads.
// (docs/configuration.md, generated from the settings table, is kept
// true by agent/config's TestReferenceIsCurrent.)
func userDocs(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, p := range append([]string{"../../README.md"}, paths...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs[strings.TrimPrefix(p, "../../")] = string(b)
	}
	if len(docs) < 2 {
		t.Fatalf("read %d documents: no docs/*.md", len(docs))
	}
	return docs
}

// runFlagNames are the flags of `lanleader run`: the settings table's and
// those of run alone.
func runFlagNames() map[string]bool {
	flags := map[string]bool{"config": true, "once": true, "once-timeout": true, "h": true, "help": true}
	for _, o := range runOptions {
		if o.IsFlag() {
			flags[o.Flag] = true
		}
	}
	return flags
}

// commandLines returns the command lines of lanleader run and
// check-config that a document shows, in code blocks and code spans:
// what follows "lanleader run" up to the end of the line or the span.
func commandLines(doc string) []string {
	var code []string
	inBlock := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			code = append(code, line)
			continue
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(line, -1) {
			code = append(code, m[1])
		}
	}
	var out []string
	for _, c := range code {
		for _, cmd := range []string{"lanleader run ", "lanleader check-config "} {
			if _, rest, ok := strings.Cut(c, cmd); ok {
				out = append(out, rest)
			}
		}
	}
	return out
}

// flagsOf returns the --flags of a command line, up to the job's "--", a
// comment or the next command.
func flagsOf(line string) []string {
	var flags []string
	for _, tok := range strings.Fields(line) {
		tok = strings.TrimLeft(tok, "[")
		if tok == "--" || strings.HasPrefix(tok, "#") || tok == "|" || tok == "&&" || tok == ";" {
			break
		}
		if name, ok := strings.CutPrefix(tok, "--"); ok {
			name, _, _ = strings.Cut(name, "=")
			flags = append(flags, strings.TrimRight(name, "]`,;)"))
		}
	}
	return flags
}

func TestFlagsOf(t *testing.T) {
	got := flagsOf("[--config FILE] [--once-timeout=10m] --bind 192.0.2.11 -- /bin/worker --queue main # --not")
	if strings.Join(got, " ") != "config once-timeout bind" {
		t.Errorf("flagsOf = %q", got)
	}
	lines := commandLines("text `lanleader run --vip X` more\n```sh\nsudo lanleader run --quorum 3 -- job\n```\n`lanleader status --json`\n")
	if strings.Join(lines, "|") != "--vip X|--quorum 3 -- job" {
		t.Errorf("commandLines = %q", lines)
	}
}

// TestDocsNameOnlyRunFlags: the README and docs/*.md name no flag of
// `lanleader run` that it does not have, neither in a table row
// ("| `--flag") nor in a command line of run or check-config.
func TestDocsNameOnlyRunFlags(t *testing.T) {
	flags := runFlagNames()
	for path, doc := range userDocs(t) {
		for _, line := range strings.Split(doc, "\n") {
			if rest, ok := strings.CutPrefix(line, "| `--"); ok {
				name, _, _ := strings.Cut(rest, "`")
				if i := strings.IndexAny(name, " [="); i >= 0 {
					name = name[:i] // --name NAME, --preempt[=true|false]
				}
				if name == "" && strings.HasPrefix(rest, " JOB") {
					continue
				}
				if !flags[name] {
					t.Errorf("%s: a table row names --%s, which run does not have", path, name)
				}
			}
		}
		for _, line := range commandLines(doc) {
			for _, name := range flagsOf(line) {
				if !flags[name] {
					t.Errorf("%s: `lanleader run %s` names --%s, which run does not have", path, line, name)
				}
			}
		}
	}
}

// TestMetricsTableIsTrue: every lanleader metric, with its type, its
// labels and the values of its fixed-list labels, is in the table of
// docs/monitoring.md, and the table names no metric that does not exist.
func TestMetricsTableIsTrue(t *testing.T) {
	b, err := os.ReadFile("../../docs/monitoring.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
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
		for _, line := range strings.Split(doc, "\n") {
			if strings.HasPrefix(line, prefix) {
				row = line
			}
		}
		if row == "" {
			t.Errorf("docs/monitoring.md has no metric row starting %q", prefix)
			continue
		}
		if meaning := strings.TrimSuffix(strings.TrimPrefix(row, prefix), " |"); strings.TrimSpace(meaning) == "" {
			t.Errorf("docs/monitoring.md's row of %s says nothing about it", m.Name)
		}
		for _, l := range strings.Split(m.Labels, ",") {
			vs := values[l]
			if m.Name == "lanleader_config_reloads_total" {
				vs = metrics.ReloadResults // its result label is not the elections'
			}
			for _, v := range vs {
				if !strings.Contains(row, "`"+v+"`") {
					t.Errorf("docs/monitoring.md's row of %s does not list the %s value `%s`", m.Name, l, v)
				}
			}
		}
	}
	for _, line := range strings.Split(doc, "\n") {
		if rest, ok := strings.CutPrefix(line, "| `lanleader_"); ok {
			name, _, _ := strings.Cut(rest, "`")
			if !names["lanleader_"+name] {
				t.Errorf("docs/monitoring.md's metric table has lanleader_%s, which the agent does not export", name)
			}
		}
	}
}
