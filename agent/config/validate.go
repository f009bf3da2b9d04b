package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

// Config.Validate: every setting checked once, here, for the command
// line and the config file alike, and errors that name the setting.

// A SettingError is a value of one setting that is wrong whatever the
// others are: out of its range, not one of its names, malformed. A front
// end that knows where the value came from (a flag, a line of a file) may
// name that instead of the setting.
type SettingError struct {
	Setting string // the setting, named as lanleader run's flag: "node-id"
	Err     error  // what is wrong with the value, without the setting's name
}

func (e *SettingError) Error() string { return e.Setting + ": " + e.Err.Error() }

func (e *SettingError) Unwrap() error { return e.Err }

// A RelationError is a fault of how settings relate: a witness without
// quorum, a unit beside a command line, a virtual address that is the
// bind address. Its message begins with Setting, the one to change, and
// names the others it concerns by Refs, so that a front end that knows
// where each came from (a flag, a line of a file) names each so (Text);
// Error names them as flags.
type RelationError struct {
	Setting string // the setting the message begins with, named as its flag: "vip"
	format  string
	args    []any // the message's arguments; a Ref names a setting
}

// A Ref is a setting, named as its flag ("bind"), in a RelationError's
// message.
type Ref string

// Error is the message with every setting named as its flag: "vip: …
// (--bind)".
func (e *RelationError) Error() string { return e.Setting + ": " + e.Text(FlagName) }

// Text is the message without its leading setting, each Ref in it named
// by name.
func (e *RelationError) Text(name func(setting string) string) string {
	args := make([]any, len(e.args))
	for i, a := range e.args {
		if r, ok := a.(Ref); ok {
			a = name(string(r))
		}
		args[i] = a
	}
	return fmt.Sprintf(e.format, args...)
}

// Settings are the settings the error concerns: Setting, then each Ref
// of its message.
func (e *RelationError) Settings() []string {
	out := []string{e.Setting}
	for _, a := range e.args {
		if r, ok := a.(Ref); ok && !slices.Contains(out, string(r)) {
			out = append(out, string(r))
		}
	}
	return out
}

// FlagName names a setting as the command line gives it: "--bind", and
// the job "after --".
func FlagName(setting string) string {
	if s := Lookup(setting); s != nil && !s.IsFlag() {
		return "after --"
	}
	return "--" + setting
}

// A Range is the range of an integer setting, both ends included.
type Range struct{ Min, Max int64 }

// OutOfRange is the error for value, the text of an integer outside r.
func (r Range) OutOfRange(value string) error {
	return fmt.Errorf("%s out of range %d…%d", value, r.Min, r.Max)
}

// IntRange is the range Validate holds the integer setting named (as its
// flag: "priority") to, and false for a setting that is not an integer. A
// front end that reads a number too large for the field's type says
// OutOfRange with it.
func IntRange(setting string) (Range, bool) {
	if s := Lookup(setting); s != nil && s.Range != nil {
		return *s.Range, true
	}
	return Range{}, false
}

// contains says whether n is in r.
func (r Range) contains(n int64) bool { return r.Min <= n && n <= r.Max }

// problems collects what Validate finds.
type problems []error

// setting records a fault of one setting's value, whatever the others are.
func (p *problems) setting(name, format string, args ...any) {
	*p = append(*p, &SettingError{Setting: name, Err: fmt.Errorf(format, args...)})
}

// namedDuration is a duration setting's value.
type namedDuration struct {
	setting string
	d       time.Duration
}

// notNegative refuses each negative duration.
func (p *problems) notNegative(ds ...namedDuration) {
	for _, d := range ds {
		if d.d < 0 {
			p.setting(d.setting, "%v must not be negative", d.d)
		}
	}
}

// relation records a fault of how setting relates to the others its
// message names (Ref).
func (p *problems) relation(setting, format string, args ...any) {
	*p = append(*p, &RelationError{Setting: setting, format: format, args: args})
}

// Validate checks every field and names the one at fault, one line each;
// a fault of a field alone is a *SettingError. It opens no socket: a port
// in use or an address not on this host is found by Start.
func (c *Config) Validate() error {
	var p problems
	c.checkIntegers(&p)
	c.checkDurations(&p)
	c.checkIdentity(&p)
	c.checkNetwork(&p)
	c.checkProtocol(&p)
	c.checkQuorum(&p)
	c.checkRole(&p)
	c.checkProcesses(&p)
	c.checkKeys(&p)
	c.checkVIPs(&p)
	if len(p) == 0 {
		// The election machine's own cross-checks; the checks above name
		// the flags of everything an operator can set.
		if err := c.ElectionConfig().Validate(); err != nil {
			p = append(p, err)
		}
	}
	return errors.Join(p...)
}

