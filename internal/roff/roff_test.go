package roff

import (
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		`--priority`:      `\-\-priority`,
		`a\b`:             `a\eb`,
		"2^53−1 … ≥":      `2^53\[u2212]1 \[u2026] \[u2265]`,
		"tab\there":       "tab here",
		`"quoted" 'text'`: `"quoted" 'text'`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLine: a text line is escaped, guarded where roff would take it for
// a request, and broken into lines of at most Width bytes.
func TestLine(t *testing.T) {
	for in, want := range map[string]string{
		"  plain text  ":        "plain text",
		".hidden request":       `\&.hidden request`,
		"'quote at the start":   `\&'quote at the start`,
		"a line with -- inside": `a line with \-\- inside`,
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("word ", 40) + ".dot"
	got := Line(long)
	lines := strings.Split(got, "\n")
	if len(lines) < 3 {
		t.Errorf("Line of %d bytes is %d lines", len(long), len(lines))
	}
	for _, l := range lines {
		if len(l) > Width || strings.HasPrefix(l, ".") {
			t.Errorf("Line: a line %q", l)
		}
	}
	if strings.Join(strings.Fields(got), " ") != strings.TrimSpace(long) {
		t.Errorf("Line lost words: %q", got)
	}
	// A word that begins a broken line with a dot is guarded too.
	if got := Line(strings.Repeat("x", Width-2) + " .dot"); got != strings.Repeat("x", Width-2)+"\n\\&.dot" {
		t.Errorf("Line: %q", got)
	}
}

func TestTerm(t *testing.T) {
	for in, want := range map[string]string{
		"--http ADDR":                       `\fB\-\-http\fR \fIADDR\fR`,
		"--preempt[=true|false]":            `\fB\-\-preempt\fR[=true|false]`,
		"-h, --help":                        `\fB\-h\fR, \fB\-\-help\fR`,
		"lanleader run [--config FILE]":     `\fBlanleader\fR \fBrun\fR [\fB\-\-config\fR \fIFILE\fR]`,
		"-- JOB [ARGS...]":                  `\-\- \fIJOB\fR [\fIARGS\fR...]`,
		"--json | --is-leader":              `\fB\-\-json\fR | \fB\-\-is\-leader\fR`,
		"0":                                 `\fB0\fR`,
		"--vip ADDR/PREFIX[,dev=IFACE]":     `\fB\-\-vip\fR \fIADDR/PREFIX[,dev=IFACE\fR]`,
		"--multicast-group IP":              `\fB\-\-multicast\-group\fR \fIIP\fR`,
		"--transport multicast|unicast":     `\fB\-\-transport\fR \fBmulticast|unicast\fR`,
		".starts with a dot":                `\fB.starts\fR \fBwith\fR \fBa\fR \fBdot\fR`,
		"--job-unit NAME.service":           `\fB\-\-job\-unit\fR \fINAME.service\fR`,
		"--log-level debug|info|warn|error": `\fB\-\-log\-level\fR \fBdebug|info|warn|error\fR`,
	} {
		if got := Term(in); got != want {
			t.Errorf("Term(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestText: help text's paragraphs, its two kinds of lists, its examples
// and its markers, as man macros.
func TestText(t *testing.T) {
	in := `usage: x [--flag V]

A paragraph that goes on
on a second line.

Flags:
  --http ADDR
        the agent's listener
        (default 127.0.0.1:9947)
  -h, --help
        print this help

Exit status:
  0  done
  1  failed, or not
     done in time
  With --is-leader: a sentence at the list's indentation.

Example:
  $ x status
  node     host-a

  .hidden line
@@marker one
After the marker.
`
	want := `.PP
usage: x [\-\-flag V]
.PP
A paragraph that goes on
on a second line.
.PP
Flags:
.TP
\fB\-\-http\fR \fIADDR\fR
the agent's listener
(default 127.0.0.1:9947)
.TP
\fB\-h\fR, \fB\-\-help\fR
print this help
.PP
Exit status:
.TP
\fB0\fR
done
.TP
\fB1\fR
failed, or not
done in time
.PP
With \-\-is\-leader: a sentence at the list's indentation.
.PP
Example:
.PP
.EX
$ x status
node     host\-a
.EE
.PP
.EX
\&.hidden line
.EE
<marker one>
.PP
After the marker.
`
	got := Text(in, "@@", func(line string) string { return "<" + strings.TrimPrefix(line, "@@") + ">\n" })
	if got != want {
		t.Errorf("Text:\n%s\nwant:\n%s", got, want)
	}
}

// TestTextTermOnTheColumn: a term and its text parted by one space,
// the text at the column of its continuation (run's "134 SIGABRT").
func TestTextTermOnTheColumn(t *testing.T) {
	got := Text("    0   stopped\n    134 SIGABRT: the stack of every goroutine was written\n        to standard error\n    -seed S\n    \tplay schedule S\n", "", nil)
	want := ".TP\n\\fB0\\fR\nstopped\n.TP\n\\fB134\\fR\nSIGABRT: the stack of every goroutine was written\nto standard error\n.TP\n\\fB\\-seed\\fR \\fIS\\fR\nplay schedule S\n"
	if got != want {
		t.Errorf("Text:\n%s\nwant:\n%s", got, want)
	}
}

// TestTextTable: a deeper block that is a table (two gaps in its first
// row) or a list of steps is an example, kept as it is.
func TestTextTable(t *testing.T) {
	in := "    What each mode guarantees:\n\n      event        default      quorum\n      crash        none         lease\n\n    To rotate:\n      1. on every agent, add the new key and restart it, one at a time\n         the leader last\n"
	want := ".PP\nWhat each mode guarantees:\n.PP\n.EX\nevent        default      quorum\ncrash        none         lease\n.EE\n.PP\nTo rotate:\n.PP\n.EX\n1. on every agent, add the new key and restart it, one at a time\n   the leader last\n.EE\n"
	if got := Text(in, "", nil); got != want {
		t.Errorf("Text:\n%s\nwant:\n%s", got, want)
	}
}
