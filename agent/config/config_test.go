package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
)

// testConfig is DefaultConfig for a node named a with node_id 1 on
// loopback, with a quiet log.
func testConfig() Config {
	c := DefaultConfig()
	c.Name, c.NodeID = "a", 1
	c.Bind, c.ElectionPort, c.Transport, c.HTTP = "127.0.0.1:0", 0, TransportUnicast, ""
	c.Logger = quiet()
	return c
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestConfigValidate(t *testing.T) {
	ok := func() Config {
		c := DefaultConfig()
		c.Name, c.NodeID, c.Bind, c.Logger = "a", 1, "198.18.0.1:7946", quiet()
		return c
	}
	if err := func() *Config { c := ok(); return &c }().Validate(); err != nil {
		t.Fatalf("a good config: %v", err)
	}
	cases := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"node id too large", func(c *Config) { c.NodeID = MaxNodeID + 1 }, "node-id: 9007199254740992 out of range"},
		{"bind nonsense", func(c *Config) { c.Bind = "host-a" }, `bind "host-a": want an IP address`},
		{"election port is gossip port", func(c *Config) { c.ElectionPort = 7946 }, "election-port: 7946 is also the gossip port"},
		{"routable group", func(c *Config) { c.Group = netip.MustParseAddr("224.1.2.3") }, "multicast-group: 224.1.2.3 is not an administratively scoped IPv4 group"},
		{"not multicast", func(c *Config) { c.Group = netip.MustParseAddr("198.18.0.9") }, "multicast-group: 198.18.0.9 is not an administratively scoped"},
		{"global IPv6 group", func(c *Config) { c.Group = netip.MustParseAddr("ff0e::1") }, "multicast-group: ff0e::1 is not a link-local IPv6 group"},
		{"family mismatch", func(c *Config) { c.Group = netip.MustParseAddr("ff02::1:2") }, "multicast-group: ff02::1:2 and the bind address 198.18.0.1 (--bind) are not of one IP family"},
		{"family mismatch, any address", func(c *Config) { c.Bind = "0.0.0.0"; c.Group = netip.MustParseAddr("ff02::1:2") }, "are not of one IP family"},
		{"heartbeat too short", func(c *Config) { c.Heartbeat, c.SuspectAfter = 5*time.Millisecond, 15*time.Millisecond }, "heartbeat: 5ms is shorter than 10ms"},
		{"negative preempt delay", func(c *Config) { c.PreemptDelay = -time.Second }, "preempt-delay: -1s must not be negative"},
		{"detector", func(c *Config) { c.Detector = "psychic" }, `detector: "psychic" is not fixed or phi`},
		{"suspect below heartbeat", func(c *Config) { c.SuspectAfter = 50 * time.Millisecond }, "suspect-after: 50ms must be longer than --heartbeat (100ms)"},
	}
	for _, c := range cases {
		cf := ok()
		c.edit(&cf)
		err := cf.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestElectionConfigHardened: the agent runs every hardening mechanism;
// the election package's zero value is the seeds' textbook.
func TestElectionConfigHardened(t *testing.T) {
	c := DefaultConfig()
	c.NodeID = 1
	if got := c.ElectionConfig().Hardening; got != election.Hardened() {
		t.Errorf("the agent's election config: %+v, want every mechanism of Hardened()", got)
	}
}

// TestDefaultConfig: the defaults are valid on their own, the derived
// ones follow their fields, and zero means zero: the zero Config is
// refused, not filled.
func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
	if c.SuspectAfter != 3*DefaultHeartbeat/2 || c.Lease != 0 || c.LeaseMargin != 0 || c.ElectionPort != DefaultElectionPort || c.HTTP != DefaultHTTP || !c.Preempt {
		t.Errorf("DefaultConfig: %+v", c)
	}
	c.Heartbeat, c.Quorum = 20*time.Millisecond, 3
	c.DeriveTimeouts()
	if c.SuspectAfter != 60*time.Millisecond || c.Lease != 80*time.Millisecond || c.LeaseMargin != 8*time.Millisecond {
		t.Errorf("derived for 20ms and quorum 3: suspect %v, lease %v, margin %v; want 60ms (quorum mode's three heartbeats), 80ms, 8ms", c.SuspectAfter, c.Lease, c.LeaseMargin)
	}
	// The lease outlasts two lost heartbeats whatever the alarm; a
	// SuspectAfter longer than three heartbeats lengthens it.
	if got := DefaultLease(100*time.Millisecond, 500*time.Millisecond); got != 600*time.Millisecond {
		t.Errorf("DefaultLease(100ms, 500ms) = %v, want 600ms", got)
	}
	c.Quorum = 0
	if c.DeriveTimeouts(); c.Lease != 0 || c.LeaseMargin != 0 || c.SuspectAfter != 30*time.Millisecond {
		t.Errorf("without quorum: lease %v, margin %v, suspect %v; want 0, 0, 30ms", c.Lease, c.LeaseMargin, c.SuspectAfter)
	}
	if err := (&Config{Name: "a", NodeID: 1, Priority: 1}).Validate(); err == nil || !strings.Contains(err.Error(), "heartbeat: 0s is shorter than 10ms") {
		t.Errorf("the zero Config: %v, want the zero heartbeat refused", err)
	}
}

