// Package docs holds the user documentation and the contributors' design
// notes; its tests keep the README short, every relative link of the
// Markdown pages alive, and the addresses they show out of anyone's
// network.
package docs

import (
	"errors"
	"io/fs"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the repository, from this package's directory.
const root = ".."

// filesUnder are the files under dir, as paths from the repository's
// root; none when dir does not exist.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == filepath.Join(root, dir) {
			return fs.SkipAll
		}
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// markdownPages are README.md, ARCHITECTURE.md and every docs/**/*.md,
// as paths from the repository's root.
func markdownPages(t *testing.T) []string {
	t.Helper()
	pages := []string{"README.md", "ARCHITECTURE.md"}
	for _, p := range filesUnder(t, "docs") {
		if strings.HasSuffix(p, ".md") {
			pages = append(pages, p)
		}
	}
	return pages
}

func read(t *testing.T, page string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestREADMEIsAFirstScreen: the README has at most 250 lines, starts
// with its title, and its first code block is the two set-up commands.
func TestREADMEIsAFirstScreen(t *testing.T) {
	readme := read(t, "README.md")
	lines := strings.Split(strings.TrimSuffix(readme, "\n"), "\n")
	if len(lines) > 250 {
		t.Errorf("README.md has %d lines, more than 250: move the text to docs/", len(lines))
	}
	if lines[0] != "# lanleader" {
		t.Errorf("README.md's first line is %q, want %q", lines[0], "# lanleader")
	}
	if err := checkSetUpBlock(lines); err != nil {
		t.Error(err)
	}
}

// checkSetUpBlock: the first fenced block of lines is an sh block of
// exactly two commands, `go run ./cmd/lanleader demo` and `./test.sh`,
// each with its comment.
func checkSetUpBlock(lines []string) error {
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			start = i
			break
		}
	}
	if start < 0 {
		return errors.New("README.md has no code block")
	}
	if lang := strings.TrimSpace(strings.TrimPrefix(lines[start], "```")); lang != "sh" {
		return errors.New("README.md's first code block is " + strconv.Quote(lang) + ", not sh")
	}
	var cmds []string
	for _, l := range lines[start+1:] {
		if strings.HasPrefix(l, "```") {
			break
		}
		if strings.TrimSpace(l) == "" {
			continue
		}
		cmd, _, _ := strings.Cut(l, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	if len(cmds) != 2 || cmds[0] != "go run ./cmd/lanleader demo" || cmds[1] != "./test.sh" {
		return errors.New("README.md's first code block has the commands " + strconv.Quote(strings.Join(cmds, "; ")) +
			`, want exactly "go run ./cmd/lanleader demo" and "./test.sh"`)
	}
	return nil
}

func TestCheckSetUpBlock(t *testing.T) {
	good := []string{"# lanleader", "", "```sh", "go run ./cmd/lanleader demo   # a demo", "./test.sh   # the tests", "```"}
	if err := checkSetUpBlock(good); err != nil {
		t.Errorf("the two commands: %v", err)
	}
	for name, lines := range map[string][]string{
		"three commands": {"```sh", "go run ./cmd/lanleader demo", "./test.sh", "go build ./...", "```"},
		"one command":    {"```sh", "./test.sh", "```"},
		"another order":  {"```sh", "./test.sh", "go run ./cmd/lanleader demo", "```"},
		"not sh":         {"```yaml", "go run ./cmd/lanleader demo", "./test.sh", "```"},
		"no block":       {"# lanleader", "text"},
	} {
		if checkSetUpBlock(lines) == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// prose returns a page's lines with fenced code blocks blanked (so that
// line numbers stay) and, with spans, its code spans removed.
func prose(page string, spans bool) []string {
	lines := strings.Split(page, "\n")
	out := make([]string, len(lines))
	fence := ""
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		if spans {
			l = codeSpan.ReplaceAllString(l, "")
		}
		out[i] = l
	}
	return out
}

var codeSpan = regexp.MustCompile("`+[^`]*`+")

// anchors are the fragments that name a heading of a page, by GitHub's
// rules: the heading's text in lower case, without punctuation but - and
// _, spaces to -; a slug seen before gets -1, -2, ... Explicit anchors
// (<a name="x">, id="x") count too.
func anchors(page string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	add := func(text string) {
		s := slug(text)
		if n, ok := seen[s]; ok {
			seen[s] = n + 1
			s += "-" + strconv.Itoa(n+1)
			seen[s] = 0
		} else {
			seen[s] = 0
		}
		out[s] = true
	}
	lines := prose(page, false)
	for i, l := range lines {
		if m := atxHeading.FindStringSubmatch(l); m != nil {
			add(m[1])
		} else if i > 0 && strings.TrimSpace(lines[i-1]) != "" && setextUnderline.MatchString(l) &&
			!strings.HasPrefix(strings.TrimSpace(lines[i-1]), "|") && !atxHeading.MatchString(lines[i-1]) {
			add(lines[i-1])
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(l, -1) {
			out[m[1]] = true
		}
	}
	return out
}

var (
	atxHeading      = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$`)
	setextUnderline = regexp.MustCompile(`^ {0,3}(=+|-+)\s*$`)
	htmlAnchor      = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	mdLink          = regexp.MustCompile(`\[([^\]]*)\]\(([^)]*)\)`)
)

// slug is GitHub's anchor of a heading's text.
func slug(text string) string {
	text = mdLink.ReplaceAllString(text, "$1") // a link's text only
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	for text, want := range map[string]string{
		"The unit":                                               "the-unit",
		"`lanleader status` and `/status`":                       "lanleader-status-and-status",
		"`run --once`":                                           "run---once",
		"Virtual addresses: `lanleader-vip.conf`":                "virtual-addresses-lanleader-vipconf",
		"Reload, exit statuses, `check-config`":                  "reload-exit-statuses-check-config",
		"A leader that stays put (`election/harden_confirm.go`)": "a-leader-that-stays-put-electionharden_confirmgo",
		"See [the job](job.md)":                                  "see-the-job",
	} {
		if got := slug(text); got != want {
			t.Errorf("slug(%q) = %q, want %q", text, got, want)
		}
	}
	a := anchors("# Title\n\n## Notes\n\n```\n## not a heading\n```\n\n## Notes\n\nSetext\n------\n\n## Notes\n")
	for _, want := range []string{"title", "notes", "notes-1", "notes-2", "setext"} {
		if !a[want] {
			t.Errorf("anchors lack %q: %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Error("a heading in a code block is an anchor")
	}
}

// link is a relative link of a page.
type link struct {
	line         int
	target, frag string
}

// relativeLinks are a page's links but those to other sites (a scheme)
// and those in code.
func relativeLinks(page string) []link {
	var out []link
	text := strings.Join(prose(page, true), "\n")
	lineOf := func(offset int) int { return strings.Count(text[:offset], "\n") + 1 }
	type found struct {
		offset int
		target string
	}
	var targets []found
	// A link's text may run over lines.
	for _, m := range mdLink.FindAllStringSubmatchIndex(text, -1) {
		targets = append(targets, found{m[0], text[m[4]:m[5]]})
	}
	for _, m := range refDefinition.FindAllStringSubmatchIndex(text, -1) {
		targets = append(targets, found{m[0], text[m[2]:m[3]]})
	}
	for _, f := range targets {
		target := strings.TrimSpace(f.target)
		if t, _, ok := strings.Cut(target, " "); ok {
			target = t // [x](path "title")
		}
		target = strings.Trim(target, "<>")
		if scheme.MatchString(target) {
			continue
		}
		path, frag, _ := strings.Cut(target, "#")
		if p, err := url.PathUnescape(path); err == nil {
			path = p
		}
		if f, err := url.PathUnescape(frag); err == nil {
			frag = f
		}
		out = append(out, link{line: lineOf(f.offset), target: path, frag: frag})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].line < out[j].line })
	return out
}

var (
	refDefinition = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*(\S+)`)
	scheme        = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// TestLinksResolve: every relative link of README.md, ARCHITECTURE.md and
// docs/**/*.md names a file or folder that exists, and its #fragment a
// heading of that page.
func TestLinksResolve(t *testing.T) {
	for _, page := range markdownPages(t) {
		text := read(t, page)
		for _, l := range relativeLinks(text) {
			where := page + ":" + strconv.Itoa(l.line)
			target := page
			if l.target != "" {
				target = filepath.ToSlash(filepath.Join(filepath.Dir(page), l.target))
			}
			info, err := os.Stat(filepath.Join(root, filepath.FromSlash(target)))
			if err != nil {
				t.Errorf("%s: the link to %s: no such file", where, l.target)
				continue
			}
			if l.frag == "" {
				continue
			}
			if info.IsDir() || !strings.HasSuffix(target, ".md") {
				t.Errorf("%s: the link to %s#%s: a fragment of a page that is not Markdown", where, l.target, l.frag)
				continue
			}
			if !anchors(read(t, target))[l.frag] {
				t.Errorf("%s: the link to %s#%s: %s has no such heading", where, l.target, l.frag, target)
			}
		}
	}
}

func TestRelativeLinks(t *testing.T) {
	page := "See [a](a.md#x-y), [b](https://example.com/b), [`c`](#c) and ![d](img/d.png \"D\"), [two\nlines](two.md#l).\n" +
		"`[e](e.md)` in code\n```\n[f](f.md)\n```\n[g]: g.md#h\n[mail](mailto:x@example.com)\n"
	var got []string
	for _, l := range relativeLinks(page) {
		got = append(got, strconv.Itoa(l.line)+":"+l.target+"#"+l.frag)
	}
	want := "1:a.md#x-y 1:#c 1:img/d.png# 1:two.md#l 7:g.md#h"
	if strings.Join(got, " ") != want {
		t.Errorf("relativeLinks = %q, want %q", strings.Join(got, " "), want)
	}
}

// Addresses a page may show: the documentation ranges (RFC 5737, RFC
// 3849), loopback, the unspecified addresses, multicast (the default
// group and VRRP's are facts).
var allowedPrefixes = mustPrefixes("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32",
	"127.0.0.0/8", "::1/128", "0.0.0.0/32", "::/128", "224.0.0.0/4", "ff00::/8")

// testBedPages describe the test beds, which use the benchmarking range
// 198.18.0.0/15 (RFC 2544): there and only there it may appear.
var (
	testBedPages  = map[string]bool{"docs/design/testbeds.md": true, "docs/benchmarks.md": true}
	testBedPrefix = netip.MustParsePrefix("198.18.0.0/15")
)

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// address is an IP address found in a text, with the prefix length that
// follows it (-1 for none).
type address struct {
	addr netip.Addr
	bits int
	text string
}

var (
	// word is a run of the characters an address, its zone and the
	// words around it are made of; dots and colons split nothing.
	word = regexp.MustCompile(`[0-9A-Za-z_:.%]+(?:/[0-9]+)?`)
	// dotted is a run of digits and dots in a word.
	dotted = regexp.MustCompile(`[0-9][0-9.]*`)
)

// addresses finds the IPv4 and IPv6 addresses of a text: an IPv4 address
// is four dotted decimal parts, each at most 255, not part of a longer
// dotted run (a version, 1.26.8, is not one) nor glued to a letter; an
// IPv6 address is a word that net/netip parses as one.
func addresses(text string) []address {
	var out []address
	for _, w := range word.FindAllString(text, -1) {
		bits := -1
		if a, b, ok := strings.Cut(w, "/"); ok {
			n, err := strconv.Atoi(b)
			if err == nil {
				w, bits = a, n
			}
		}
		if strings.Count(w, ":") >= 2 {
			if a, err := netip.ParseAddr(strings.TrimRight(w, ".")); err == nil && a.Is6() {
				out = append(out, address{addr: a.WithZone(""), bits: bits, text: w})
				continue
			}
		}
		for _, loc := range dotted.FindAllStringIndex(w, -1) {
			run := strings.TrimRight(w[loc[0]:loc[1]], ".")
			if loc[0] > 0 && unicode.IsLetter(rune(w[loc[0]-1])) {
				continue // v1.2.3.4, a name
			}
			if strings.Count(run, ".") != 3 {
				continue
			}
			a, err := netip.ParseAddr(run)
			if err != nil || !a.Is4() {
				continue
			}
			b := -1
			if loc[1] == len(w) {
				b = bits
			}
			out = append(out, address{addr: a, bits: b, text: run})
		}
	}
	return out
}

// allowed says whether a page may show the address: in an allowed range,
// a netmask (255.255.255.0), a network of at most /16 written as its first
// address (a range named, like fd00::/8, not a host to copy), or on a test
// bed's page, the test bed's range.
func allowed(page string, a address) bool {
	for _, p := range allowedPrefixes {
		if p.Contains(a.addr) {
			return true
		}
	}
	if testBedPages[page] && testBedPrefix.Contains(a.addr) {
		return true
	}
	if a.addr.Is4() && netmask(a.addr) {
		return true
	}
	if a.bits >= 0 && a.bits <= 16 {
		if p, err := a.addr.Prefix(a.bits); err == nil && p.Addr() == a.addr {
			return true
		}
	}
	return false
}

// netmask: the address's bits are ones, then zeros.
func netmask(a netip.Addr) bool {
	b := a.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	return v == 0 || (^v)&(^v+1) == 0 // ^v is 0…01…1
}

func TestAddresses(t *testing.T) {
	text := "bind 192.0.2.11:7946, [2001:db8::1]:7946, go 1.26.8, v1.2.3.4, 1.2.3.4.5, " +
		"10.9.9.9/8 and 10.0.0.0/8, fd00::/8, fe80::1%eth0, ff02::4c4c. std::string 09:00:00.000Z " +
		"255.255.255.0 198.18.0.1 300.1.2.3"
	var got []string
	for _, a := range addresses(text) {
		s := a.addr.String()
		if a.bits >= 0 {
			s += "/" + strconv.Itoa(a.bits)
		}
		if allowed("docs/x.md", a) {
			s += "+"
		}
		got = append(got, s)
	}
	want := "192.0.2.11+ 2001:db8::1+ 10.9.9.9/8 10.0.0.0/8+ fd00::/8+ fe80::1 ff02::4c4c+ 255.255.255.0+ 198.18.0.1"
	if strings.Join(got, " ") != want {
		t.Errorf("addresses = %q\nwant        %q", strings.Join(got, " "), want)
	}
	if !allowed("docs/design/testbeds.md", address{addr: netip.MustParseAddr("198.19.0.5"), bits: -1}) {
		t.Error("the test beds' page may not show 198.19.0.5")
	}
	if allowed("docs/design/testbeds.md", address{addr: netip.MustParseAddr("198.20.0.5"), bits: -1}) {
		t.Error("the test beds' page may show 198.20.0.5, outside 198.18.0.0/15")
	}
}

// TestOnlyDocumentationAddresses: README.md, docs/**/*.md and every file
// under examples/ show no address a reader could copy onto a real
// network: only the documentation ranges, loopback, the unspecified
// addresses, multicast and netmasks; the test beds' pages, their range
// too.
func TestOnlyDocumentationAddresses(t *testing.T) {
	var pages []string
	for _, p := range markdownPages(t) {
		if p != "ARCHITECTURE.md" {
			pages = append(pages, p)
		}
	}
	pages = append(pages, filesUnder(t, "examples")...)
	for _, page := range pages {
		for i, line := range strings.Split(read(t, page), "\n") {
			for _, a := range addresses(line) {
				if !allowed(page, a) {
					t.Errorf("%s:%d: %s is outside the documentation ranges (192.0.2.0/24, 2001:db8::/32)", page, i+1, a.text)
				}
			}
		}
	}
}
