package main

import (
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lanleader/lanleader/agent"
)

// runUsage is what `lanleader run -h` prints, the manual of run.txt. Every
// flag of newRunFlags is in it (config_test.go checks), and so are the
// defaults of agent.Config.
//
//go:embed run.txt
var runUsage string

// settings are what the flags and the config file of `lanleader run` set:
// the agent's Config, and the format and level of its log.
type settings struct {
	agent.Config
	LogFormat, LogLevel string
	// defaults are what a setting given as 0 (or a name given as "")
	// stands for, as the manual says.
	defaults agent.Config
}

// newSettings are the defaults, before the file and the flags:
// agent.DefaultConfig, with the settings whose default follows others at
// 0, "follow them" (see config).
func newSettings() *settings {
	d := agent.DefaultConfig()
	d.SuspectAfter, d.Lease, d.LeaseMargin, d.ElectionPort = 0, 0, 0, 0
	return &settings{Config: d, LogFormat: "text", LogLevel: "info", defaults: d}
}

// config is the agent's Config that s stands for. The settings whose
// default follows others, left out or given as 0, get it here, from the
// values given: suspect-after (three heartbeats), lease and lease-margin
// in quorum mode (agent.DefaultLease, agent.DefaultLeaseMargin), and
// election-port (7947, or a free port too with --bind port 0).
func (s *settings) config() agent.Config {
	c := s.Config
	c.SuspectAfter = cmp.Or(c.SuspectAfter, agent.DefaultSuspectAfter(c.Heartbeat))
	if c.Quorum > 0 {
		c.Lease = cmp.Or(c.Lease, agent.DefaultLease(c.Heartbeat, c.SuspectAfter))
		c.LeaseMargin = cmp.Or(c.LeaseMargin, agent.DefaultLeaseMargin(c.Lease))
	}
	if c.ElectionPort == 0 && !strings.HasSuffix(c.Bind, ":0") {
		c.ElectionPort = agent.DefaultElectionPort
	}
	return c
}

// kind is the syntax of an option's value. Parsing checks the syntax
// only; agent.Config.Validate checks ranges, names and how values relate.
type kind int

const (
	text          kind = iota // a string, as given
	textOrDefault             // a string; "" is the default
	name                      // one of names[flag]; a setting of the log, not of the agent
	integer                   // a decimal integer (agent.IntRange when it does not fit the field)
	duration                  // a duration with a unit, 0 (the default) or more
	durationOrOff             // a duration with a unit, 0 or more; 0 is none, not the default
	anyDuration               // a duration, negative too
	boolean                   // true or false (yes, no, on, off); the flag alone is true
	ipPort                    // IP[:PORT]
	hostPortOrOff             // HOST:PORT, or "off" or "" for none
	multicastIP               // a multicast address
	keyFile                   // the path of a key, read at once
	stateFile                 // the path of a state file, read at once
	addrList                  // addresses, comma-separated; the flag may be repeated; a list in the file
	checkList                 // a check's shell command each time the flag is given; in the file a list of commands or of mappings (checkfile.go)
	fileList                  // a file each time the flag is given; a list in the file
	vipAddr                   // a virtual address, ADDR/PREFIX[,dev=IFACE], each time the flag is given; a list in the file
	argv                      // the job's command line: no flag (it goes after --); in the file a list, or a string for /bin/sh -c
)

// names are the values a setting of kind name may have.
var names = map[string][]string{
	"log-format": {"text", "json"},
	"log-level":  {"debug", "info", "warn", "error"},
}

// option is one setting of `lanleader run`: the flag --flag and the YAML
// key flag with '-' replaced by '_'.
type option struct {
	flag  string
	field string // of settings
	kind  kind
}

// listKeys are the YAML keys of the options whose key is the plural of
// their repeatable flag.
var listKeys = map[string]string{"check": "checks", "track-file": "track_files"}

// keyAliases are the older YAML keys still read: key → flag.
var keyAliases = map[string]string{"check": "check"}

// key is the option's YAML key.
func (o option) key() string {
	if k, ok := listKeys[o.flag]; ok {
		return k
	}
	return strings.ReplaceAll(o.flag, "-", "_")
}

// isFlag says whether the option is also a flag (all but the job).
func (o option) isFlag() bool { return o.kind != argv }

