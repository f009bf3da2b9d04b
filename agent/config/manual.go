package config

// The settings table written out for people: the options of the manual
// that `lanleader run -h` prints, and the configuration reference in
// Markdown (docs/configuration.md). Both are written from Settings alone,
// so that neither can say a flag, a default, a range or a reload that the
// command line and Validate do not have.

//go:generate go run ./internal/genref ../../docs/configuration.md

import (
	"fmt"
	"strings"
)

// Groups are the headings of the manual's options, in its order; every
// setting's Group is one of them.
var Groups = []string{
	"Identity",
	"Network",
	"Authentication",
	"Failure detection and election",
	"Split-brain safety",
	"Job",
	"Hooks",
	"Health checks",
	"Virtual addresses",
	"Start",
	"Logging",
}

// manualWidth is the widest line of the manual: it must fit a terminal of
// 80 columns with a margin.
const manualWidth = 78

// Synopsis is how the manual writes the setting: its flag with its
// value's placeholder (--priority N, --preempt[=true|false]), or, for the
// job, the command line after --.
func (s *Setting) Synopsis() string {
	switch s.Kind {
	case KindArgv:
		return "-- JOB [ARGS...]"
	case KindBoolean:
		return "--" + s.Flag + "[=true|false]"
	}
	return "--" + s.Flag + " " + s.placeholder()
}

// placeholder is the setting's value in its synopsis: Arg, or what the
// kind says when Arg is empty.
func (s *Setting) placeholder() string {
	switch {
	case s.Arg != "":
		return s.Arg
	case s.Kind == KindName:
		return strings.Join(s.Names, "|")
	case s.Kind == KindDuration, s.Kind == KindDurationOrOff, s.Kind == KindAnyDuration:
		return "DURATION"
	}
	panic(fmt.Sprintf("config: --%s has no placeholder", s.Flag))
}

// ReloadText is what a reload does with the setting, in the manual's
// words.
func (s *Setting) ReloadText() string {
	if s.Reload == Applied {
		return "reloadable"
	}
	return "needs a restart"
}

// Manual is the manual's text of the settings of group, in the table's
// order: each one's synopsis, then, indented and wrapped to the manual's
// width, its Doc, and a line of its range, its default, its key in the
// file and what a reload does with it. It ends without a newline.
func Manual(group string) string {
	var entries []string
	for i := range Settings {
		if s := &Settings[i]; s.Group == group {
			entries = append(entries, s.manual())
		}
	}
	return strings.Join(entries, "\n")
}

// manual is the setting's entry in the manual. Its facts are each kept
// on one line, so that "Default 100." can be looked for in the text.
func (s *Setting) manual() string {
	var facts []string
	switch {
	case s.Range != nil:
		facts = append(facts, fmt.Sprintf("Range %d to %d.", s.Range.Min, s.Range.Max))
	case s.Floor > 0 && s.Ceiling > 0:
		facts = append(facts, fmt.Sprintf("Range %s to %s.", DurationText(s.Floor), DurationText(s.Ceiling)))
	case s.Ceiling > 0:
		facts = append(facts, "At most "+DurationText(s.Ceiling)+".")
	}
	facts = append(facts, s.defaultText(), "Key: "+s.Key+"; "+s.ReloadText()+".")
	const indent = "        "
	return "    " + s.Synopsis() + "\n" +
		wrap(strings.Fields(s.Doc), indent, manualWidth) + "\n" +
		wrap(facts, indent, manualWidth)
}

// RangeText is the setting's range in the reference's words: "1 … 65535"
// for an integer, "10ms … 1m" or "at most 1h" for a duration, "" for a
// setting without one.
func (s *Setting) RangeText() string {
	switch {
	case s.Range != nil:
		return fmt.Sprintf("%d … %d", s.Range.Min, s.Range.Max)
	case s.Floor > 0 && s.Ceiling > 0:
		return DurationText(s.Floor) + " … " + DurationText(s.Ceiling)
	case s.Ceiling > 0:
		return "at most " + DurationText(s.Ceiling)
	}
	return ""
}

// defaultText is the manual's sentence of the default: "Default 100." for
// a value, "Default: none." for words.
func (s *Setting) defaultText() string {
	def := plain(s.Default)
	if def == "none" || strings.Contains(def, " ") {
		return "Default: " + def + "."
	}
	return "Default " + def + "."
}

// plain is s, Markdown, as plain text: without its code spans' backticks.
func plain(s string) string { return strings.ReplaceAll(s, "`", "") }

// wrap fills units (words, or phrases kept whole) into lines of at most
// width columns (a longer unit has a line of its own), each one begun
// with indent.
func wrap(units []string, indent string, width int) string {
	var b strings.Builder
	line := 0
	for _, u := range units {
		n := len([]rune(u))
		switch {
		case line == 0:
		case line+1+n > width:
			b.WriteString("\n")
			line = 0
		default:
			b.WriteString(" ")
			line++
		}
		if line == 0 {
			b.WriteString(indent)
			line = len(indent)
		}
		b.WriteString(u)
		line += n
	}
	return b.String()
}

// referenceHead begins the configuration reference.
const referenceHead = `<!-- Written from the settings table (agent/config/settings.go) by
` + "`go generate ./agent/config`" + `: do not edit; change the table and
run that again. A test fails while this file is not what it writes. -->

# Configuration reference

The settings of ` + "`lanleader run`" + `, in the groups of its manual
(` + "`lanleader run -h`" + `, which says more of each). Each one is a flag and a
key of the YAML file of ` + "`--config`" + `: a flag on the command line wins
over the file, and the file over the default. The job has no flag: it
is the command line after ` + "`--`" + `. Three flags have no key:
` + "`--config`" + ` itself, and ` + "`--once`" + ` and ` + "`--once-timeout`" + ` of
` + "`lanleader run --once`" + ` ([the job](job.md)). A *reloadable* setting takes its new
value on a reload (SIGHUP, ` + "`systemctl reload`" + `); one that *needs a
restart* keeps its running value until the agent restarts.
`

// Reference is the configuration reference, Markdown: for each group of
// the manual, a table of its settings with their flag, key, default,
// range, what a reload does and their help.
func Reference() string {
	var b strings.Builder
	b.WriteString(referenceHead)
	for _, g := range Groups {
		fmt.Fprintf(&b, "\n## %s\n\n", g)
		b.WriteString("| Flag | Key | Default | Range | Reload | Help |\n")
		b.WriteString("|---|---|---|---|---|---|\n")
		for i := range Settings {
			s := &Settings[i]
			if s.Group != g {
				continue
			}
			fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | %s | %s |\n",
				cell(s.Synopsis()), s.Key, cell(s.Default), s.RangeText(), s.ReloadText(), cell(s.Help))
		}
	}
	return b.String()
}

// cell is s in a cell of a Markdown table, where a pipe, even in a code
// span, ends the cell unless escaped.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
