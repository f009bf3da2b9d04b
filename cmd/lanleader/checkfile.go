package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lanleader/lanleader/agent"
	"github.com/lanleader/lanleader/agent/config"
)

// The checks of the config file: `checks:` is a list whose items are a
// shell command (the global check_* settings apply), or a mapping of a
// check's own settings, keepalived's vrrp_script line by line:
//
//	checks:
//	  - test -e /run/app.ok
//	  - name: db
//	    command: pg_isready -q
//	    interval: 2s
//	    timeout: 1s
//	    rise: 2
//	    fall: 3
//	    weight: 0     # fault: out of the elections while it fails
//
// where gets "config PATH: line N: checks[I].FIELD" for each field given,
// so that Validate's errors name the line.

// checkFields are the keys of a check's mapping.
var checkFields = []string{"name", "command", "interval", "timeout", "rise", "fall", "weight"}

// lineError is a fault of the file at a line, under a key.
type lineError struct {
	line int
	key  string
	err  error
}

// setChecks sets s.Checks from the YAML value n of key.
func setChecks(s *settings, n *yaml.Node, key, path string, where map[string]origin, lines map[string]int) *lineError {
	n = resolve(n)
	fail := func(line int, k string, format string, args ...any) *lineError {
		return &lineError{line, k, fmt.Errorf(format, args...)}
	}
	if n.Kind != yaml.SequenceNode {
		return fail(n.Line, key, `want a list of checks, each a shell command (like "test -e /run/app.ok") or a mapping of %s`, strings.Join(checkFields, ", "))
	}
	s.Checks = nil
	for i, item := range n.Content {
		item = resolve(item)
		at := func(field string) string { return fmt.Sprintf("checks[%d].%s", i+1, field) }
		var c agent.Check
		switch {
		case item.Kind == yaml.ScalarNode && item.ShortTag() != "!!null":
			c.Command = item.Value
			where[at("command")], lines[at("command")] = origin{path: path, line: item.Line, key: at("command")}, item.Line
		case item.Kind == yaml.MappingNode:
			if err := setCheck(&c, item, at, path, where, lines); err != nil {
				return err
			}
		default:
			return fail(item.Line, key, "item %d is neither a shell command nor a mapping of %s", i+1, strings.Join(checkFields, ", "))
		}
		s.Checks = append(s.Checks, c)
	}
	return nil
}

// setCheck sets c from the mapping m of one check; at names its fields.
func setCheck(c *agent.Check, m *yaml.Node, at func(string) string, path string, where map[string]origin, lines map[string]int) *lineError {
	seen := map[string]bool{}
	for j := 0; j < len(m.Content); j += 2 {
		k, v := m.Content[j], resolve(m.Content[j+1])
		if !slices.Contains(checkFields, k.Value) {
			msg := fmt.Sprintf("unknown key %q of a check (it has %s)", k.Value, strings.Join(checkFields, ", "))
			if s := suggest(k.Value, checkFields); s != "" {
				msg = fmt.Sprintf("unknown key %q of a check (did you mean %q?)", k.Value, s)
			}
			return &lineError{k.Line, at(k.Value), errors.New(msg)}
		}
		if seen[k.Value] {
			return &lineError{k.Line, at(k.Value), errors.New("given twice")}
		}
		seen[k.Value] = true
		if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
			return &lineError{v.Line, at(k.Value), errors.New("want a single value")}
		}
		if err := setCheckField(c, k.Value, v); err != nil {
			return &lineError{v.Line, at(k.Value), err}
		}
		where[at(k.Value)] = origin{path: path, line: v.Line, key: at(k.Value)}
		lines[at(k.Value)] = v.Line
	}
	if !seen["command"] {
		return &lineError{m.Line, at("command"), errors.New("a check needs a command")}
	}
	return nil
}

// setCheckField parses the value v of one field of a check.
func setCheckField(c *agent.Check, field string, v *yaml.Node) error {
	switch field {
	case "name":
		c.Name = v.Value
	case "command":
		c.Command = v.Value
	case "interval", "timeout":
		d, err := time.ParseDuration(v.Value)
		if err != nil || d <= 0 {
			return fmt.Errorf(`%q is not a duration above 0 (like "500ms" or "2s")`, v.Value)
		}
		if field == "interval" {
			c.Interval = d
		} else {
			c.Timeout = d
		}
	case "rise", "fall":
		r := config.Range{Min: 1, Max: config.MaxCheckRiseFall}
		n, err := strconv.Atoi(v.Value)
		if err != nil || n < 1 || n > config.MaxCheckRiseFall {
			return r.OutOfRange(strconv.Quote(v.Value))
		}
		if field == "rise" {
			c.Rise = n
		} else {
			c.Fall = n
		}
	case "weight":
		return setWeight(c, v.Value)
	}
	return nil
}

// setWeight parses a check's weight: 0 is a fault, more what it takes off
// the priority; a negative one is keepalived's (config.NegativeWeight).
func setWeight(c *agent.Check, v string) error {
	n, err := strconv.Atoi(v)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not an integer", v)
	case n < 0:
		return config.NegativeWeight(int64(n))
	case n > 65535:
		return (config.Range{Min: 0, Max: 65535}).OutOfRange(v)
	}
	c.Weight, c.Fault = n, n == 0
	return nil
}

// forgetChecks drops the places of the file's checks (flags replaced them).
func forgetChecks(where map[string]origin) {
	maps.DeleteFunc(where, func(k string, _ origin) bool { return strings.HasPrefix(k, "checks[") })
}

// byFlag is the option of the flag named.
func byFlag(flag string) option {
	for _, o := range runOptions {
		if o.Flag == flag {
			return o
		}
	}
	panic("no option " + flag)
}

// settingKey is the YAML key of the setting Validate names: its option's
// key, or a check's field as it is (checks[2].timeout).
func settingKey(setting string) string {
	for _, o := range runOptions {
		if o.Flag == setting {
			return o.Key
		}
	}
	return setting
}
