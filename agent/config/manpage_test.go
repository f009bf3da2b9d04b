package config

import (
	"strings"
	"testing"

	"github.com/lanleader/lanleader/internal/roff"
)

// TestYAMLPage: lanleader.yaml(5) has an entry of every key, under its
// group, with its value, its Doc, its type, its range, its default, its
// flag and what a reload does with it.
func TestYAMLPage(t *testing.T) {
	page := YAMLPage()
	if !strings.HasPrefix(page, ".TH LANLEADER.YAML 5 "+ManDate+" ") {
		t.Errorf("the page begins %q", page[:min(len(page), 60)])
	}
	flat := strings.Join(strings.Fields(page), " ")
	for i := range Settings {
		s := &Settings[i]
		tag := ".TP\n\\fB" + roff.Escape(s.Key) + ":\\fR " + yamlTerm(s.YAMLValue()) + "\n"
		at := strings.Index(page, tag)
		if at < 0 {
			t.Errorf("no entry %q", tag)
			continue
		}
		if g := strings.LastIndex(page[:at], ".SS "); !strings.HasPrefix(page[g:], ".SS "+roff.Quote(s.Group)+"\n") {
			t.Errorf("%s is not under its group %q", s.Key, s.Group)
		}
		entry := page[at+len(tag):]
		entry = strings.Join(strings.Fields(entry[:strings.Index(entry+".TP\n", ".TP\n")]), " ")
		want := []string{roff.Escape(s.Doc), roff.Escape("Type: " + s.Kind.Text() + "."), roff.Escape(s.defaultText()), roff.Escape(s.flagSentence()), s.reloadSentence()}
		if s.Range != nil {
			want = append(want, roff.Escape(strings.TrimSuffix(s.facts("")[0], ".")))
		}
		for _, w := range want {
			if !strings.Contains(entry, strings.Join(strings.Fields(w), " ")) {
				t.Errorf("the entry of %s does not say %q:\n%s", s.Key, w, entry)
			}
		}
	}
	for _, want := range []string{`Flag: \-\-priority. A reload applies it.`, `Default 100.`, `Range 1 to 65535.`,
		`No flag: the command line after \-\- replaces it.`, `\fBjob:\fR [\fIPROGRAM\fR, \fIARG\fR, \fI...\fR] | \fICOMMAND\fR`} {
		if !strings.Contains(flat, want) {
			t.Errorf("the page does not say %q", want)
		}
	}
	for _, s := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "VALUES", "CHECKS", "KEYS", "EXAMPLES", "FILES", "SEE ALSO"} {
		if !strings.Contains(page, "\n.SH "+s+"\n") {
			t.Errorf("no section %s", s)
		}
	}
	if !strings.Contains(page, ".BR lanleader (8)") {
		t.Error("SEE ALSO does not name lanleader(8)")
	}
}