// runOptions are the options of `lanleader run`, but --config. A new one
// needs a field of agent.Config (and its check in Validate), a line in
// run.txt and tests in config_test.go.
var runOptions = []option{
	{"name", "Name", textOrDefault},
	{"node-id", "NodeID", integer},
	{"priority", "Priority", integer},
	{"cluster", "Cluster", textOrDefault},
	{"bind", "Bind", ipPort},
	{"election-port", "ElectionPort", integer},
	{"join", "Join", addrList},
	{"http", "HTTP", hostPortOrOff},
	{"heartbeat", "Heartbeat", duration},
	{"suspect-after", "SuspectAfter", duration},
	{"detector", "Detector", text},
	{"key-file", "Key", keyFile},
	{"accept-key-file", "AcceptKeys", keyFile},
	{"algorithm", "Algorithm", text},
	{"role", "Role", text},
	{"transport", "Transport", text},
	{"multicast-group", "Group", multicastIP},
	{"preempt", "Preempt", boolean},
	{"preempt-delay", "PreemptDelay", duration},
	{"quorum", "Quorum", integer},
	{"lease", "Lease", duration},
	{"lease-margin", "LeaseMargin", duration},
	{"state-file", "StateFile", stateFile},
	{"discover-interval", "DiscoverInterval", anyDuration},
	{"job", "Job", argv},
	{"job-grace", "JobGrace", duration},
	{"takeover-wait", "TakeoverWait", duration},
	{"job-max-failures", "JobMaxFailures", integer},
	{"job-failure-window", "JobFailureWindow", duration},
	{"job-mode", "JobMode", text},
	{"job-unit", "JobUnit", text},
	{"on-leader", "OnLeader", text},
	{"on-follower", "OnFollower", text},
	{"on-change", "OnChange", text},
	{"hook-timeout", "HookTimeout", duration},
	{"check", "Checks", checkList},
	{"check-interval", "CheckInterval", duration},
	{"check-timeout", "CheckTimeout", duration},
	{"check-rise", "CheckRise", integer},
	{"check-fall", "CheckFall", integer},
	{"check-weight", "CheckWeight", integer},
	{"track-file", "TrackFiles", fileList},
	{"vip", "VIPs", vipAddr},
	{"vip-announce-repeat", "VIPAnnounceRepeat", integer},
	{"vip-announce-interval", "VIPAnnounceInterval", durationOrOff},
	{"vip-announce-delay", "VIPAnnounceDelay", durationOrOff},
	{"vip-announce-refresh", "VIPAnnounceRefresh", durationOrOff},
	{"vip-track-link", "VIPTrackLink", boolean},
	{"start-timeout", "StartTimeout", durationOrOff},
	{"realtime", "Realtime", boolean},
	{"log-format", "LogFormat", name},
	{"log-level", "LogLevel", name},
}

// set parses v, the text of a flag or of a YAML scalar, into o's field of
// s; a list adds v to its items. Its error names the value but not the
// option: the caller says which flag or key.
func (o option) set(s *settings, v string) error {
	f := reflect.ValueOf(s).Elem().FieldByName(o.field)
	def := reflect.ValueOf(&s.defaults).Elem().FieldByName(o.field)
	switch o.kind {
	case text, textOrDefault, name:
		if v == "" && o.kind == textOrDefault {
			v = def.String()
		}
		f.SetString(v)
		if o.kind == name {
			return oneOf(v, names[o.flag]...)
		}
	case integer:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("%q is not an integer", v)
		}
		if err != nil || f.CanInt() && f.OverflowInt(n) || f.CanUint() && (n < 0 || f.OverflowUint(uint64(n))) {
			r, _ := agent.IntRange(o.flag)
			return r.OutOfRange(v)
		}
		if f.CanInt() {
			f.SetInt(n)
		} else {
			f.SetUint(uint64(n))
		}
	case duration, anyDuration, durationOrOff:
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%q is not a duration (like 100ms or 2s)", v)
		}
		if d < 0 && o.kind == duration {
			return fmt.Errorf("%s is negative; want 0 (the default) or more", v)
		}
		if d < 0 && o.kind == durationOrOff {
			return fmt.Errorf("%s is negative; want 0 (none) or more", v)
		}
		if o.kind == durationOrOff {
			f.SetInt(int64(d))
			break
		}
		f.SetInt(cmp.Or(int64(d), def.Int()))
	case boolean:
		b, err := parseBool(v)
		f.SetBool(b)
		return err
	case ipPort:
		if _, err := (&agent.Config{Bind: v}).BindAddrPort(); err != nil {
			return fmt.Errorf("%q is not an IP address with an optional port (like 198.18.0.1 or 198.18.0.1:7946)", v)
		}
		f.SetString(v)
	case hostPortOrOff:
		if v == "off" {
			v = ""
		}
		f.SetString(v)
	case multicastIP:
		a, err := netip.ParseAddr(v)
		if err != nil {
			return fmt.Errorf("%q is not an IP address", v)
		}
		if !a.IsMulticast() {
			return fmt.Errorf("%s is not a multicast address (like %s or %s)", v, agent.DefaultGroup4, agent.DefaultGroup6)
		}
		f.Set(reflect.ValueOf(a))
	case keyFile:
		return s.setKey(o.field, v)
	case stateFile:
		f.SetString(v)
		if v != "" {
			_, err := agent.LoadVotedTerm(v)
			return err
		}
	case addrList:
		if v == "" {
			break // an empty list
		}
		for a := range strings.SplitSeq(v, ",") {
			if a = strings.TrimSpace(a); a == "" {
				return fmt.Errorf("empty address in %q", v)
			}
			f.Set(reflect.Append(f, reflect.ValueOf(a)))
		}
	case fileList, argv:
		f.Set(reflect.Append(f, reflect.ValueOf(v)))
	case checkList:
		f.Set(reflect.Append(f, reflect.ValueOf(agent.Check{Command: v})))
	case vipAddr:
		a, err := agent.ParseVIP(v)
		if err != nil {
			return errors.New(strings.TrimPrefix(err.Error(), "vip: "))
		}
		f.Set(reflect.Append(f, reflect.ValueOf(a)))
	}
	return nil
}

