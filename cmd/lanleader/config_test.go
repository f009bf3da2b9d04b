package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent"
	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/election"
)

// defaultRunConfig is the Config of `lanleader run` with no argument,
// written out field by field (Logger aside).
func defaultRunConfig(t *testing.T) agent.Config {
	t.Helper()
	host, err := os.Hostname()
	if err != nil || host == "" {
		t.Skipf("no host name (%v): the default name is unknown", err)
	}
	return agent.Config{
		Name:             host,
		NodeID:           config.DefaultNodeID(),
		Priority:         100,
		Cluster:          "lanleader",
		Bind:             "0.0.0.0:7946",
		ElectionPort:     7947,
		Join:             nil,
		HTTP:             "127.0.0.1:9947",
		Heartbeat:        100 * time.Millisecond,
		SuspectAfter:     150 * time.Millisecond,
		Detector:         "fixed",
		Algorithm:        "bully",
		Role:             "candidate",
		Transport:        "multicast",
		Group:            netip.Addr{},
		Preempt:          true,
		PreemptDelay:     0,
		DiscoverInterval: time.Second,
		JobGrace:         10 * time.Second,
		JobMaxFailures:   5,
		JobFailureWindow: time.Minute,
		JobMode:          "always",
		HookTimeout:      10 * time.Second,
		CheckInterval:    2 * time.Second,
		CheckWeight:      50,
		CheckRise:        1,
		CheckFall:        1,

		VIPs:                nil,
		VIPAnnounceRepeat:   5,
		VIPAnnounceInterval: 100 * time.Millisecond,
		VIPAnnounceDelay:    5 * time.Second,
		VIPAnnounceRefresh:  time.Minute,
		VIPTrackLink:        true,
		StartTimeout:        time.Minute,
	}
}

// vipOf is the parse of the flag's form s, which must be good.
func vipOf(t *testing.T, s string) agent.VIP {
	t.Helper()
	v, err := config.ParseVIP(s)
	if err != nil {
		t.Fatalf("ParseVIP(%q): %v", s, err)
	}
	return v
}

// Test keys: 32 bytes and 40 bytes (with a newline, which is not part of
// the key).
var (
	testKey    = []byte("0123456789abcdef0123456789abcdef")
	testOldKey = []byte("old-key-old-key-old-key-old-key-old-key!")
)

// writeKeys writes testKey and testOldKey into mode 0600 files of a fresh
// temporary directory and returns their paths. (A key file cannot be
// committed: git does not keep the mode.)
func writeKeys(t *testing.T) (key, old string) {
	t.Helper()
	dir := t.TempDir()
	key, old = filepath.Join(dir, "key"), filepath.Join(dir, "old-key")
	if err := os.WriteFile(key, testKey, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, append(slices.Clone(testOldKey), '\n'), 0o640); err != nil {
		t.Fatal(err)
	}
	return key, old
}

// writeConfig writes a config file into a fresh temporary directory.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lanleader.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// parseOK parses args and fails the test on an error. It checks that the
// Logger is set, then clears it, so that the Config compares with ==.
func parseOK(t *testing.T, args ...string) (agent.Config, []string, string) {
	t.Helper()
	var stderr bytes.Buffer
	cfg, job, err := parseRunConfig(args, &stderr, &stderr)
	if err != nil {
		t.Fatalf("parseRunConfig(%q): %v", args, err)
	}
	if cfg.Logger == nil || cfg.LogLevel == nil {
		t.Fatalf("parseRunConfig(%q): no Logger or no LogLevel", args)
	}
	cfg.Logger, cfg.LogLevel = nil, nil
	return cfg, job, stderr.String()
}

func diffConfig(t *testing.T, what string, got, want agent.Config) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range gv.NumField() {
		if !gv.Type().Field(i).IsExported() {
			continue // the agent's hooks for its own tests
		}
		if g, w := gv.Field(i).Interface(), wv.Field(i).Interface(); !reflect.DeepEqual(g, w) {
			t.Errorf("%s: %s = %#v, want %#v", what, gv.Type().Field(i).Name, g, w)
		}
	}
}

func TestParseRunConfigDefaults(t *testing.T) {
	cfg, job, stderr := parseOK(t)
	diffConfig(t, "no arguments", cfg, defaultRunConfig(t))
	if job != nil {
		t.Errorf("job %q, want nil", job)
	}
	if stderr != "" {
		t.Errorf("printed %q", stderr)
	}
}

