package config

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestSettingsManual: every setting has a group of the manual, a text
// for it and a synopsis, and every group has settings. A Doc is plain
// text and leaves the default and the range to the table's fields.
func TestSettingsManual(t *testing.T) {
	count := map[string]int{}
	for i := range Settings {
		s := &Settings[i]
		if !slices.Contains(Groups, s.Group) {
			t.Errorf("%s: group %q is none of Groups", s.Flag, s.Group)
		}
		count[s.Group]++
		if s.Doc == "" || strings.ContainsAny(s.Doc, "`\n") || strings.Contains(s.Doc, "Default: ") || strings.Contains(s.Doc, "Default "+plain(s.Default)) {
			t.Errorf("%s: Doc %q: want plain text of one paragraph, without its default", s.Flag, s.Doc)
		}
		if s.Range != nil && strings.Contains(s.Doc, fmt.Sprintf("%d to %d", s.Range.Min, s.Range.Max)) {
			t.Errorf("%s: Doc states its range, which the manual adds: %q", s.Flag, s.Doc)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: %v", s.Flag, r)
				}
			}()
			s.Synopsis()
		}()
	}
	for _, g := range Groups {
		if count[g] == 0 {
			t.Errorf("group %q has no setting", g)
		}
	}
	for flag, want := range map[string]string{"priority": "--priority N", "preempt": "--preempt[=true|false]",
		"heartbeat": "--heartbeat DURATION", "log-level": "--log-level debug|info|warn|error", "job": "-- JOB [ARGS...]"} {
		if s := Lookup(flag); s == nil || s.Synopsis() != want {
			t.Errorf("%s: not the synopsis %q", flag, want)
		}
	}
}

// TestManual: each group's text has each of its settings with its facts,
// and fits 80 columns.
func TestManual(t *testing.T) {
	got := Manual("Identity")
	want := `    --priority N
        The live node with the largest (priority, node-id) leads: give the
        preferred hosts a larger priority.
        Range 1 to 65535. Default 100. Key: priority; reloadable.
`
	if !strings.Contains(got, want) {
		t.Errorf("Manual(Identity) has no entry\n%s\nin\n%s", want, got)
	}
	if !strings.Contains(got, "Default: host name. Key: name; needs a restart.") {
		t.Errorf("Manual(Identity) does not say the name's default in words:\n%s", got)
	}
	for _, g := range Groups {
		text := Manual(g)
		if strings.HasSuffix(text, "\n") {
			t.Errorf("Manual(%q) ends with a newline", g)
		}
		for i := range Settings {
			if s := &Settings[i]; s.Group == g && !strings.Contains(text, "    "+s.Synopsis()+"\n") {
				t.Errorf("Manual(%q) has no %s", g, s.Synopsis())
			}
		}
		for line := range strings.Lines(text) {
			line = strings.TrimSuffix(line, "\n")
			if n := len([]rune(line)); n > manualWidth || strings.TrimRight(line, " ") != line {
				t.Errorf("Manual(%q): a line of %d columns: %q", g, n, line)
			}
		}
	}
}

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		units []string
		width int
		want  string
	}{
		{strings.Fields("a bb ccc dddd"), 8, "  a bb\n  ccc\n  dddd"},
		{[]string{"Range 1 to 5.", "Default 3."}, 30, "  Range 1 to 5. Default 3."},
		{[]string{"Range 1 to 5.", "Default 3."}, 20, "  Range 1 to 5.\n  Default 3."},
		{[]string{"a-much-longer-word", "b"}, 10, "  a-much-longer-word\n  b"},
		{nil, 10, ""},
	} {
		if got := wrap(tc.units, "  ", tc.width); got != tc.want {
			t.Errorf("wrap(%q, %d) = %q, want %q", tc.units, tc.width, got, tc.want)
		}
	}
}

// TestReference: the configuration reference has a row of every setting
// with its flag, key, default, range, reload and help, and no other flag.
func TestReference(t *testing.T) {
	ref := Reference()
	rows := 0
	for line := range strings.Lines(ref) {
		if strings.HasPrefix(line, "| `-") {
			rows++
		}
	}
	if rows != len(Settings) {
		t.Errorf("the reference has %d rows of settings, the table %d", rows, len(Settings))
	}
	for i := range Settings {
		s := &Settings[i]
		rng := ""
		switch {
		case s.Range != nil:
			rng = fmt.Sprintf("%d … %d", s.Range.Min, s.Range.Max)
		case s.Floor > 0:
			rng = DurationText(s.Floor) + " … " + DurationText(s.Ceiling)
		case s.Ceiling > 0:
			rng = "at most " + DurationText(s.Ceiling)
		}
		row := fmt.Sprintf("| `%s` | `%s` | %s | %s | %s | %s |\n",
			strings.ReplaceAll(s.Synopsis(), "|", `\|`), s.Key, s.Default, rng, s.ReloadText(), strings.ReplaceAll(s.Help, "|", `\|`))
		if !strings.Contains(ref, row) {
			t.Errorf("the reference has no row %q", row)
		}
		if head := "\n## " + s.Group + "\n"; strings.Index(ref, head) > strings.Index(ref, row) {
			t.Errorf("the row of %s comes before its group's heading", s.Synopsis())
		}
	}
}

// TestReferenceIsCurrent: docs/configuration.md is what Reference writes
// now.
func TestReferenceIsCurrent(t *testing.T) {
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != Reference() {
		t.Errorf("docs/configuration.md is stale: run go generate ./agent/config")
	}
}

// TestManualCeilings: the manual and the reference state each duration's
// floor and ceiling, so that the limit Validate holds is read before it
// is hit.
func TestManualCeilings(t *testing.T) {
	for _, tc := range []struct{ group, flag, fact, rng string }{
		{"Failure detection and election", "heartbeat", "Range 10ms to 1m.", "10ms … 1m"},
		{"Job", "job-grace", "At most 1h.", "at most 1h"},
		{"Start", "start-timeout", "At most 24h.", "at most 24h"},
		{"Virtual addresses", "vip-announce-refresh", "At most 4h.", "at most 4h"},
	} {
		s := Lookup(tc.flag)
		if !strings.Contains(Manual(tc.group), s.manual()) || !strings.Contains(s.manual(), "\n        "+tc.fact+" Default ") {
			t.Errorf("%s: the manual's entry does not say %q:\n%s", tc.flag, tc.fact, s.manual())
		}
		if !strings.Contains(Reference(), "| `"+s.Key+"` | "+s.Default+" | "+tc.rng+" | ") {
			t.Errorf("%s: the reference's row has not the range %q", tc.flag, tc.rng)
		}
	}
}
