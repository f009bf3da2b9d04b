package main

import (
	"bytes"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lanleader/lanleader/agent"
	"github.com/lanleader/lanleader/election"
)

// runUsage is what `lanleader run -h` prints, the manual of run.txt. Every
// flag of newRunFlags is in it (config_test.go checks), and so are the
// defaults of agent.Config.
//
//go:embed run.txt
var runUsage string

// runSettings is what the flags and the file set: the agent's Config and
// the logger's format and level, from which parseRunConfig builds
// Config.Logger.
type runSettings struct {
	cfg       agent.Config
	logFormat string
	logLevel  slog.Level
}

// optionKind is the shape of an option's value, which says how a YAML
// node becomes the string that option.set parses.
type optionKind int

const (
	kindString   optionKind = iota
	kindInt                 // a decimal integer
	kindDuration            // a string with a unit; a bare number other than 0 is refused
	kindBool                // a boolean flag: --x means --x=true
	kindList                // a comma-separated list; a YAML sequence in the file
	kindMulti               // repeatable, one item each time (commas are kept); a YAML sequence in the file
	kindArgv                // the job's command line: no flag (it goes after --), a YAML sequence or string in the file
)

// itemSep joins the items of a kindMulti or kindArgv value for
// option.set: a byte no command line holds.
const itemSep = "\x00"

// option is one setting of `lanleader run`: the flag --flag and the YAML
// key flag with '-' replaced by '_'.
type option struct {
	flag  string
	kind  optionKind
	usage string // one line, for the FlagSet; the help is runUsage
	// set parses v and stores it in s. Its error names the value but not
	// the option: the caller prefixes the flag or the key.
	set func(s *runSettings, v string) error
}

// key is the option's YAML key.
func (o option) key() string { return strings.ReplaceAll(o.flag, "-", "_") }

// isFlag says whether the option is also a flag (all but the job, whose
// command line goes after --).
func (o option) isFlag() bool { return o.kind != kindArgv }

