package main

import (
	"regexp"
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
