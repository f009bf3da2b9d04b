// Package roff writes man(7) pages: text escaped for roff, and the plain
// text of the command line's help (paragraphs, indented lists of flags or
// exit statuses, indented examples) turned into man macros, so that a
// page and `lanleader CMD -h` say the same from one text. It knows
// nothing of lanleader's commands or settings.
package roff

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape is s as roff text: a backslash is \e, a hyphen \- (the ASCII
// hyphen-minus of a flag, which a reader may copy), and a character
// beyond ASCII its \[uXXXX]. A line of it may still begin with a dot or
// a quote: Line guards those.
func Escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case r == '\t':
			b.WriteString(" ")
		case r >= utf8.RuneSelf:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		case r < ' ':
			// Control characters have no place in a page.
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Width is the widest line a page's source has (mandoc's lint warns of
// longer ones).
const Width = 80

// Line is s as text lines of a page, filled by roff: escaped, broken
// between words into lines of at most Width bytes, each guarded with \&
// when it begins with a dot or a quote, which roff takes for a request.
// White space at either end goes (a leading space breaks the filled
// line, a trailing one is a fault). It has no final newline.
func Line(s string) string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		w = Escape(w)
		switch {
		case cur == "":
			cur = w
		case len(cur)+1+len(w) > Width:
			lines = append(lines, cur)
			cur = w
		default:
			cur += " " + w
		}
	}
	lines = append(lines, cur)
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// Verbatim is s as a line of a no-fill block (.EX): escaped, its
// leading spaces kept, its trailing ones dropped.
func Verbatim(s string) string {
	s = Escape(strings.TrimRight(s, " \t"))
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// Quote is s as a quoted argument of a macro (.TH, .SH, .SS): escaped,
// a double quote as \(dq.
func Quote(s string) string {
	return `"` + strings.ReplaceAll(Escape(s), `"`, `\(dq`) + `"`
}

// placeholder is a word of a synopsis that stands for a value: FILE,
// ADDR/PREFIX[,dev=IFACE], N, NAME.service.
var placeholder = regexp.MustCompile(`^\[?[A-Z][A-Z0-9_]*\b`)

// Term is a flag's synopsis, or another term of a list, as a tag line
// (.TP): the flags and literal words bold, the placeholders (a word that
// begins in capitals: FILE, N, ADDR) italic, brackets and commas roman.
// "--http ADDR" is \fB\-\-http\fR \fIADDR\fR.
func Term(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		lead := ""
		for strings.HasPrefix(w, "[") {
			lead, w = lead+"[", w[1:]
		}
		trail := ""
		if t := strings.TrimRight(w, "],."); t != "" && t != w {
			w, trail = t, w[len(t):]
		}
		switch {
		case w == "" || !strings.ContainsFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }):
			words[i] = Escape(lead + w + trail)
		case strings.HasPrefix(w, "-"):
			// --preempt[=true|false]: the flag bold, its optional value roman.
			flag, rest := w, ""
			if j := strings.IndexAny(w, "[="); j > 0 {
				flag, rest = w[:j], w[j:]
			}
			words[i] = Escape(lead) + `\fB` + Escape(flag) + `\fR` + Escape(rest+trail)
		case placeholder.MatchString(w):
			words[i] = Escape(lead) + `\fI` + Escape(w) + `\fR` + Escape(trail)
		default:
			words[i] = Escape(lead) + `\fB` + Escape(w) + `\fR` + Escape(trail)
		}
	}
	line := strings.Join(words, " ")
	if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
		line = `\&` + line
	}
	return line
}

// Text is help text as man macros. Its lines at the least indentation
// are paragraphs (a blank line between two), or the terms of a list: a
// term alone on its line with its text on the deeper lines below (a
// flag: "--http ADDR", then its help), or a short term, two spaces or
// more, and its text, continued on deeper lines (an exit status: "0
// the agent stopped"). A block of deeper lines of its own, after a
// paragraph, is such a list when every line of it is one, and otherwise
// an example, kept as it is (.EX). A line that begins with marker is
// not text: hook returns its macros, which go in as they are.
func Text(text, marker string, hook func(line string) string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	var out []string
	convert(&out, lines, marker, hook)
	return strings.Join(out, "\n") + "\n"
}