// runOptions are the options of `lanleader run`, but --config. A new one
// needs a line in runUsage and tests in config_test.go.
var runOptions = []option{
	{"name", kindString, "this node's name (default: the host name)", func(s *runSettings, v string) error {
		s.cfg.Name = v
		return nil
	}},
	{"node-id", kindInt, "election id, 1…2^53-1 (default: from /etc/machine-id)", func(s *runSettings, v string) error {
		n, err := parseInt(v, 1, agent.MaxNodeID)
		if err == nil {
			s.cfg.NodeID = uint64(n)
		}
		return err
	}},
	{"priority", kindInt, "priority 1…65535 (default 100)", func(s *runSettings, v string) error {
		n, err := parseInt(v, 1, 65535)
		if err == nil {
			s.cfg.Priority = uint16(n)
		}
		return err
	}},
	{"cluster", kindString, "cluster name (default lanleader)", func(s *runSettings, v string) error {
		s.cfg.Cluster = v
		return nil
	}},
	{"bind", kindString, "gossip address IP[:PORT] (default 0.0.0.0:7946)", func(s *runSettings, v string) error {
		if _, err := (&agent.Config{Bind: v}).BindAddrPort(); err != nil {
			return fmt.Errorf("%q is not an IP address with an optional port (like 198.18.0.1 or 198.18.0.1:7946)", v)
		}
		s.cfg.Bind = v
		return nil
	}},
	{"election-port", kindInt, "UDP port of election messages (default 7947)", func(s *runSettings, v string) error {
		n, err := parseInt(v, 0, 65535)
		if err == nil {
			s.cfg.ElectionPort = int(n)
		}
		return err
	}},
	{"join", kindList, "peers to join, HOST[:PORT],... (repeatable)", func(s *runSettings, v string) error {
		s.cfg.Join = nil
		if v == "" {
			return nil
		}
		for a := range strings.SplitSeq(v, ",") {
			a = strings.TrimSpace(a)
			if a == "" {
				return fmt.Errorf("empty address in %q", v)
			}
			s.cfg.Join = append(s.cfg.Join, a)
		}
		return nil
	}},
	{"http", kindString, `address of /status and /metrics, or "off" (default 127.0.0.1:9947)`, func(s *runSettings, v string) error {
		if v == "off" {
			v = ""
		}
		if v != "" {
			if _, _, err := net.SplitHostPort(v); err != nil {
				return fmt.Errorf(`%q is not host:port (like 127.0.0.1:9947) or "off"`, v)
			}
		}
		s.cfg.HTTP = v
		return nil
	}},
	{"heartbeat", kindDuration, "leader's heartbeat interval (default 100ms)", func(s *runSettings, v string) (err error) {
		s.cfg.Heartbeat, err = parseDuration(v, false)
		return err
	}},
	{"suspect-after", kindDuration, "fixed detector's timeout (default 3 heartbeats)", func(s *runSettings, v string) (err error) {
		s.cfg.SuspectAfter, err = parseDuration(v, false)
		return err
	}},
	{"detector", kindString, "failure detector, fixed or phi (default fixed)", func(s *runSettings, v string) error {
		s.cfg.Detector = v
		return oneOf(v, agent.DetectorFixed, agent.DetectorPhi)
	}},
	{"key-file", kindString, "the cluster's secret, at least 32 bytes, not world-readable (default: none)", func(s *runSettings, v string) error {
		if v == "" {
			s.cfg.Key = nil
			return nil
		}
		k, err := agent.LoadKeyFile(v)
		s.cfg.Key = k
		return err
	}},
	{"accept-key-file", kindString, "an older key still accepted, for a key rotation (default: none)", func(s *runSettings, v string) error {
		s.cfg.AcceptKeys = nil
		if v == "" {
			return nil
		}
		k, err := agent.LoadKeyFile(v)
		if err == nil {
			s.cfg.AcceptKeys = [][]byte{k}
		}
		return err
	}},
	{"algorithm", kindString, "election algorithm: bully, ring, chang-roberts or hirschberg-sinclair (default bully)", func(s *runSettings, v string) error {
		s.cfg.Algorithm = v
		return oneOf(v, election.Algorithms...)
	}},
	{"transport", kindString, "multicast or unicast (default multicast)", func(s *runSettings, v string) error {
		s.cfg.Transport = v
		return oneOf(v, agent.TransportMulticast, agent.TransportUnicast)
	}},
	{"multicast-group", kindString, "multicast group (default 239.255.76.76)", func(s *runSettings, v string) error {
		a, err := netip.ParseAddr(v)
		if err != nil {
			return fmt.Errorf("%q is not an IP address", v)
		}
		if !a.IsMulticast() {
			return fmt.Errorf("%s is not a multicast address (like %s or %s)", v, agent.DefaultGroup4, agent.DefaultGroup6)
		}
		s.cfg.Group = a
		return nil
	}},
	{"preempt", kindBool, "a larger node takes over from a smaller leader (default true)", func(s *runSettings, v string) (err error) {
		s.cfg.Preempt, err = parseBool(v)
		return err
	}},
	{"preempt-delay", kindDuration, "wait before taking over after start (default 0)", func(s *runSettings, v string) (err error) {
		s.cfg.PreemptDelay, err = parseDuration(v, false)
		return err
	}},
	{"quorum", kindInt, "expected cluster size for split-brain safety; 0: off (default 0)", func(s *runSettings, v string) error {
		n, err := parseInt(v, 0, 1024)
		if err == nil {
			s.cfg.Quorum = int(n)
		}
		return err
	}},
	{"lease", kindDuration, "with --quorum: the leader's lease (default --suspect-after + --heartbeat)", func(s *runSettings, v string) (err error) {
		s.cfg.Lease, err = parseDuration(v, false)
		return err
	}},
	{"lease-margin", kindDuration, "with --quorum: the followers' wait beyond the lease (default lease/10)", func(s *runSettings, v string) (err error) {
		s.cfg.LeaseMargin, err = parseDuration(v, false)
		return err
	}},
	{"state-file", kindString, "with --quorum: where the voted term is kept (default: none)", func(s *runSettings, v string) error {
		s.cfg.StateFile = v
		if v == "" {
			return nil
		}
		_, err := agent.LoadVotedTerm(v)
		return err
	}},
	{"discover-interval", kindDuration, "discovery beacon interval, negative for none (default 1s)", func(s *runSettings, v string) (err error) {
		s.cfg.DiscoverInterval, err = parseDuration(v, true)
		return err
	}},
	{"job", kindArgv, "the job's command line (after --)", func(s *runSettings, v string) error {
		s.cfg.Job = strings.Split(v, itemSep)
		if s.cfg.Job[0] == "" {
			return errors.New("empty command name")
		}
		return nil
	}},
	{"job-grace", kindDuration, "time between SIGTERM and SIGKILL of the job (default 10s)", func(s *runSettings, v string) (err error) {
		s.cfg.JobGrace, err = parseDuration(v, false)
		return err
	}},
	{"job-max-failures", kindInt, "job exits in the window before handing over; 0: never (default 5)", func(s *runSettings, v string) error {
		n, err := parseInt(v, 0, 1000)
		if err == nil {
			s.cfg.JobMaxFailures = int(n)
		}
		return err
	}},
	{"job-failure-window", kindDuration, "window of --job-max-failures (default 1m)", func(s *runSettings, v string) (err error) {
		s.cfg.JobFailureWindow, err = parseDuration(v, false)
		return err
	}},
	{"on-leader", kindString, "shell command run when this node becomes leader", func(s *runSettings, v string) error {
		s.cfg.OnLeader = v
		return nil
	}},
	{"on-follower", kindString, "shell command run when this node stops leading or first follows", func(s *runSettings, v string) error {
		s.cfg.OnFollower = v
		return nil
	}},
	{"on-change", kindString, "shell command run on every change of state or leader", func(s *runSettings, v string) error {
		s.cfg.OnChange = v
		return nil
	}},
	{"hook-timeout", kindDuration, "a hook still running then is killed (default 10s)", func(s *runSettings, v string) (err error) {
		s.cfg.HookTimeout, err = parseDuration(v, false)
		return err
	}},
	{"check", kindMulti, "health check, a shell command (repeatable)", func(s *runSettings, v string) error {
		s.cfg.Checks = nil
		if v == "" {
			return nil
		}
		for c := range strings.SplitSeq(v, itemSep) {
			if strings.TrimSpace(c) == "" {
				return errors.New("empty command")
			}
			s.cfg.Checks = append(s.cfg.Checks, c)
		}
		return nil
	}},
	{"check-interval", kindDuration, "how often each check runs (default 2s)", func(s *runSettings, v string) (err error) {
		s.cfg.CheckInterval, err = parseDuration(v, false)
		if err == nil && s.cfg.CheckInterval != 0 && s.cfg.CheckInterval < agent.MinCheckInterval {
			return fmt.Errorf("%s is shorter than %v", v, agent.MinCheckInterval)
		}
		return err
	}},
	{"check-weight", kindInt, "priority a failing check takes off (default 50)", func(s *runSettings, v string) error {
		n, err := parseInt(v, 1, 65535)
		if err == nil {
			s.cfg.CheckWeight = int(n)
		}
		return err
	}},
	{"log-format", kindString, "text or json (default text)", func(s *runSettings, v string) error {
		s.logFormat = v
		return oneOf(v, "text", "json")
	}},
	{"log-level", kindString, "debug, info, warn or error (default info)", func(s *runSettings, v string) error {
		if err := oneOf(v, "debug", "info", "warn", "error"); err != nil {
			return err
		}
		return s.logLevel.UnmarshalText([]byte(v))
	}},
}

