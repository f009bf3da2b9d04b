package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/lanleader/lanleader/agent/config"
)

// runFlags is the FlagSet of `lanleader run`. The flags keep the strings
// they were given; apply parses them after the file, so that a flag given
// on the command line overrides the file and one not given does not.
type runFlags struct {
	set    *flag.FlagSet
	config *string               // the --config file, nil when not given
	values map[string]*flagValue // by flag name
	once   onceFlags             // --once, --once-timeout (once.go)
}

func newRunFlags() *runFlags {
	rf := &runFlags{set: flag.NewFlagSet("run", flag.ContinueOnError), values: map[string]*flagValue{}}
	rf.set.SetOutput(io.Discard)
	rf.set.Usage = func() {}
	rf.set.Func("config", "YAML config `file`", func(v string) error { rf.config = &v; return nil })
	rf.once.define(rf.set)
	for _, o := range runOptions {
		if o.IsFlag() {
			v := &flagValue{list: o.Kind == config.KindAddrList || o.Kind == config.KindCheckList || o.Kind == config.KindFileList || o.Kind == config.KindVIPAddr, boolean: o.Kind == config.KindBoolean}
			rf.values[o.Flag] = v
			rf.set.Var(v, o.Flag, "")
		}
	}
	return rf
}

// parse parses args, the flags before --. -h prints runUsage to stdout.
func (rf *runFlags) parse(args []string, stdout io.Writer) error {
	if err := rf.set.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, runUsage)
			return err
		}
		return errors.New(flagMessage(err))
	}
	if rf.set.NArg() > 0 {
		a, i := rf.set.Arg(0), len(args)-rf.set.NArg()
		hint := "the job's command line goes after --"
		if i > 0 {
			prev := strings.TrimLeft(args[i-1], "-")
			for _, o := range runOptions {
				if o.Kind == config.KindBoolean && o.Flag == prev {
					hint = "write --" + prev + "=" + a + ", with an '='"
				}
			}
		}
		return fmt.Errorf("unexpected argument %q (%s)", a, hint)
	}
	return nil
}

// apply sets the options whose flags were given, in the order of
// runOptions; a list given by flags replaces the file's.
func (rf *runFlags) apply(s *settings, where map[string]origin) error {
	given := map[string]bool{}
	rf.set.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, o := range runOptions {
		if !o.IsFlag() || !given[o.Flag] {
			continue
		}
		o.clearList(s) // a list starts afresh
		if o.Kind == config.KindCheckList {
			forgetChecks(where) // the file's checks are gone
		}
		for _, v := range rf.values[o.Flag].vals {
			if err := o.set(s, v); err != nil {
				return fmt.Errorf("--%s: %w", o.Flag, err)
			}
		}
		where[o.Flag] = origin{flag: "--" + o.Flag}
	}
	return nil
}

// flagValue is the text of a flag as given: the last one for a single
// value, every non-empty one for a list.
type flagValue struct {
	list, boolean bool
	vals          []string
}

func (f *flagValue) String() string {
	if f == nil {
		return ""
	}
	return strings.Join(f.vals, ",")
}

func (f *flagValue) Set(v string) error {
	switch {
	case !f.list:
		f.vals = []string{v}
	case v != "":
		f.vals = append(f.vals, v)
	}
	return nil
}

// IsBoolFlag lets a boolean flag be given without a value (--preempt is
// --preempt=true).
func (f *flagValue) IsBoolFlag() bool { return f.boolean }

// flagMessage rewrites the flag package's errors in our words.
func flagMessage(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		known := []string{"config", "once", "once-timeout"}
		for _, o := range runOptions {
			if o.IsFlag() {
				known = append(known, o.Flag)
			}
		}
		hint := "'lanleader run -h' lists the flags"
		if s := suggest(name, known); s != "" {
			hint = "did you mean --" + s + "?"
		}
		return fmt.Sprintf("unknown flag --%s (%s)", name, hint)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Sprintf("--%s: needs a value", name)
	}
	return msg
}