// checkIntegers holds every integer setting to its range.
func (c *Config) checkIntegers(p *problems) {
	r := &Run{Config: *c}
	for i := range Settings {
		s := &Settings[i]
		if s.Range == nil {
			continue
		}
		switch v := intValue(s.ptr(r)); {
		case s.Flag == "check-weight" && v < 0:
			p.setting(s.Flag, "%v", NegativeWeight(v))
		case !s.Range.contains(v):
			p.setting(s.Flag, "%v", s.Range.OutOfRange(strconv.FormatInt(v, 10)))
		}
	}
}

// checkDurations holds every duration setting to its floor and its
// ceiling. The timeouts that follow the heartbeat are not judged again
// while the heartbeat is above its own ceiling: one error says it.
func (c *Config) checkDurations(p *problems) {
	r := &Run{Config: *c}
	for i := range Settings {
		s := &Settings[i]
		if s.Floor == 0 && s.Ceiling == 0 {
			continue
		}
		d := *s.ptr(r).(*time.Duration)
		switch {
		case s.Floor > 0 && d < s.Floor:
			p.setting(s.Flag, "%v is shorter than %v", d, s.Floor)
		case s.Ceiling > 0 && d > s.Ceiling && !(c.Heartbeat > MaxHeartbeat && followsHeartbeat[s.Flag]):
			p.setting(s.Flag, "%s is above the ceiling of %s", DurationText(d), DurationText(s.Ceiling))
		}
	}
}

// followsHeartbeat are the settings whose default is a multiple of the
// heartbeat.
var followsHeartbeat = map[string]bool{"suspect-after": true, "lease": true, "lease-margin": true}

// DurationText is d as a person writes it: 1m, 1h30m, 100ms (not 1m0s).
func DurationText(d time.Duration) string {
	t := d.String()
	if strings.HasSuffix(t, "m0s") {
		t = strings.TrimSuffix(t, "0s")
	}
	if strings.HasSuffix(t, "h0m") {
		t = strings.TrimSuffix(t, "0m")
	}
	return t
}

// checkIdentity checks the node's and the cluster's names.
func (c *Config) checkIdentity(p *problems) {
	if c.Name == "" {
		p.setting("name", "must not be empty (and the host name is unknown)")
	}
	if c.Cluster == "" {
		p.setting("cluster", "must not be empty")
	}
	if len(c.Cluster) > 255 {
		p.setting("cluster", "%d bytes, at most 255 (it is memberlist's label)", len(c.Cluster))
	}
}

// checkNetwork checks the addresses and ports.
func (c *Config) checkNetwork(p *problems) {
	bind, err := c.BindAddrPort()
	if err != nil {
		*p = append(*p, err)
	}
	if err == nil && c.ElectionPort != 0 && int(bind.Port()) == c.ElectionPort {
		p.relation("election-port", "%d is also the gossip port of the bind address %s (%v)", c.ElectionPort, c.Bind, Ref("bind"))
	}
	for _, j := range c.Join {
		if _, _, err := net.SplitHostPort(j); err != nil && strings.Contains(j, ":") && !strings.HasPrefix(j, "[") {
			if _, err2 := netip.ParseAddr(j); err2 != nil {
				p.setting("join", "%q is not host, host:port or [ipv6]:port", j)
			}
		}
		if j == "" {
			p.setting("join", "empty address")
		}
	}
	if c.HTTP != "" {
		if _, _, err := net.SplitHostPort(c.HTTP); err != nil {
			p.setting("http", `%q is not host:port (like 127.0.0.1:9947) or "off"`, c.HTTP)
		}
	}
	switch g := c.Group; {
	case !g.IsValid():
	case g.Is4() && !adminScoped.Contains(g):
		p.setting("multicast-group", "%v is not an administratively scoped IPv4 group (239.0.0.0/8): packets sent with TTL 255 to another group could be routed off the LAN", g)
	case g.Is6() && !g.IsLinkLocalMulticast():
		p.setting("multicast-group", "%v is not a link-local IPv6 group (ff02::/16)", g)
	case err == nil && g.Is4() != (bind.Addr().Unmap().Is4() || bind.Addr().IsUnspecified() && bind.Addr().Is4()):
		p.relation("multicast-group", "%v and the bind address %v (%v) are not of one IP family", g, bind.Addr(), Ref("bind"))
	}
	if c.DiscoverInterval == 0 {
		p.setting("discover-interval", "0 would beacon without pause; a negative interval turns the beacons off")
	}
}