// Every flag sets its field, in each of the spellings the flag package
// takes.
func TestParseRunConfigFlags(t *testing.T) {
	stateFile := filepath.Join(t.TempDir(), "state") // not there yet: fine
	covered := map[string]bool{}
	keyFile, oldKeyFile := writeKeys(t)
	for _, tc := range []struct {
		args []string
		want func(c *agent.Config)
	}{
		{[]string{"--name", "host-b"}, func(c *agent.Config) { c.Name = "host-b" }},
		{[]string{"-name=host-c"}, func(c *agent.Config) { c.Name = "host-c" }},
		{[]string{"--node-id", "42"}, func(c *agent.Config) { c.NodeID = 42 }},
		{[]string{"--node-id=9007199254740991"}, func(c *agent.Config) { c.NodeID = config.MaxNodeID }},
		{[]string{"--priority", "150"}, func(c *agent.Config) { c.Priority = 150 }},
		{[]string{"-priority", "65535"}, func(c *agent.Config) { c.Priority = 65535 }},
		{[]string{"--priority", "1"}, func(c *agent.Config) { c.Priority = 1 }},
		{[]string{"--cluster", "jobs"}, func(c *agent.Config) { c.Cluster = "jobs" }},
		{[]string{"--bind", "198.18.0.1"}, func(c *agent.Config) { c.Bind = "198.18.0.1" }},
		{[]string{"--bind", "198.18.0.1:8000"}, func(c *agent.Config) { c.Bind = "198.18.0.1:8000" }},
		{[]string{"--bind", "[::1]:0"}, func(c *agent.Config) { c.Bind = "[::1]:0"; c.ElectionPort = 0 }},
		{[]string{"--election-port", "8001"}, func(c *agent.Config) { c.ElectionPort = 8001 }},
		{[]string{"--join", "198.18.0.2"}, func(c *agent.Config) { c.Join = []string{"198.18.0.2"} }},
		{[]string{"--join", "198.18.0.2, 198.18.0.3:7946", "--join=[fd00::3]:7946"}, func(c *agent.Config) {
			c.Join = []string{"198.18.0.2", "198.18.0.3:7946", "[fd00::3]:7946"}
		}},
		{[]string{"--http", "0.0.0.0:9100"}, func(c *agent.Config) { c.HTTP = "0.0.0.0:9100" }},
		{[]string{"--http", "off"}, func(c *agent.Config) { c.HTTP = "" }},
		{[]string{"--http="}, func(c *agent.Config) { c.HTTP = "" }},
		{[]string{"--heartbeat", "50ms"}, func(c *agent.Config) { c.Heartbeat = 50 * time.Millisecond; c.SuspectAfter = 75 * time.Millisecond }},
		{[]string{"--suspect-after", "1.5s"}, func(c *agent.Config) { c.SuspectAfter = 1500 * time.Millisecond }},
		{[]string{"--detector", "phi"}, func(c *agent.Config) { c.Detector = "phi" }},
		{[]string{"--algorithm", "hirschberg-sinclair"}, func(c *agent.Config) { c.Algorithm = "hirschberg-sinclair" }},
		{[]string{"--role", "observer"}, func(c *agent.Config) { c.Role = "observer" }},
		{[]string{"--role=witness", "--quorum", "3"}, func(c *agent.Config) {
			c.Role, c.Quorum = "witness", 3
			c.DeriveTimeouts()
		}},
		{[]string{"--transport", "unicast"}, func(c *agent.Config) { c.Transport = "unicast" }},
		{[]string{"--multicast-group", "239.255.1.2"}, func(c *agent.Config) { c.Group = netip.MustParseAddr("239.255.1.2") }},
		{[]string{"--preempt=false"}, func(c *agent.Config) { c.Preempt = false }},
		{[]string{"--preempt"}, func(c *agent.Config) {}},
		{[]string{"--preempt=false", "--preempt"}, func(c *agent.Config) {}},
		{[]string{"--preempt-delay", "30s"}, func(c *agent.Config) { c.PreemptDelay = 30 * time.Second }},
		{[]string{"--quorum", "5"}, func(c *agent.Config) {
			// Quorum mode's alarm: three heartbeats.
			c.Quorum, c.Lease, c.LeaseMargin, c.SuspectAfter = 5, 400*time.Millisecond, 40*time.Millisecond, 300*time.Millisecond
		}},
		{[]string{"--quorum", "2", "--allow-small-quorum"}, func(c *agent.Config) {
			c.Quorum, c.AllowSmallQuorum, c.Lease, c.LeaseMargin, c.SuspectAfter = 2, true, 400*time.Millisecond, 40*time.Millisecond, 300*time.Millisecond
		}},
		{[]string{"--quorum", "3", "--lease", "1s", "--lease-margin", "200ms", "--state-file", stateFile}, func(c *agent.Config) {
			c.Quorum, c.Lease, c.LeaseMargin, c.StateFile, c.SuspectAfter = 3, time.Second, 200*time.Millisecond, stateFile, 300*time.Millisecond
		}},
		{[]string{"--discover-interval", "250ms"}, func(c *agent.Config) { c.DiscoverInterval = 250 * time.Millisecond }},
		{[]string{"--discover-interval", "-1s"}, func(c *agent.Config) { c.DiscoverInterval = -time.Second }},
		{[]string{"--heartbeat", "0"}, func(c *agent.Config) {}}, // 0 is the default
		{[]string{"--log-format", "json"}, func(c *agent.Config) {}},
		{[]string{"--log-level", "debug"}, func(c *agent.Config) {}},
		{[]string{"--priority", "7", "--priority", "9"}, func(c *agent.Config) { c.Priority = 9 }},
		{[]string{"--job-grace", "3s"}, func(c *agent.Config) { c.JobGrace = 3 * time.Second }},
		{[]string{"--takeover-wait", "12s"}, func(c *agent.Config) { c.TakeoverWait = 12 * time.Second }},
		{[]string{"--job-max-failures", "2"}, func(c *agent.Config) { c.JobMaxFailures = 2 }},
		{[]string{"--job-max-failures", "0"}, func(c *agent.Config) { c.JobMaxFailures = 0 }}, // never
		{[]string{"--job-failure-window", "5m"}, func(c *agent.Config) { c.JobFailureWindow = 5 * time.Minute }},
		{[]string{"--job-mode", "once"}, func(c *agent.Config) { c.JobMode = config.JobModeOnce }},
		{[]string{"--job-unit=lanleader-job-db.service"}, func(c *agent.Config) { c.JobUnit = "lanleader-job-db.service" }},
		{[]string{"--on-leader", "ip addr add 198.18.0.100/24 dev eth0"}, func(c *agent.Config) { c.OnLeader = "ip addr add 198.18.0.100/24 dev eth0" }},
		{[]string{"--on-follower", "logger follower"}, func(c *agent.Config) { c.OnFollower = "logger follower" }},
		{[]string{"--on-change=echo $LANLEADER_STATE"}, func(c *agent.Config) { c.OnChange = "echo $LANLEADER_STATE" }},
		{[]string{"--hook-timeout", "1s"}, func(c *agent.Config) { c.HookTimeout = time.Second }},
		// --check is repeated, and commas stay inside a command.
		{[]string{"--check", "test -e /run/ok", "--check", "curl -fs http://127.0.0.1:8080/a,b"}, func(c *agent.Config) {
			c.Checks = []agent.Check{{Command: "test -e /run/ok"}, {Command: "curl -fs http://127.0.0.1:8080/a,b"}}
		}},
		{[]string{"--check-interval", "500ms"}, func(c *agent.Config) { c.CheckInterval = 500 * time.Millisecond }},
		{[]string{"--check-weight", "120"}, func(c *agent.Config) { c.CheckWeight = 120 }},
		{[]string{"--check-weight", "0"}, func(c *agent.Config) { c.CheckWeight = 0 }}, // every check a fault
		{[]string{"--check-timeout", "1500ms", "--check-rise", "3", "--check-fall", "2"}, func(c *agent.Config) {
			c.CheckTimeout, c.CheckRise, c.CheckFall = 1500*time.Millisecond, 3, 2
		}},
		{[]string{"--track-file", "/run/maint", "--track-file", "/etc/x,y"}, func(c *agent.Config) { c.TrackFiles = []string{"/run/maint", "/etc/x,y"} }},
		{[]string{"--key-file", keyFile}, func(c *agent.Config) { c.Key = testKey }},
		{[]string{"--key-file", keyFile, "--accept-key-file=" + oldKeyFile}, func(c *agent.Config) {
			c.Key, c.AcceptKeys = testKey, [][]byte{testOldKey}
		}},
		{[]string{"--key-file", keyFile, "--key-file="}, func(c *agent.Config) {}},
		{[]string{"--vip-announce-repeat", "3"}, func(c *agent.Config) { c.VIPAnnounceRepeat = 3 }},
		{[]string{"--vip-announce-interval", "0"}, func(c *agent.Config) { c.VIPAnnounceInterval = 0 }}, // 0 is none
		{[]string{"--vip-announce-interval", "20ms"}, func(c *agent.Config) { c.VIPAnnounceInterval = 20 * time.Millisecond }},
		{[]string{"--vip-announce-delay", "0"}, func(c *agent.Config) { c.VIPAnnounceDelay = 0 }},
		{[]string{"--vip-announce-delay=2s"}, func(c *agent.Config) { c.VIPAnnounceDelay = 2 * time.Second }},
		{[]string{"--vip-announce-refresh", "0s"}, func(c *agent.Config) { c.VIPAnnounceRefresh = 0 }},
		{[]string{"--vip-announce-refresh", "5m"}, func(c *agent.Config) { c.VIPAnnounceRefresh = 5 * time.Minute }},
		{[]string{"--vip-track-link=false"}, func(c *agent.Config) { c.VIPTrackLink = false }},
		{[]string{"--vip-track-link"}, func(c *agent.Config) {}},
		{[]string{"--start-timeout", "90s"}, func(c *agent.Config) { c.StartTimeout = 90 * time.Second }},
		{[]string{"--start-timeout=0"}, func(c *agent.Config) { c.StartTimeout = 0 }},
		{[]string{"--realtime"}, func(c *agent.Config) { c.Realtime = true }},
	} {
		want := defaultRunConfig(t)
		tc.want(&want)
		got, job, _ := parseOK(t, tc.args...)
		diffConfig(t, strings.Join(tc.args, " "), got, want)
		if job != nil {
			t.Errorf("%q: job %q, want nil", tc.args, job)
		}
		for _, a := range tc.args {
			if strings.HasPrefix(a, "-") {
				name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
				covered[name] = true
			}
		}
	}
	{
		for _, tc := range []struct {
			args []string
			want []string
		}{
			{[]string{"--vip", "198.18.0.100/24"}, []string{"198.18.0.100/24"}},
			// Repeated; a comma belongs to the address (dev=).
			{[]string{"--vip", "198.18.0.100/24,dev=lo", "--vip=198.18.0.101/32"}, []string{"198.18.0.100/24,dev=lo", "198.18.0.101/32"}},
			{[]string{"--vip", "fd00::100/64"}, []string{"fd00::100/64"}},
		} {
			want := defaultRunConfig(t)
			for _, s := range tc.want {
				want.VIPs = append(want.VIPs, vipOf(t, s))
			}
			got, _, _ := parseOK(t, tc.args...)
			diffConfig(t, strings.Join(tc.args, " "), got, want)
		}
	}
	covered["vip"] = true // above, or left out until ParseVIP parses
	for _, o := range runOptions {
		if o.IsFlag() && !covered[o.Flag] {
			t.Errorf("no case sets --%s", o.Flag)
		}
	}
}

