package main

import (
	"cmp"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/lanleader/lanleader/agent"
	"github.com/lanleader/lanleader/agent/config"
)

// runManual is the manual of `lanleader run` but its options: run.txt,
// where {{options "GROUP"}} stands for the settings of a group of the
// settings table.
//
//go:embed run.txt
var runManual string

// runUsage is what `lanleader run -h` prints: runManual with each group's
// options written from the settings table (config.Manual). It names every
// flag of newRunFlags and no other, with every default the table states
// (runhelp_test.go and config_test.go check).
var runUsage = func() string {
	t := template.Must(template.New("run.txt").Funcs(template.FuncMap{"options": config.Manual, "fileKeys": fileKeys}).Parse(runManual))
	var b strings.Builder
	if err := t.Execute(&b, nil); err != nil {
		panic(err)
	}
	return b.String()
}()

// fileKeys are the lines of run -h that name the exceptions to "a key of
// the file is its flag's name with '_' for '-'": the settings whose key
// is another name (--check is checks), the job's key, and the flags of
// the command line alone, which have none.
func fileKeys() string {
	var lines, none []string
	for _, o := range runOptions {
		switch {
		case !o.IsFlag():
			lines = append(lines, "        "+o.Synopsis()+" is "+o.Key)
		case o.Key != strings.ReplaceAll(o.Flag, "-", "_"):
			lines = append(lines, "        --"+o.Flag+" is "+o.Key)
		}
	}
	newRunFlags().set.VisitAll(func(f *flag.Flag) {
		if config.Lookup(f.Name) == nil {
			none = append(none, "--"+f.Name)
		}
	})
	if len(none) > 0 {
		last := len(none) - 1
		list := none[last]
		if last > 0 {
			list = strings.Join(none[:last], ", ") + " and " + list
		}
		lines = append(lines, "        "+list+" have no key: the command line only")
	}
	return strings.Join(lines, "\n")
}

// settings are what the flags and the config file of `lanleader run` set:
// the agent's Config, and the format and level of its log (config.Run).
type settings struct {
	config.Run
	// defaults are what a setting given as 0 (or a name given as "")
	// stands for, as the manual says.
	defaults config.Run
}

// newSettings are the defaults, before the file and the flags:
// config.DefaultConfig, with the settings whose default follows others at
// 0, "follow them" (see config).
func newSettings() *settings {
	d := config.DefaultConfig()
	d.SuspectAfter, d.Lease, d.LeaseMargin, d.ElectionPort = 0, 0, 0, 0
	r := config.Run{Config: d, LogFormat: "text", LogLevel: "info"}
	return &settings{Run: r, defaults: r}
}

// config is the agent's Config that s stands for. The settings whose
// default follows others, left out or given as 0, get it here, from the
// values given: suspect-after (one and a half heartbeats, three with quorum), lease and lease-margin
// in quorum mode (config.DefaultLease, config.DefaultLeaseMargin), and
// election-port (7947, or a free port too with --bind port 0).
func (s *settings) config() agent.Config {
	c := s.Config
	c.SuspectAfter = cmp.Or(c.SuspectAfter, config.DefaultSuspectAfter(c.Heartbeat, c.Quorum))
	if c.Quorum > 0 {
		c.Lease = cmp.Or(c.Lease, config.DefaultLease(c.Heartbeat, c.SuspectAfter))
		c.LeaseMargin = cmp.Or(c.LeaseMargin, config.DefaultLeaseMargin(c.Lease))
	}
	if c.ElectionPort == 0 && !strings.HasSuffix(c.Bind, ":0") {
		c.ElectionPort = config.DefaultElectionPort
	}
	return c
}

// option is one setting of `lanleader run` (config.Settings): the flag
// --Flag and the YAML key Key.
type option struct{ *config.Setting }