// parseRunConfig turns the arguments of `lanleader run` (and its --config
// file) into an agent configuration and the job's command line (after --).
//
// Defaults are overridden by the file, and the file by the flags given on
// the command line. The Config returned is filled (agent.Config.Fill) and
// valid, and its Logger writes to stderr. -h and --help print runUsage to
// stdout and return flag.ErrHelp. Any other error is one line that names
// the flag or key at fault and its value; parseRunConfig prints nothing
// but the help.
func parseRunConfig(args []string, stdout, stderr io.Writer) (agent.Config, []string, error) {
	cfg, job, err := parseRun(args, stdout, stderr)
	if err != nil && strings.Contains(err.Error(), "\n") {
		err = oneLineError{err}
	}
	return cfg, job, err
}

func parseRun(args []string, stdout, stderr io.Writer) (agent.Config, []string, error) {
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	var job []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, job = args[:i], slices.Clone(args[i+1:])
		if len(job) == 0 {
			return agent.Config{}, nil, errors.New("nothing after --: give the job's command line there, or leave out --")
		}
	}

	rf := newRunFlags()
	if err := rf.set.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, runUsage)
			return agent.Config{}, nil, err
		}
		return agent.Config{}, nil, errors.New(flagMessage(err))
	}
	if rf.set.NArg() > 0 {
		a, i := rf.set.Arg(0), len(args)-rf.set.NArg()
		hint := "the job's command line goes after --"
		if i > 0 && strings.TrimLeft(args[i-1], "-") == "preempt" {
			hint = "write --preempt=" + a + ", with an '='"
		}
		return agent.Config{}, nil, fmt.Errorf("unexpected argument %q (%s)", a, hint)
	}
	given := map[string]bool{}
	rf.set.Visit(func(f *flag.Flag) { given[f.Name] = true })

	// The defaults that agent.Config.Fill cannot set, because their zero
	// value means something: "" is no HTTP listener, false is nopreempt,
	// 0 job failures is never.
	s := runSettings{
		cfg:       agent.Config{HTTP: agent.DefaultHTTP, Preempt: true, JobMaxFailures: agent.DefaultJobMaxFailures},
		logFormat: "text",
		logLevel:  slog.LevelInfo,
	}
	if given["config"] {
		if rf.config == "" {
			return agent.Config{}, nil, errors.New("--config: empty file name")
		}
		if err := loadConfigFile(rf.config, &s); err != nil {
			return agent.Config{}, nil, err
		}
	}
	for _, o := range runOptions {
		if !o.isFlag() || !given[o.flag] {
			continue
		}
		if err := o.set(&s, rf.values[o.flag].String()); err != nil {
			return agent.Config{}, nil, fmt.Errorf("--%s: %w", o.flag, err)
		}
	}

	opts := &slog.HandlerOptions{Level: s.logLevel}
	if s.logFormat == "json" {
		s.cfg.Logger = slog.New(slog.NewJSONHandler(stderr, opts))
	} else {
		s.cfg.Logger = slog.New(slog.NewTextHandler(stderr, opts))
	}
	// A command line after -- replaces the file's job.
	if len(job) > 0 {
		s.cfg.Job = job
	}
	s.cfg.Fill()
	if err := s.cfg.Validate(); err != nil {
		return agent.Config{}, nil, err
	}
	return s.cfg, s.cfg.Job, nil
}