// indent is the width of s's leading white space, a tab to the next
// multiple of 8.
func indent(s string) int {
	n := 0
	for _, r := range s {
		switch r {
		case ' ':
			n++
		case '\t':
			n = n/8*8 + 8
		default:
			return n
		}
	}
	return n
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// sameLine is a list's term and its text on one line: a term of at most
// maxTerm columns without a run of two spaces, then two spaces or more,
// then the text, with no other run of two spaces (which would make it a
// table's row).
var sameLine = regexp.MustCompile(`^(\S+(?: \S+)*) {2,}(\S+(?: \S+)*)$`)

const (
	maxTerm     = 24 // the widest term written on its text's line
	maxTermLine = 40 // the widest term written alone on its line
)

// termAlone reports whether lines[i] is a term alone on its line: short,
// not a sentence's end nor a heading's (":"), without a gap of two
// spaces (a term with its text), with deeper lines after it.
func termAlone(lines []string, i int) bool {
	s := strings.TrimSpace(lines[i])
	return len(s) <= maxTermLine && !strings.HasSuffix(s, ":") && !strings.HasSuffix(s, ".") && !strings.Contains(s, "  ") &&
		i+1 < len(lines) && !blank(lines[i+1]) && indent(lines[i+1]) > indent(lines[i])
}

// termWithText is lines[i]'s term and text when it is a term on its
// text's line: the term, two spaces or more, the text; or the term, a
// space, and the text from the column where its deeper lines go on
// ("134 SIGABRT ..." over "    to standard error"), in a line too long
// to be a term alone ("-seed S" over its text is one).
func termWithText(lines []string, i int) (term, text string, ok bool) {
	line := lines[i]
	if m := sameLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil && len(m[1]) <= maxTerm {
		return m[1], m[2], true
	}
	if len(strings.TrimSpace(line)) <= maxTermLine || i+1 >= len(lines) || blank(lines[i+1]) || strings.ContainsRune(line, '\t') {
		return "", "", false
	}
	c := indent(lines[i+1])
	if c <= indent(line) || c >= len(line) || line[c-1] != ' ' || line[c] == ' ' {
		return "", "", false
	}
	term = strings.TrimSpace(line[:c])
	if len(term) > maxTerm || strings.Contains(term, "  ") || strings.HasSuffix(term, ".") || strings.HasSuffix(term, ",") {
		return "", "", false
	}
	return term, line[c:], true
}

// startsList reports whether block, of one indentation at its least,
// begins with a list's term: it is a list, and lines of its own
// indentation after the list's are paragraphs. Any other block is an
// example.
func startsList(block []string) bool {
	if indent(block[0]) > indent(block[len(block)-1]) {
		return false
	}
	if termAlone(block, 0) {
		return true
	}
	_, _, ok := termWithText(block, 0)
	return ok
}

// convert writes the macros of lines to out.
func convert(out *[]string, lines []string, marker string, hook func(string) string) {
	base := -1
	for _, l := range lines {
		if !blank(l) && (marker == "" || !strings.HasPrefix(l, marker)) && (base < 0 || indent(l) < base) {
			base = indent(l)
		}
	}
	const (
		none = iota // after a macro that ends the text: a paragraph needs .PP
		para        // in a paragraph's filled text
		item        // in a list item's text
	)
	state := none
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case marker != "" && strings.HasPrefix(l, marker):
			*out = append(*out, strings.TrimRight(hook(l), "\n"))
			state = none
		case blank(l):
			if state != none {
				state = none
			}
		case indent(l) == base:
			term, text, ok := termWithText(lines, i)
			if !ok && termAlone(lines, i) {
				term, ok = l, true
			}
			if ok && state != para {
				*out = append(*out, ".TP", Term(term))
				if text != "" {
					*out = append(*out, Line(text))
				}
				for i+1 < len(lines) && !blank(lines[i+1]) && indent(lines[i+1]) > base {
					i++
					*out = append(*out, Line(lines[i]))
				}
				state = item
				continue
			}
			if state != para {
				*out = append(*out, ".PP")
			}
			*out = append(*out, Line(l))
			state = para
		default:
			// A deeper block of its own: a list, or an example.
			j := i
			for j < len(lines) && !blank(lines[j]) && indent(lines[j]) > base {
				j++
			}
			block := lines[i:j]
			if startsList(block) {
				convert(out, block, marker, hook)
			} else {
				*out = append(*out, ".PP", ".EX")
				least := indent(block[0])
				for _, b := range block {
					least = min(least, indent(b))
				}
				for _, b := range block {
					*out = append(*out, Verbatim(strings.Repeat(" ", indent(b)-least)+strings.TrimLeftFunc(b, unicode.IsSpace)))
				}
				*out = append(*out, ".EE")
			}
			i = j - 1
			state = none
		}
	}
}
