package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/lanleader/lanleader/agent/config"
)

// loadConfigFile applies the YAML file at path to s. The file is one
// mapping of runOptions' keys; where gets the file's line and key of
// each. Every unknown or repeated key is told at once; of the faults of
// the values (their syntax, then Validate's faults of a value alone), the
// first in the file's order, even where a flag would replace the value.
func loadConfigFile(path string, s *settings, where map[string]origin) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("config %s: %s", path, fmt.Sprintf(format, args...))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fail("%v", err)
	}
	root, err := yamlMapping(data)
	if err != nil {
		return fail("%v", err)
	}
	if root == nil {
		return nil
	}
	byKey, keys := optionsByKey()
	type fault struct {
		line int
		key  string
		err  error
	}
	var wrong []string // unknown or repeated keys
	var faults []fault
	lines := map[string]int{} // of each key's value, by flag name
	seen := map[string]int{}  // the line of each key
	for i := 0; i < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		o, known := byKey[k.Value]
		var first int
		var again bool
		if known {
			first, again = seen[o.Flag]
		}
		switch {
		case !known:
			msg := fmt.Sprintf("line %d: unknown key %q", k.Line, k.Value)
			if s := suggest(k.Value, keys); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			wrong = append(wrong, msg)
		case again:
			wrong = append(wrong, fmt.Sprintf("line %d: key %q given twice (first at line %d)", k.Line, k.Value, first))
		case o.Kind == config.KindCheckList:
			if err := setChecks(s, v, k.Value, path, where, lines); err != nil {
				faults = append(faults, fault{err.line, err.key, err.err})
			}
			seen[o.Flag], lines[o.Flag] = k.Line, v.Line
			where[o.Flag] = origin{path: path, line: v.Line, key: k.Value}
		default:
			if err := o.setNode(s, v); err != nil {
				faults = append(faults, fault{v.Line, k.Value, err})
			}
			seen[o.Flag], lines[o.Flag] = k.Line, v.Line
			where[o.Flag] = origin{path: path, line: v.Line, key: k.Value}
		}
	}
	if len(wrong) > 0 {
		return fail("%s", strings.Join(wrong, "; "))
	}
	// The file's values before the flags: a bad one is told even where a
	// flag would replace it.
	c := s.config()
	for _, err := range unjoin(c.Validate()) {
		var se *config.SettingError
		if errors.As(err, &se) && lines[se.Setting] > 0 {
			faults = append(faults, fault{lines[se.Setting], settingKey(se.Setting), se.Err})
		}
	}
	if len(faults) == 0 {
		return nil
	}
	f := slices.MinFunc(faults, func(a, b fault) int { return cmp.Compare(a.line, b.line) })
	return fail("line %d: %s: %v", f.line, f.key, f.err)
}

// optionsByKey are the options by their YAML keys, older ones too, and
// the keys of today, for suggestions.
func optionsByKey() (map[string]option, []string) {
	byKey := map[string]option{}
	keys := make([]string, len(runOptions))
	for i, o := range runOptions {
		byKey[o.Key], keys[i] = o, o.Key
	}
	for k, flag := range keyAliases {
		byKey[k] = byFlag(flag)
	}
	return byKey, keys
}

// yamlMapping is the mapping of a YAML file of one document: nil for a
// file of no document (empty, or only comments), an error for anything
// else, in the words of the file's errors (without "config PATH: ").
func yamlMapping(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, extra yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil, nil
	} else if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("line %d: a second YAML document; put every key in one", extra.Line)
	} else if !errors.Is(err, io.EOF) {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		what := "a single value"
		if root.Kind == yaml.SequenceNode {
			what = "a list"
		}
		return nil, fmt.Errorf(`line %d: want a mapping of keys to values (like "priority: 150"), not %s`, root.Line, what)
	}
	return root, nil
}

// lists are what a list option wants in the file, and what each item must
// be.
var lists = map[config.Kind]struct{ want, item string }{
	config.KindAddrList: {`want a list of addresses, like [192.0.2.2, "192.0.2.3:7946"]`, "an address"},
	config.KindFileList: {`want a list of files, like [/etc/lanleader/maintenance]`, "a string"},
	config.KindVIPAddr:  {`want a list of virtual addresses, like ["192.0.2.100/24", "192.0.2.101/24,dev=eth1"]`, "an address"},
	config.KindArgv:     {`want a command line, as a list (like [/usr/bin/worker, --fast]) or a string for /bin/sh -c`, "a string"},
}

// setNode sets o's field of s from the YAML value n: a scalar as its text
// (set), a list item by item.
func (o option) setNode(s *settings, n *yaml.Node) error {
	n = resolve(n)
	l, isList := lists[o.Kind]
	switch {
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null":
		return errors.New("no value (leave the key out for the default)")
	case o.Kind == config.KindArgv && n.Kind == yaml.ScalarNode:
		if strings.TrimSpace(n.Value) == "" {
			return errors.New("empty command")
		}
		s.Job = []string{"/bin/sh", "-c", n.Value}
		return nil
	case isList && n.Kind != yaml.SequenceNode:
		return errors.New(l.want)
	case isList:
		if o.Kind == config.KindArgv && len(n.Content) == 0 {
			return errors.New("empty command")
		}
		items := make([]string, len(n.Content))
		for i, item := range n.Content {
			if item = resolve(item); item.Kind != yaml.ScalarNode || item.ShortTag() == "!!null" {
				return fmt.Errorf("item %d is not %s", i+1, l.item)
			}
			items[i] = item.Value
		}
		o.clearList(s)
		if o.Kind == config.KindAddrList {
			// As on the command line: "a,b" in an item is two addresses.
			items = []string{strings.Join(items, ",")}
		}
		for _, item := range items {
			if err := o.set(s, item); err != nil {
				return err
			}
		}
		return nil
	case n.Kind == yaml.SequenceNode:
		return errors.New("want a single value, not a list")
	case n.Kind != yaml.ScalarNode:
		return errors.New("want a single value, not a mapping")
	case (o.Kind == config.KindDuration || o.Kind == config.KindAnyDuration || o.Kind == config.KindDurationOrOff) && n.ShortTag() == "!!int" && n.Value != "0":
		return fmt.Errorf(`%s has no unit; write a duration like "100ms" or "2s"`, n.Value)
	}
	return o.set(s, n.Value)
}

// resolve follows n's aliases to the node they stand for.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// unjoin is the errors that errors.Join joined into err.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err != nil {
		return []error{err}
	}
	return nil
}

// suggest returns the name of known that the mistyped name most likely
// meant: one it begins, or one at most two edits away; "" if none.
func suggest(name string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		d := editDistance(name, k)
		if len(name) >= 3 && strings.HasPrefix(k, name) {
			d = min(d, 1)
		}
		if d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