// runFlags is the FlagSet of `lanleader run`. The flags keep the strings
// they were given; parseRun parses them after the file, so that a flag
// given on the command line overrides the file and one not given does not.
type runFlags struct {
	set    *flag.FlagSet
	config string
	values map[string]*flagValue // by flag name
}

func newRunFlags() *runFlags {
	rf := &runFlags{set: flag.NewFlagSet("run", flag.ContinueOnError), values: map[string]*flagValue{}}
	rf.set.SetOutput(io.Discard)
	rf.set.Usage = func() {}
	rf.set.StringVar(&rf.config, "config", "", "YAML config `file`")
	for _, o := range runOptions {
		if !o.isFlag() {
			continue
		}
		v := &flagValue{list: o.kind == kindList || o.kind == kindMulti, sep: ","}
		if o.kind == kindMulti {
			v.sep = itemSep
		}
		rf.values[o.flag] = v
		if o.kind == kindBool {
			rf.set.Var(boolFlagValue{v}, o.flag, o.usage)
		} else {
			rf.set.Var(v, o.flag, o.usage)
		}
	}
	return rf
}

// flagValue is the text of a flag as given: the last one for a single
// value, every non-empty one for a list.
type flagValue struct {
	list bool
	sep  string // between the items of a list, for option.set
	vals []string
}

