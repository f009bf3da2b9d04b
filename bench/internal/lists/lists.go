// Package lists parses the comma-separated flag values the benchmarks
// share, with errors that name the flag.
package lists

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Durations parses list ("100ms,10ms") for flag; every duration must be
// at least least.
func Durations(flag, list string, least time.Duration) ([]time.Duration, error) {
	var out []time.Duration
	for f := range strings.SplitSeq(list, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a duration (like 100ms)", flag, strings.TrimSpace(f))
		}
		if d < least {
			return nil, fmt.Errorf("%s: %v is shorter than %v", flag, d, least)
		}
		out = append(out, d)
	}
	return out, nil
}

// Modes parses a list of take-down modes for flag: crash, graceful.
func Modes(flag, list string) ([]string, error) {
	var out []string
	for f := range strings.SplitSeq(list, ",") {
		m := strings.TrimSpace(f)
		if m != "crash" && m != "graceful" {
			return nil, fmt.Errorf("%s: %q is not crash or graceful", flag, m)
		}
		out = append(out, m)
	}
	return out, nil
}

// Parse parses args with fs, whose errors the caller prints in one line:
// -h prints fs's usage to standard error (and returns flag.ErrHelp), and
// an argument that is not a flag is an error.
func Parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stderr)
			fs.Usage()
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// Sizes parses a list of cluster sizes ("8,16,32") for flag; each must
// be from least to most.
func Sizes(flag, list string, least, most int) ([]int, error) {
	return Ints(flag, list, "cluster size", least, most)
}

// Ints parses a list of whole numbers ("5,32,64") for flag, each a what
// ("host count") from least to most, none twice.
func Ints(flag, list, what string, least, most int) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(list, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		switch {
		case err != nil || n < least || n > most:
			return nil, fmt.Errorf("%s: %q is not a %s from %d to %d", flag, f, what, least, most)
		case slices.Contains(out, n):
			return nil, fmt.Errorf("%s: %d twice", flag, n)
		}
		out = append(out, n)
	}
	return out, nil
}

// Main is a benchmark's main: it parses the command line with parse and
// exits 0 after -h, 2 with one line naming a bad flag, or else with the
// status run returns.
func Main[O any](name string, parse func(args []string) (O, error), run func(O) int) {
	o, err := parse(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(2)
	}
	os.Exit(run(o))
}