// The logger writes to the stderr given, in the format and from the
// level asked for.
func TestParseRunConfigLogger(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // what Debug("d"), Info("i"), Warn("w") print, with the time cut off
	}{
		{nil, "level=INFO msg=i\nlevel=WARN msg=w\n"},
		{[]string{"--log-level", "warn"}, "level=WARN msg=w\n"},
		{[]string{"--log-level", "error"}, ""},
		{[]string{"--log-format", "json", "--log-level", "debug"},
			`"level":"DEBUG","msg":"d"}` + "\n" + `"level":"INFO","msg":"i"}` + "\n" + `"level":"WARN","msg":"w"}` + "\n"},
	} {
		var stderr bytes.Buffer
		cfg, _, err := parseRunConfig(tc.args, &stderr, &stderr)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		cfg.Logger.Debug("d")
		cfg.Logger.Info("i")
		cfg.Logger.Warn("w")
		var got strings.Builder
		for line := range strings.Lines(stderr.String()) {
			// Cut the time: `time=… ` in text, `{"time":"…",` in JSON.
			if i := strings.Index(line, "level"); i >= 0 {
				line = line[i-min(i, 1):]
				line = strings.TrimPrefix(line, " ")
				line = strings.TrimPrefix(line, ",")
			}
			got.WriteString(line)
		}
		if got.String() != tc.want {
			t.Errorf("%q: logged\n%s\nwant\n%s", tc.args, got.String(), tc.want)
		}
		// A reload changes the level through the LevelVar.
		if cfg.LogLevel.Set(slog.LevelDebug); !cfg.Logger.Enabled(context.Background(), slog.LevelDebug) {
			t.Errorf("%q: the Logger does not follow its LogLevel", tc.args)
		}
	}
}

// allKeysFile sets every key of the config file, none to its default.
const allKeysFile = `# every key
name: host-f
node_id: 77
priority: 200
cluster: jobs
bind: 198.18.0.5:8946
election_port: 8947
join:
  - 198.18.0.6
  - "198.18.0.7:8946"
http: off
heartbeat: 50ms
suspect_after: 400ms
detector: phi
algorithm: chang-roberts
role: witness
transport: unicast
multicast_group: 239.255.9.9
preempt: false
preempt_delay: 2s
quorum: 5
allow_small_quorum: true
lease: 1s
lease_margin: 150ms
state_file: STATEFILE
discover_interval: -1s
log_format: json
log_level: warn
job: [/usr/bin/worker, --queue, "a,b"]
job_grace: 4s
takeover_wait: 5s
job_max_failures: 0
job_failure_window: 2m
job_mode: once
job_unit: "" # none: the job is the command line of job:
on_leader: echo leader
on_follower: echo follower
on_change: echo change
hook_timeout: 3s
checks:
  - test -e /run/ok
  - name: web
    command: "curl -fs http://127.0.0.1/a,b"
    interval: 3s
    timeout: 500ms
    rise: 2
    fall: 4
    weight: 0
check_interval: 1s
check_timeout: 800ms
check_rise: 3
check_fall: 5
check_weight: 70
track_files: [/run/lanleader/maintenance]
key_file: KEYFILE
accept_key_file: OLDKEYFILE
vip: ["198.18.0.100/24,dev=lo", 198.18.0.101/24]
vip_announce_repeat: 2
vip_announce_interval: 0
vip_announce_delay: 1s
vip_announce_refresh: 0s
vip_track_link: false
start_timeout: 5s
realtime: true
`

