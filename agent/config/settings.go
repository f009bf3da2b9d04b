package config

// The settings of `lanleader run`, one table: each flag with its key in
// the config file, the syntax of its value, its default as the manual
// says it, an integer's range, what a reload does with it, one line of
// help, and its group, placeholder and text in the manual. The command
// line's flags and file, Validate's ranges, a reload's "needs a restart"
// list, the options of `lanleader run -h` and the configuration
// reference (manual.go) all read it; a test holds the defaults said here
// to DefaultConfig's.

import (
	"bytes"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// Run is what the flags and the file of `lanleader run` set: the agent's
// Config, and the format and level of its log (which the command line
// turns into Config.Logger and Config.LogLevel).
type Run struct {
	Config
	LogFormat, LogLevel string
}

// Kind is the syntax of a setting's value. Parsing checks the syntax
// only; Validate checks ranges, names and how values relate.
type Kind int

const (
	KindText          Kind = iota // a string, as given
	KindTextOrDefault             // a string; "" is the default
	KindName                      // one of Setting.Names; a setting of the log, not of the agent
	KindInteger                   // a decimal integer, within Setting.Range
	KindDuration                  // a duration with a unit, 0 (the default) or more
	KindDurationOrOff             // a duration with a unit, 0 or more; 0 is none, not the default
	KindAnyDuration               // a duration, negative too
	KindBoolean                   // true or false (yes, no, on, off); the flag alone is true
	KindIPPort                    // IP[:PORT]
	KindHostPortOrOff             // HOST:PORT, or "off" or "" for none
	KindMulticastIP               // a multicast address
	KindKeyFile                   // the path of a key, read at once
	KindStateFile                 // the path of a state file, read at once
	KindAddrList                  // addresses, comma-separated; the flag may be repeated; a list in the file
	KindCheckList                 // a check's shell command each time the flag is given; in the file a list of commands or of mappings
	KindFileList                  // a file each time the flag is given; a list in the file
	KindVIPAddr                   // a virtual address, ADDR/PREFIX[,dev=IFACE], each time the flag is given; a list in the file
	KindArgv                      // the job's command line: no flag (it goes after --); in the file a list, or a string for /bin/sh -c
)

// Reload is what a reload does with a setting's new value.
type Reload int

const (
	Applied Reload = iota // the running agent takes it
	Restart               // it keeps its running value until the agent restarts
)

// Setting is one setting of `lanleader run`.
type Setting struct {
	Flag    string // the flag, without its "--" (the job has none: KindArgv)
	Key     string // the key in the config file
	Kind    Kind
	Default string // the default, as the manual says it
	Range   *Range // an integer's range (KindInteger), nil for the others
	// Floor and Ceiling bound a duration (0: none). Floor holds for any
	// value, Ceiling for a value above 0 (0 and a negative one are the
	// default, none or off): it refuses typos such as 1000h, and must
	// never refuse a value a real user would set; the Doc says why it is
	// what it is.
	Floor, Ceiling time.Duration
	Names          []string // the values a KindName setting may have
	Reload         Reload
	Help           string         // what it does, one line (Markdown)
	Group          string         // its heading in the manual, one of Groups
	Arg            string         // its value's placeholder in the manual, where the kind does not give it
	Doc            string         // what it does, for the manual: plain text, without its default or range
	ptr            func(*Run) any // a pointer to its field of Run
}

// Ptr is a pointer to the setting's field of r: *string, *int, *uint16,
// *uint64, *bool, *time.Duration, *netip.Addr, *[]byte, *[][]byte,
// *[]string, *[]Check or *[]VIP.
func (s *Setting) Ptr(r *Run) any { return s.ptr(r) }

// Differs says whether a and b differ in the setting (false for the
// settings of Run's own, the log's, which a Config does not hold).
func (s *Setting) Differs(a, b *Config) bool {
	return !equal(s.ptr(&Run{Config: *a}), s.ptr(&Run{Config: *b}))
}

// equal compares two pointers that Ptr returned for one setting.
func equal(x, y any) bool {
	switch x := x.(type) {
	case *[]string:
		return slices.Equal(*x, *y.(*[]string))
	case *[]byte:
		return bytes.Equal(*x, *y.(*[]byte))
	case *[][]byte:
		return slices.EqualFunc(*x, *y.(*[][]byte), bytes.Equal)
	case *[]Check:
		return slices.Equal(*x, *y.(*[]Check))
	case *[]VIP:
		return slices.Equal(*x, *y.(*[]VIP))
	}
	return deref(x) == deref(y)
}

// IsFlag says whether the setting is also a flag (all but the job).
func (s *Setting) IsFlag() bool { return s.Kind != KindArgv }

// Lookup is the setting of flag, nil when there is none.
func Lookup(flag string) *Setting {
	for i := range Settings {
		if Settings[i].Flag == flag {
			return &Settings[i]
		}
	}
	return nil
}

// Settings are the settings of `lanleader run`, but --config, in the
// manual's order.
var Settings = []Setting{
	{Flag: "name", Key: "name", Kind: KindTextOrDefault, Reload: Restart, Group: "Identity", Arg: "NAME",
		Default: "host name",
		Help:    "unique name in the cluster",
		Doc:     "This node's name in the membership and in /status; unique in the cluster.",
		ptr:     func(r *Run) any { return &r.Name }},
	{Flag: "node-id", Key: "node_id", Kind: KindInteger, Reload: Restart, Range: &Range{1, MaxNodeID}, Group: "Identity", Arg: "N",
		Default: "from `/etc/machine-id`",
		Help:    "1 … 2^53−1, unique, stable across restarts",
		Doc:     "The node's election id, at most 2^53-1: unique in the cluster and stable across restarts. The default is derived from /etc/machine-id, or from the host name when there is none.",
		ptr:     func(r *Run) any { return &r.NodeID }},
	{Flag: "priority", Key: "priority", Kind: KindInteger, Reload: Applied, Range: &Range{1, 65535}, Group: "Identity", Arg: "N",
		Default: "100",
		Help:    "1 … 65535; larger `(priority, node_id)` leads",
		Doc:     "The live node with the largest (priority, node-id) leads: give the preferred hosts a larger priority.",
		ptr:     func(r *Run) any { return &r.Priority }},
	{Flag: "cluster", Key: "cluster", Kind: KindTextOrDefault, Reload: Restart, Group: "Identity", Arg: "NAME",
		Default: "`lanleader`",
		Help:    "clusters on one LAN ignore each other",
		Doc:     "The cluster's name. Agents of different clusters on one LAN ignore each other.",
		ptr:     func(r *Run) any { return &r.Cluster }},
	{Flag: "bind", Key: "bind", Kind: KindIPPort, Reload: Restart, Group: "Network", Arg: "IP[:PORT]",
		Default: "`0.0.0.0:7946`",
		Help:    "memberlist address; with 0.0.0.0 an IPv4 address of the default route's interface is announced and the election socket binds it; IPv6 needs a global or `fd00::/8` address (`[::]` and link-local are refused)",
		Doc:     "The address and port of membership gossip (memberlist, UDP and TCP). Port 0 picks a free port. 0.0.0.0 is all addresses, announcing an IPv4 address of the default route's interface (else of the first up, multicast-capable interface, private ranges first); the election socket binds that address. An IPv6 agent needs its global or unique-local (fd00::/8) address: [::] and link-local addresses are refused.",
		ptr:     func(r *Run) any { return &r.Bind }},
	{Flag: "election-port", Key: "election_port", Kind: KindInteger, Reload: Restart, Range: &Range{0, 65535}, Group: "Network", Arg: "PORT",
		Default: "7947",
		Help:    "election UDP port on the bind address, the same on every agent (0 picks a free one only with bind port 0)",
		Doc:     "The UDP port of election messages, on --bind's address; the same on every agent of a multicast cluster. 0 means the default, except with --bind port 0, where it picks a free port too.",
		ptr:     func(r *Run) any { return &r.ElectionPort }},
	{Flag: "join", Key: "join", Kind: KindAddrList, Reload: Restart, Group: "Network", Arg: "HOST[:PORT],...",
		Default: "none",
		Help:    "seeds, `host[:7946]`; retried in the background",
		Doc:     "Peers to join: their --bind addresses (port 7946 when left out). A comma-separated list; the flag may be repeated and the lists add up, and then replace the file's join list. Joining is retried in the background until a peer answers. Not needed where the LAN passes multicast: the agents find each other.",
		ptr:     func(r *Run) any { return &r.Join }},
	{Flag: "http", Key: "http", Kind: KindHostPortOrOff, Reload: Restart, Group: "Network", Arg: "HOST:PORT",
		Default: "`127.0.0.1:9947`",
		Help:    "`/status`, `/healthz`, `/metrics`; `off` disables",
		Doc:     "Where /status, /healthz and /metrics are served; \"off\" (or \"\") turns the listener off. The default serves this host only. lanleader status, resign and exec-if-leader read no config file: with another address, give them --http too.",
		ptr:     func(r *Run) any { return &r.HTTP }},
	{Flag: "heartbeat", Key: "heartbeat", Kind: KindDuration, Reload: Restart, Floor: MinHeartbeat, Ceiling: MaxHeartbeat, Group: "Failure detection and election",
		Default: "100ms",
		Help:    "leader's heartbeat interval",
		Doc:     "The leader's heartbeat interval. At most a minute: a LAN tool detects a failure in seconds (keepalived's advert_int stops at 255s), and a longer interval is a typo (1000h would leave a crashed leader unreplaced for months). With the defaults a leader whose host stops is replaced about --suspect-after and a confirmation (155ms) after its last heartbeat, 105ms after the stop on average; a leader stopped by a signal resigns and is replaced at once (about 1ms). A short interval needs CPU on time: at 10ms the alarm rings after 15ms of silence and a confirmation waits 3ms, so hosts whose CPUs are saturated by other work elect now and then though the leader lives (measured on five hosts sharing two cores kept busy by other work, 10 minutes a run: with the 3ms confirmation 0 leader changes without --realtime and 0 with it in two runs; with the 1ms one of earlier versions 56 without --realtime, and with it 0, 8, 16 and 8 in four runs, where the host of the virtual machine took a CPU away for 9ms as a heartbeat was due); on busy hosts use --realtime with a short interval, or keep the default.",
		ptr:     func(r *Run) any { return &r.Heartbeat }},
	{Flag: "suspect-after", Key: "suspect_after", Kind: KindDuration, Reload: Restart, Ceiling: MaxSuspectAfter, Group: "Failure detection and election",
		Default: "150ms (1.5 heartbeats, 3 with `--quorum`)",
		Help:    "fixed detector's alarm, longer than the heartbeat; confirmed before anyone elects",
		Doc:     "With --detector fixed, a follower's alarm rings this long after the leader's last heartbeat; longer than --heartbeat. The alarm is a question, not a verdict: the follower asks the leader and the other members (PROBE, up to 20 times within a twentieth of --heartbeat, 3ms to 5ms) and keeps following if any of them heard the leader since (VOUCH); only when none answers does it elect. So the default rings after one lost heartbeat, and a leader whose host stops is replaced 155ms after its last heartbeat, while a lost heartbeat costs a few packets: at 30% loss on every packet a confirmation in five hosts fails about once in 25 million (every answer of the leader to 20 PROBEs lost, and the three other followers missed the heartbeat too), one false election in 600 hours with the default heartbeat, in 60 hours with --heartbeat 10ms. Shorter still fails over faster but confirms more often. In quorum mode the default is three heartbeats: a failover there waits for the lease anyway. A starting node listens for a leader this long, or three heartbeats if that is longer (with either detector). At most ten minutes (three of the longest heartbeats and more): a failover that takes longer is none.",
		ptr:     func(r *Run) any { return &r.SuspectAfter }},
	{Flag: "detector", Key: "detector", Kind: KindText, Reload: Restart, Group: "Failure detection and election", Arg: "fixed|phi",
		Default: "`fixed`",
		Help:    "or `phi` (phi-accrual, threshold 1.64, 8 with `--quorum`)",
		Doc:     "fixed: the alarm rings --suspect-after after the last heartbeat. phi: phi-accrual, which learns the heartbeats' jitter; its threshold, 1.64, rings 1.5 heartbeats after the last one on a quiet network, as fixed does by default, and later where heartbeats come unevenly or get lost (about 3 heartbeats at 30% loss). In quorum mode, whose failover waits for the lease anyway, its threshold is 8 (2.31 heartbeats on a quiet network), as fixed's default there is three heartbeats. Either alarm is confirmed before anyone elects (see --suspect-after); the answers keep the leader followed but are no heartbeats: phi learns the leader's rhythm from its heartbeats alone.",
		ptr:     func(r *Run) any { return &r.Detector }},
	{Flag: "key-file", Key: "key_file", Kind: KindKeyFile, Reload: Restart, Group: "Authentication", Arg: "FILE",
		Default: "none",
		Help:    "the cluster's secret, ≥ 32 bytes, the same on every agent, not readable by every user: signed and replay-protected election packets, encrypted gossip, a key for `resign` (see Authentication)",
		Doc:     "The cluster's secret: a file of at least 32 bytes (trailing newlines are not part of it), the same on every agent, readable by the agent and not by every user (a world-readable or world-writable file is refused). With a key every election packet and beacon carries an HMAC-SHA256 tag and a sequence number, packets without a valid tag or replayed are dropped, membership gossip is encrypted, and 'lanleader resign' needs the key. Make one with 'head -c 48 /dev/urandom | base64 > FILE' (text, so that no random byte is taken for a trailing newline), then 'chown root:lanleader FILE; chmod 640 FILE' for the packaged unit's user. Without one there is no authentication.",
		ptr:     func(r *Run) any { return &r.Key }},
	{Flag: "accept-key-file", Key: "accept_key_file", Kind: KindKeyFile, Reload: Restart, Group: "Authentication", Arg: "FILE",
		Default: "none",
		Help:    "an older key still accepted (never used to sign), for a key rotation; only with `--key-file`",
		Doc:     "An older key still accepted (never used to sign or encrypt), for a key rotation without downtime; only with --key-file.",
		ptr:     func(r *Run) any { return &r.AcceptKeys }},
	{Flag: "algorithm", Key: "algorithm", Kind: KindText, Reload: Restart, Group: "Failure detection and election", Arg: "bully|ring|chang-roberts|hirschberg-sinclair",
		Default: "`bully`",
		Help:    "or `ring`, `chang-roberts`, `hirschberg-sinclair` (the ring family, see \"The ring algorithms\"); the same on every member",
		Doc:     "The election algorithm; every member of a cluster must run the same (one that announces another takes no part in elections, and both log why). bully: ELECTION to the larger keys, ANSWER, COORDINATOR (one multicast packet each way on a LAN). ring: the ELECTION goes round the ring of members sorted by key collecting the live ones, then COORDINATOR goes round with the list. chang-roberts: a unidirectional ring that forwards the largest key. hirschberg-sinclair: a bidirectional ring, probes to distance 2^k. Every ring hop is acknowledged; a member that does not answer is skipped. Heartbeats, terms, the detector, preemption and resign are the same for all.",
		ptr:     func(r *Run) any { return &r.Algorithm }},
	{Flag: "role", Key: "role", Kind: KindText, Reload: Restart, Group: "Failure detection and election", Arg: "candidate|witness|observer",
		Default: "`candidate`",
		Help:    "or `witness` (votes in quorum mode, never leads; needs `--quorum`), `observer` (follows and reports only; not counted in `--quorum`): see Roles",
		Doc:     "What this node may do in the elections (see ROLES below). candidate: elects and may lead. witness: votes in quorum mode (needs --quorum) but never leads. observer: follows and reports the leader, takes no part in elections, is not counted in --quorum.",
		ptr:     func(r *Run) any { return &r.Role }},
	{Flag: "transport", Key: "transport", Kind: KindText, Reload: Restart, Group: "Network", Arg: "multicast|unicast",
		Default: "`multicast`",
		Help:    "`unicast` fans out to the members instead",
		Doc:     "multicast: a message to all nodes is one multicast packet. unicast: it is sent to every member in turn, for networks that drop multicast (most clouds); beacons are multicast, so give --join there.",
		ptr:     func(r *Run) any { return &r.Transport }},
	{Flag: "multicast-group", Key: "multicast_group", Kind: KindMulticastIP, Reload: Restart, Group: "Network", Arg: "IP",
		Default: "`239.255.76.76` (`ff02::4c4c` on IPv6)",
		Help:    "group of election messages and beacons: in `239.0.0.0/8` or `ff02::/16`, of the bind address's family",
		Doc:     "The multicast group of election messages and discovery beacons: in 239.0.0.0/8 for IPv4 (administratively scoped: routers keep it inside the site), in ff02::/16 for IPv6 (link-local), of --bind's IP family.",
		ptr:     func(r *Run) any { return &r.Group }},
	{Flag: "preempt", Key: "preempt", Kind: KindBoolean, Reload: Applied, Group: "Failure detection and election",
		Default: "true",
		Help:    "false: keepalived's `nopreempt`",
		Doc:     "true: a node with a larger (priority, node-id) that starts or comes back takes over from a smaller leader (the textbook bully). --preempt=false: it follows a healthy leader (keepalived's nopreempt); leadership moves only when the leader fails.",
		ptr:     func(r *Run) any { return &r.Preempt }},
	{Flag: "preempt-delay", Key: "preempt_delay", Kind: KindDuration, Reload: Restart, Ceiling: MaxPreemptDelay, Group: "Failure detection and election",
		Default: "0",
		Help:    "a starting node waits this long before taking over; a node that resigned stays out at least this long",
		Doc:     "A node that starts waits this long before it takes over from a smaller leader, e.g. while its services warm up; a node that resigned stays out at least this long. It counts from the agent's start (and the resign) only: a node whose check passes again, or whose track file goes, takes over at once (keepalived also applies its preempt_delay on seeing a lower-priority master). At most an hour: a node meant to stay out longer wants --preempt=false.",
		ptr:     func(r *Run) any { return &r.PreemptDelay }},
	{Flag: "quorum", Key: "quorum", Kind: KindInteger, Reload: Restart, Range: &Range{0, wire.MaxMembers}, Group: "Split-brain safety", Arg: "N",
		Default: "0",
		Help:    "expected cluster size N, the same on every agent: a node leads, and runs the job, only while a majority of N acknowledges its heartbeats within the lease (see Quorum mode); 0: off, the textbook",
		Doc:     "The expected number of nodes of the cluster, the same on every agent. 0: the textbook bully, which elects a leader on each side of a partition and lets a paused leader wake up leading. N > 0: a node leads, and runs the job, only while a majority of N (itself included; 3 of 5) acknowledges its heartbeats within --lease. 1 and 2 are refused without --allow-small-quorum.",
		ptr:     func(r *Run) any { return &r.Quorum }},
	{Flag: "allow-small-quorum", Key: "allow_small_quorum", Kind: KindBoolean, Reload: Restart, Group: "Split-brain safety",
		Default: "false",
		Help:    "accept `--quorum` 1 or 2, which are refused otherwise: 1 leads on each side of a partition, 2 stops leading when either node is lost; for two hosts add a witness and `--quorum 3`",
		Doc:     "true: accept --quorum 1 or 2, which are refused without it. A majority of 1 is a node alone, so each side of a partition leads (two leaders, as with quorum off, but with leases). A majority of 2 is both nodes, so the leader steps down when either is lost: no failover. For two hosts the recipe is a witness (--role witness on a third, small host) and --quorum 3 on all three (docs/quorum.md). Sane for a lab of one candidate and one witness, or where no failover at all is the price paid for never two leaders. Only in quorum mode.",
		ptr:     func(r *Run) any { return &r.AllowSmallQuorum }},
	{Flag: "lease", Key: "lease", Kind: KindDuration, Reload: Restart, Ceiling: MaxLease, Group: "Split-brain safety",
		Default: "4 heartbeats, or `--suspect-after` + `--heartbeat` if longer",
		Help:    "with `--quorum`: how long after a heartbeat the leader leads on its acknowledgements; a leader that cannot renew it steps down a heartbeat before its end (SIGTERM to the job; SIGKILL at the end); longer than two heartbeats",
		Doc:     "With --quorum: how long after a heartbeat the leader may lead on the acknowledgements of it; longer than two heartbeats. A leader that cannot renew it steps down one --heartbeat before it ends: its job gets SIGTERM then, and SIGKILL at the end. A crashed leader is replaced about --lease + --lease-margin after its last acknowledged heartbeat. The default (400ms with the default --heartbeat) lets two heartbeats be lost in a row. At most ten minutes, as --suspect-after.",
		ptr:     func(r *Run) any { return &r.Lease }},
	{Flag: "lease-margin", Key: "lease_margin", Kind: KindDuration, Reload: Restart, Ceiling: MaxLeaseMargin, Group: "Split-brain safety",
		Default: "lease/10",
		Help:    "with `--quorum`: how much longer the followers wait before they support another leader; covers clock drift (500 ppm assumed, at least lease·2·500 ppm) and the job's death by SIGKILL",
		Doc:     "With --quorum: how much longer than the lease the followers wait before they support another leader. It covers clock-rate drift between hosts, assumed at most 500 ppm (at least 2 x 500 ppm of the lease: 401us for 400ms, refused below), and the time a job takes to die of SIGKILL. The default is 40ms with the default --lease. At most ten minutes, as --lease.",
		ptr:     func(r *Run) any { return &r.LeaseMargin }},
	{Flag: "state-file", Key: "state_file", Kind: KindStateFile, Reload: Restart, Group: "Split-brain safety", Arg: "FILE",
		Default: "none",
		Help:    "with `--quorum`: where the last voted term is kept (synced before each vote), so a restart never gives one term to two leaders; its directory must exist",
		Doc:     "With --quorum: where this node keeps the last term it voted in, one line \"voted_term N\", written and synced before each vote goes out, so that a restart never gives one term (the job's fencing token) to two leaders. The first vote writes a new file; each later one writes over it in place, synced with fdatasync (one flush of the disk, where a new file renamed over the old takes two commits of the file system's journal): the line sits in the file's first sector, which disks write whole: a crash leaves the old line or the new one. Its directory must exist; the packaged unit uses /var/lib/lanleader/state. A file that is not such a line is refused. Without one, a warning at the start says the votes do not survive a restart.",
		ptr:     func(r *Run) any { return &r.StateFile }},
	{Flag: "discover-interval", Key: "discover_interval", Kind: KindAnyDuration, Reload: Restart, Ceiling: MaxDiscoverInterval, Group: "Network",
		Default: "1s",
		Help:    "beacon interval while alone; once joined, n× in a cluster of n members (at least 10×): about one beacon per interval for the whole LAN; a member joins a beacon's sender it does not know with a chance of 3 in n (always in clusters of up to 3), so that a newcomer gets about three state exchanges, not n−1; negative: off; multicast transport only",
		Doc:     "How often an agent that knows no peer multicasts a discovery beacon; once it has peers, n times less often in a cluster of n members, at least ten times (the LAN then sends about one beacon per interval, whatever its size). A member joins the sender of a beacon it does not know with a chance of 3 in n (always in clusters of up to three), so that a newcomer gets about three state exchanges, not n-1. Negative turns the beacons off. Multicast transport only: with --transport unicast no beacon is sent. At most ten minutes: agents that start apart find each other only after it.",
		ptr:     func(r *Run) any { return &r.DiscoverInterval }},
	{Flag: "job", Key: "job", Kind: KindArgv, Reload: Restart, Group: "Job",
		Default: "none",
		Help:    "the job, run on the leader only (see the job); in the file a list, or a string for `/bin/sh -c`",
		Doc:     "The command run while this node leads, and only then (see JOB below). In the file, job: a list, or a string run by /bin/sh -c; a JOB after -- replaces it.",
		ptr:     func(r *Run) any { return &r.Job }},
	{Flag: "job-grace", Key: "job_grace", Kind: KindDuration, Reload: Applied, Ceiling: MaxJobGrace, Group: "Job",
		Default: "10s",
		Help:    "time between SIGTERM and SIGKILL of the job's process group",
		Doc:     "How long the job has to exit after SIGTERM (sent to its process group) before SIGKILL. A database may need minutes; at most an hour, which a takeover may wait for.",
		ptr:     func(r *Run) any { return &r.JobGrace }},
	{Flag: "takeover-wait", Key: "takeover_wait", Kind: KindDuration, Reload: Applied, Ceiling: MaxTakeoverWait, Group: "Job",
		Default: "0",
		Help:    "default mode: after a failover without a hand-over (a crash, a suspicion, a pulled cable, or the first leader after a start), the new leader starts the job only this long after it leads, and longer by the difference when the previous leader's `--job-grace` (its membership metadata says it; unknown: the longest of the members') is longer than its own; `--job-grace` plus a second rules out two jobs at once after an agent's crash (see the job); 0: no wait; quorum mode needs none",
		Doc:     "Default mode: a node that becomes leader without a hand-over (its leader crashed, was suspected or lost its link, or it is the first leader it has seen since it started) starts the job only this long after it leads. A crashed agent's job is stopped by its guard (SIGTERM, SIGKILL after --job-grace) while the next leader is elected: set --job-grace plus a second to trade that much failover time for never two jobs at once after a crash (see JOB). A previous leader with a longer --job-grace (its membership metadata says it; unknown: the longest of the members') adds the difference. Quorum mode needs none: its lease does this. 0: no wait. At most two hours, room for the longest --job-grace and a margin.",
		ptr:     func(r *Run) any { return &r.TakeoverWait }},
	{Flag: "job-max-failures", Key: "job_max_failures", Kind: KindInteger, Reload: Applied, Range: &Range{0, MaxJobMaxFailures}, Group: "Job", Arg: "N",
		Default: "5",
		Help:    "exits of the job on its own within the window before the node drops to priority 1 and resigns; 0: never",
		Doc:     "When the job exits on its own N times within --job-failure-window while this node leads, the node drops to priority 1 for that window and resigns, so that another node runs the job. 0: never.",
		ptr:     func(r *Run) any { return &r.JobMaxFailures }},
	{Flag: "job-failure-window", Key: "job_failure_window", Kind: KindDuration, Reload: Applied, Ceiling: MaxJobFailureWindow, Group: "Job",
		Default: "1m",
		Help:    "the window of `--job-max-failures`, and how long the node keeps priority 1",
		Doc:     "The window of --job-max-failures, and how long a node that handed over for its job keeps priority 1. At most a day.",
		ptr:     func(r *Run) any { return &r.JobFailureWindow }},
	{Flag: "job-mode", Key: "job_mode", Kind: KindText, Reload: Restart, Group: "Job", Arg: "always|once",
		Default: "always",
		Help:    "`always`: restart the job whenever it exits; `once`: run it once per leadership (see the job, once)",
		Doc:     "always: the job is restarted whenever it exits while this node leads. once: it runs a single time per leadership; when it exits, with any status, it is not restarted (/status: state finished, exit_code) until this node leads again, in a new term.",
		ptr:     func(r *Run) any { return &r.JobMode }},
	{Flag: "job-unit", Key: "job_unit", Kind: KindText, Reload: Restart, Group: "Job", Arg: "NAME.service",
		Default: "none",
		Help:    "a systemd service started and stopped as the job, over D-Bus, instead of `-- JOB` (see the job as a systemd unit)",
		Doc:     "Run the systemd unit NAME.service as the job, over D-Bus, instead of a command: started when this node leads, stopped when it stops leading or the agent stops; its exit (inactive or failed on its own) counts as the job's. Not with a JOB, nor with --quorum. See JOB UNIT below.",
		ptr:     func(r *Run) any { return &r.JobUnit }},
	{Flag: "on-leader", Key: "on_leader", Kind: KindText, Reload: Applied, Group: "Hooks", Arg: "COMMAND",
		Default: "none",
		Help:    "shell command run when this node becomes leader",
		Doc:     "A shell command (/bin/sh -c) run when this node becomes leader.",
		ptr:     func(r *Run) any { return &r.OnLeader }},
	{Flag: "on-follower", Key: "on_follower", Kind: KindText, Reload: Applied, Group: "Hooks", Arg: "COMMAND",
		Default: "none",
		Help:    "shell command run when it stops leading, or first follows a leader",
		Doc:     "Run when this node stops leading, and when it first follows a leader after its start.",
		ptr:     func(r *Run) any { return &r.OnFollower }},
	{Flag: "on-change", Key: "on_change", Kind: KindText, Reload: Applied, Group: "Hooks", Arg: "COMMAND",
		Default: "none",
		Help:    "shell command run on every change of state or leader",
		Doc:     "Run on every change of this node's state or of the leader it follows (the changes the log reports at level info).",
		ptr:     func(r *Run) any { return &r.OnChange }},
	{Flag: "hook-timeout", Key: "hook_timeout", Kind: KindDuration, Reload: Applied, Ceiling: MaxHookTimeout, Group: "Hooks",
		Default: "10s",
		Help:    "a hook still running then is killed and counted",
		Doc:     "A hook still running after this is killed (its process group) and counted as a timeout. Hooks run one at a time, in order, never holding up the election; at most an hour, since a hung hook holds up every later one that long.",
		ptr:     func(r *Run) any { return &r.HookTimeout }},
	{Flag: "check", Key: "checks", Kind: KindCheckList, Reload: Applied, Group: "Health checks", Arg: "COMMAND",
		Default: "none",
		Help:    "health check, a shell command; repeatable; in the file a list of commands or of mappings with a check's own `name`, `command`, `interval`, `timeout`, `rise`, `fall`, `weight` (see Health checks; `check:` is read too)",
		Doc:     "A shell command run every --check-interval; once it has failed (exited non-zero, or run longer than --check-timeout) --check-fall times in a row, the node's priority is lower by --check-weight (never below 1), which moves the leadership to a healthier node when preemption is on, until it has passed --check-rise times in a row. May be repeated; in the file, checks: a list, whose items may set each of these for one check.",
		ptr:     func(r *Run) any { return &r.Checks }},
	{Flag: "check-interval", Key: "check_interval", Kind: KindDuration, Reload: Applied, Floor: MinCheckInterval, Ceiling: MaxCheckInterval, Group: "Health checks",
		Default: "2s",
		Help:    "how often a check runs",
		Doc:     "How often a check runs. At most an hour: a check of something slow (a backup's age) may run every few minutes, one that runs less often notices nothing in time.",
		ptr:     func(r *Run) any { return &r.CheckInterval }},
	{Flag: "check-timeout", Key: "check_timeout", Kind: KindDuration, Reload: Applied, Ceiling: MaxCheckInterval, Group: "Health checks",
		Default: "the interval",
		Help:    "a run still going then has failed (killed); at most the interval",
		Doc:     "A run still going after this has failed (it is killed); at most the interval, and so at most an hour.",
		ptr:     func(r *Run) any { return &r.CheckTimeout }},
	{Flag: "check-rise", Key: "check_rise", Kind: KindInteger, Reload: Applied, Range: &Range{1, MaxCheckRiseFall}, Group: "Health checks", Arg: "N",
		Default: "1",
		Help:    "1 … 1000 passes in a row that make a failed check OK",
		Doc:     "The passes in a row that make a failed check OK.",
		ptr:     func(r *Run) any { return &r.CheckRise }},
	{Flag: "check-fall", Key: "check_fall", Kind: KindInteger, Reload: Applied, Range: &Range{1, MaxCheckRiseFall}, Group: "Health checks", Arg: "N",
		Default: "1",
		Help:    "1 … 1000 failures in a row that make an OK check failed",
		Doc:     "The failures in a row that make an OK check failed.",
		ptr:     func(r *Run) any { return &r.CheckFall }},
	{Flag: "check-weight", Key: "check_weight", Kind: KindInteger, Reload: Applied, Range: &Range{0, 65535}, Group: "Health checks", Arg: "N",
		Default: "50",
		Help:    "0 … 65535: priority a failed check takes off (never below 1); 0: fault (out of the elections)",
		Doc:     "What a failed check takes off the priority. Pick it larger than the gap between your priorities. 0 is a fault: while the check is failed the node takes no part in elections, and a leader resigns, with or without preemption.",
		ptr:     func(r *Run) any { return &r.CheckWeight }},
	{Flag: "track-file", Key: "track_files", Kind: KindFileList, Reload: Applied, Group: "Health checks", Arg: "PATH",
		Default: "none",
		Help:    "a file whose presence puts the node in fault (maintenance, see Draining a node); repeatable (a list in the file)",
		Doc:     "While the file exists the node is in fault, as with a failed check of weight 0 (maintenance: touch it to drain this node, rm it to let it back). Stat'ed every second; a missing directory is an absent file. May be repeated; in the file, track_files: a list.",
		ptr:     func(r *Run) any { return &r.TrackFiles }},
	{Flag: "vip", Key: "vip", Kind: KindVIPAddr, Reload: Applied, Group: "Virtual addresses", Arg: "ADDR/PREFIX[,dev=IFACE]",
		Default: "none",
		Help:    "a virtual address `ADDR/PREFIX[,dev=IFACE]` held by the leader (see Virtual IP); without `dev=` on the bind address's interface; repeatable (a list in the file); one IP family, never the bind address, each once",
		Doc:     "A virtual address of the cluster, held by the leader only: added to IFACE before the job starts, removed after it stops. Without dev=, the interface of --bind's address (with 0.0.0.0, of the address announced: the default route's interface). May be repeated; in the file, a list. One IP family (IPv4 and IPv6 in one list are refused, as keepalived refuses them in one vrrp_instance), never --bind's address, each address once. Needs CAP_NET_ADMIN and CAP_NET_RAW (the unit's drop-in lanleader-vip.conf).",
		ptr:     func(r *Run) any { return &r.VIPs }},
	{Flag: "vip-announce-repeat", Key: "vip_announce_repeat", Kind: KindInteger, Reload: Restart, Range: &Range{1, MaxVIPAnnounceRepeat}, Group: "Virtual addresses", Arg: "N",
		Default: "5",
		Help:    "1 … 100 announcements (gratuitous ARP, unsolicited NA) of each address per burst; keepalived's `garp_master_repeat`",
		Doc:     "How many announcements (gratuitous ARP; unsolicited neighbour advertisements for IPv6) of each address a burst sends (keepalived's garp_master_repeat).",
		ptr:     func(r *Run) any { return &r.VIPAnnounceRepeat }},
	{Flag: "vip-announce-interval", Key: "vip_announce_interval", Kind: KindDurationOrOff, Reload: Restart, Ceiling: MaxVIPAnnounceInterval, Group: "Virtual addresses",
		Default: "100ms",
		Help:    "gap between a burst's announcements (the first goes at once); 0: back to back; keepalived's `garp_interval` (0 there)",
		Doc:     "The gap between the announcements of a burst; the first goes at once (keepalived's garp_interval, 0 there). 0 is none: back to back. At most 10s: repeats that come after the neighbours needed them are of no use.",
		ptr:     func(r *Run) any { return &r.VIPAnnounceInterval }},
	{Flag: "vip-announce-delay", Key: "vip_announce_delay", Kind: KindDurationOrOff, Reload: Restart, Ceiling: MaxVIPAnnounceDelay, Group: "Virtual addresses",
		Default: "5s",
		Help:    "a second burst this long after taking the addresses; 0: none; keepalived's `garp_master_delay`",
		Doc:     "A second burst this long after the addresses were taken (keepalived's garp_master_delay). 0 is none. At most ten minutes: a switch port learns in under a minute.",
		ptr:     func(r *Run) any { return &r.VIPAnnounceDelay }},
	{Flag: "vip-announce-refresh", Key: "vip_announce_refresh", Kind: KindDurationOrOff, Reload: Restart, Ceiling: MaxVIPAnnounceRefresh, Group: "Virtual addresses",
		Default: "1m",
		Help:    "a burst this often while held; 0: none; keepalived's `garp_master_refresh` (off there)",
		Doc:     "A burst this often while the addresses are held (keepalived's garp_master_refresh, off there), so that a host or router that missed both bursts does not keep the old leader's MAC for hours. 0 is none. At most 4h, a common ARP timeout of routers: a rarer refresh refreshes nothing.",
		ptr:     func(r *Run) any { return &r.VIPAnnounceRefresh }},
	{Flag: "vip-track-link", Key: "vip_track_link", Kind: KindBoolean, Reload: Restart, Group: "Virtual addresses",
		Default: "true",
		Help:    "while an interface of the addresses is down, the node takes no part in elections (a leader hands over)",
		Doc:     "true: while an interface of the addresses is down (or without carrier) this node takes no part in elections; a leader hands over as a resign does.",
		ptr:     func(r *Run) any { return &r.VIPTrackLink }},
	{Flag: "start-timeout", Key: "start_timeout", Kind: KindDurationOrOff, Reload: Restart, Ceiling: MaxStartTimeout, Group: "Start",
		Default: "1m",
		Help:    "while the bind address is not on the host yet or a port is in use, retry the start every second, then exit 3; 0: no retry",
		Doc:     "While the host is not ready for the agent at its start (the bind address is not on it yet, a port is in use), try again every second for this long, one log line per attempt, then exit with status 3 (which systemd restarts). 0: no retry. An hour is plausible for a slow network; at most a day.",
		ptr:     func(r *Run) any { return &r.StartTimeout }},
	{Flag: "realtime", Key: "realtime", Kind: KindBoolean, Reload: Restart, Group: "Failure detection and election",
		Default: "false",
		Help:    "the agent's threads run SCHED_FIFO at priority 10 (not the job, hooks or checks); needs CAP_SYS_NICE or `RLIMIT_RTPRIO` 10 (the drop-in `lanleader-realtime.conf`); without, a warning and ordinary threads (see systemd and the .deb)",
		Doc:     "true: every thread of the agent (the event loop's heartbeats, timers and elections, and the reading of the packets that answer them) runs SCHED_FIFO at priority 10, so that a host whose CPUs are busy with other work neither sends its heartbeats late nor reads its leader's late; its guards (the job's, the address keeper, the notice guard) keep it, and the job, the hooks and the checks start with the ordinary policy. Needed for a short --heartbeat on busy CPUs. It needs CAP_SYS_NICE or RLIMIT_RTPRIO >= 10 (under systemd: the drop-in /usr/share/lanleader/lanleader-realtime.conf); without, the agent logs why and runs as an ordinary process.",
		ptr:     func(r *Run) any { return &r.Realtime }},
	{Flag: "log-format", Key: "log_format", Kind: KindName, Reload: Restart, Names: []string{"text", "json"}, Group: "Logging",
		Default: "`text`",
		Help:    "or `json`",
		Doc:     "The format of the log lines on standard error.",
		ptr:     func(r *Run) any { return &r.LogFormat }},
	{Flag: "log-level", Key: "log_level", Kind: KindName, Reload: Applied, Names: []string{"debug", "info", "warn", "error"}, Group: "Logging",
		Default: "`info`",
		Help:    "`debug`, `info`, `warn`, `error`",
		Doc:     "The least severe level logged.",
		ptr:     func(r *Run) any { return &r.LogLevel }},
}

// deref is the value a scalar setting's pointer points to.
func deref(p any) any {
	switch p := p.(type) {
	case *string:
		return *p
	case *int:
		return *p
	case *uint16:
		return *p
	case *uint64:
		return *p
	case *bool:
		return *p
	case *time.Duration:
		return *p
	case *netip.Addr:
		return *p
	}
	panic(fmt.Sprintf("config: a setting's field of type %T", p))
}

// intValue is an integer setting's value.
func intValue(p any) int64 {
	switch p := p.(type) {
	case *int:
		return int64(*p)
	case *uint16:
		return int64(*p)
	case *uint64:
		return int64(min(*p, 1<<63-1))
	}
	panic(fmt.Sprintf("config: an integer setting's field of type %T", p))
}
