package agent

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

// Defaults of Config. Each says why it is what it is.
const (
	// DefaultCluster is the cluster name when none is given. Agents of
	// different clusters on one LAN ignore each other's packets.
	DefaultCluster = "lanleader"
	// DefaultGossipPort is memberlist's port, as Consul and Serf use it.
	DefaultGossipPort = 7946
	// DefaultElectionPort is the election socket's port: the gossip port
	// plus one, easy to open next to it in a firewall.
	DefaultElectionPort = 7947
	// DefaultHTTP is the HTTP listener: loopback only, so that /status and
	// /metrics are not exposed to the LAN unless asked for.
	DefaultHTTP = "127.0.0.1:9947"
	// DefaultPriority is the priority of a node that sets none (as keepalived).
	DefaultPriority = 100
	// DefaultHeartbeat is the leader's heartbeat interval: one 40-byte
	// multicast packet every 100 ms is nothing on a LAN, and it bounds the
	// failover time.
	DefaultHeartbeat = 100 * time.Millisecond
	// DefaultDiscoverInterval is how often an agent that knows no peer
	// multicasts a discovery beacon. Once it has peers it beacons ten times
	// less often, so that two halves of a LAN that started apart merge.
	DefaultDiscoverInterval = time.Second
	// MinHeartbeat is the shortest heartbeat interval: a resign hold-off
	// (ten heartbeats) must outlast the election's answer timeout (50ms).
	MinHeartbeat = 10 * time.Millisecond
	// DefaultLeaveTimeout bounds the graceful leave at shutdown.
	DefaultLeaveTimeout = 2 * time.Second

	// MinCheckInterval bounds how often a check (a process) may run.
	MinCheckInterval = 100 * time.Millisecond

	// DefaultJobGrace is how long a job has to exit after SIGTERM before
	// its process group is killed: systemd's default TimeoutStopSec is
	// 90 s, Kubernetes' grace period 30 s; 10 s is enough for a worker to
	// finish a unit of work, and short enough for a handover.
	DefaultJobGrace = 10 * time.Second
	// DefaultJobMaxFailures is how many times the job may exit on its
	// own within JobFailureWindow before this node hands over (systemd's
	// StartLimitBurst is 5 too).
	DefaultJobMaxFailures = 5
	// MaxJobMaxFailures bounds JobMaxFailures: beyond it a job never hands
	// over in practice, which 0 says plainly.
	MaxJobMaxFailures = 1000
	// DefaultJobFailureWindow is the window JobMaxFailures counts in, and
	// how long a node that handed over for its job stays at priority 1.
	DefaultJobFailureWindow = time.Minute
	// DefaultHookTimeout bounds a hook: a hook that hangs is killed after
	// it (keepalived's notify scripts have no bound; ours must not pile up).
	DefaultHookTimeout = 10 * time.Second
	// DefaultCheckInterval is how often each health check runs; a check
	// that runs longer than its interval has failed (keepalived's
	// vrrp_script runs every second; a check is a process, so every 2 s).
	DefaultCheckInterval = 2 * time.Second
	// DefaultCheckWeight is how much a failing check lowers the priority:
	// with every node at the default 100, a node whose check fails (50)
	// is smaller than every healthy one.
	DefaultCheckWeight = 50
)

// DefaultGroup4 and DefaultGroup6 are the multicast groups of election
// messages and discovery beacons: one in the IPv4 organisation-local scope
// (239.255.0.0/16, never routed off the site) and one IPv6 link-local group.
var (
	DefaultGroup4 = netip.MustParseAddr("239.255.76.76")
	DefaultGroup6 = netip.MustParseAddr("ff02::4c4c")
)

// Transport names.
const (
	TransportMulticast = "multicast" // one-to-all by multicast, one-to-one by unicast
	TransportUnicast   = "unicast"   // one-to-all as a unicast fan-out to the members memberlist knows
)

// Detector names.
const (
	DetectorFixed = "fixed" // suspect SuspectAfter after the last heartbeat
	DetectorPhi   = "phi"   // phi-accrual, threshold 8
)