func (f *flagValue) String() string {
	if f == nil {
		return ""
	}
	return strings.Join(f.vals, f.sep)
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

// boolFlagValue is a flagValue that may be given without a value (--preempt
// is --preempt=true).
type boolFlagValue struct{ *flagValue }

func (boolFlagValue) IsBoolFlag() bool { return true }

// flagMessage rewrites the flag package's errors in our words.
func flagMessage(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		known := []string{"config"}
		for _, o := range runOptions {
			if o.isFlag() {
				known = append(known, o.flag)
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

// fileType is the struct the config file is decoded into: one yaml.Node
// field per option, tagged with its key, so that yaml's KnownFields finds
// the unknown keys (with their lines) and each value keeps its line and
// tag for our own checks.
var fileType = func() reflect.Type {
	fields := make([]reflect.StructField, len(runOptions))
	for i, o := range runOptions {
		fields[i] = reflect.StructField{
			Name: fmt.Sprintf("F%d", i),
			Type: reflect.TypeFor[yaml.Node](),
			Tag:  reflect.StructTag(`yaml:"` + o.key() + `"`),
		}
	}
	return reflect.StructOf(fields)
}()

// loadConfigFile applies the YAML file at path to s, key by key in the
// order of the file.
func loadConfigFile(path string, s *runSettings) error {
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
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	doc := reflect.New(fileType)
	if err := dec.Decode(doc.Interface()); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // empty, or only comments: every default
		}
		return fail("%s", yamlMessage(err))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return fail("%s", yamlMessage(err))
		}
		return fail("line %d: a second YAML document; put every key in one", extra.Line)
	}

	type entry struct {
		o option
		n *yaml.Node
	}
	var entries []entry
	for i, o := range runOptions {
		n := doc.Elem().Field(i).Addr().Interface().(*yaml.Node)
		if n.Kind != 0 {
			entries = append(entries, entry{o, n})
		}
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return a.n.Line - b.n.Line })
	for _, e := range entries {
		v, err := nodeText(e.o.kind, e.n)
		if err == nil {
			err = e.o.set(s, v)
		}
		if err != nil {
			return fail("line %d: %s: %v", e.n.Line, e.o.key(), err)
		}
	}
	return nil
}

// nodeText is the value of a YAML node as the string that option.set
// parses, or why the node cannot be one of this kind.
func nodeText(kind optionKind, n *yaml.Node) (string, error) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return "", errors.New("no value (leave the key out for the default)")
	}
	if kind == kindArgv && n.Kind == yaml.ScalarNode {
		// A string is a shell command line.
		if strings.TrimSpace(n.Value) == "" {
			return "", errors.New("empty command")
		}
		return strings.Join([]string{"/bin/sh", "-c", n.Value}, itemSep), nil
	}
	if kind == kindMulti || kind == kindArgv {
		if n.Kind != yaml.SequenceNode {
			if kind == kindArgv {
				return "", errors.New(`want a command line, as a list (like [/usr/bin/worker, --fast]) or a string for /bin/sh -c`)
			}
			return "", errors.New(`want a list of shell commands, like ["test -e /run/app.ok"]`)
		}
		if len(n.Content) == 0 {
			if kind == kindArgv {
				return "", errors.New("empty command")
			}
			return "", nil
		}
		items := make([]string, len(n.Content))
		for i, c := range n.Content {
			for c.Kind == yaml.AliasNode && c.Alias != nil {
				c = c.Alias
			}
			if c.Kind != yaml.ScalarNode || c.ShortTag() == "!!null" {
				return "", fmt.Errorf("item %d is not a string", i+1)
			}
			if strings.Contains(c.Value, itemSep) {
				return "", fmt.Errorf("item %d holds a NUL byte", i+1)
			}
			items[i] = c.Value
		}
		return strings.Join(items, itemSep), nil
	}
	if kind == kindList {
		if n.Kind != yaml.SequenceNode {
			return "", errors.New(`want a list of addresses, like [198.18.0.2, "198.18.0.3:7946"]`)
		}
		items := make([]string, len(n.Content))
		for i, c := range n.Content {
			for c.Kind == yaml.AliasNode && c.Alias != nil {
				c = c.Alias
			}
			if c.Kind != yaml.ScalarNode || c.ShortTag() == "!!null" {
				return "", fmt.Errorf("item %d is not an address", i+1)
			}
			items[i] = c.Value
		}
		return strings.Join(items, ","), nil
	}
	if n.Kind != yaml.ScalarNode {
		what := "a mapping"
		if n.Kind == yaml.SequenceNode {
			what = "a list"
		}
		return "", fmt.Errorf("want a single value, not %s", what)
	}
	if kind == kindDuration && n.ShortTag() == "!!int" && n.Value != "0" {
		return "", fmt.Errorf(`%s has no unit; write a duration like "100ms" or "2s"`, n.Value)
	}
	return n.Value, nil
}

