package config

// The settings of `lanleader run`, one table: each flag with its key in
// the config file, the syntax of its value, its default as the manual
// says it, an integer's range, what a reload does with it, and one line
// of help. The command line's flags and file, Validate's ranges, a
// reload's "needs a restart" list and the configuration reference all
// read it; a test holds the defaults said here to DefaultConfig's.

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
	Default string   // the default, as the manual says it
	Range   *Range   // an integer's range (KindInteger), nil for the others
	Names   []string // the values a KindName setting may have
	Reload  Reload
	Help    string         // what it does, one line
	ptr     func(*Run) any // a pointer to its field of Run
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
	{Flag: "name", Key: "name", Kind: KindTextOrDefault, Reload: Restart,
		Default: "host name",
		Help:    "unique name in the cluster",
		ptr:     func(r *Run) any { return &r.Name }},
	{Flag: "node-id", Key: "node_id", Kind: KindInteger, Reload: Restart, Range: &Range{1, MaxNodeID},
		Default: "from `/etc/machine-id`",
		Help:    "1 … 2^53−1, unique, stable across restarts",
		ptr:     func(r *Run) any { return &r.NodeID }},
	{Flag: "priority", Key: "priority", Kind: KindInteger, Reload: Applied, Range: &Range{1, 65535},
		Default: "100",
		Help:    "1 … 65535; larger `(priority, node_id)` leads",
		ptr:     func(r *Run) any { return &r.Priority }},
	{Flag: "cluster", Key: "cluster", Kind: KindTextOrDefault, Reload: Restart,
		Default: "`lanleader`",
		Help:    "clusters on one LAN ignore each other",
		ptr:     func(r *Run) any { return &r.Cluster }},
	{Flag: "bind", Key: "bind", Kind: KindIPPort, Reload: Restart,
		Default: "`0.0.0.0:7946`",
		Help:    "memberlist address; with 0.0.0.0 an IPv4 address of the default route's interface is announced and the election socket binds it; IPv6 needs a global or `fd00::/8` address (`[::]` and link-local are refused)",
		ptr:     func(r *Run) any { return &r.Bind }},
	{Flag: "election-port", Key: "election_port", Kind: KindInteger, Reload: Restart, Range: &Range{0, 65535},
		Default: "7947",
		Help:    "election UDP port on the bind address, the same on every agent (0 picks a free one only with bind port 0)",
		ptr:     func(r *Run) any { return &r.ElectionPort }},
	{Flag: "join", Key: "join", Kind: KindAddrList, Reload: Restart,
		Default: "none",
		Help:    "seeds, `host[:7946]`; retried in the background",
		ptr:     func(r *Run) any { return &r.Join }},
	{Flag: "http", Key: "http", Kind: KindHostPortOrOff, Reload: Restart,
		Default: "`127.0.0.1:9947`",
		Help:    "`/status`, `/healthz`, `/metrics`; `off` disables",
		ptr:     func(r *Run) any { return &r.HTTP }},
	{Flag: "heartbeat", Key: "heartbeat", Kind: KindDuration, Reload: Restart,
		Default: "100ms",
		Help:    "leader's heartbeat interval, at least 10ms",
		ptr:     func(r *Run) any { return &r.Heartbeat }},
	{Flag: "suspect-after", Key: "suspect_after", Kind: KindDuration, Reload: Restart,
		Default: "300ms (3 heartbeats)",
		Help:    "fixed detector's timeout, longer than the heartbeat; also a starting node's listen period",
		ptr:     func(r *Run) any { return &r.SuspectAfter }},
	{Flag: "detector", Key: "detector", Kind: KindText, Reload: Restart,
		Default: "`fixed`",
		Help:    "or `phi` (phi-accrual, threshold 8)",
		ptr:     func(r *Run) any { return &r.Detector }},
	{Flag: "key-file", Key: "key_file", Kind: KindKeyFile, Reload: Restart,
		Default: "none",
		Help:    "the cluster's secret, ≥ 32 bytes, the same on every agent, not readable by every user: signed and replay-protected election packets, encrypted gossip, a key for `resign` (see Authentication)",
		ptr:     func(r *Run) any { return &r.Key }},
	{Flag: "accept-key-file", Key: "accept_key_file", Kind: KindKeyFile, Reload: Restart,
		Default: "none",
		Help:    "an older key still accepted (never used to sign), for a key rotation; only with `--key-file`",
		ptr:     func(r *Run) any { return &r.AcceptKeys }},
	{Flag: "algorithm", Key: "algorithm", Kind: KindText, Reload: Restart,
		Default: "`bully`",
		Help:    "or `ring`, `chang-roberts`, `hirschberg-sinclair` (the ring family, see \"The ring algorithms\"); the same on every member",
		ptr:     func(r *Run) any { return &r.Algorithm }},
	{Flag: "role", Key: "role", Kind: KindText, Reload: Restart,
		Default: "`candidate`",
		Help:    "or `witness` (votes in quorum mode, never leads; needs `--quorum`), `observer` (follows and reports only; not counted in `--quorum`): see Roles",
		ptr:     func(r *Run) any { return &r.Role }},
	{Flag: "transport", Key: "transport", Kind: KindText, Reload: Restart,
		Default: "`multicast`",
		Help:    "`unicast` fans out to the members instead",
		ptr:     func(r *Run) any { return &r.Transport }},
	{Flag: "multicast-group", Key: "multicast_group", Kind: KindMulticastIP, Reload: Restart,
		Default: "`239.255.76.76` (`ff02::4c4c` on IPv6)",
		Help:    "group of election messages and beacons: in `239.0.0.0/8` or `ff02::/16`, of the bind address's family",
		ptr:     func(r *Run) any { return &r.Group }},
	{Flag: "preempt", Key: "preempt", Kind: KindBoolean, Reload: Applied,
		Default: "true",
		Help:    "false: keepalived's `nopreempt`",
		ptr:     func(r *Run) any { return &r.Preempt }},
	{Flag: "preempt-delay", Key: "preempt_delay", Kind: KindDuration, Reload: Restart,
		Default: "0",
		Help:    "a starting node waits this long before taking over; a node that resigned stays out at least this long",
		ptr:     func(r *Run) any { return &r.PreemptDelay }},
	{Flag: "quorum", Key: "quorum", Kind: KindInteger, Reload: Restart, Range: &Range{0, wire.MaxMembers},
		Default: "0",
		Help:    "expected cluster size N, the same on every agent: a node leads, and runs the job, only while a majority of N acknowledges its heartbeats within the lease (see Quorum mode); 0: off, the textbook",
		ptr:     func(r *Run) any { return &r.Quorum }},
	{Flag: "lease", Key: "lease", Kind: KindDuration, Reload: Restart,
		Default: "`--suspect-after` + `--heartbeat`",
		Help:    "with `--quorum`: how long after a heartbeat the leader leads on its acknowledgements; a leader that cannot renew it steps down a heartbeat before its end (SIGTERM to the job; SIGKILL at the end); longer than two heartbeats",
		ptr:     func(r *Run) any { return &r.Lease }},
	{Flag: "lease-margin", Key: "lease_margin", Kind: KindDuration, Reload: Restart,
		Default: "lease/10",
		Help:    "with `--quorum`: how much longer the followers wait before they support another leader; covers clock drift (500 ppm assumed, at least lease·2·500 ppm) and the job's death by SIGKILL",
		ptr:     func(r *Run) any { return &r.LeaseMargin }},
	{Flag: "state-file", Key: "state_file", Kind: KindStateFile, Reload: Restart,
		Default: "none",
		Help:    "with `--quorum`: where the last voted term is kept (fsynced before each vote), so a restart never gives one term to two leaders; its directory must exist",
		ptr:     func(r *Run) any { return &r.StateFile }},
	{Flag: "discover-interval", Key: "discover_interval", Kind: KindAnyDuration, Reload: Restart,
		Default: "1s",
		Help:    "beacon interval while alone; once joined, n× in a cluster of n members (at least 10×): about one beacon per interval for the whole LAN; a member joins a beacon's sender it does not know with a chance of 3 in n (always in clusters of up to 3), so that a newcomer gets about three state exchanges, not n−1; negative: off; multicast transport only",
		ptr:     func(r *Run) any { return &r.DiscoverInterval }},
	{Flag: "job", Key: "job", Kind: KindArgv, Reload: Restart,
		Default: "none",
		Help:    "the job, run on the leader only (see the job); in the file a list, or a string for `/bin/sh -c`",
		ptr:     func(r *Run) any { return &r.Job }},
	{Flag: "job-grace", Key: "job_grace", Kind: KindDuration, Reload: Applied,
		Default: "10s",
		Help:    "time between SIGTERM and SIGKILL of the job's process group",
		ptr:     func(r *Run) any { return &r.JobGrace }},
	{Flag: "takeover-wait", Key: "takeover_wait", Kind: KindDuration, Reload: Applied,
		Default: "0",
		Help:    "default mode: after a failover without a hand-over (a crash, a suspicion, a pulled cable, or the first leader after a start), the new leader starts the job only this long after it leads, and longer by the difference when the previous leader's `--job-grace` (its membership metadata says it; unknown: the longest of the members') is longer than its own; `--job-grace` plus a second rules out two jobs at once after an agent's crash (see the job); 0: no wait; quorum mode needs none",
		ptr:     func(r *Run) any { return &r.TakeoverWait }},
	{Flag: "job-max-failures", Key: "job_max_failures", Kind: KindInteger, Reload: Applied, Range: &Range{0, MaxJobMaxFailures},
		Default: "5",
		Help:    "exits of the job on its own within the window before the node drops to priority 1 and resigns; 0: never",
		ptr:     func(r *Run) any { return &r.JobMaxFailures }},
	{Flag: "job-failure-window", Key: "job_failure_window", Kind: KindDuration, Reload: Applied,
		Default: "1m",
		Help:    "the window of `--job-max-failures`, and how long the node keeps priority 1",
		ptr:     func(r *Run) any { return &r.JobFailureWindow }},
	{Flag: "job-mode", Key: "job_mode", Kind: KindText, Reload: Restart,
		Default: "always",
		Help:    "`always`: restart the job whenever it exits; `once`: run it once per leadership (see the job, once)",
		ptr:     func(r *Run) any { return &r.JobMode }},
	{Flag: "job-unit", Key: "job_unit", Kind: KindText, Reload: Restart,
		Default: "none",
		Help:    "a systemd service started and stopped as the job, over D-Bus, instead of `-- JOB` (see the job as a systemd unit)",
		ptr:     func(r *Run) any { return &r.JobUnit }},
	{Flag: "on-leader", Key: "on_leader", Kind: KindText, Reload: Applied,
		Default: "none",
		Help:    "shell command run when this node becomes leader",
		ptr:     func(r *Run) any { return &r.OnLeader }},
	{Flag: "on-follower", Key: "on_follower", Kind: KindText, Reload: Applied,
		Default: "none",
		Help:    "shell command run when it stops leading, or first follows a leader",
		ptr:     func(r *Run) any { return &r.OnFollower }},
	{Flag: "on-change", Key: "on_change", Kind: KindText, Reload: Applied,
		Default: "none",
		Help:    "shell command run on every change of state or leader",
		ptr:     func(r *Run) any { return &r.OnChange }},
	{Flag: "hook-timeout", Key: "hook_timeout", Kind: KindDuration, Reload: Applied,
		Default: "10s",
		Help:    "a hook still running then is killed and counted",
		ptr:     func(r *Run) any { return &r.HookTimeout }},
	{Flag: "check", Key: "checks", Kind: KindCheckList, Reload: Applied,
		Default: "none",
		Help:    "health check, a shell command; repeatable; in the file a list of commands or of mappings with a check's own `name`, `command`, `interval`, `timeout`, `rise`, `fall`, `weight` (see Health checks; `check:` is read too)",
		ptr:     func(r *Run) any { return &r.Checks }},
	{Flag: "check-interval", Key: "check_interval", Kind: KindDuration, Reload: Applied,
		Default: "2s",
		Help:    "how often a check runs, at least 100ms",
		ptr:     func(r *Run) any { return &r.CheckInterval }},
	{Flag: "check-timeout", Key: "check_timeout", Kind: KindDuration, Reload: Applied,
		Default: "the interval",
		Help:    "a run still going then has failed (killed); at most the interval",
		ptr:     func(r *Run) any { return &r.CheckTimeout }},
	{Flag: "check-rise", Key: "check_rise", Kind: KindInteger, Reload: Applied, Range: &Range{1, MaxCheckRiseFall},
		Default: "1",
		Help:    "1 … 1000 passes in a row that make a failed check OK",
		ptr:     func(r *Run) any { return &r.CheckRise }},
	{Flag: "check-fall", Key: "check_fall", Kind: KindInteger, Reload: Applied, Range: &Range{1, MaxCheckRiseFall},
		Default: "1",
		Help:    "1 … 1000 failures in a row that make an OK check failed",
		ptr:     func(r *Run) any { return &r.CheckFall }},
	{Flag: "check-weight", Key: "check_weight", Kind: KindInteger, Reload: Applied, Range: &Range{0, 65535},
		Default: "50",
		Help:    "0 … 65535: priority a failed check takes off (never below 1); 0: fault (out of the elections)",
		ptr:     func(r *Run) any { return &r.CheckWeight }},
	{Flag: "track-file", Key: "track_files", Kind: KindFileList, Reload: Applied,
		Default: "none",
		Help:    "a file whose presence puts the node in fault (maintenance, see Draining a node); repeatable (a list in the file)",
		ptr:     func(r *Run) any { return &r.TrackFiles }},
	{Flag: "vip", Key: "vip", Kind: KindVIPAddr, Reload: Applied,
		Default: "none",
		Help:    "a virtual address `ADDR/PREFIX[,dev=IFACE]` held by the leader (see Virtual IP); without `dev=` on the bind address's interface; repeatable (a list in the file); one IP family, never the bind address, each once",
		ptr:     func(r *Run) any { return &r.VIPs }},
	{Flag: "vip-announce-repeat", Key: "vip_announce_repeat", Kind: KindInteger, Reload: Restart, Range: &Range{1, MaxVIPAnnounceRepeat},
		Default: "5",
		Help:    "1 … 100 announcements (gratuitous ARP, unsolicited NA) of each address per burst; keepalived's `garp_master_repeat`",
		ptr:     func(r *Run) any { return &r.VIPAnnounceRepeat }},
	{Flag: "vip-announce-interval", Key: "vip_announce_interval", Kind: KindDurationOrOff, Reload: Restart,
		Default: "100ms",
		Help:    "gap between a burst's announcements (the first goes at once); 0: back to back; keepalived's `garp_interval` (0 there)",
		ptr:     func(r *Run) any { return &r.VIPAnnounceInterval }},
	{Flag: "vip-announce-delay", Key: "vip_announce_delay", Kind: KindDurationOrOff, Reload: Restart,
		Default: "5s",
		Help:    "a second burst this long after taking the addresses; 0: none; keepalived's `garp_master_delay`",
		ptr:     func(r *Run) any { return &r.VIPAnnounceDelay }},
	{Flag: "vip-announce-refresh", Key: "vip_announce_refresh", Kind: KindDurationOrOff, Reload: Restart,
		Default: "1m",
		Help:    "a burst this often while held; 0: none; keepalived's `garp_master_refresh` (off there)",
		ptr:     func(r *Run) any { return &r.VIPAnnounceRefresh }},
	{Flag: "vip-track-link", Key: "vip_track_link", Kind: KindBoolean, Reload: Restart,
		Default: "true",
		Help:    "while an interface of the addresses is down, the node takes no part in elections (a leader hands over)",
		ptr:     func(r *Run) any { return &r.VIPTrackLink }},
	{Flag: "start-timeout", Key: "start_timeout", Kind: KindDurationOrOff, Reload: Restart,
		Default: "1m",
		Help:    "while the bind address is not on the host yet or a port is in use, retry the start every second, then exit 3; 0: no retry",
		ptr:     func(r *Run) any { return &r.StartTimeout }},
	{Flag: "realtime", Key: "realtime", Kind: KindBoolean, Reload: Restart,
		Default: "false",
		Help:    "the event loop's thread alone runs SCHED_FIFO at priority 10 (not the job, not the hooks); needs CAP_SYS_NICE or `RLIMIT_RTPRIO` 10 (the drop-in `lanleader-realtime.conf`); without, a warning and an ordinary thread (see systemd and the .deb)",
		ptr:     func(r *Run) any { return &r.Realtime }},
	{Flag: "log-format", Key: "log_format", Kind: KindName, Reload: Restart, Names: []string{"text", "json"},
		Default: "`text`",
		Help:    "or `json`",
		ptr:     func(r *Run) any { return &r.LogFormat }},
	{Flag: "log-level", Key: "log_level", Kind: KindName, Reload: Applied, Names: []string{"debug", "info", "warn", "error"},
		Default: "`info`",
		Help:    "`debug`, `info`, `warn`, `error`",
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