// adminScoped is 239.0.0.0/8, the administratively scoped IPv4 multicast
// groups (RFC 2365), which routers keep inside the site.
var adminScoped = netip.MustParsePrefix("239.0.0.0/8")

// MaxNodeID is the largest node_id: 2^53−1, so that every id survives a
// trip through JSON tools that read numbers as doubles (jq, JavaScript).
const MaxNodeID = 1<<53 - 1

// Config is the configuration of one agent. Start from DefaultConfig, a
// working agent for this host, and change what differs: zero means zero
// (no HTTP listener, no preemption, a free port), never "the default".
// Every field says its default, DefaultConfig's value.
type Config struct {
	// Name is this node's name in memberlist and /status. Unique in the
	// cluster. Default: the host name.
	Name string
	// NodeID is the election node_id, 1 to MaxNodeID, unique in the
	// cluster and stable across restarts. Default: derived from
	// /etc/machine-id (or, without one, the host name); see DefaultNodeID.
	NodeID uint64
	// Priority is this node's priority, 1 to 65535; the larger key
	// (priority, node_id) leads. Default 100.
	Priority uint16
	// Cluster is the cluster name. Default "lanleader".
	Cluster string

	// Bind is memberlist's address, "ip:port" or "ip" (port 7946).
	// Port 0 picks a free port. Default 0.0.0.0:7946: all addresses,
	// announcing an IPv4 address of the default route's interface (or
	// else of the first up, multicast-capable interface, private ranges
	// first); the election socket binds that address. An IPv6 agent needs
	// its global or unique-local address: [::] and link-local addresses
	// are refused.
	Bind string
	// ElectionPort is the election socket's UDP port, on Bind's address.
	// 0 picks a free port (with a Bind of port 0, set it to 0 too).
	// Default 7947. Every agent of a multicast cluster must
	// use the same election port.
	ElectionPort int
	// Join are memberlist addresses ("host:port", or "host" for port
	// 7946) of peers to join. Joining retries in the background until one
	// answers, and again whenever the node finds itself alone. Default
	// none.
	Join []string
	// HTTP is the address of /status, /healthz and /metrics. Empty
	// disables the listener. Default 127.0.0.1:9947.
	HTTP string

	// Heartbeat is the leader's heartbeat interval, at least 10ms.
	// Default 100ms.
	Heartbeat time.Duration
	// SuspectAfter is the fixed detector's timeout after the last
	// heartbeat, longer than Heartbeat; it is also how long a starting
	// node listens for a leader before it elects (with either detector).
	// Default 3 × Heartbeat (DefaultSuspectAfter; DeriveTimeouts derives
	// it again after a change of Heartbeat).
	SuspectAfter time.Duration
	// Detector is "fixed" or "phi". Default "fixed".
	Detector string
	// Algorithm is the election algorithm, one of election.Algorithms:
	// "bully" (the default), "ring", "chang-roberts",
	// "hirschberg-sinclair". Every member of a cluster must run the same
	// one: a member that announces another takes no part in elections.
	Algorithm string
	// Transport is "multicast" or "unicast". Default "multicast".
	Transport string
	// Group is the multicast group: in 239.0.0.0/8 (administratively
	// scoped, kept inside the site by routers) for IPv4, in ff02::/16
	// (link-local) for IPv6, of Bind's family. The zero Addr, the
	// default, is the default group of Bind's family, chosen by Start:
	// 239.255.76.76, or ff02::4c4c when Bind is IPv6.
	Group netip.Addr
	// Preempt: a node with a larger key takes leadership from a smaller
	// leader (the textbook bully). false is keepalived's nopreempt.
	// Default true.
	Preempt bool
	// PreemptDelay: after it starts, a node waits this long before it
	// takes over from a smaller leader. Default 0.
	PreemptDelay time.Duration
	// Quorum is the expected cluster size N for split-brain safety; 0,
	// the default, is the textbook (a leader on each side of a partition).
	// With N > 0 a node leads, and runs the job, only while a majority of
	// N (itself included) acknowledges its heartbeats within Lease; the
	// job is killed at the end of the lease at the latest, by its guard,
	// even while the agent itself is stopped. Every member must use the
	// same N. At most wire.MaxMembers.
	Quorum int
	// Lease (quorum mode) is how long after a heartbeat the leader leads
	// on the acknowledgements of it. A leader that cannot renew it steps
	// down one Heartbeat before it ends: its job gets SIGTERM then, and
	// SIGKILL from its guard at the end. Longer than two heartbeats; 0
	// without quorum. Default 0; in quorum mode SuspectAfter + Heartbeat
	// (400ms; DefaultLease, DeriveTimeouts): two heartbeats may be lost.
	Lease time.Duration
	// LeaseMargin (quorum mode) is how much longer than Lease the
	// followers wait, after their last acknowledgement, before they
	// support another leader: it covers the clock-rate drift between
	// hosts (at least election.MinLeaseMargin(Lease), for 500 ppm) and
	// the time a job takes to die of SIGKILL; 0 without quorum. Default
	// 0; in quorum mode Lease/10 (DefaultLeaseMargin, DeriveTimeouts).
	LeaseMargin time.Duration
	// StateFile (quorum mode) is where the agent keeps the last term it
	// voted in, written and fsynced before it acts on a vote, so that a
	// restart never gives one term to two leaders (the term is the job's
	// fencing token). Its directory must exist. Default none: the votes
	// are lost with the process (a warning says so at the start).
	StateFile string
	// initialTerm is the voted term read from StateFile by New.
	initialTerm uint64

	// DiscoverInterval is the beacon interval while no peer is known; ten
	// times it once peers are known. Negative turns beacons off; 0 is
	// refused. Beacons are multicast, so the unicast transport never
	// sends them. Default 1s.
	DiscoverInterval time.Duration

	// Job is the command line of the job run while this node leads
	// (Job[0] is looked up in PATH), none when empty. It runs in its own
	// process group with LANLEADER_TERM, LANLEADER_NODE_ID,
	// LANLEADER_LEADER_ID and LANLEADER_NAME in its environment, under a
	// guard process that stops the group should the agent die. Default
	// none.
	Job []string
	// JobGrace is how long the job's process group has after SIGTERM
	// before SIGKILL. Default 10s.
	JobGrace time.Duration
	// JobMaxFailures: after this many exits of the job on its own within
	// JobFailureWindow, the node drops to priority 1 for the window and
	// resigns, so that a healthier node takes over. 0 to 1000; 0: never.
	// Default 5.
	JobMaxFailures int
	// JobFailureWindow is the window of JobMaxFailures, and how long the
	// node stays at priority 1 after it handed over. Default 1m.
	JobFailureWindow time.Duration

	// OnLeader, OnFollower and OnChange are shell commands (sh -c) run
	// when this node becomes leader, when it stops leading or first
	// follows a leader, and on every change of state or leader, in that
	// order, one at a time, never blocking the election. They get the
	// job's variables and LANLEADER_STATE. Default none.
	OnLeader, OnFollower, OnChange string
	// HookTimeout bounds each hook run; a hook still running then is
	// killed (its process group) and counted. Default 10s.
	HookTimeout time.Duration

	// Checks are health checks, shell commands (sh -c) run every
	// CheckInterval; one that exits non-zero, or runs longer than the
	// interval, lowers the node's priority by CheckWeight until it passes
	// again (never below 1). Default none.
	Checks []string
	// CheckInterval is how often each check runs, at least 100ms.
	// Default 2s.
	CheckInterval time.Duration
	// CheckWeight is what a failing check takes off the priority, 1 to
	// 65535. Default 50.
	CheckWeight int

	// Key is the cluster's secret (lanleader run reads it from
	// --key-file), at least MinKeyLen bytes; every agent of the cluster
	// has the same. With a key every election packet carries an
	// HMAC-SHA256 tag and a replay-protected sequence, packets without a
	// valid tag are dropped, memberlist's traffic is encrypted (AES-256,
	// its keyring) with a key derived from it, and POST /resign needs a
	// token derived from it (ResignToken). Default none: no
	// authentication, and an agent with a key cannot join one without.
	Key []byte
	// AcceptKeys are older secrets still accepted, never used to sign or
	// encrypt: for a key rotation without downtime (--accept-key-file).
	// Each at least MinKeyLen bytes; only with Key. Default none.
	AcceptKeys [][]byte

	// Logger receives one line per state change; nil logs nothing.
	// Default: text to stderr at level info.
	Logger *slog.Logger
	// Version is the build's version for lanleader_build_info and
	// /status. Default "".
	Version string
}

