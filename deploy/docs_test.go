package deploy

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocsListAlerts: docs/monitoring.md's "Alerts" section has one row
// per alert of the rules file and no other, and says that the
// authentication alert needs --key-file; the page names the rules, their
// tests and the dashboard by path.
func TestDocsListAlerts(t *testing.T) {
	b, err := os.ReadFile("../docs/monitoring.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	_, section, ok := strings.Cut(page, "\n## Alerts\n")
	if !ok {
		t.Fatal(`docs/monitoring.md has no "## Alerts" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(Lanleader[A-Za-z]+)` \\|(.*)$").FindAllStringSubmatch(section, -1) {
		rows = append(rows, m[1])
		switch m[1] {
		case "LanleaderAuthDrops":
			if strings.Contains(m[2], "live once") || !strings.Contains(m[2], "--key-file") {
				t.Errorf("docs/monitoring.md's %s row must say it needs --key-file, and not that it goes live later: %s", m[1], m[2])
			}
		}
	}
	if !slices.Equal(rows, wantAlerts) {
		t.Errorf("docs/monitoring.md's alert rows %q, want %q", rows, wantAlerts)
	}
	for _, path := range []string{"deploy/" + rulesFile, "deploy/" + ruleTestsFile, "deploy/" + dashboardFile} {
		if !strings.Contains(page, path) {
			t.Errorf("docs/monitoring.md does not name %s", path)
		}
		if _, err := os.Stat(strings.TrimPrefix(path, "deploy/")); err != nil {
			t.Error(err)
		}
	}
}