// runOptions are the options of `lanleader run`, but --config: the
// settings table's. A new one needs a field of config.Config (and its
// check in Validate), a row of config.Settings (which gives its entry in
// run -h and in the configuration reference) and tests in config_test.go.
var runOptions = func() []option {
	opts := make([]option, len(config.Settings))
	for i := range config.Settings {
		opts[i] = option{&config.Settings[i]}
	}
	return opts
}()

// keyAliases are the older YAML keys still read: key → flag.
var keyAliases = map[string]string{"check": "check"}

// set parses v, the text of a flag or of a YAML scalar, into o's field of
// s; a list adds v to its items. Its error names the value but not the
// option: the caller says which flag or key.
func (o option) set(s *settings, v string) error {
	p := o.Ptr(&s.Run)
	switch o.Kind {
	case config.KindText, config.KindTextOrDefault, config.KindName:
		if v == "" && o.Kind == config.KindTextOrDefault {
			v = *o.Ptr(&s.defaults).(*string)
		}
		*p.(*string) = v
		if o.Kind == config.KindName {
			return oneOf(v, o.Names...)
		}
	case config.KindInteger:
		return o.setInteger(p, v)
	case config.KindDuration, config.KindAnyDuration, config.KindDurationOrOff:
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%q is not a duration (like 100ms or 2s)", v)
		}
		if d < 0 && o.Kind == config.KindDuration {
			return fmt.Errorf("%s is negative; want 0 (the default) or more", v)
		}
		if d < 0 && o.Kind == config.KindDurationOrOff {
			return fmt.Errorf("%s is negative; want 0 (none) or more", v)
		}
		if o.Kind != config.KindDurationOrOff {
			d = cmp.Or(d, *o.Ptr(&s.defaults).(*time.Duration))
		}
		*p.(*time.Duration) = d
	case config.KindBoolean:
		b, err := parseBool(v)
		*p.(*bool) = b
		return err
	case config.KindIPPort:
		if _, err := (&config.Config{Bind: v}).BindAddrPort(); err != nil {
			return fmt.Errorf("%q is not an IP address with an optional port (like 192.0.2.1 or 192.0.2.1:7946)", v)
		}
		*p.(*string) = v
	case config.KindHostPortOrOff:
		if v == "off" {
			v = ""
		}
		*p.(*string) = v
	case config.KindMulticastIP:
		a, err := netip.ParseAddr(v)
		if err != nil {
			return fmt.Errorf("%q is not an IP address", v)
		}
		if !a.IsMulticast() {
			return fmt.Errorf("%s is not a multicast address (like %s or %s)", v, config.DefaultGroup4, config.DefaultGroup6)
		}
		*p.(*netip.Addr) = a
	case config.KindKeyFile:
		return setKey(p, v)
	case config.KindStateFile:
		*p.(*string) = v
		if v != "" {
			_, err := agent.LoadVotedTerm(v)
			return err
		}
	default:
		return o.addItem(p, v)
	}
	return nil
}

// setInteger parses v into the integer field p, within the setting's
// range's type: a number too large for the field is out of range.
func (o option) setInteger(p any, v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("%q is not an integer", v)
	}
	fits := err == nil
	switch p.(type) {
	case *uint16:
		fits = fits && n >= 0 && n <= math.MaxUint16
	case *uint64:
		fits = fits && n >= 0
	}
	if !fits {
		return o.Range.OutOfRange(v)
	}
	switch p := p.(type) {
	case *int:
		*p = int(n)
	case *uint16:
		*p = uint16(n)
	case *uint64:
		*p = uint64(n)
	}
	return nil
}

// addItem adds v to the list field p: addresses (comma-separated), files,
// the job's words, checks or virtual addresses.
func (o option) addItem(p any, v string) error {
	switch o.Kind {
	case config.KindAddrList:
		if v == "" {
			return nil // an empty list
		}
		for a := range strings.SplitSeq(v, ",") {
			if a = strings.TrimSpace(a); a == "" {
				return fmt.Errorf("empty address in %q", v)
			}
			*p.(*[]string) = append(*p.(*[]string), a)
		}
	case config.KindFileList, config.KindArgv:
		*p.(*[]string) = append(*p.(*[]string), v)
	case config.KindCheckList:
		*p.(*[]agent.Check) = append(*p.(*[]agent.Check), agent.Check{Command: v})
	case config.KindVIPAddr:
		a, err := config.ParseVIP(v)
		if err != nil {
			return errors.New(strings.TrimPrefix(err.Error(), "vip: "))
		}
		*p.(*[]config.VIP) = append(*p.(*[]config.VIP), a)
	}
	return nil
}