func TestParseRunConfigFile(t *testing.T) {
	for _, o := range runOptions {
		if !strings.Contains(allKeysFile, "\n"+o.Key+":") {
			t.Errorf("allKeysFile does not set %s", o.Key)
		}
	}
	stateFile := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(stateFile, []byte("voted_term 12\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := agent.Config{
		Name:             "host-f",
		NodeID:           77,
		Priority:         200,
		Cluster:          "jobs",
		Bind:             "198.18.0.5:8946",
		ElectionPort:     8947,
		Join:             []string{"198.18.0.6", "198.18.0.7:8946"},
		HTTP:             "",
		Heartbeat:        50 * time.Millisecond,
		SuspectAfter:     400 * time.Millisecond,
		Detector:         "phi",
		Algorithm:        "chang-roberts",
		Role:             "witness",
		Transport:        "unicast",
		Group:            netip.MustParseAddr("239.255.9.9"),
		Preempt:          false,
		PreemptDelay:     2 * time.Second,
		Quorum:           5,
		AllowSmallQuorum: true,
		Lease:            time.Second,
		LeaseMargin:      150 * time.Millisecond,
		StateFile:        stateFile,
		DiscoverInterval: -time.Second,
		Job:              []string{"/usr/bin/worker", "--queue", "a,b"},
		JobGrace:         4 * time.Second,
		TakeoverWait:     5 * time.Second,
		JobMaxFailures:   0, // never
		JobFailureWindow: 2 * time.Minute,
		JobMode:          config.JobModeOnce,
		OnLeader:         "echo leader",
		OnFollower:       "echo follower",
		OnChange:         "echo change",
		HookTimeout:      3 * time.Second,
		Checks: []agent.Check{{Command: "test -e /run/ok"}, {Name: "web", Command: "curl -fs http://127.0.0.1/a,b",
			Interval: 3 * time.Second, Timeout: 500 * time.Millisecond, Rise: 2, Fall: 4, Fault: true}},
		CheckInterval: time.Second,
		CheckTimeout:  800 * time.Millisecond,
		CheckRise:     3,
		CheckFall:     5,
		CheckWeight:   70,
		TrackFiles:    []string{"/run/lanleader/maintenance"},
		Key:           testKey,
		AcceptKeys:    [][]byte{testOldKey},

		VIPAnnounceRepeat:   2,
		VIPAnnounceInterval: 0,
		VIPAnnounceDelay:    time.Second,
		VIPAnnounceRefresh:  0,
		VIPTrackLink:        false,
		StartTimeout:        5 * time.Second,
		Realtime:            true,
	}
	keyFile, oldKeyFile := writeKeys(t)
	text := strings.NewReplacer("OLDKEYFILE", oldKeyFile, "KEYFILE", keyFile, "STATEFILE", stateFile).Replace(allKeysFile)
	want.VIPs = []agent.VIP{vipOf(t, "198.18.0.100/24,dev=lo"), vipOf(t, "198.18.0.101/24")}
	var stderr bytes.Buffer
	got, job, err := parseRunConfig([]string{"--config", writeConfig(t, text)}, &stderr, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	got.Logger.Info("not shown")
	got.Logger.Warn("shown")
	if s := stderr.String(); !strings.HasPrefix(s, `{"time":`) || !strings.Contains(s, `"msg":"shown"`) || strings.Contains(s, "not shown") {
		t.Errorf("log_format json, log_level warn logged %q", s)
	}
	got.Logger, got.LogLevel = nil, nil
	diffConfig(t, "allKeysFile", got, want)
	if !slices.Equal(job, want.Job) {
		t.Errorf("job %q, want the file's %q", job, want.Job)
	}

	// A file of comments only, and an empty file, change nothing.
	for _, text := range []string{"", "# nothing yet\n"} {
		got, _, _ := parseOK(t, "--config", writeConfig(t, text))
		diffConfig(t, fmt.Sprintf("file %q", text), got, defaultRunConfig(t))
	}
}

// Defaults < file < flags given on the command line.
func TestParseRunConfigPrecedence(t *testing.T) {
	const file = "priority: 150\nheartbeat: 200ms\njoin: [198.18.0.2, 198.18.0.3]\nhttp: 127.0.0.1:9000\n"
	fromFile := func(c *agent.Config) {
		c.Priority = 150
		c.Heartbeat = 200 * time.Millisecond
		c.SuspectAfter = 300 * time.Millisecond
		c.Join = []string{"198.18.0.2", "198.18.0.3"}
		c.HTTP = "127.0.0.1:9000"
	}
	for _, tc := range []struct {
		file string
		args []string
		want func(c *agent.Config)
	}{
		{file, nil, fromFile},
		{file, []string{"--priority", "7"}, func(c *agent.Config) { fromFile(c); c.Priority = 7 }},
		// The order of --config and the flag does not matter.
		{file, []string{"--priority", "7", "--config", "FILE"}, func(c *agent.Config) { fromFile(c); c.Priority = 7 }},
		{file, []string{"--heartbeat", "20ms"}, func(c *agent.Config) {
			fromFile(c)
			c.Heartbeat, c.SuspectAfter = 20*time.Millisecond, 30*time.Millisecond
		}},
		{file, []string{"--http", "off"}, func(c *agent.Config) { fromFile(c); c.HTTP = "" }},
		// --join replaces the file's list; repeated, its lists add up.
		{file, []string{"--join", "198.18.0.9"}, func(c *agent.Config) { fromFile(c); c.Join = []string{"198.18.0.9"} }},
		{file, []string{"--join", "198.18.0.8", "--join", "198.18.0.9"}, func(c *agent.Config) {
			fromFile(c)
			c.Join = []string{"198.18.0.8", "198.18.0.9"}
		}},
		{file, []string{"--join="}, func(c *agent.Config) { fromFile(c); c.Join = nil }},
		// preempt: default true, the file turns it off, a flag on again.
		{"preempt: false\n", nil, func(c *agent.Config) { c.Preempt = false }},
		{"preempt: false\n", []string{"--preempt"}, func(c *agent.Config) {}},
		{"preempt: false\n", []string{"--preempt=true"}, func(c *agent.Config) {}},
		{"preempt: true\n", []string{"--preempt=false"}, func(c *agent.Config) { c.Preempt = false }},
		{"preempt: no\n", nil, func(c *agent.Config) { c.Preempt = false }},
		{"preempt: false\n", []string{"--preempt=false"}, func(c *agent.Config) { c.Preempt = false }},
		// An empty file, then a flag.
		{"", []string{"--preempt=false"}, func(c *agent.Config) { c.Preempt = false }},
		// Aliases are followed, and 0 is a duration.
		{"heartbeat: &hb 50ms\nsuspect_after: *hb\npreempt_delay: 0\n", []string{"--suspect-after", "500ms"}, func(c *agent.Config) {
			c.Heartbeat, c.SuspectAfter = 50*time.Millisecond, 500*time.Millisecond
		}},
	} {
		path := writeConfig(t, tc.file)
		args := []string{"--config", path}
		if i := slices.Index(tc.args, "FILE"); i >= 0 {
			args = slices.Clone(tc.args)
			args[i] = path
		} else {
			args = append(args, tc.args...)
		}
		want := defaultRunConfig(t)
		tc.want(&want)
		got, _, _ := parseOK(t, args...)
		diffConfig(t, fmt.Sprintf("file %q, flags %q", tc.file, tc.args), got, want)
	}
}

func TestParseRunConfigJob(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		job      []string
		priority uint16
	}{
		{[]string{"--", "/usr/bin/worker"}, []string{"/usr/bin/worker"}, 100},
		{[]string{"--priority", "5", "--", "sh", "-c", "exec worker --fast"}, []string{"sh", "-c", "exec worker --fast"}, 5},
		// After --, flags are the job's, and a second -- too.
		{[]string{"--", "worker", "--priority", "9", "--", "x"}, []string{"worker", "--priority", "9", "--", "x"}, 100},
		{[]string{"--priority", "5"}, nil, 5},
	} {
		cfg, job, _ := parseOK(t, tc.args...)
		if !slices.Equal(job, tc.job) || (job == nil) != (tc.job == nil) {
			t.Errorf("%q: job %q, want %q", tc.args, job, tc.job)
		}
		if cfg.Priority != tc.priority {
			t.Errorf("%q: priority %d, want %d", tc.args, cfg.Priority, tc.priority)
		}
	}
	// The file's job: a list, or a string for /bin/sh -c; the command line
	// after -- replaces it.
	for _, tc := range []struct {
		file string
		args []string
		job  []string
	}{
		{"job: [/usr/bin/worker, --fast]\n", nil, []string{"/usr/bin/worker", "--fast"}},
		{"job: exec worker --fast >/dev/null\n", nil, []string{"/bin/sh", "-c", "exec worker --fast >/dev/null"}},
		{"job: [/usr/bin/worker]\n", []string{"--", "other", "x"}, []string{"other", "x"}},
	} {
		cfg, job, _ := parseOK(t, append([]string{"--config", writeConfig(t, tc.file)}, tc.args...)...)
		if !slices.Equal(job, tc.job) || !slices.Equal(cfg.Job, tc.job) {
			t.Errorf("file %q, args %q: job %q, Config.Job %q, want %q", tc.file, tc.args, job, cfg.Job, tc.job)
		}
	}
	// The job is a copy: the caller may reuse its slice.
	args := []string{"--", "a", "b"}
	_, job, _ := parseOK(t, args...)
	args[1] = "changed"
	if job[0] != "a" {
		t.Errorf("job aliases args: %q", job)
	}
}

// Every bad flag or key gives one line that names it and its value.
func TestParseRunConfigErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	keyFile, _ := writeKeys(t)
	dir := t.TempDir()
	keyAt := func(name string, mode os.FileMode, key []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, key, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // not the umask's
			t.Fatal(err)
		}
		return p
	}
	worldReadable := keyAt("world-readable", 0o644, testKey)
	worldWritable := keyAt("world-writable", 0o602, testKey)
	short := keyAt("short", 0o600, []byte("0123456789abcdef0123456789abcde\n\n"))
	for _, tc := range []struct {
		file string   // when not "": written, and --config FILE put first
		args []string //
		want []string // fragments of the error; FILE is the config file's path
	}{
		// Flags the flag package refuses.
		{"", []string{"--prio", "5"}, []string{"unknown flag --prio (did you mean --priority?)"}},
		{"", []string{"--frobnicate"}, []string{"unknown flag --frobnicate ('lanleader run -h' lists the flags)"}},
		{"", []string{"--name"}, []string{"--name: needs a value"}},
		{"", []string{"worker"}, []string{`unexpected argument "worker" (the job's command line goes after --)`}},
		{"", []string{"--preempt", "false"}, []string{`unexpected argument "false" (write --preempt=false, with an '=')`}},
		{"", []string{"--"}, []string{"nothing after --"}},
		{"", []string{"--config", ""}, []string{"--config: empty file name"}},

		// Bad flag values.
		{"", []string{"--priority", "0"}, []string{"--priority: 0 out of range 1…65535"}},
		{"", []string{"--priority", "70000"}, []string{"--priority: 70000 out of range 1…65535"}},
		{"", []string{"--priority", "-1"}, []string{"--priority: -1 out of range 1…65535"}},
		{"", []string{"--priority", "99999999999999999999"}, []string{"--priority: 99999999999999999999 out of range 1…65535"}},
		{"", []string{"--priority", "high"}, []string{`--priority: "high" is not an integer`}},
		{"", []string{"--node-id", "0"}, []string{"--node-id: 0 out of range 1…9007199254740991"}},
		{"", []string{"--node-id", "9007199254740992"}, []string{"--node-id: 9007199254740992 out of range 1…9007199254740991"}},
		{"", []string{"--election-port", "70000"}, []string{"--election-port: 70000 out of range 0…65535"}},
		{"", []string{"--heartbeat", "10 ms"}, []string{`--heartbeat: "10 ms" is not a duration (like 100ms or 2s)`}},
		{"", []string{"--heartbeat", "100"}, []string{`--heartbeat: "100" is not a duration (like 100ms or 2s)`}},
		{"", []string{"--heartbeat", "-1s"}, []string{"--heartbeat: -1s is negative"}},
		{"", []string{"--suspect-after", "-300ms"}, []string{"--suspect-after: -300ms is negative"}},
		{"", []string{"--preempt-delay", "soon"}, []string{`--preempt-delay: "soon" is not a duration`}},
		{"", []string{"--discover-interval", "often"}, []string{`--discover-interval: "often" is not a duration`}},
		{"", []string{"--preempt=maybe"}, []string{`--preempt: "maybe" is not true or false`}},
		{"", []string{"--detector", "foo"}, []string{`--detector: "foo" is not fixed or phi`}},
		{"", []string{"--algorithm", "raft"}, []string{`--algorithm: "raft" is not bully, ring, chang-roberts or hirschberg-sinclair`}},
		{"", []string{"--transport", "tcp"}, []string{`--transport: "tcp" is not multicast or unicast`}},
		{"", []string{"--role", "leader"}, []string{`--role: "leader" is not candidate, witness or observer`}},
		{"", []string{"--role", "witness"}, []string{"--role: a witness only votes in quorum mode, and quorum is off: set --quorum to N"}},
		{"role: witness\n", nil, []string{"config FILE: line 1: role: a witness only votes in quorum mode, and quorum is off: set quorum to N"}},
		{"quorum: 0\n", []string{"--role", "witness"}, []string{"--role: a witness only votes in quorum mode, and quorum is off: set quorum at line 1 to N"}},
		{"", []string{"--log-level", "loud"}, []string{`--log-level: "loud" is not debug, info, warn or error`}},
		{"", []string{"--log-format", "xml"}, []string{`--log-format: "xml" is not text or json`}},
		{"", []string{"--bind", "nonsense"}, []string{`--bind: "nonsense" is not an IP address with an optional port`}},
		{"", []string{"--bind", "198.18.0.1:99999"}, []string{`--bind: "198.18.0.1:99999" is not an IP address`}},
		{"", []string{"--bind", "host-a:7946"}, []string{`--bind: "host-a:7946" is not an IP address`}},
		{"", []string{"--multicast-group", "foo"}, []string{`--multicast-group: "foo" is not an IP address`}},
		{"", []string{"--multicast-group", "198.18.0.1"}, []string{"--multicast-group: 198.18.0.1 is not a multicast address (like 239.255.76.76 or ff02::4c4c)"}},
		{"", []string{"--http", "localhost"}, []string{`--http: "localhost" is not host:port (like 127.0.0.1:9947) or "off"`}},
		{"", []string{"--join", "198.18.0.2,,198.18.0.3"}, []string{`--join: empty address in "198.18.0.2,,198.18.0.3"`}},
		{"", []string{"--quorum", "-1"}, []string{"--quorum: -1 out of range 0…1024"}},
		{"", []string{"--quorum", "1"}, []string{"--quorum: 1 is below 3: a majority of 1 is this node alone, so each side of a partition leads (two leaders); two hosts: add a witness (role witness on a third, small host) and set quorum 3 on all three (docs/quorum.md); or set --allow-small-quorum to mean it"}},
		{"", []string{"--quorum", "2", "--role", "witness"}, []string{"--quorum: 2 is below 3: a majority of 2 is both nodes, so the leader steps down when either is lost (no failover); two hosts: add a witness"}},
		{"name: a\nquorum: 2\n", nil, []string{"config FILE: line 2: quorum: 2 is below 3: a majority of 2 is both nodes", "; or set allow_small_quorum to mean it"}},
		{"quorum: 2\nallow_small_quorum: false\n", nil, []string{"config FILE: line 1: quorum: 2 is below 3", "; or set allow_small_quorum at line 2 to mean it"}},
		{"", []string{"--allow-small-quorum"}, []string{"--allow-small-quorum: only in quorum mode (set --quorum to N)"}},
		{"", []string{"--quorum", "2000"}, []string{"--quorum: 2000 out of range 0…1024"}},
		{"", []string{"--lease", "1s"}, []string{"--lease: only in quorum mode (set --quorum to N)"}},
		{"lease: 1s\n", nil, []string{"config FILE: line 1: lease: only in quorum mode (set quorum to N)"}},
		{"", []string{"--quorum", "3", "--lease", "200ms"}, []string{"--lease: 200ms must be longer than two heartbeats (200ms, twice --heartbeat)"}},
		{"heartbeat: 1s\n", []string{"--quorum", "3", "--lease", "2s"}, []string{"--lease: 2s must be longer than two heartbeats (2s, twice heartbeat at line 1)"}},
		{"", []string{"--quorum", "3", "--lease", "1s", "--lease-margin", "1ms"}, []string{"--lease-margin: 1ms is less than 1.001ms, the clock drift of 500 ppm over a lease of 1s (--lease)"}},
		{"quorum: 3\nlease: 1s\nlease_margin: 1ms\n", nil, []string{"config FILE: line 3: lease_margin: 1ms is less than 1.001ms, the clock drift of 500 ppm over a lease of 1s (lease at line 2)"}},
		{"", []string{"--state-file", filepath.Join(dir, "state")}, []string{"--state-file: only in quorum mode (set --quorum to N)"}},
		{"", []string{"--quorum", "3", "--state-file", filepath.Join(dir, "no", "state")}, []string{"--state-file: state-file " + filepath.Join(dir, "no", "state") + ": its directory " + filepath.Join(dir, "no") + " does not exist"}},
		{"", []string{"--quorum", "3", "--state-file", worldReadable}, []string{"--state-file: state-file " + worldReadable + ": not a lanleader state file"}},
		{"", []string{"--job-grace", "-1s"}, []string{"--job-grace: -1s is negative"}},
		{"", []string{"--takeover-wait", "-1s"}, []string{"--takeover-wait: -1s is negative"}},
		{"", []string{"--job-grace", "10"}, []string{`--job-grace: "10" is not a duration`}},
		{"", []string{"--job-max-failures", "-1"}, []string{"--job-max-failures: -1 out of range 0…1000"}},
		{"", []string{"--job-failure-window", "often"}, []string{`--job-failure-window: "often" is not a duration`}},
		{"", []string{"--hook-timeout", "-2s"}, []string{"--hook-timeout: -2s is negative"}},
		{"", []string{"--check", " "}, []string{"--check: empty command"}},
		{"", []string{"--check-interval", "10ms"}, []string{"--check-interval: 10ms is shorter than 100ms"}},
		{"", []string{"--check-weight", "-20"}, []string{"--check-weight: -20 is negative: a failing check takes its weight off the priority, so keepalived's weight -20 is 20 here (0: fault)"}},
		{"check_weight: -20\n", nil, []string{"config FILE: line 1: check_weight: -20 is negative: a failing check takes its weight off the priority, so keepalived's weight -20 is 20 here (0: fault)"}},
		{"", []string{"--check-weight", "70000"}, []string{"--check-weight: 70000 out of range 0…65535"}},
		{"", []string{"--check-timeout", "3s"}, []string{"--check-timeout: 3s is longer than check-interval 2s"}},
		{"", []string{"--check-rise", "0"}, []string{"--check-rise: 0 out of range 1…1000"}},
		{"", []string{"--check-fall", "1001"}, []string{"--check-fall: 1001 out of range 1…1000"}},
		{"", []string{"--track-file", " "}, []string{"--track-file: empty file name (item 1)"}},
		{"", []string{"--job", "x"}, []string{"unknown flag --job (did you mean --job-grace?)"}},
		{"", []string{"--vip-announce-repeat", "0"}, []string{"--vip-announce-repeat: 0 out of range 1…100"}},
		{"", []string{"--vip-announce-repeat", "101"}, []string{"--vip-announce-repeat: 101 out of range 1…100"}},
		{"", []string{"--vip-announce-interval", "soon"}, []string{`--vip-announce-interval: "soon" is not a duration`}},
		{"", []string{"--vip-announce-delay", "-1s"}, []string{"--vip-announce-delay: -1s is negative; want 0 (none) or more"}},
		{"", []string{"--vip-announce-refresh", "-1m"}, []string{"--vip-announce-refresh: -1m is negative; want 0 (none) or more"}},
		{"", []string{"--start-timeout", "-1s"}, []string{`--start-timeout: -1s is negative; want 0 (none) or more`}},
		{"", []string{"--vip-track-link=maybe"}, []string{`--vip-track-link: "maybe" is not true or false`}},
		{"", []string{"--vip-track-link", "false"}, []string{`unexpected argument "false" (write --vip-track-link=false, with an '=')`}},
		{"vip: 198.18.0.100/24\n", nil, []string{"config FILE: line 1: vip: want a list of virtual addresses, like [\"192.0.2.100/24\""}},
		{"vip: [[x]]\n", nil, []string{"config FILE: line 1: vip: item 1 is not an address"}},
		{"vip_announce_delay: 5\n", nil, []string{`config FILE: line 1: vip_announce_delay: 5 has no unit`}},
		{"vip_announce_repeat: 0\n", nil, []string{"config FILE: line 1: vip_announce_repeat: 0 out of range 1…100"}},
		{"", []string{"--key-file", worldReadable}, []string{"--key-file: " + worldReadable + " is readable by every user (mode 0644): anyone on this host could forge election packets; chmod o-r"}},
		{"", []string{"--key-file", worldWritable}, []string{"--key-file: " + worldWritable + " is writable by every user (mode 0602)"}},
		{"", []string{"--key-file", short}, []string{"--key-file: " + short + ": the key is 31 bytes, want at least 32 (make one with: head -c 48 /dev/urandom | base64 > "}},
		{"", []string{"--key-file", missing}, []string{"--key-file: " + missing + ": no such file or directory"}},
		{"", []string{"--key-file", dir}, []string{"--key-file: " + dir + ": not a regular file"}},
		{"", []string{"--key-file", keyFile, "--accept-key-file", worldReadable}, []string{"--accept-key-file: " + worldReadable + " is readable by every user"}},
		{"", []string{"--accept-key-file", keyFile}, []string{"--accept-key-file: needs --key-file (the key this agent signs with)"}},
		{"accept_key_file: " + keyFile + "\n", nil, []string{"config FILE: line 1: accept_key_file: needs key_file (the key this agent signs with)"}},
		{"key_file: " + worldReadable + "\n", nil, []string{"config FILE: line 1: key_file: " + worldReadable + " is readable by every user (mode 0644)"}},

		// Durations above their ceilings (a typo): the flag or the file's
		// key and line, and the ceiling.
		{"", []string{"--heartbeat", "1000h"}, []string{"--heartbeat: 1000h is above the ceiling of 1m"}},
		{"", []string{"--heartbeat", "87600h", "--quorum", "3"}, []string{"--heartbeat: 87600h is above the ceiling of 1m"}},
		{"", []string{"--job-grace", "2h"}, []string{"--job-grace: 2h is above the ceiling of 1h"}},
		{"", []string{"--start-timeout", "1000h"}, []string{"--start-timeout: 1000h is above the ceiling of 24h"}},
		{"", []string{"--vip-announce-interval", "1m"}, []string{"--vip-announce-interval: 1m is above the ceiling of 10s"}},
		{"name: a\nheartbeat: 87600h\n", nil, []string{"config FILE: line 2: heartbeat: 87600h is above the ceiling of 1m"}},
		{"checks:\n  - command: x\n    interval: 2h\n    timeout: 1s\n", nil, []string{"config FILE: line 3: checks[1].interval: 2h is above the ceiling of 1h"}},

		// What only agent.Config.Validate sees: how fields relate.
		{"", []string{"--bind", "198.18.0.1:7947"}, []string{"--election-port: 7947 is also the gossip port of the bind address 198.18.0.1:7947 (--bind)"}},
		{"bind: 198.18.0.1:7947\n", nil, []string{"config FILE: election_port: 7947 is also the gossip port of the bind address 198.18.0.1:7947 (bind at line 1)"}},
		{"", []string{"--bind", "198.18.0.1", "--multicast-group", "ff02::4c4c"}, []string{"--multicast-group: ff02::4c4c and the bind address 198.18.0.1 (--bind) are not of one IP family"}},
		{"bind: 198.18.0.1\n", []string{"--multicast-group", "ff02::4c4c"}, []string{"--multicast-group: ff02::4c4c and the bind address 198.18.0.1 (bind at line 1) are not of one IP family"}},
		{"", []string{"--suspect-after", "100ms"}, []string{"--suspect-after: 100ms must be longer than --heartbeat (100ms)"}},
		{"name: a\nsuspect_after: 100ms\n", nil, []string{"config FILE: line 2: suspect_after: 100ms must be longer than heartbeat (100ms)"}},
		{"", []string{"--job-unit", "a.service", "--", "true"}, []string{"--job-unit: the job is either a command line (after --) or a unit, not both"}},
		{"job: [worker]\njob_unit: a.service\n", nil, []string{"config FILE: line 2: job_unit: the job is either a command line (job at line 1) or a unit, not both"}},
		{"", []string{"--job-unit", "a.service", "--quorum", "3"}, []string{"--job-unit: not with quorum mode (--quorum): the lease's guard can stop only a job the agent forks"}},
		{"quorum: 3\n", []string{"--job-unit", "a.service"}, []string{"--job-unit: not with quorum mode (quorum at line 1)"}},
		// Two faults: both, on one line.
		{"", []string{"--bind", "198.18.0.1:7947", "--join", "a:b:c"}, []string{
			"--election-port: 7947 is also the gossip port of the bind address 198.18.0.1:7947 (--bind); ",
			`join: "a:b:c" is not host, host:port or [ipv6]:port`,
		}},

		// The file.
		{"", []string{"--config", missing}, []string{"config " + missing + ": no such file or directory"}},
		{"name: a\n\nprioirty: 5\n", nil, []string{`config FILE: line 3: unknown key "prioirty" (did you mean "priority"?)`}},
		{"suspect-after: 1s\nfoo: 1\n", nil, []string{
			`config FILE: line 1: unknown key "suspect-after" (did you mean "suspect_after"?); `,
			`line 2: unknown key "foo"`,
		}},
		{"config: other.yaml\n", nil, []string{`config FILE: line 1: unknown key "config"`}},
		{"name: a\npriority: [1\n", nil, []string{"config FILE: line 1: did not find expected ',' or ']'"}}, // yaml's line
		{"name: a\n  bad: x\n", nil, []string{"config FILE: line 2: mapping values are not allowed in this context"}},
		{"- name: a\n", nil, []string{`config FILE: line 1: want a mapping of keys to values (like "priority: 150"), not a list`}},
		{"host-a\n", nil, []string{`config FILE: line 1: want a mapping of keys to values (like "priority: 150"), not a single value`}},
		{"priority: 5\nname: a\npriority: 6\n", nil, []string{`config FILE: line 3: key "priority" given twice (first at line 1)`}},
		{"name: a\n---\npriority: 5\n", nil, []string{"config FILE: line 2: a second YAML document; put every key in one"}},
		{"name: a\npriority: 70000\n", nil, []string{"config FILE: line 2: priority: 70000 out of range 1…65535"}},
		{"priority: 0\n", nil, []string{"config FILE: line 1: priority: 0 out of range 1…65535"}},
		{"priority:\n", nil, []string{"config FILE: line 1: priority: no value (leave the key out for the default)"}},
		{"node_id: -3\n", nil, []string{"config FILE: line 1: node_id: -3 out of range 1…9007199254740991"}},
		{"\nsuspect_after: abc\n", nil, []string{`config FILE: line 2: suspect_after: "abc" is not a duration (like 100ms or 2s)`}},
		{"heartbeat: 100\n", nil, []string{`config FILE: line 1: heartbeat: 100 has no unit; write a duration like "100ms" or "2s"`}},
		{"heartbeat: 1.5\n", nil, []string{`config FILE: line 1: heartbeat: "1.5" is not a duration`}},
		{"preempt_delay: -1s\n", nil, []string{"config FILE: line 1: preempt_delay: -1s is negative"}},
		{"detector: foo\n", nil, []string{`config FILE: line 1: detector: "foo" is not fixed or phi`}},
		{"transport: tcp\n", nil, []string{`config FILE: line 1: transport: "tcp" is not multicast or unicast`}},
		{"log_level: loud\n", nil, []string{`config FILE: line 1: log_level: "loud" is not debug, info, warn or error`}},
		{"log_format: xml\n", nil, []string{`config FILE: line 1: log_format: "xml" is not text or json`}},
		{"preempt: maybe\n", nil, []string{`config FILE: line 1: preempt: "maybe" is not true or false`}},
		{"bind: nonsense\n", nil, []string{`config FILE: line 1: bind: "nonsense" is not an IP address with an optional port`}},
		{"multicast_group: 10.0.0.1\n", nil, []string{"config FILE: line 1: multicast_group: 10.0.0.1 is not a multicast address"}},
		{"join: 198.18.0.2\n", nil, []string{`config FILE: line 1: join: want a list of addresses, like [192.0.2.2, "192.0.2.3:7946"]`}},
		{"join: [198.18.0.2, [x]]\n", nil, []string{"config FILE: line 1: join: item 2 is not an address"}},
		{"job: []\n", nil, []string{"config FILE: line 1: job: empty command"}},
		{"job: {cmd: x}\n", nil, []string{"config FILE: line 1: job: want a command line, as a list"}},
		{"job: [worker, [x]]\n", nil, []string{"config FILE: line 1: job: item 2 is not a string"}},
		{"job: [\"\"]\n", nil, []string{"config FILE: line 1: job: empty command name"}},
		{"check: test -e /x\n", nil, []string{"config FILE: line 1: check: want a list of checks, each a shell command"}},
		{"checks: [[x]]\n", nil, []string{"config FILE: line 1: checks: item 1 is neither a shell command nor a mapping of name, command"}},
		{"checks: [true]\ncheck: [true]\n", nil, []string{`config FILE: line 2: key "check" given twice (first at line 1)`}},
		{"checks:\n  - name: a\n", nil, []string{"config FILE: line 2: checks[1].command: a check needs a command"}},
		{"checks:\n  - true\n  - command: x\n    intervall: 1s\n", nil, []string{`config FILE: line 4: checks[2].intervall: unknown key "intervall" of a check (did you mean "interval"?)`}},
		{"checks:\n  - command: x\n    command: y\n", nil, []string{"config FILE: line 3: checks[1].command: given twice"}},
		{"checks:\n  - command: x\n    rise: 0\n", nil, []string{`config FILE: line 3: checks[1].rise: "0" out of range 1…1000`}},
		{"checks:\n  - command: x\n    fall: many\n", nil, []string{`config FILE: line 3: checks[1].fall: "many" out of range 1…1000`}},
		{"checks:\n  - command: x\n    weight: -20\n", nil, []string{"config FILE: line 3: checks[1].weight: -20 is negative: a failing check takes its weight off the priority, so keepalived's weight -20 is 20 here (0: fault)"}},
		{"checks:\n  - command: x\n    weight: 70000\n", nil, []string{"config FILE: line 3: checks[1].weight: 70000 out of range 0…65535"}},
		{"checks:\n  - command: x\n    interval: 0s\n", nil, []string{`config FILE: line 3: checks[1].interval: "0s" is not a duration above 0`}},
		{"checks:\n  - command: x\n    timeout: [1s]\n", nil, []string{"config FILE: line 3: checks[1].timeout: want a single value"}},
		{"checks:\n  - command: x\n    interval: 50ms\n", nil, []string{"config FILE: line 3: checks[1].interval: 50ms is shorter than 100ms"}},
		{"checks:\n  - command: x\n    interval: 1s\n    timeout: 2s\n", nil, []string{"config FILE: line 4: checks[1].timeout: 2s is longer than the check's interval 1s"}},
		{"check_timeout: 1s\nchecks:\n  - command: x\n    interval: 500ms\n", nil, []string{`config FILE: line 1: check_timeout: 1s is longer than the interval 500ms of check "check-1"`}},
		{"checks:\n  - command: ' '\n", nil, []string{"config FILE: line 2: checks[1].command: empty command"}},
		{"checks:\n  - ' '\n", nil, []string{"config FILE: line 2: checks[1].command: empty command"}},
		{"checks:\n  - command: x\n    name: a b\n", nil, []string{`config FILE: line 3: checks[1].name: "a b" is not a name of 1 to 64 letters`}},
		{"checks:\n  - command: x\n    name: check-2\n  - y\n", nil, []string{`config FILE: line 2: checks: "check-2" is the name of checks 1 and 2`}},
		{"track_files: /run/x\n", nil, []string{"config FILE: line 1: track_files: want a list of files, like [/etc/lanleader/maintenance]"}},
		{"check_weight: 70000\n", nil, []string{"config FILE: line 1: check_weight: 70000 out of range 0…65535"}},
		{"check_rise: 0\n", nil, []string{"config FILE: line 1: check_rise: 0 out of range 1…1000"}},
		{"job_grace: 5\n", nil, []string{`config FILE: line 1: job_grace: 5 has no unit`}},
		{"name: [a, b]\n", nil, []string{"config FILE: line 1: name: want a single value, not a list"}},
		{"cluster: {a: b}\n", nil, []string{"config FILE: line 1: cluster: want a single value, not a mapping"}},
		// The first fault in the file's order is the one told.
		{"log_level: loud\npriority: 0\n", nil, []string{"config FILE: line 1: log_level:"}},
		// A bad file is told even when the flags would override it.
		{"priority: 0\n", []string{"--priority", "5"}, []string{"config FILE: line 1: priority: 0 out of range"}},
	} {
		args := tc.args
		path := ""
		if tc.file != "" {
			path = writeConfig(t, tc.file)
			args = append([]string{"--config", path}, args...)
		}
		var stderr bytes.Buffer
		cfg, job, err := parseRunConfig(args, &stderr, &stderr)
		if err == nil {
			t.Errorf("file %q, flags %q: no error", tc.file, tc.args)
			continue
		}
		msg := err.Error()
		t.Logf("file %q, flags %q:\n\t%s", tc.file, tc.args, msg) // go test -v shows them all
		for _, w := range tc.want {
			if w = strings.ReplaceAll(w, "FILE", path); !strings.Contains(msg, w) {
				t.Errorf("file %q, flags %q:\nerror %q\nwant  %q", tc.file, tc.args, msg, w)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("file %q, flags %q: error of more than one line: %q", tc.file, tc.args, msg)
		}
		if errors.Is(err, flag.ErrHelp) || cfg.Logger != nil || job != nil || stderr.Len() > 0 {
			t.Errorf("file %q, flags %q: ErrHelp %v, Logger %v, job %q, printed %q",
				tc.file, tc.args, errors.Is(err, flag.ErrHelp), cfg.Logger, job, stderr.String())
		}
	}
}

