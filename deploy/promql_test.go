package deploy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// matcher is one label matcher of a PromQL selector, e.g. reason="auth".
type matcher struct {
	label, op, value string
}

// promqlRefs lists what a PromQL expression refers to: the metric names
// it selects, the label names it mentions (in matchers and in by, without,
// on, ignoring and group_left/right lists) and its label matchers. It is a
// scanner, not a parser: enough to check names against the agent's, not to
// validate syntax (promtool and the real server do that). Grafana
// variables must be substituted first, except inside strings and ranges.
type promqlRefs struct {
	metrics, labels []string
	matchers        []matcher
}

// aggregations and keywords are identifiers that are never metric names.
var (
	aggregations = []string{"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
		"count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio"}
	keywords      = []string{"and", "or", "unless", "bool", "offset", "inf", "nan", "atan2"}
	labelListKeys = []string{"by", "without", "on", "ignoring", "group_left", "group_right"}
)

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isIdent(c byte) bool { return isIdentStart(c) || '0' <= c && c <= '9' }

func scanPromQL(expr string) (promqlRefs, error) {
	var r promqlRefs
	s := expr
	i := 0
	skipSpace := func() {
		for i < len(s) && strings.ContainsRune(" \t\r\n", rune(s[i])) {
			i++
		}
	}
	ident := func() string {
		j := i
		for i < len(s) && isIdent(s[i]) {
			i++
		}
		return s[j:i]
	}
	str := func() (string, error) {
		q := s[i]
		j := i + 1
		for j < len(s) && s[j] != q {
			if s[j] == '\\' && q != '`' {
				j++
			}
			j++
		}
		if j >= len(s) {
			return "", fmt.Errorf("unterminated string at %d in %q", i, expr)
		}
		lit := s[i : j+1]
		i = j + 1
		if q == '\'' {
			lit = `"` + strings.ReplaceAll(lit[1:len(lit)-1], `"`, `\"`) + `"`
		}
		v, err := strconv.Unquote(lit)
		if err != nil {
			return "", fmt.Errorf("string %s in %q: %v", lit, expr, err)
		}
		return v, nil
	}
	for i < len(s) {
		c := s[i]
		switch {
		case strings.ContainsRune(" \t\r\n", rune(c)):
			i++
		case c == '"' || c == '\'' || c == '`':
			if _, err := str(); err != nil {
				return r, err
			}
		case c == '[':
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				return r, fmt.Errorf("unterminated range at %d in %q", i, expr)
			}
			i += j + 1
		case c == '{':
			i++
			for {
				skipSpace()
				if i >= len(s) {
					return r, fmt.Errorf("unterminated matchers in %q", expr)
				}
				if s[i] == '}' {
					i++
					break
				}
				if s[i] == ',' {
					i++
					continue
				}
				if !isIdentStart(s[i]) {
					return r, fmt.Errorf("label name expected at %d in %q", i, expr)
				}
				var m matcher
				m.label = ident()
				skipSpace()
				for _, op := range []string{"=~", "!~", "!=", "="} {
					if strings.HasPrefix(s[i:], op) {
						m.op = op
						i += len(op)
						break
					}
				}
				skipSpace()
				if m.op == "" || i >= len(s) || !strings.ContainsRune("\"'`", rune(s[i])) {
					return r, fmt.Errorf("matcher of %s malformed at %d in %q", m.label, i, expr)
				}
				v, err := str()
				if err != nil {
					return r, err
				}
				m.value = v
				r.matchers = append(r.matchers, m)
				r.labels = append(r.labels, m.label)
			}
		case '0' <= c && c <= '9' || c == '.' && i+1 < len(s) && '0' <= s[i+1] && s[i+1] <= '9':
			// A number or a duration (offset 5m): digits, letters, dots.
			for i < len(s) && (isIdent(s[i]) || s[i] == '.') {
				i++
			}
		case isIdentStart(c):
			name := ident()
			lower := strings.ToLower(name)
			skipSpace()
			next := byte(0)
			if i < len(s) {
				next = s[i]
			}
			switch {
			case slices.Contains(labelListKeys, lower):
				if next != '(' {
					continue // group_left without a list
				}
				j := strings.IndexByte(s[i:], ')')
				if j < 0 {
					return r, fmt.Errorf("unterminated %s list in %q", name, expr)
				}
				for _, l := range strings.Split(s[i+1:i+j], ",") {
					if l = strings.TrimSpace(l); l != "" {
						r.labels = append(r.labels, l)
					}
				}
				i += j + 1
			case slices.Contains(aggregations, lower), slices.Contains(keywords, lower), next == '(':
				// An aggregation, a keyword or a function call.
			default:
				r.metrics = append(r.metrics, name)
			}
		case c == '$':
			return r, fmt.Errorf("unsubstituted variable at %d in %q", i, expr)
		default:
			i++ // operators, parentheses, commas
		}
	}
	slices.Sort(r.metrics)
	r.metrics = slices.Compact(r.metrics)
	slices.Sort(r.labels)
	r.labels = slices.Compact(r.labels)
	return r, nil
}