// checkProtocol checks the names of the election's parts and its timing.
func (c *Config) checkProtocol(p *problems) {
	for _, n := range []struct {
		setting, value string
		names          []string
	}{
		{"detector", c.Detector, []string{DetectorFixed, DetectorPhi}},
		{"algorithm", c.Algorithm, election.Algorithms},
		{"transport", c.Transport, []string{TransportMulticast, TransportUnicast}},
	} {
		if !slices.Contains(n.names, n.value) {
			p.setting(n.setting, "%q is not %s", n.value, orList(n.names))
		}
	}
	if c.SuspectAfter <= c.Heartbeat {
		p.relation("suspect-after", "%v must be longer than %v (%v), or every gap between heartbeats is a failure", c.SuspectAfter, Ref("heartbeat"), c.Heartbeat)
	}
	if c.PreemptDelay < 0 {
		p.setting("preempt-delay", "%v must not be negative", c.PreemptDelay)
	}
	if c.StartTimeout < 0 {
		p.setting("start-timeout", "%v must not be negative", c.StartTimeout)
	}
}

// orList is names as "a, b or c".
func orList(names []string) string {
	last := len(names) - 1
	if last == 0 {
		return names[0]
	}
	return strings.Join(names[:last], ", ") + " or " + names[last]
}

// checkQuorum checks the lease of quorum mode, and that its settings are
// given only with it.
func (c *Config) checkQuorum(p *problems) {
	if c.Quorum > 0 && c.Quorum < MinQuorum && !c.AllowSmallQuorum {
		why := "a majority of 1 is this node alone, so each side of a partition leads (two leaders)"
		if c.Quorum == 2 {
			why = "a majority of 2 is both nodes, so the leader steps down when either is lost (no failover)"
		}
		p.relation("quorum", "%d is below %d: %s; two hosts: add a witness (role witness on a third, small host) and set quorum 3 on all three (docs/quorum.md); or set %v to mean it",
			c.Quorum, MinQuorum, why, Ref("allow-small-quorum"))
	}
	if c.Quorum > 0 {
		if c.Lease <= 2*c.Heartbeat {
			p.relation("lease", "%v must be longer than two heartbeats (%v, twice %v): a leader steps down a heartbeat before its lease ends, and needs another heartbeat to renew it", c.Lease, 2*c.Heartbeat, Ref("heartbeat"))
		}
		if m := election.MinLeaseMargin(c.Lease); c.LeaseMargin < m {
			p.relation("lease-margin", "%v is less than %v, the clock drift of %v ppm over a lease of %v (%v)", c.LeaseMargin, m, election.MaxClockDrift*1e6, c.Lease, Ref("lease"))
		}
		return
	}
	for _, s := range []struct {
		name string
		set  bool
	}{{"lease", c.Lease != 0}, {"lease-margin", c.LeaseMargin != 0}, {"state-file", c.StateFile != ""}, {"allow-small-quorum", c.AllowSmallQuorum}} {
		if s.set {
			p.relation(s.name, "only in quorum mode (set %v to N)", Ref("quorum"))
		}
	}
}

// checkProcesses checks the job, the hooks and the health checks.
func (c *Config) checkProcesses(p *problems) {
	if len(c.Job) > 0 && c.Job[0] == "" {
		p.setting("job", "empty command name")
	}
	c.checkJobUnit(p)
	if c.JobMode != "" && c.JobMode != JobModeAlways && c.JobMode != JobModeOnce {
		p.setting("job-mode", "%q is not %s or %s", c.JobMode, JobModeAlways, JobModeOnce)
	}
	p.notNegative(namedDuration{"takeover-wait", c.TakeoverWait})
	p.notNegative(namedDuration{"job-grace", c.JobGrace}, namedDuration{"job-failure-window", c.JobFailureWindow},
		namedDuration{"hook-timeout", c.HookTimeout})
	c.checkChecks(p)
}

// unitName is a systemd service's name: no template without its
// instance (x@.service), no path.
var unitName = regexp.MustCompile(`^[A-Za-z0-9:_.\\-]+(@[A-Za-z0-9:_.\\-]+)?\.service$`)