// DefaultConfig is the configuration of an agent with every default, for
// this host: what lanleader run uses with no flags. Each field is set, and
// zero means zero: a caller changes what it needs and leaves the rest. The
// why of each value is on its constant; the others say it here.
//
// Three defaults follow from other fields; DefaultConfig derives them from
// its own values, and a caller that changes those recomputes them:
// SuspectAfter, Lease and LeaseMargin follow Heartbeat and Quorum
// (DeriveTimeouts). The multicast group follows Bind's IP family, and is
// chosen by Start while Group is the zero Addr.
func DefaultConfig() Config {
	// The name operators know the host by; unique on a LAN.
	name, _ := os.Hostname()
	c := Config{
		Name: name,
		// Stable across restarts and reinstalls of the agent, and unique per
		// host without anyone choosing it (see DefaultNodeID).
		NodeID:   DefaultNodeID(),
		Priority: DefaultPriority,
		Cluster:  DefaultCluster,
		// Every address, so that the agent starts before the network is
		// fully configured; it announces the default route's.
		Bind:         net.JoinHostPort("0.0.0.0", strconv.Itoa(DefaultGossipPort)),
		ElectionPort: DefaultElectionPort,
		HTTP:         DefaultHTTP,
		Heartbeat:    DefaultHeartbeat,
		// The fixed timeout is predictable and needs no history; phi-accrual
		// must first learn the heartbeats' jitter.
		Detector: DetectorFixed,
		// Bully elects in one round trip (one multicast each way on a LAN);
		// a ring election goes round every member.
		Algorithm: election.AlgorithmBully,
		// One packet for a message to all; clouds that drop multicast set
		// unicast.
		Transport: TransportMulticast,
		// The textbook bully: the largest key leads, so that the hosts an
		// operator prefers lead whenever they are up.
		Preempt: true,
		// PreemptDelay 0: a returning node takes over at once.
		// Quorum 0: the textbook, for which a LAN needs no cluster size;
		// quorum mode is chosen with the size.
		DiscoverInterval: DefaultDiscoverInterval,
		JobGrace:         DefaultJobGrace,
		JobMaxFailures:   DefaultJobMaxFailures,
		JobFailureWindow: DefaultJobFailureWindow,
		HookTimeout:      DefaultHookTimeout,
		CheckInterval:    DefaultCheckInterval,
		CheckWeight:      DefaultCheckWeight,
		// Standard error, at level info: what systemd's journal collects.
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}
	c.DeriveTimeouts()
	return c
}