func TestRunUsage(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-help"}, {"--priority", "5", "-h", "--", "job"}} {
		var stdout, stderr bytes.Buffer
		_, _, err := parseRunConfig(args, &stdout, &stderr)
		if !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%q: error %v, want flag.ErrHelp", args, err)
		}
		if stdout.String() != runUsage || stderr.Len() != 0 {
			t.Errorf("%q printed %q on stdout and %q on stderr, want runUsage on stdout", args, stdout.String(), stderr.String())
		}
	}

	// Every flag is in the help, as --flag at the start of a line with its
	// argument, so the help and the flags cannot drift apart.
	newRunFlags().set.VisitAll(func(f *flag.Flag) {
		if !strings.Contains(runUsage, "\n    --"+f.Name+" ") && !strings.Contains(runUsage, "\n    --"+f.Name+"[") {
			t.Errorf("runUsage does not describe --%s", f.Name)
		}
	})
	// The defaults it states are agent's.
	for _, s := range []string{
		"Default " + fmt.Sprint(config.DefaultPriority) + ".",
		"Default " + config.DefaultCluster + ".",
		fmt.Sprintf("Default 0.0.0.0:%d", config.DefaultGossipPort),
		fmt.Sprintf("Default %d.", config.DefaultElectionPort),
		"Default " + config.DefaultHTTP + ".",
		"Default " + config.DefaultHeartbeat.String() + ".",
		// The alarm and a confirmation.
		"(" + (config.DefaultSuspectAfter(config.DefaultHeartbeat, 0) + election.DefaultConfig(1).ConfirmTimeout).String() + ")",
		"Default " + config.DefaultDiscoverInterval.String() + ".",
		"Default: " + config.DefaultGroup4.String() + " (" + config.DefaultGroup6.String() + " on IPv6).",
		fmt.Sprint(uint64(config.MaxNodeID)),
		"Default " + config.DetectorFixed + ".",
		"Default " + config.TransportMulticast + ".",
		fmt.Sprintf("Default %d.", config.DefaultVIPAnnounceRepeat),
		"Default " + config.DefaultVIPAnnounceInterval.String() + ".",
		"Default " + config.DefaultVIPAnnounceDelay.String() + ".",
		"Default 1m.", // config.DefaultVIPAnnounceRefresh is 1m0s
	} {
		if !strings.Contains(runUsage, s) {
			t.Errorf("runUsage does not say %q", s)
		}
	}
	for _, s := range []string{"NAME\n", "USAGE\n", "DESCRIPTION\n", "FLAGS\n", "CONFIG FILE\n", "EXIT STATUS\n", "ENVIRONMENT\n", "GOMAXPROCS", "SIGNALS\n", "SIGINT", "SIGTERM"} {
		if !strings.Contains(runUsage, s) {
			t.Errorf("runUsage has no %q", s)
		}
	}
	for i, line := range strings.Split(runUsage, "\n") {
		if n := len([]rune(line)); n > 80 || strings.ContainsRune(line, '\t') || strings.TrimRight(line, " ") != line {
			t.Errorf("runUsage line %d (%d columns): %q", i+1, n, line)
		}
	}

	// The example config file in the help is one that parses.
	_, example, ok := strings.Cut(runUsage, "For example:\n\n")
	if !ok {
		t.Fatal("runUsage has no example config file")
	}
	example, _, _ = strings.Cut(example, "\n\n")
	var file strings.Builder
	for line := range strings.Lines(example + "\n") {
		file.WriteString(strings.TrimPrefix(line, "        "))
	}
	got, _, _ := parseOK(t, "--config", writeConfig(t, file.String()))
	want := defaultRunConfig(t)
	want.Name, want.Priority, want.Cluster = "host-a", 150, "jobs"
	want.Join = []string{"192.0.2.2", "192.0.2.3:7946"}
	want.Preempt = false
	diffConfig(t, "the example of runUsage", got, want)
}