// clearList empties the list field of o in s: a list given again (by the
// flags over the file, or a file's list) starts afresh.
func (o option) clearList(s *settings) {
	switch p := o.Ptr(&s.Run).(type) {
	case *[]string:
		*p = nil
	case *[]agent.Check:
		*p = nil
	case *[]config.VIP:
		*p = nil
	}
}

// setKey reads the key of the file at path ("": none) into p: Key, or
// AcceptKeys as its one older key.
func setKey(p any, path string) error {
	var key []byte
	if path != "" {
		var err error
		if key, err = agent.LoadKeyFile(path); err != nil {
			return err
		}
	}
	switch p := p.(type) {
	case *[]byte:
		*p = key
	case *[][]byte:
		*p = nil
		if key != nil {
			*p = [][]byte{key}
		}
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
	// errors: a flag, or the file's line.
	where := map[string]origin{}
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
		where["job"] = origin{flag: "--"}
	}
	if err := rf.once.apply(s); err != nil {
		return agent.Config{}, nil, onceFlags{}, err
	}
	cfg := s.config()
	if err := cfg.Validate(); err != nil {
		file := ""
		if rf.config != nil {
			file = *rf.config
		}
		return agent.Config{}, nil, onceFlags{}, attribute(err, where, file)
	}
	var level slog.Level
	_ = level.UnmarshalText([]byte(s.LogLevel)) // one of the log-level setting's Names, checked by set
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

// origin is where a setting was given: a flag, or a line of the file.
type origin struct {
	flag string // "--vip", or "--" for the job after it; "" for the file's
	path string // the file
	line int
	key  string // the key in the file: "vip", "checks[2].timeout"
}

// String names the setting at the head of an error: "--vip", or
// "config PATH: line N: vip".
func (o origin) String() string {
	if o.flag != "" {
		return o.flag
	}
	return fmt.Sprintf("config %s: line %d: %s", o.path, o.line, o.key)
}

// ref names the setting inside an error's message: "--vip" (the job
// "after --"), or "vip at line N".
func (o origin) ref() string {
	switch o.flag {
	case "":
		return fmt.Sprintf("%s at line %d", o.key, o.line)
	case "--":
		return "after --"
	}
	return o.flag
}

// attribute names where each setting was given (see parseRun) in place of
// its name in Validate's errors, so that an error names the flag, or the
// file's key and line, to change: the setting of a SettingError, and
// every setting a RelationError names. A setting not given is named as
// the user would give it: its key when the file at path is read, else
// its flag.
func attribute(err error, where map[string]origin, path string) error {
	unnamed := config.FlagName
	if path != "" {
		unnamed = settingKey
	}
	errs := slices.Clone(unjoin(err))
	for i, e := range errs {
		var se *config.SettingError
		var re *config.RelationError
		switch {
		case errors.As(e, &se):
			w, ok := where[se.Setting]
			if !ok && strings.HasPrefix(se.Setting, "checks[") {
				w, ok = where["check"] // a --check flag's, or a file's check that says nothing of it
			}
			if ok {
				errs[i] = fmt.Errorf("%s: %w", w, se.Err)
			}
		case errors.As(e, &re):
			head := unnamed(re.Setting)
			if w, ok := where[re.Setting]; ok {
				head = w.String()
			} else if path != "" {
				head = "config " + path + ": " + head
			}
			errs[i] = fmt.Errorf("%s: %s", head, re.Text(func(setting string) string {
				if w, ok := where[setting]; ok {
					return w.ref()
				}
				return unnamed(setting)
			}))
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