// DefaultSuspectAfter is the default SuspectAfter for a heartbeat
// interval: three heartbeats, so that one or two lost in a row are not
// taken for a failure, and a crashed leader is still replaced within a
// few tenths of a second with the default heartbeat.
func DefaultSuspectAfter(heartbeat time.Duration) time.Duration { return 3 * heartbeat }

// DefaultLease is the default Lease (quorum mode) for a heartbeat interval
// and SuspectAfter: a heartbeat more than SuspectAfter, so that two
// heartbeats may be lost in a row without a change of leader.
func DefaultLease(heartbeat, suspectAfter time.Duration) time.Duration {
	return suspectAfter + heartbeat
}

// DefaultLeaseMargin is the default LeaseMargin (quorum mode) for a lease:
// a tenth of it, which leaves a SIGKILLed job time to die, and never less
// than election.MinLeaseMargin, the clock drift over the lease.
func DefaultLeaseMargin(lease time.Duration) time.Duration {
	return max(lease/10, election.MinLeaseMargin(lease))
}

// DeriveTimeouts sets the timeouts whose defaults follow from Heartbeat and
// Quorum to those defaults: SuspectAfter (DefaultSuspectAfter), and with
// Quorum > 0 Lease and LeaseMargin (DefaultLease, DefaultLeaseMargin), 0
// without. DefaultConfig derives its own so; call it after changing
// Heartbeat or Quorum, then set any of the three that should differ.
func (c *Config) DeriveTimeouts() {
	c.SuspectAfter = DefaultSuspectAfter(c.Heartbeat)
	c.Lease, c.LeaseMargin = 0, 0
	if c.Quorum > 0 {
		c.Lease = DefaultLease(c.Heartbeat, c.SuspectAfter)
		c.LeaseMargin = DefaultLeaseMargin(c.Lease)
	}
}