// Every refusal of --vip names the flag or the file's line and key.
func TestParseRunConfigVIPErrors(t *testing.T) {
	for _, tc := range []struct {
		file string
		args []string
		want string // FILE is the config file's path
	}{
		{"", []string{"--vip", "nonsense"}, `--vip: "nonsense": no prefix length (want ADDR/PREFIX, e.g. 192.0.2.100/24)`},
		{"", []string{"--vip", "198.18.0.100/24,dev=nosuch0"}, `--vip: 198.18.0.100/24: no interface "nosuch0" on this host`},
		{"", []string{"--vip", "198.18.0.100/24", "--vip", "fd00::100/64"},
			"--vip: 198.18.0.100/24 and fd00::100/64 are not of one IP family: a leader announces one family's addresses (as keepalived refuses both in one vrrp_instance)"},
		{"", []string{"--bind", "198.18.0.1", "--vip", "198.18.0.1/24"}, "--vip: 198.18.0.1 is the bind address (198.18.0.1)"},
		{"bind: 198.18.0.1\nvip: [198.18.0.1/24]\n", nil, "config FILE: line 2: vip: 198.18.0.1 is the bind address (198.18.0.1)"},
		{"", []string{"--vip", "198.18.0.100/24", "--vip", "198.18.0.100/25"}, "--vip: 198.18.0.100 is given twice"},
		{"", []string{"--vip", "127.0.0.100/8"}, `--vip: "127.0.0.100/8": a loopback address, not a host's address`},
		{"vip: [198.18.0.100/24, \"fd00::1/64\"]\n", nil, "config FILE: line 1: vip: 198.18.0.100/24 and fd00::1/64 are not of one IP family"},
		{"name: a\nvip: [\"198.18.0.100/24,dev=nosuch0\"]\n", nil, `config FILE: line 2: vip: 198.18.0.100/24: no interface "nosuch0" on this host`},
		{"vip: [nonsense]\n", nil, `config FILE: line 1: vip: "nonsense": no prefix length (want ADDR/PREFIX, e.g. 192.0.2.100/24)`},
	} {
		args, path := tc.args, ""
		if tc.file != "" {
			path = writeConfig(t, tc.file)
			args = append([]string{"--config", path}, args...)
		}
		_, _, err := parseRunConfig(args, io.Discard, io.Discard)
		want := strings.ReplaceAll(tc.want, "FILE", path)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("file %q, flags %q:\nerror %v\nwant  %q", tc.file, tc.args, err, want)
		}
	}
}