// checkJobUnit checks the job's unit: a service's name, and not beside a
// job's command line nor in quorum mode.
func (c *Config) checkJobUnit(p *problems) {
	if c.JobUnit == "" {
		return
	}
	if !unitName.MatchString(c.JobUnit) || len(c.JobUnit) > 255 {
		p.setting("job-unit", "%q is not the name of a systemd service (like lanleader-job.service)", c.JobUnit)
	}
	if len(c.Job) > 0 {
		p.relation("job-unit", "the job is either a command line (%v) or a unit, not both", Ref("job"))
	}
	if c.Quorum > 0 {
		p.relation("job-unit", "not with quorum mode (%v): the lease's guard can stop only a job the agent forks, not a unit", Ref("quorum"))
	}
}

// checkKeys checks the lengths of the keys, and that older keys come with
// a key to sign with.
func (c *Config) checkKeys(p *problems) {
	if len(c.Key) > 0 && len(c.Key) < wire.MinKeyLen {
		p.setting("key-file", "the key is %d bytes, want at least %d", len(c.Key), wire.MinKeyLen)
	}
	if len(c.AcceptKeys) > 0 && len(c.Key) == 0 {
		p.relation("accept-key-file", "needs %v (the key this agent signs with)", Ref("key-file"))
	}
	for _, k := range c.AcceptKeys {
		if len(k) < wire.MinKeyLen {
			p.setting("accept-key-file", "the key is %d bytes, want at least %d", len(k), wire.MinKeyLen)
		}
	}
}

// checkVIPs checks the virtual addresses and their announcements. The
// interfaces are looked up in /sys/class/net, which opens no socket.
func (c *Config) checkVIPs(p *problems) {
	bind, bindErr := c.BindAddrPort()
	seen := map[netip.Addr]bool{}
	var first netip.Prefix // the first valid address: the list's family
	for _, v := range c.VIPs {
		a := v.Prefix.Addr()
		switch {
		case !v.Prefix.IsValid():
			p.setting("vip", "%q is not an address with a prefix length, like 192.0.2.100/24", v.Prefix.String())
			continue
		case !a.IsGlobalUnicast() || a.Zone() != "":
			p.setting("vip", "%v is not a unicast address that hosts can share (not loopback, link-local, multicast or unspecified)", v.Prefix)
			continue
		case v.Prefix.Bits() == 0:
			p.setting("vip", "%v: a prefix length of 0 would put the whole address space on the interface", v.Prefix)
			continue
		}
		if seen[a] {
			p.setting("vip", "%v is given twice", a)
		}
		seen[a] = true
		if !first.IsValid() {
			first = v.Prefix
		} else if first.Addr().Is4() != a.Is4() {
			p.setting("vip", "%v and %v are not of one IP family: a leader announces one family's addresses (as keepalived refuses both in one vrrp_instance); run a second agent for the other", first, v.Prefix)
		}
		if bindErr == nil && a == bind.Addr().Unmap() {
			p.relation("vip", "%v is the bind address (%s): the agent's own address moves with no leadership", a, c.Bind)
		}
		if v.Dev != "" {
			// A node that never leads never holds the addresses: its
			// configuration may be the candidates', interfaces and all.
			if !validIfName(v.Dev) {
				p.setting("vip", "%q is not an interface name", v.Dev)
			} else if _, err := os.Stat("/sys/class/net/" + v.Dev); err != nil && c.ElectionRole().MayLead() {
				p.relation("vip", "%v: no interface %q on this host (it has %s)", v.Prefix, v.Dev, strings.Join(interfaceNames(), ", "))
			}
		}
	}
	p.notNegative(namedDuration{"vip-announce-interval", c.VIPAnnounceInterval}, namedDuration{"vip-announce-delay", c.VIPAnnounceDelay},
		namedDuration{"vip-announce-refresh", c.VIPAnnounceRefresh})
}

// validIfName: a Linux interface name (IFNAMSIZ 16, a NUL included; no
// '/', no white space, not "." or "..").
func validIfName(s string) bool {
	return s != "" && len(s) < 16 && s != "." && s != ".." && !strings.ContainsAny(s, "/ \t\n:")
}

// interfaceNames lists this host's interfaces, for error messages.
func interfaceNames() []string {
	ents, _ := os.ReadDir("/sys/class/net")
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}