var (
	unknownKeyRE   = regexp.MustCompile(`^line (\d+): field (.*?) not found in type `)
	duplicateKeyRE = regexp.MustCompile(`^line (\d+): mapping key (".*") already defined at line (\d+)$`)
	notMappingRE   = regexp.MustCompile(`^line (\d+): cannot unmarshal (!!\w+)`)
)

// yamlMessage is a yaml decoding error in our words, without "yaml: ".
func yamlMessage(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return strings.TrimPrefix(err.Error(), "yaml: ")
	}
	keys := make([]string, len(runOptions))
	for i, o := range runOptions {
		keys[i] = o.key()
	}
	msgs := make([]string, len(te.Errors))
	for i, e := range te.Errors {
		msgs[i] = e
		if m := unknownKeyRE.FindStringSubmatch(e); m != nil {
			msgs[i] = fmt.Sprintf("line %s: unknown key %q", m[1], m[2])
			if s := suggest(m[2], keys); s != "" {
				msgs[i] += fmt.Sprintf(" (did you mean %q?)", s)
			}
		} else if m := duplicateKeyRE.FindStringSubmatch(e); m != nil {
			msgs[i] = fmt.Sprintf("line %s: key %s given twice (first at line %s)", m[1], m[2], m[3])
		} else if m := notMappingRE.FindStringSubmatch(e); m != nil {
			what := "a single value"
			if m[2] == "!!seq" {
				what = "a list"
			}
			msgs[i] = fmt.Sprintf(`line %s: want a mapping of keys to values (like "priority: 150"), not %s`, m[1], what)
		}
	}
	return strings.Join(msgs, "; ")
}

// parseInt parses a decimal integer in lo…hi.
func parseInt(v string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if errors.Is(err, strconv.ErrRange) || err == nil && (n < lo || n > hi) {
		return 0, fmt.Errorf("%s out of range %d…%d", v, lo, hi)
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", v)
	}
	return n, nil
}

// parseDuration parses a Go duration; a negative one only if negative.
func parseDuration(v string, negative bool) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (like 100ms or 2s)", v)
	}
	if d < 0 && !negative {
		return 0, fmt.Errorf("%s is negative; want 0 (the default) or more", v)
	}
	return d, nil
}

// parseBool parses what strconv.ParseBool does, and yes, no, on and off.
func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "yes", "on":
		return true, nil
	case "no", "off":
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%q is not true or false", v)
	}
	return b, nil
}

// oneOf says which names v may be when it is none of them:
// `"x" is not a, b or c`.
func oneOf(v string, names ...string) error {
	if slices.Contains(names, v) {
		return nil
	}
	list := names[len(names)-1]
	if len(names) > 1 {
		list = strings.Join(names[:len(names)-1], ", ") + " or " + list
	}
	return fmt.Errorf("%q is not %s", v, list)
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

// oneLineError shows a multi-line error (agent.Config.Validate joins one
// line per field at fault) on one line, "; " between the lines. errors.Is
// and errors.As still reach the original.
type oneLineError struct{ err error }

func (e oneLineError) Error() string { return strings.ReplaceAll(e.err.Error(), "\n", "; ") }
func (e oneLineError) Unwrap() error { return e.err }
