package deploy

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestREADMEListsAlerts: the README's "Prometheus and Grafana" section
// has one row per alert of the rules file and no other, names the rules,
// their tests and the dashboard by path, and says that the job alert goes
// live with the job, and that the authentication alert is live (it needs
// --key-file).
func TestREADMEListsAlerts(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Prometheus and Grafana\n")
	if !ok {
		t.Fatal(`README has no "## Prometheus and Grafana" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(Lanleader[A-Za-z]+)` \\|(.*)$").FindAllStringSubmatch(section, -1) {
		rows = append(rows, m[1])
		switch m[1] {
		case "LanleaderAuthDrops":
			if strings.Contains(m[2], "live once") || !strings.Contains(m[2], "--key-file") {
				t.Errorf("README's %s row must say it needs --key-file, and no longer that it goes live later: %s", m[1], m[2])
			}
		}
	}
	if !slices.Equal(rows, wantAlerts) {
		t.Errorf("README's alert rows %q, want %q", rows, wantAlerts)
	}
	for _, path := range []string{"deploy/" + rulesFile, "deploy/" + ruleTestsFile, "deploy/" + dashboardFile} {
		if !strings.Contains(section, path) {
			t.Errorf("README's section does not name %s", path)
		}
		if _, err := os.Stat(strings.TrimPrefix(path, "deploy/")); err != nil {
			t.Error(err)
		}
	}
}