// TestSettingErrors: a value wrong on its own is a SettingError naming
// its setting; a fault of how values relate is not.
func TestSettingErrors(t *testing.T) {
	c := testConfig()
	c.Priority, c.CheckWeight, c.SuspectAfter = 0, 70000, c.Heartbeat
	var settings []string
	var others []string
	for _, err := range err2list(c.Validate()) {
		var se *SettingError
		if errors.As(err, &se) {
			settings = append(settings, se.Setting+" | "+se.Err.Error())
		} else {
			others = append(others, err.Error())
		}
	}
	want := []string{"priority | 0 out of range 1…65535", "check-weight | 70000 out of range 0…65535"}
	if strings.Join(settings, "\n") != strings.Join(want, "\n") {
		t.Errorf("setting errors %q, want %q", settings, want)
	}
	if len(others) != 1 || !strings.HasPrefix(others[0], "suspect-after: 100ms must be longer than --heartbeat (100ms)") {
		t.Errorf("other errors %q, want suspect-after's", others)
	}
	if r, ok := IntRange("node-id"); !ok || r != (Range{1, MaxNodeID}) {
		t.Errorf("IntRange(node-id) = %v, %v", r, ok)
	}
	if _, ok := IntRange("name"); ok {
		t.Error("IntRange(name): a range")
	}
}