// setKey reads the key of the file at path ("": none) into Key, or as the
// one older key of AcceptKeys.
func (s *settings) setKey(field, path string) error {
	var key []byte
	if path != "" {
		var err error
		if key, err = agent.LoadKeyFile(path); err != nil {
			return err
		}
	}
	if field == "Key" {
		s.Key = key
	} else if s.AcceptKeys = nil; key != nil {
		s.AcceptKeys = [][]byte{key}
	}
	return nil
}

// parseRunConfig turns the arguments of `lanleader run` (and its --config
// file) into an agent configuration and the job's command line (after --).
//
// Defaults are overridden by the file, and the file by the flags given on
// the command line. The Config returned is valid, and its Logger writes
// to stderr. -h and --help print runUsage to stdout and return
// flag.ErrHelp. Any other error is one line that names the flag or key at
// fault and its value; parseRunConfig prints nothing but the help.
func parseRunConfig(args []string, stdout, stderr io.Writer) (agent.Config, []string, error) {
	cfg, job, _, err := parseRunOnce(args, stdout, stderr)
	return cfg, job, err
}

// parseRunOnce is parseRunConfig, and the flags of a run of the job
// once (--once, --once-timeout).
func parseRunOnce(args []string, stdout, stderr io.Writer) (agent.Config, []string, onceFlags, error) {
	cfg, job, once, err := parseRun(args, stdout, stderr)
	if err != nil && strings.Contains(err.Error(), "\n") {
		err = oneLineError{err}
	}
	return cfg, job, once, err
}

func parseRun(args []string, stdout, stderr io.Writer) (agent.Config, []string, onceFlags, error) {
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
			return agent.Config{}, nil, onceFlags{}, errors.New("nothing after --: give the job's command line there, or leave out --")
		}
	}
	rf := newRunFlags()
	if err := rf.parse(args, stdout); err != nil {
		return agent.Config{}, nil, onceFlags{}, err
	}
	s := newSettings()
	// where says where each setting given came from, for Validate's
	// errors: "--flag", or the file and line.
	where := map[string]string{}
	if rf.config != nil {
		if *rf.config == "" {
			return agent.Config{}, nil, onceFlags{}, errors.New("--config: empty file name")
		}
		if err := loadConfigFile(*rf.config, s, where); err != nil {
			return agent.Config{}, nil, onceFlags{}, err
		}
	}
	if err := rf.apply(s, where); err != nil {
		return agent.Config{}, nil, onceFlags{}, err
	}
	// A command line after -- replaces the file's job.
	if len(job) > 0 {
		s.Job = job
	}
	if err := rf.once.apply(s); err != nil {
		return agent.Config{}, nil, onceFlags{}, err
	}
	cfg := s.config()
	if err := cfg.Validate(); err != nil {
		return agent.Config{}, nil, onceFlags{}, attribute(err, where)
	}
	var level slog.Level
	_ = level.UnmarshalText([]byte(s.LogLevel)) // one of names["log-level"], checked by set
	// A reload sets the agent's LevelVar to the level read again.
	cfg.LogLevel = new(slog.LevelVar)
	cfg.LogLevel.Set(level)
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, opts))
	if s.LogFormat == "json" {
		cfg.Logger = slog.New(slog.NewJSONHandler(stderr, opts))
	}
	return cfg, cfg.Job, rf.once, nil
}

// attribute puts where a setting was given (see parseRun) in place of its
// name in each of Validate's SettingErrors, so that an error names the
// flag, or the file's line, to change.
func attribute(err error, where map[string]string) error {
	errs := slices.Clone(unjoin(err))
	for i, e := range errs {
		var se *agent.SettingError
		if !errors.As(e, &se) {
			continue
		}
		w := where[se.Setting]
		if w == "" && strings.HasPrefix(se.Setting, "checks[") {
			w = where["check"] // a --check flag's, or a file's check that says nothing of it
		}
		if w != "" {
			errs[i] = fmt.Errorf("%s: %w", w, se.Err)
		}
	}
	return errors.Join(errs...)
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

// oneLineError shows a multi-line error (agent.Config.Validate joins one
// line per field at fault) on one line, "; " between the lines. errors.Is
// and errors.As still reach the original.
type oneLineError struct{ err error }

func (e oneLineError) Error() string { return strings.ReplaceAll(e.err.Error(), "\n", "; ") }
func (e oneLineError) Unwrap() error { return e.err }