// DefaultNodeID derives a node_id from /etc/machine-id, or from the host
// name where there is none: the first bytes of a SHA-256, cut to
// 1 … MaxNodeID. It is stable across restarts of the same host.
func DefaultNodeID() uint64 {
	seed, err := os.ReadFile("/etc/machine-id")
	if err != nil || len(strings.TrimSpace(string(seed))) == 0 {
		h, _ := os.Hostname()
		seed = []byte(h)
	}
	sum := sha256.Sum256(append([]byte("lanleader node id\x00"), strings.TrimSpace(string(seed))...))
	id := binary.BigEndian.Uint64(sum[:8]) & MaxNodeID
	if id == 0 {
		id = 1
	}
	return id
}

// BindAddrPort returns Bind as an address and port (port 7946 when Bind
// has none).
func (c *Config) BindAddrPort() (netip.AddrPort, error) {
	s := c.Bind
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap, nil
	}
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return netip.AddrPortFrom(a, DefaultGossipPort), nil
	}
	return netip.AddrPort{}, fmt.Errorf("bind %q: want an IP address with an optional port, like 198.18.0.1:7946", s)
}

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

// A Range is the range of an integer setting, both ends included.
type Range struct{ Min, Max int64 }

// OutOfRange is the error for value, the text of an integer outside r.
func (r Range) OutOfRange(value string) error {
	return fmt.Errorf("%s out of range %d…%d", value, r.Min, r.Max)
}

// contains says whether v, of any integer type, is in r.
func (r Range) contains(v any) bool {
	n, err := strconv.ParseInt(fmt.Sprint(v), 10, 64)
	return err == nil && r.Min <= n && n <= r.Max
}

// intRanges are the ranges of Config's integer settings.
var intRanges = map[string]Range{
	"node-id":          {1, MaxNodeID},
	"priority":         {1, 65535},
	"election-port":    {0, 65535},
	"quorum":           {0, wire.MaxMembers},
	"job-max-failures": {0, MaxJobMaxFailures},
	"check-weight":     {1, 65535},
}

// IntRange is the range Validate holds the integer setting named (as its
// flag: "priority") to, and false for a setting that is not an integer. A
// front end that reads a number too large for the field's type says
// OutOfRange with it.
func IntRange(setting string) (Range, bool) {
	r, ok := intRanges[setting]
	return r, ok
}

// problems collects what Validate finds.
type problems []error

// setting records a fault of one setting's value, whatever the others are.
func (p *problems) setting(name, format string, args ...any) {
	*p = append(*p, &SettingError{Setting: name, Err: fmt.Errorf(format, args...)})
}

// relation records a fault of how settings relate, or of one that names
// itself otherwise.
func (p *problems) relation(format string, args ...any) {
	*p = append(*p, fmt.Errorf(format, args...))
}