// err2list is the errors errors.Join joined into err.
func err2list(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// TestResolvedChecks: a check's own settings win over the check_*
// defaults, a default name is check-N, weight 0 (its own Fault, or the
// default weight 0) is a fault, and Validate names each check's fields.
func TestResolvedChecks(t *testing.T) {
	c := testConfig()
	c.CheckInterval, c.CheckTimeout, c.CheckRise, c.CheckFall, c.CheckWeight = time.Second, 300*time.Millisecond, 2, 3, 40
	c.Checks = []Check{{Command: "a"}, {Name: "b", Command: "b", Interval: 5 * time.Second, Timeout: 4 * time.Second, Rise: 7, Fall: 8, Weight: 9},
		{Command: "c", Fault: true}}
	got := c.ResolvedChecks()
	want := []Check{
		{Name: "check-1", Command: "a", Interval: time.Second, Timeout: 300 * time.Millisecond, Rise: 2, Fall: 3, Weight: 40},
		{Name: "b", Command: "b", Interval: 5 * time.Second, Timeout: 4 * time.Second, Rise: 7, Fall: 8, Weight: 9},
		{Name: "check-3", Command: "c", Interval: time.Second, Timeout: 300 * time.Millisecond, Rise: 2, Fall: 3, Fault: true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("resolved\n%+v\nwant\n%+v", got, want)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("valid checks: %v", err)
	}
	c.CheckTimeout, c.CheckWeight = 0, 0
	if r := c.ResolvedChecks(); r[0].Timeout != time.Second || !r[0].Fault || r[0].Weight != 0 {
		t.Errorf("timeout 0 is the interval, weight 0 a fault: %+v", r[0])
	}
	c.Checks = []Check{{Command: "x", Interval: time.Second, Timeout: 2 * time.Second, Rise: -1, Weight: -5}, {Name: "check-1", Command: " "}}
	var settings []string
	for _, err := range err2list(c.Validate()) {
		var se *SettingError
		if errors.As(err, &se) {
			settings = append(settings, se.Setting+" | "+se.Err.Error())
		}
	}
	wantErrs := []string{
		"checks[1].timeout | 2s is longer than the check's interval 1s",
		"checks[1].rise | -1 out of range 1…1000",
		"checks[1].weight | -5 is negative: a failing check takes its weight off the priority, so keepalived's weight -5 is 5 here (0: fault)",
		"checks[2].command | empty command",
		`checks[2].name | "check-1" is the name of checks 1 and 2`,
	}
	if strings.Join(settings, "\n") != strings.Join(wantErrs, "\n") {
		t.Errorf("errors\n%s\nwant\n%s", strings.Join(settings, "\n"), strings.Join(wantErrs, "\n"))
	}
}

// TestDurationCeilings: a duration above its setting's ceiling is a
// SettingError that names the ceiling; the ceiling itself and the values
// a real user sets pass; the timeouts that follow a heartbeat above its
// ceiling are not refused a second time.
func TestDurationCeilings(t *testing.T) {
	errs := func(edit func(*Config)) []string {
		c := testConfig()
		edit(&c)
		var out []string
		for _, err := range err2list(c.Validate()) {
			if err != nil {
				out = append(out, err.Error())
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want []string
	}{
		{"heartbeat 1000h", func(c *Config) { c.Heartbeat, c.SuspectAfter = 1000*time.Hour, 3000*time.Hour },
			[]string{"heartbeat: 1000h is above the ceiling of 1m"}},
		{"heartbeat 87600h in quorum mode", func(c *Config) {
			c.Heartbeat, c.Quorum = 87600*time.Hour, 3
			c.DeriveTimeouts()
		}, []string{"heartbeat: 87600h is above the ceiling of 1m"}},
		{"suspect-after", func(c *Config) { c.SuspectAfter = 11 * time.Minute }, []string{"suspect-after: 11m is above the ceiling of 10m"}},
		{"lease", func(c *Config) { c.Quorum, c.Lease, c.LeaseMargin = 3, time.Hour, time.Hour },
			[]string{"lease: 1h is above the ceiling of 10m", "lease-margin: 1h is above the ceiling of 10m"}},
		{"job-grace", func(c *Config) { c.JobGrace = 90 * time.Minute }, []string{"job-grace: 1h30m is above the ceiling of 1h"}},
		{"takeover-wait", func(c *Config) { c.TakeoverWait = 3 * time.Hour }, []string{"takeover-wait: 3h is above the ceiling of 2h"}},
		{"start-timeout", func(c *Config) { c.StartTimeout = 48 * time.Hour }, []string{"start-timeout: 48h is above the ceiling of 24h"}},
		{"check interval", func(c *Config) { c.CheckInterval, c.CheckTimeout = 2*time.Hour, time.Second },
			[]string{"check-interval: 2h is above the ceiling of 1h"}},
		{"a check's own", func(c *Config) {
			c.Checks = []Check{{Command: "true", Interval: 3 * time.Hour, Timeout: 2 * time.Hour}}
		},
			[]string{"checks[1].interval: 3h is above the ceiling of 1h", "checks[1].timeout: 2h is above the ceiling of 1h"}},
		{"vip refresh", func(c *Config) { c.VIPAnnounceRefresh = 5 * time.Hour }, []string{"vip-announce-refresh: 5h is above the ceiling of 4h"}},
		{"discover interval", func(c *Config) { c.DiscoverInterval = time.Hour }, []string{"discover-interval: 1h is above the ceiling of 10m"}},
		{"the ceilings themselves", func(c *Config) {
			c.Heartbeat, c.SuspectAfter, c.JobGrace, c.TakeoverWait, c.StartTimeout = MaxHeartbeat, MaxSuspectAfter, MaxJobGrace, MaxTakeoverWait, MaxStartTimeout
			c.HookTimeout, c.PreemptDelay, c.JobFailureWindow, c.CheckInterval = MaxHookTimeout, MaxPreemptDelay, MaxJobFailureWindow, MaxCheckInterval
			c.VIPAnnounceInterval, c.VIPAnnounceDelay, c.VIPAnnounceRefresh, c.DiscoverInterval = MaxVIPAnnounceInterval, MaxVIPAnnounceDelay, MaxVIPAnnounceRefresh, MaxDiscoverInterval
		}, nil},
		{"what users set", func(c *Config) {
			c.JobGrace, c.TakeoverWait, c.StartTimeout, c.Heartbeat, c.SuspectAfter = 10*time.Minute, 10*time.Minute+time.Second, time.Hour, time.Second, 5*time.Second
		}, nil},
		{"off and negative are not judged", func(c *Config) { c.VIPAnnounceRefresh, c.StartTimeout, c.DiscoverInterval = 0, 0, -time.Hour }, nil},
	} {
		if got := errs(tc.edit); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s: errors %q, want %q", tc.name, got, tc.want)
		}
	}
	c := testConfig()
	c.Heartbeat, c.SuspectAfter = 2*time.Minute, 6*time.Minute
	var se *SettingError
	if err := c.Validate(); !errors.As(err, &se) || se.Setting != "heartbeat" {
		t.Errorf("a heartbeat above its ceiling: %v, want a SettingError of heartbeat", err)
	}
}

func TestDurationText(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Minute: "1m", time.Hour: "1h", 90 * time.Minute: "1h30m",
		100 * time.Millisecond: "100ms", 1500 * time.Millisecond: "1.5s", 61 * time.Second: "1m1s", 0: "0s", 87600 * time.Hour: "87600h"} {
		if got := DurationText(d); got != want {
			t.Errorf("DurationText(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestRelationErrors: every fault of how settings relate is a
// RelationError that begins with the setting to change and names the
// others it concerns, so that a front end can name each as it was given;
// Error names them as flags.
func TestRelationErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		edit     func(*Config)
		settings []string
		text     string // with the settings named <like-this>
	}{
		{"election port", func(c *Config) { c.Bind, c.ElectionPort = "198.18.0.1:7947", 7947 }, []string{"election-port", "bind"},
			"7947 is also the gossip port of the bind address 198.18.0.1:7947 (<bind>)"},
		{"group family", func(c *Config) { c.Bind, c.Group = "198.18.0.1", netip.MustParseAddr("ff02::4c4c") }, []string{"multicast-group", "bind"},
			"ff02::4c4c and the bind address 198.18.0.1 (<bind>) are not of one IP family"},
		{"suspect-after", func(c *Config) { c.SuspectAfter = c.Heartbeat }, []string{"suspect-after", "heartbeat"},
			"100ms must be longer than <heartbeat> (100ms), or every gap between heartbeats is a failure"},
		{"lease", func(c *Config) { c.Quorum, c.Lease, c.LeaseMargin = 3, 200*time.Millisecond, 20*time.Millisecond }, []string{"lease", "heartbeat"},
			"200ms must be longer than two heartbeats (200ms, twice <heartbeat>): a leader steps down a heartbeat before its lease ends, and needs another heartbeat to renew it"},
		{"lease-margin", func(c *Config) { c.Quorum, c.Lease, c.LeaseMargin = 3, time.Second, time.Millisecond }, []string{"lease-margin", "lease"},
			"1ms is less than 1.001ms, the clock drift of 500 ppm over a lease of 1s (<lease>)"},
		{"state-file without quorum", func(c *Config) { c.StateFile = "/var/lib/lanleader/state" }, []string{"state-file", "quorum"},
			"only in quorum mode (set <quorum> to N)"},
		{"unit and command line", func(c *Config) { c.JobUnit, c.Job = "a.service", []string{"true"} }, []string{"job-unit", "job"},
			"the job is either a command line (<job>) or a unit, not both"},
		{"unit and quorum", func(c *Config) { c.JobUnit, c.Quorum = "a.service", 3; c.DeriveTimeouts() }, []string{"job-unit", "quorum"},
			"not with quorum mode (<quorum>): the lease's guard can stop only a job the agent forks, not a unit"},
		{"older key alone", func(c *Config) { c.AcceptKeys = [][]byte{[]byte(strings.Repeat("k", 32))} }, []string{"accept-key-file", "key-file"},
			"needs <key-file> (the key this agent signs with)"},
		{"vip is bind", func(c *Config) {
			c.Bind, c.VIPs = "198.18.0.1", []VIP{{Prefix: netip.MustParsePrefix("198.18.0.1/24")}}
		}, []string{"vip"},
			"198.18.0.1 is the bind address (198.18.0.1): the agent's own address moves with no leadership"},
		{"witness", func(c *Config) { c.Role = "witness" }, []string{"role", "quorum"},
			"a witness only votes in quorum mode, and quorum is off: set <quorum> to N (N counts the candidates and witnesses), or make this node an observer"},
	} {
		c := testConfig()
		tc.edit(&c)
		var re *RelationError
		err := c.Validate()
		if !errors.As(err, &re) {
			t.Errorf("%s: %v, want a RelationError", tc.name, err)
			continue
		}
		if got := re.Text(func(s string) string { return "<" + s + ">" }); got != tc.text || !slices.Equal(re.Settings(), tc.settings) {
			t.Errorf("%s: %q of %q\nwant %q of %q", tc.name, got, re.Settings(), tc.text, tc.settings)
		}
		flags := tc.settings[0] + ": " + re.Text(FlagName)
		if err.Error() != flags || !strings.HasPrefix(flags, tc.settings[0]+": ") {
			t.Errorf("%s: Error %q, want %q", tc.name, err, flags)
		}
	}
	if FlagName("job") != "after --" || FlagName("bind") != "--bind" {
		t.Errorf("FlagName: job %q, bind %q", FlagName("job"), FlagName("bind"))
	}
}

// TestSmallQuorum: a quorum of 1 or 2 is refused, with why and the recipe
// for two hosts, unless asked for (AllowSmallQuorum); 0 and 3 need
// nothing; the ask is only for quorum mode.
func TestSmallQuorum(t *testing.T) {
	for _, tc := range []struct {
		quorum int
		allow  bool
		want   string // "" valid
	}{
		{0, false, ""},
		{1, false, "quorum: 1 is below 3: a majority of 1 is this node alone, so each side of a partition leads (two leaders); two hosts: add a witness (role witness on a third, small host) and set quorum 3 on all three (docs/quorum.md); or set --allow-small-quorum to mean it"},
		{2, false, "quorum: 2 is below 3: a majority of 2 is both nodes, so the leader steps down when either is lost (no failover); two hosts: add a witness (role witness on a third, small host) and set quorum 3 on all three (docs/quorum.md); or set --allow-small-quorum to mean it"},
		{1, true, ""},
		{2, true, ""},
		{3, false, ""},
		{3, true, ""},
		{0, true, "allow-small-quorum: only in quorum mode (set --quorum to N)"},
	} {
		c := testConfig()
		c.Quorum, c.AllowSmallQuorum = tc.quorum, tc.allow
		c.DeriveTimeouts()
		err := c.Validate()
		if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
			t.Errorf("quorum %d, allow %v: %v, want %q", tc.quorum, tc.allow, err, tc.want)
		}
		var re *RelationError
		if tc.want != "" && (!errors.As(err, &re) || re.Settings()[0] != strings.SplitN(tc.want, ":", 2)[0]) {
			t.Errorf("quorum %d, allow %v: not a RelationError of its setting: %#v", tc.quorum, tc.allow, err)
		}
	}
}
