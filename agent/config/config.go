package config

import (
	"log/slog"
	"net/netip"
	"time"
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
	// multicasts a discovery beacon. Once it has peers it beacons n times
	// less often in a cluster of n (at least ten times), so that two
	// halves of a LAN that started apart merge, and the LAN as a whole
	// sends about one beacon per interval whatever its size.
	DefaultDiscoverInterval = time.Second
	// MinHeartbeat is the shortest heartbeat interval: a resign hold-off
	// (ten heartbeats) must outlast the election's answer timeout (50ms).
	MinHeartbeat = 10 * time.Millisecond
	// MinQuorum is the smallest Quorum that survives the loss of a node
	// without two leaders: a majority of 3 is 2. Below it a Quorum needs
	// AllowSmallQuorum.
	MinQuorum = 3
	// MaxHeartbeat is the longest heartbeat interval. A LAN tool detects
	// a failure in seconds (keepalived's advert_int stops at 255s, and is
	// 1s in practice); a minute already means a failover of three, and a
	// typo such as 1000h a crashed leader nobody replaces for months.
	MaxHeartbeat = time.Minute
	// MaxSuspectAfter bounds SuspectAfter, and MaxLease and
	// MaxLeaseMargin the lease and its margin of quorum mode: ten
	// minutes is more than three of the longest heartbeats (the default
	// of SuspectAfter, and a lease longer than two of them), and a
	// failover that takes longer is no failover.
	MaxSuspectAfter = 10 * time.Minute
	MaxLease        = 10 * time.Minute
	MaxLeaseMargin  = 10 * time.Minute
	// MaxPreemptDelay bounds PreemptDelay: long enough for services to
	// warm up after a boot; a node that stays out longer is better off
	// with --preempt=false.
	MaxPreemptDelay = time.Hour
	// MaxDiscoverInterval bounds DiscoverInterval: two agents that start
	// apart find each other only after it (and a cluster n times later).
	MaxDiscoverInterval = 10 * time.Minute
	// DefaultLeaveTimeout bounds the graceful leave at shutdown.
	DefaultLeaveTimeout = 2 * time.Second

	// MinCheckInterval bounds how often a check (a process) may run.
	MinCheckInterval = 100 * time.Millisecond
	// MaxCheckInterval bounds how seldom it runs, and so its timeout: a
	// check of something slow (a backup's age) may run every few minutes,
	// but one that runs less often than hourly notices nothing in time.
	MaxCheckInterval = time.Hour

	// DefaultJobGrace is how long a job has to exit after SIGTERM before
	// its process group is killed: systemd's default TimeoutStopSec is
	// 90 s, Kubernetes' grace period 30 s; 10 s is enough for a worker to
	// finish a unit of work, and short enough for a handover.
	DefaultJobGrace = 10 * time.Second
	// MaxJobGrace bounds JobGrace: a database may need minutes to shut
	// down cleanly; an hour is more than any, and a takeover waits for it.
	MaxJobGrace = time.Hour
	// MaxTakeoverWait bounds TakeoverWait, whose advice is JobGrace plus
	// a margin: twice MaxJobGrace leaves room for that.
	MaxTakeoverWait = 2 * time.Hour
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
	// MaxJobFailureWindow bounds JobFailureWindow, which is also how long
	// a node that handed over for its job stays at priority 1: a day.
	MaxJobFailureWindow = 24 * time.Hour
	// JobModeAlways and JobModeOnce are the values of JobMode.
	JobModeAlways = "always"
	JobModeOnce   = "once"
	// DefaultJobEnvFile is the job unit's environment file when systemd
	// gives no RuntimeDirectory.
	DefaultJobEnvFile = "/run/lanleader/job.env"
	// DefaultHookTimeout bounds a hook: a hook that hangs is killed after
	// it (keepalived's notify scripts have no bound; ours must not pile up).
	DefaultHookTimeout = 10 * time.Second
	// MaxHookTimeout bounds HookTimeout: hooks run one at a time, so a
	// hung hook holds up every later one this long.
	MaxHookTimeout = time.Hour
	// DefaultCheckInterval is how often each health check runs; a check
	// that runs longer than its interval has failed (keepalived's
	// vrrp_script runs every second; a check is a process, so every 2 s).
	DefaultCheckInterval = 2 * time.Second
	// DefaultCheckWeight is how much a failing check lowers the priority:
	// with every node at the default 100, a node whose check fails (50)
	// is smaller than every healthy one.
	DefaultCheckWeight = 50

	// DefaultVIPAnnounceRepeat is how many announcements of each virtual
	// address a burst sends: keepalived's garp_master_repeat, 5.
	DefaultVIPAnnounceRepeat = 5
	// MaxVIPAnnounceRepeat bounds VIPAnnounceRepeat: more is a flood,
	// not an announcement.
	MaxVIPAnnounceRepeat = 100
	// DefaultVIPAnnounceInterval is the gap between the announcements of
	// a burst. The first goes at once, whatever it is; the repeats 100ms
	// apart, so that one burst of loss (a full queue, a switch port that
	// is still coming up) does not take them all, and the burst is over
	// in 0.4s. keepalived's garp_interval is 0: its five go back to back
	// and are lost together.
	DefaultVIPAnnounceInterval = 100 * time.Millisecond
	// MaxVIPAnnounceInterval bounds the gap: the repeats of a burst that
	// come after the neighbours needed them are of no use.
	MaxVIPAnnounceInterval = 10 * time.Second
	// DefaultVIPAnnounceDelay: a second burst this long after the
	// addresses were taken, for the hosts and switches that missed the
	// first (a port that was still learning): keepalived's
	// garp_master_delay, 5s.
	DefaultVIPAnnounceDelay = 5 * time.Second
	// MaxVIPAnnounceDelay bounds the second burst's delay: a switch
	// port learns in well under a minute (spanning tree's 30s at most).
	MaxVIPAnnounceDelay = 10 * time.Minute
	// DefaultVIPAnnounceRefresh: a burst this often while the addresses
	// are held. keepalived's garp_master_refresh is 0, off; ours is on,
	// because a host that missed both bursts (it was cut off by the
	// partition that moved the address) keeps the old leader's MAC until
	// its ARP entry expires, and routers keep theirs for hours (4h is a
	// common default). A minute bounds that, for 5 packets a minute. The
	// switches' MAC tables need no refresh: the leader's multicast
	// heartbeats keep its MAC in them.
	DefaultVIPAnnounceRefresh = time.Minute
	// MaxVIPAnnounceRefresh bounds the refresh: a refresh rarer than the
	// routers' ARP timeout (4h is a common default) refreshes nothing.
	MaxVIPAnnounceRefresh = 4 * time.Hour

	// DefaultStartTimeout bounds the start's retries while the host is
	// not ready (StartTimeout): a boot where the network comes up late
	// (DHCP, a bond, a VLAN) has its address within a minute; after it
	// the start fails, with a status systemd restarts.
	DefaultStartTimeout = time.Minute
	// MaxStartTimeout bounds StartTimeout: a host that waits an hour
	// for its network is plausible, one that waits more than a day is
	// broken, and systemd restarts the agent after it anyway.
	MaxStartTimeout = 24 * time.Hour
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
	DetectorPhi   = "phi"   // phi-accrual, threshold 1.64 (detector.ConfirmedPhiConfig), 8 in quorum mode
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
	// heartbeat, longer than Heartbeat: the alarm, which a confirmation
	// answers before anyone elects. A starting node listens for a leader
	// this long, or three heartbeats if longer (with either detector).
	// Default 1.5 × Heartbeat (DefaultSuspectAfter; DeriveTimeouts derives
	// it again after a change of Heartbeat).
	SuspectAfter time.Duration
	// Detector is "fixed" or "phi". Default "fixed".
	Detector string
	// Algorithm is the election algorithm, one of election.Algorithms:
	// "bully" (the default), "ring", "chang-roberts",
	// "hirschberg-sinclair". Every member of a cluster must run the same
	// one: a member that announces another takes no part in elections.
	Algorithm string
	// Role is what this node may do in the elections, one of
	// election.Roles: "candidate" (the default) elects and may lead;
	// "witness" votes in quorum mode (it needs Quorum) but never leads,
	// so it never runs the job, the on_leader hook or the VIPs;
	// "observer" only follows and reports, and is not counted in Quorum.
	Role string
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
	// same N. At most wire.MaxMembers. 1 and 2 are refused unless
	// AllowSmallQuorum: see MinQuorum.
	Quorum int
	// AllowSmallQuorum accepts a Quorum of 1 or 2: a majority of 1 is
	// each node alone (every side of a partition leads), a majority of 2
	// both nodes (the loss of either leaves no leader). Only in quorum
	// mode. Default false.
	AllowSmallQuorum bool
	// Lease (quorum mode) is how long after a heartbeat the leader leads
	// on the acknowledgements of it. A leader that cannot renew it steps
	// down one Heartbeat before it ends: its job gets SIGTERM then, and
	// SIGKILL from its guard at the end. Longer than two heartbeats; 0
	// without quorum. Default 0; in quorum mode a heartbeat more than
	// SuspectAfter or three heartbeats, whichever is longer (400ms;
	// DefaultLease, DeriveTimeouts): two heartbeats may be lost.
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
	// TakeoverWait: a node that becomes leader without a
	// hand-over (its previous leader crashed, was suspected, lost its
	// link; or it is the first leader it has seen since its start) starts
	// the job only this long after it leads, so that the previous
	// leader's job, which its guard or its agent stops within JobGrace,
	// has surely ended; longer by the difference when the previous
	// leader's JobGrace (its metadata says it) is longer than this
	// node's. A takeover from a live leader waits for that leader's job
	// anyway, and one after its RESIGN needs no wait. Set it
	// to JobGrace plus a margin to trade failover time for no overlap in
	// default mode; quorum mode needs none (the lease). Default 0.
	TakeoverWait time.Duration
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
	// JobMode is JobModeAlways (the job is restarted whenever it exits
	// while this node leads) or JobModeOnce (it runs once per
	// leadership: an exit, with any status, ends it until this node
	// leads again, in a new term). Default always.
	JobMode string
	// JobUnit is a systemd service (NAME.service) started as the job,
	// over D-Bus, instead of forking Job; none when empty. The job's
	// variables go to JobEnvFile before each start. The unit must be
	// bound to the agent's own unit (BindsTo= or PartOf=), so that
	// systemd stops it should the agent die: Start refuses it otherwise.
	// Not with Job, nor with Quorum (the lease's guard kills only a
	// forked job). Default none.
	JobUnit string
	// JobEnvFile is where the job unit's environment (LANLEADER_TERM and
	// the others a forked job gets) is written, for the unit's
	// EnvironmentFile=. Default: job.env in $RUNTIME_DIRECTORY (systemd's
	// RuntimeDirectory=), or DefaultJobEnvFile.
	JobEnvFile string
	// JoinBeforeLead: with Join, this node takes no part in elections
	// until a member has joined it (`lanleader run --once`): an agent
	// that has not reached its cluster yet would elect itself and run
	// its job beside the cluster's leader's.
	JoinBeforeLead bool

	// OnLeader, OnFollower and OnChange are shell commands (sh -c) run
	// when this node becomes leader, when it stops leading or first
	// follows a leader, and on every change of state or leader, in that
	// order, one at a time, never blocking the election. They get the
	// job's variables and LANLEADER_STATE. Default none.
	OnLeader, OnFollower, OnChange string
	// HookTimeout bounds each hook run; a hook still running then is
	// killed (its process group) and counted. Default 10s.
	HookTimeout time.Duration

	// Checks are health checks (keepalived's vrrp_script, see Check):
	// shell commands (sh -c) run every interval; one that fails (exits
	// non-zero or runs out of time) fall times in a row lowers the node's
	// priority by its weight (never below 1), or with weight 0 puts the
	// node in fault, until it passes rise times in a row. Default none.
	Checks []Check
	// CheckInterval is how often a check runs that does not say, at
	// least 100ms. Default 2s.
	CheckInterval time.Duration
	// CheckTimeout bounds a run of a check that does not say, at most its
	// interval; 0 (the default) is the interval.
	CheckTimeout time.Duration
	// CheckRise and CheckFall are a check's rise and fall when it does
	// not say, 1 to MaxCheckRiseFall. Default 1 each.
	CheckRise, CheckFall int
	// CheckWeight is what a failing check takes off the priority when it
	// does not say, 0 to 65535; 0 makes such checks faults. Default 50.
	CheckWeight int
	// TrackFiles are files whose presence puts the node in fault
	// (keepalived's track_file for maintenance): stat'ed every
	// TrackFileEvery; a missing directory is an absent file. Default none.
	TrackFiles []string

	// Key is the cluster's secret (lanleader run reads it from
	// --key-file), at least wire.MinKeyLen bytes; every agent of the cluster
	// has the same. With a key every election packet carries an
	// HMAC-SHA256 tag and a replay-protected sequence, packets without a
	// valid tag are dropped, memberlist's traffic is encrypted (AES-256,
	// its keyring) with a key derived from it, and POST /resign needs a
	// token derived from it (ResignToken). Default none: no
	// authentication, and an agent with a key cannot join one without.
	Key []byte
	// AcceptKeys are older secrets still accepted, never used to sign or
	// encrypt: for a key rotation without downtime (--accept-key-file).
	// Each at least wire.MinKeyLen bytes; only with Key. Default none.
	AcceptKeys [][]byte

	// VIPs are the cluster's virtual addresses, which the leader holds
	// (keepalived's virtual_ipaddress): added by netlink and announced
	// before the job starts, removed after it stopped (agent/part/vips
	// says in which order). An address whose Dev is "" goes on the
	// interface of the bind address (with Bind 0.0.0.0, of the address
	// announced: the default route's interface), set by Start. All of one IP family, none the
	// bind address, each address once. Default none.
	VIPs []VIP
	// VIPAnnounceRepeat is how many announcements (gratuitous ARP, or
	// unsolicited neighbour advertisements for IPv6) of each address a
	// burst sends, 1 to 100. Default 5.
	VIPAnnounceRepeat int
	// VIPAnnounceInterval is the gap between the announcements of a
	// burst; the first goes at once. Default 100ms.
	VIPAnnounceInterval time.Duration
	// VIPAnnounceDelay: a second burst this long after the addresses were
	// taken; 0: none. Default 5s.
	VIPAnnounceDelay time.Duration
	// VIPAnnounceRefresh: a burst this often while the addresses are
	// held; 0: none. Default 1m.
	VIPAnnounceRefresh time.Duration
	// VIPTrackLink: while an interface of the VIPs is down (not up, or
	// without carrier), this node takes no part in elections: a leader
	// hands over as a resign does. Default true.
	VIPTrackLink bool
	// Realtime: every thread of the agent runs with SCHED_FIFO at
	// priority 10 (the processes it starts, the job, hooks and checks,
	// do not inherit it), so that on a loaded host heartbeats go out,
	// and packets are read, on time. Without the permission (CAP_SYS_NICE, or
	// RLIMIT_RTPRIO of at least 10: LimitRTPRIO= in the unit) the agent
	// logs why and runs without. Default false.
	Realtime bool

	// StartTimeout: while the host is not ready for the agent (its bind
	// address is not on the host yet, a port is in use), StartRetrying
	// tries again every second for this long, one log line per attempt;
	// 0: no retry. Start itself never retries. Default 1m.
	StartTimeout time.Duration

	// Logger receives one line per state change; nil logs nothing.
	// Default: text to stderr at level info.
	Logger *slog.Logger
	// LogLevel is the level Logger's handler reads, when it reads one: a
	// reload sets it to the new configuration's, and /status shows it.
	// Default nil: the level is the handler's own, fixed.
	LogLevel *slog.LevelVar
	// Version is the build's version for lanleader_build_info and
	// /status. Default "".
	Version string
}