// Validate checks every field and names the one at fault, one line each;
// a fault of a field alone is a *SettingError. It opens no socket: a port
// in use or an address not on this host is found by Start.
func (c *Config) Validate() error {
	var p problems
	c.checkIntegers(&p)
	c.checkIdentity(&p)
	c.checkNetwork(&p)
	c.checkProtocol(&p)
	c.checkQuorum(&p)
	c.checkProcesses(&p)
	c.checkKeys(&p)
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
	for _, f := range []struct {
		setting string
		value   any
	}{
		{"node-id", c.NodeID}, {"priority", c.Priority}, {"election-port", c.ElectionPort},
		{"quorum", c.Quorum}, {"job-max-failures", c.JobMaxFailures}, {"check-weight", c.CheckWeight},
	} {
		if r := intRanges[f.setting]; !r.contains(f.value) {
			p.setting(f.setting, "%v", r.OutOfRange(fmt.Sprint(f.value)))
		}
	}
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
		p.relation("election-port: %d is also the gossip port of bind %s", c.ElectionPort, c.Bind)
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
		p.relation("multicast-group: %v and bind %v are not of one IP family", g, bind.Addr())
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
	if c.Heartbeat < MinHeartbeat {
		p.setting("heartbeat", "%v is shorter than %v", c.Heartbeat, MinHeartbeat)
	}
	if c.SuspectAfter <= c.Heartbeat {
		p.relation("suspect-after: %v must be longer than heartbeat (%v), or every gap between heartbeats is a failure", c.SuspectAfter, c.Heartbeat)
	}
	if c.PreemptDelay < 0 {
		p.setting("preempt-delay", "%v must not be negative", c.PreemptDelay)
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
	if c.Quorum > 0 {
		if c.Lease <= 2*c.Heartbeat {
			p.relation("lease: %v must be longer than two heartbeats (%v): a leader steps down a heartbeat before its lease ends, and needs another heartbeat to renew it", c.Lease, 2*c.Heartbeat)
		}
		if m := election.MinLeaseMargin(c.Lease); c.LeaseMargin < m {
			p.relation("lease-margin: %v is less than %v, the clock drift of %v ppm over a lease of %v", c.LeaseMargin, m, election.MaxClockDrift*1e6, c.Lease)
		}
		return
	}
	for _, s := range []struct {
		name string
		set  bool
	}{{"lease", c.Lease != 0}, {"lease-margin", c.LeaseMargin != 0}, {"state-file", c.StateFile != ""}} {
		if s.set {
			p.relation("%s: only with quorum (--quorum N)", s.name)
		}
	}
}

// checkProcesses checks the job, the hooks and the health checks.
func (c *Config) checkProcesses(p *problems) {
	if len(c.Job) > 0 && c.Job[0] == "" {
		p.setting("job", "empty command name")
	}
	for _, d := range []struct {
		setting string
		d       time.Duration
	}{{"job-grace", c.JobGrace}, {"job-failure-window", c.JobFailureWindow}, {"hook-timeout", c.HookTimeout}} {
		if d.d < 0 {
			p.setting(d.setting, "%v must not be negative", d.d)
		}
	}
	for _, ch := range c.Checks {
		if strings.TrimSpace(ch) == "" {
			p.setting("check", "empty command")
		}
	}
	if c.CheckInterval < MinCheckInterval {
		p.setting("check-interval", "%v is shorter than %v", c.CheckInterval, MinCheckInterval)
	}
}

// checkKeys checks the lengths of the keys, and that older keys come with
// a key to sign with.
func (c *Config) checkKeys(p *problems) {
	if len(c.Key) > 0 && len(c.Key) < MinKeyLen {
		p.setting("key-file", "the key is %d bytes, want at least %d", len(c.Key), MinKeyLen)
	}
	if len(c.AcceptKeys) > 0 && len(c.Key) == 0 {
		p.relation("accept-key-file: needs --key-file (the key this agent signs with)")
	}
	for _, k := range c.AcceptKeys {
		if len(k) < MinKeyLen {
			p.setting("accept-key-file", "the key is %d bytes, want at least %d", len(k), MinKeyLen)
		}
	}
}

// ElectionConfig is the election machine's configuration for this agent.
func (c *Config) ElectionConfig() election.Config {
	ec := election.Config{
		ID:                c.NodeID,
		Priority:          c.Priority,
		HeartbeatInterval: c.Heartbeat,
		SuspectAfter:      c.SuspectAfter,
		Preempt:           c.Preempt,
		PreemptDelay:      c.PreemptDelay,
		Algorithm:         c.Algorithm,
		Quorum:            c.Quorum,
		Lease:             c.Lease,
		StopBefore:        c.Heartbeat,
		LeaseMargin:       c.LeaseMargin,
		InitialTerm:       c.initialTerm,
	}
	return ec.WithDefaults()
}