// TestCheckKeys: check: (the older key) is read as checks:, and --check
// flags replace the file's checks, mappings included, and an error of a
// flag's check names the flag, not the file's line of the check it
// replaced.
func TestCheckKeys(t *testing.T) {
	path := writeConfig(t, "check:\n  - test -e /run/ok\n")
	cfg, _, _ := parseOK(t, "--config", path)
	if want := []agent.Check{{Command: "test -e /run/ok"}}; !slices.Equal(cfg.Checks, want) {
		t.Errorf("check: read as %+v, want %+v", cfg.Checks, want)
	}
	path = writeConfig(t, "checks:\n  - name: a\n    command: x\n    interval: 5s\n")
	cfg, _, _ = parseOK(t, "--config", path, "--check", "y")
	if want := []agent.Check{{Command: "y"}}; !slices.Equal(cfg.Checks, want) {
		t.Errorf("--check over the file's checks: %+v, want %+v", cfg.Checks, want)
	}
	_, _, err := parseRunConfig([]string{"--config", path, "--check", " "}, io.Discard, io.Discard)
	if err == nil || err.Error() != "--check: empty command" {
		t.Errorf("an empty --check over the file's checks: %v", err)
	}
}

// TestSmallQuorumAllowed: --quorum 1 or 2 runs when asked for, by the
// flag or the file's key, with the lease of quorum mode.
func TestSmallQuorumAllowed(t *testing.T) {
	for _, args := range [][]string{
		{"--quorum", "2", "--allow-small-quorum"},
		{"--config", writeConfig(t, "quorum: 1\nallow_small_quorum: true\n")},
	} {
		cfg, _, _ := parseOK(t, args...)
		if cfg.Quorum > 2 || cfg.Quorum < 1 || !cfg.AllowSmallQuorum || cfg.Lease != 400*time.Millisecond {
			t.Errorf("%q: quorum %d, allow %v, lease %v", args, cfg.Quorum, cfg.AllowSmallQuorum, cfg.Lease)
		}
	}
}
