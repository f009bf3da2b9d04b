//go:build linux

// Command lanfailover measures failover on a LAN of real hosts: the test
// bed of e2e/ (one Linux network namespace per host, veth pairs on one
// bridge, addresses 198.18.0.1, 198.18.0.2, …) with one `lanleader run`
// process per host, found by multicast beacons. It needs root.
//
//	sudo go run ./bench/lanfailover -scale 5,32,64,128 [-trials 30] [-heartbeat 100ms] [-quorum 0,n] [-state-dir /dev/shm] [-start-every 40ms] [-keepalived] [-advert-int 100ms]
//	sudo go run ./bench/lanfailover [-hosts 5] [-trials 30]
//	    [-heartbeat 100ms,10ms] [-mode crash,graceful,freeze] [-algorithm bully]
//	    [-quorum 0] [-keepalived] [-advert-int 1s,100ms] [-seed 1] [-v]
//
// For each algorithm (-algorithm: bully by default, a list, or all),
// heartbeat, mode and quorum it starts one cluster (host-k has node_id k;
// host-K, the largest, leads) and runs -trials trials. Each trial waits
// until every host agrees that host-K leads, sleeps a random delay in
// [0, heartbeat) so that the kill falls at a random phase of the leader's
// heartbeat, then at t0 takes host-K's agent down:
//
//   - crash: SIGKILL (no RESIGN, no leave: the others must miss its
//     heartbeats, then elect);
//   - graceful: SIGTERM (the agent sends RESIGN, then leaves): the time is
//     from the signal, so it bounds the time from RESIGN from above;
//   - freeze: host-K's whole host stops at once, as a frozen VM with its
//     cable out: every process of its namespace SIGSTOPped (parents
//     first; t0 is the first signal), then its link down (the bridge's
//     end of its veth: its eth0 loses carrier), so that neither a frame
//     its processes had queued nor an answer of its kernel (ARP, TCP)
//     leaves it, and nothing reaches it. Nothing on the host can tell the
//     others it is gone: the others must miss its heartbeats, whatever
//     an agent's own host may do for it after a crash (freeze.go).
//
// and waits until the other hosts agree on host-(K−1). It reports, from
// the agents' own log stamps (nanoseconds, one clock: every host is a
// namespace of this machine), the time from t0 to the first host naming
// the new leader ("first", normally the new leader itself) and to the last
// one ("all agree"). Then it restarts host-K (freeze: thaws it, its link
// up, then SIGCONT, children first; the resumed agent hears the newer
// term and takes the lead back) and waits until it leads again before the
// next trial. -mode's default is all three.
//
// -quorum is a list of expected cluster sizes N (default 0: plain bully,
// or whichever -algorithm, as the textbook has it). For N > 0 every agent
// runs with --quorum N and --state-file (a file per host in the setting's
// temporary directory, kept across host-K's restarts, so that its votes
// survive them, as quorum mode's safety requires; -state-dir says where
// that directory goes: the bed's hosts share one disk, and a vote is
// synced before it is sent, so 128 hosts' syncs queue on it where a
// LAN's hosts each sync their own; a tmpfs takes the queue away). In quorum mode a node
// leads only once a majority of N, itself included, acknowledged its
// claim, and a follower that acknowledged a leader supports no other and
// starts no election before lease+margin after its last acknowledgement
// (its guard). So a crashed leader is replaced about lease+margin after
// the last heartbeat acknowledged, plus a claim round: the new leader's
// COORDINATOR and a majority's HEARTBEAT_ACKs. Graceful: the leader stops
// its job, sends RESIGN and steps down; a RESIGN ends the guard of each
// follower that acknowledged that leader's term, so the successor is
// confirmed after one claim round. host-K's restart waits its own guard
// (lease+margin from its start) before it supports anyone. The new leader is reported only once a
// majority acknowledged it (a claimant shows candidate with no leader, and
// its followers leader 0 until its first HEARTBEAT, sent as soon as a
// majority confirmed it), so "first"
// and "all agree" keep their meaning: the first host, and the last, to
// name a confirmed leader. N must leave a majority among the K−1 hosts
// that survive the kill (N/2+1 ≤ K−1); N is normally -hosts. Each row's
// setting names its quorum ("quorum off" for 0) whenever -quorum is not
// just 0, and when both 0 and N > 0 ran for one algorithm, heartbeat and
// mode, a table after the first gives the ratio of their medians (quorum
// / off). The packets of a quorum row include the HEARTBEAT_ACKs (the
// votes of the claim round, and the acks of the new leader's heartbeats
// up to the agreement): they are to the election port, and neither
// heartbeats nor beacons.
//
// Election packets per failover are the frames to the election port that
// entered the bridge between t0 and the agreement, counted once each by an
// nftables counter on the bridge, heartbeats and discovery beacons apart:
// bully's ELECTION, ANSWER, COORDINATOR, RESIGN; the ring family's
// messages and their acks. CPU (% of one core over the
// agent's life) and RSS are read from /proc for every agent at the end of
// a setting.
//
// With -keepalived the same namespaces, hosts and kills run keepalived
// (Debian's package: apt-get install keepalived) with one VRRP instance
// (priority 99+k on host-k, preemption on) and one virtual address,
// 198.18.0.200, for each -advert-int: VRRPv2, keepalived's default, for
// whole seconds, VRRPv3 otherwise (v2 has no sub-second adverts). A crash
// SIGKILLs every keepalived process of host-K, its VRRP child first;
// graceful SIGTERMs the parent. Its times are the kernel's stamps of the
// frames on the bridge: "first" is host-(K−1)'s first advert as master,
// "all agree" its first gratuitous ARP for the virtual address (VRRP
// backups record no master); its packets are VRRP frames. A freeze stops
// every process of host-K's namespace (keepalived and its VRRP child) and
// takes its link down as for lanleader; thawed, host-K's keepalived
// resumes and takes the master role back. Its rows are printed in the
// same table.
//
// With -vip it measures instead what the user of the cluster's virtual
// address sees: a client host (a namespace on the same bridge that runs
// no agent) asks the address every millisecond, every host answers with
// its name (e2e/internal/vipclient, vipecho), and each row reports the
// client's outage, from the kill to its first answer from the new holder,
// for lanleader with --vip (modes crash, graceful and resign, and freeze
// when -mode asks for it; rows skipped,
// saying "lanleader has no --vip", when the binary lacks the flag) and,
// with -keepalived, keepalived's virtual_ipaddress (advert_int 1s, 100ms,
// 10ms by default). At least 20 trials a row. See agent/part/vips.
//
// With -scale it measures instead how the costs grow with the LAN's size:
// one crash-failover row per host count, with the start-up time, the p99
// ratio to the smallest LAN, packets per host, idle CPU and RSS per agent
// (see scale.go). Test beds of 40 hosts and more raise the kernel's
// neighbour table limits while they live (see e2e's doc), and a setting
// whose hosts' UDP sends the kernel dropped (SndbufErrors) fails.
//
// Exit status 0 when every trial agreed within 30 s, 1 otherwise (or when
// the test bed cannot be built: not root, no ip or nft), 2 for bad flags.
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/lanleader/lanleader/bench/internal/lists"
	"github.com/lanleader/lanleader/bench/internal/machine"
	"github.com/lanleader/lanleader/bench/internal/procstat"
	"github.com/lanleader/lanleader/bench/internal/stats"
	"github.com/lanleader/lanleader/e2e"
	"github.com/lanleader/lanleader/election"
)

// deadline bounds every wait for agreement.
const deadline = 30 * time.Second

// maxHosts and maxVIPHosts are the test bed's limits (e2e.NewNet's, and
// NewNetWithClient's).
const (
	maxHosts    = 128
	maxVIPHosts = 98
)

// observeEvery is the observer's polling period: it only decides when to
// go on; the figures come from the agents' log stamps.
const observeEvery = 20 * time.Millisecond

type options struct {
	hosts, trials int
	heartbeats    []time.Duration
	algorithms    []string
	modes         []string
	quorums       []int // 0: plain (the textbook algorithm)
	lossQuorums   []int // -loss's lanleader rows: -quorum when given, else 0 and -hosts
	keepalived    bool
	adverts       []time.Duration
	losses        []int // -loss: loss percentages (stability rows instead of failover)
	lossFor       time.Duration
	vip           bool          // -vip: the client's outage rows instead of failover
	scale         []int         // -scale: host counts of the scale table instead of failover rows
	scaleQuorums  []bool        // -scale's -quorum: false for off, true for --quorum N with N the LAN's size
	startEvery    time.Duration // -start-every: pause between two agents' starts
	idle          idleSpan      // -idle-settle, -idle-window
	seed          uint64
	verbose       bool
	logDir        string        // -logs: where the agents' logs are kept
	stateDir      string        // -state-dir: where the state files' directories go ("": the system's)
	settle        time.Duration // -settle: how long a LAN runs agreed before each kill
	job           bool          // -job: every agent runs a job (sleep) while it leads
	realtime      bool          // -realtime: the agents run with --realtime
}

func main() {
	lists.Main("lanfailover", parseFlags, func(o options) int {
		defer e2e.RemoveBinary()
		return run(o, os.Stdout, os.Stderr)
	})
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("lanfailover", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: sudo go run ./bench/lanfailover [-hosts 5] [-trials 30] [-heartbeat 100ms,10ms] [-mode crash,graceful,freeze] [-algorithm bully] [-quorum 0] [-keepalived] [-advert-int 1s,100ms] [-seed 1] [-v]\n"+
			"       sudo go run ./bench/lanfailover -loss 20,30 [-loss-for 30s] [-hosts 5] [-keepalived] [-advert-int 1s,100ms]\n"+
			"       sudo go run ./bench/lanfailover -scale 5,32,64,128 [-trials 30] [-heartbeat 100ms] [-algorithm bully] [-quorum 0,n] [-keepalived] [-advert-int 100ms] [-idle-settle 2s] [-idle-window 5s]\n"+
			"       sudo go run ./bench/lanfailover -vip [-trials 20] [-hosts 3] [-heartbeat 100ms,10ms] [-mode crash,graceful,resign] [-keepalived] [-advert-int 1s,100ms,10ms]\n\n"+
			"Failover time of real lanleader agents (and, with -keepalived, of keepalived)\n"+
			"on hosts that are network namespaces of this machine, when the leader is killed\n"+
			"or stopped, or its whole host freezes with its link down. Needs root, iproute2\n"+
			"and nftables (and keepalived for -keepalived).\n\n")
		fs.PrintDefaults()
	}
	var o options
	fs.IntVar(&o.hosts, "hosts", 5, "hosts in the LAN, 2…128 (…98 with -vip)")
	scale := fs.String("scale", "", "comma-separated host counts (2…128): instead of failover rows, the scale table: start-up, crash failover, packets, idle CPU and RSS per host count (e.g. 5,32,64,128)")
	fs.IntVar(&o.trials, "trials", 30, "kills per setting and mode, at least 1")
	hbs := fs.String("heartbeat", "100ms,10ms", "comma-separated lanleader heartbeat intervals (100ms is the default)")
	modes := fs.String("mode", "crash,graceful,freeze", "comma-separated modes: crash (SIGKILL of the leader's agent), graceful (SIGTERM), freeze (every process of the leader's host SIGSTOPped, its link down, then thawed); with -vip also resign, and crash,graceful,resign by default")
	algs := fs.String("algorithm", "bully", "comma-separated lanleader election algorithms: "+strings.Join(election.Algorithms, ", ")+", or all")
	quorums := fs.String("quorum", "0", "comma-separated quorum sizes N for the agents' --quorum (0: off, the plain algorithm; e.g. 0,5 compares both); with -scale 0 and/or n (N = each LAN's size)")
	fs.BoolVar(&o.keepalived, "keepalived", false, "also measure keepalived (VRRP) on the same hosts")
	adverts := fs.String("advert-int", "1s,100ms", "comma-separated keepalived advert_int values (1s is keepalived's default)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the random kill phase")
	losses := fs.String("loss", "", "comma-separated loss percentages: instead of failover, measure stability under random loss on every host's input (e.g. 20,30; 0: idle, no loss), for lanleader at the first -heartbeat in both modes (plain and --quorum of -hosts) unless -quorum says which")
	fs.DurationVar(&o.lossFor, "loss-for", 30*time.Second, "with -loss: how long each row's loss lasts")
	fs.BoolVar(&o.vip, "vip", false, "instead of failover, measure what a client of the virtual address sees: its outage (lanleader --vip; keepalived's virtual_ipaddress with -keepalived); modes add resign; -advert-int defaults to 1s,100ms,10ms; at least 20 trials")
	fs.DurationVar(&o.startEvery, "start-every", 0, "pause between the starts of two agents of a LAN (0: one right after another)")
	fs.DurationVar(&o.idle.settle, "idle-settle", defaultIdleSettle, "how long after the first agreement the idle CPU's window starts (memberlist's gossip of the joins dies down meanwhile)")
	fs.DurationVar(&o.idle.window, "idle-window", defaultIdleWindow, "how long the idle CPU of each agent is measured (CPU time comes in 10 ms ticks: a longer window is finer)")
	fs.BoolVar(&o.verbose, "v", false, "one line per trial on stderr")
	fs.DurationVar(&o.settle, "settle", 0, "how long the LAN runs agreed before each kill (0: the kill follows the agreement after a random part of a heartbeat); the taking back by the restarted host-K and memberlist's gossip of its return run meanwhile")
	fs.StringVar(&o.stateDir, "state-dir", "", "with -quorum: where the agents' --state-file go, a directory each setting (default: the system's temporary directory); the hosts of the bed share one disk, where each host of a LAN has its own, and their votes' fsyncs queue on it: a tmpfs (/dev/shm) takes that queue away")
	fs.BoolVar(&o.job, "job", false, "every agent runs a job while it leads (sleep, which ends at once at its SIGTERM): a crashed leader's NOTICE then waits for its job's end, and so does the next leader in quorum mode")
	fs.BoolVar(&o.realtime, "realtime", false, "the agents run with --realtime (their event loop SCHED_FIFO): how they fare on a host whose CPUs are busy")
	fs.StringVar(&o.logDir, "logs", "", "keep every agent's log (each process of each row, the killed ones too; with -loss every row's agents) in this directory, one file a process")
	if err := lists.Parse(fs, args); err != nil {
		return o, err
	}
	if o.hosts < 2 || o.hosts > maxHosts {
		return o, fmt.Errorf("-hosts: %d out of range 2…%d", o.hosts, maxHosts)
	}
	if o.trials < 1 {
		return o, fmt.Errorf("-trials: %d, want at least 1", o.trials)
	}
	if o.idle.window < time.Second || o.idle.settle < 0 {
		return o, fmt.Errorf("-idle-window %v, -idle-settle %v: want a window of at least 1s and a settle of at least 0", o.idle.window, o.idle.settle)
	}
	var err error
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.scale, err = parseScale(*scale); err != nil {
		return o, err
	}
	if o.job && (*scale != "" || o.vip || len(*losses) > 0) {
		return o, errors.New("-job: only with failover rows, not with -scale, -vip or -loss (those run jobs of their own, or none)")
	}
	if len(o.scale) > 0 {
		if o.vip || len(*losses) > 0 || set["mode"] || set["hosts"] {
			return o, errors.New("-scale: not with -vip, -loss, -mode or -hosts (its rows are crash failovers, one per host count)")
		}
		if o.scaleQuorums, err = parseScaleQuorums(*quorums, o.scale); err != nil {
			return o, err
		}
		*quorums = "0"
		if !set["heartbeat"] {
			*hbs = "100ms"
		}
		if !set["advert-int"] {
			*adverts = "100ms"
		}
	}
	if o.heartbeats, err = lists.Durations("-heartbeat", *hbs, 10*time.Millisecond); err != nil {
		return o, err
	}
	if o.vip {
		if o.hosts > maxVIPHosts {
			return o, fmt.Errorf("-vip: -hosts %d, want at most %d (the client's and the hosts' addresses stay below the virtual address)", o.hosts, maxVIPHosts)
		}
		if !set["mode"] {
			*modes = "crash,graceful,resign"
		}
		if !set["advert-int"] {
			*adverts = "1s,100ms,10ms"
		}
		if o.trials < 20 {
			return o, fmt.Errorf("-vip: -trials %d, want at least 20 (for p90 and p99)", o.trials)
		}
		if len(*losses) > 0 {
			return o, errors.New("-vip and -loss: one at a time")
		}
		if o.modes, err = vipModes(*modes); err != nil {
			return o, err
		}
	} else if o.modes, err = failoverModes(*modes); err != nil {
		return o, err
	}
	if o.adverts, err = lists.Durations("-advert-int", *adverts, 10*time.Millisecond); err != nil {
		return o, err
	}
	if o.quorums, err = parseQuorums(*quorums, o.hosts); err != nil {
		return o, err
	}
	if o.losses, err = parseLosses(*losses); err != nil {
		return o, err
	}
	o.lossQuorums = []int{0, o.hosts}
	if set["quorum"] {
		o.lossQuorums = o.quorums
	}
	if o.startEvery < 0 {
		return o, fmt.Errorf("-start-every: %v, want 0 or more", o.startEvery)
	}
	if o.lossFor <= 0 {
		return o, fmt.Errorf("-loss-for: %v, want a positive duration", o.lossFor)
	}
	if *algs == "all" {
		*algs = strings.Join(election.Algorithms, ",")
	}
	for f := range strings.SplitSeq(*algs, ",") {
		a := strings.TrimSpace(f)
		if !slices.Contains(election.Algorithms, a) {
			return o, fmt.Errorf("-algorithm: %q is not one of %s, or all", a, strings.Join(election.Algorithms, ", "))
		}
		o.algorithms = append(o.algorithms, a)
	}
	return o, nil
}

// failoverModes parses -mode's list: crash, graceful, freeze.
func failoverModes(list string) ([]string, error) {
	return parseModes(list, "crash", "graceful", "freeze")
}

// parseModes parses -mode's list: each of the modes known, at most once.
func parseModes(list string, known ...string) ([]string, error) {
	var out []string
	for f := range strings.SplitSeq(list, ",") {
		m := strings.TrimSpace(f)
		switch {
		case !slices.Contains(known, m):
			return nil, fmt.Errorf("-mode: %q is not %s or %s", m, strings.Join(known[:len(known)-1], ", "), known[len(known)-1])
		case slices.Contains(out, m):
			return nil, fmt.Errorf("-mode: %s twice", m)
		}
		out = append(out, m)
	}
	return out, nil
}

// vipModes parses -mode's list with -vip: crash, graceful, resign, freeze.
func vipModes(list string) ([]string, error) {
	return parseModes(list, "crash", "graceful", "resign", "freeze")
}

// parseLosses parses -loss's list of percentages (empty: no loss rows).
func parseLosses(list string) ([]int, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	return lists.Ints("-loss", list, "percentage", 0, 99)
}

// parseQuorums parses -quorum's list for a LAN of hosts: every N is 0
// (off) or leaves a majority of N among the hosts - 1 that survive a kill.
func parseQuorums(list string, hosts int) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(list, ",") {
		f = strings.TrimSpace(f)
		q, err := strconv.Atoi(f)
		switch {
		case err != nil || q < 0:
			return nil, fmt.Errorf("-quorum: %q is not a cluster size (0 for off)", f)
		case q > 0 && q/2+1 > hosts-1:
			return nil, fmt.Errorf("-quorum: %d needs a majority of %d, but only %d of the %d hosts survive the kill", q, q/2+1, hosts-1, hosts)
		case slices.Contains(out, q):
			return nil, fmt.Errorf("-quorum: %d twice", q)
		}
		out = append(out, q)
	}
	return out, nil
}

// parseScaleQuorums parses -quorum's list with -scale: 0 (off) and n
// (--quorum N with N the LAN's size, every host a voter), each at most
// once; n needs at least 3 hosts (a majority must survive the kill).
func parseScaleQuorums(list string, scale []int) ([]bool, error) {
	var out []bool
	for f := range strings.SplitSeq(list, ",") {
		var q bool
		switch f = strings.TrimSpace(f); f {
		case "0":
		case "n":
			q = true
			if h := slices.Min(scale); h < 3 {
				return nil, fmt.Errorf("-quorum n with -scale: %d hosts leave no majority of %d after the kill; want at least 3", h, h)
			}
		default:
			return nil, fmt.Errorf("-quorum with -scale: %q is neither 0 (off) nor n (--quorum N, N the LAN's size)", f)
		}
		if slices.Contains(out, q) {
			return nil, fmt.Errorf("-quorum: %s twice", f)
		}
		out = append(out, q)
	}
	return out, nil
}

// quorumName is how a setting names quorum size q.
func quorumName(q int) string {
	if q == 0 {
		return "quorum off"
	}
	return "quorum " + strconv.Itoa(q)
}

// result is one row: a system, a setting and a mode.
type result struct {
	System   string // lanleader, keepalived
	Setting  string // "heartbeat 100ms", "advert_int 1s", "heartbeat 100ms, quorum 5"
	Base     string // Setting without its quorum: the rows a ratio compares share it
	Quorum   int    // lanleader's --quorum (0: off); -1 for keepalived
	Mode     string
	First    []time.Duration // t0 → the first host names the new leader
	All      []time.Duration // t0 → every other host names it
	Packets  []uint64        // election packets per failover
	Usage    []usage         // every agent, at the end
	Failures []string
	Hosts    int           // lanleader's cluster size
	Startup  time.Duration // last agent's start → all agree (lanleader; 0 when agreed before)
}

// usage is one agent's CPU and memory.
type usage struct {
	Host      int
	TrialsCPU float64 // % of one core from the first agreement to the end of the trials; -1 for a host restarted by them
	IdleCPU   float64 // % of one core over -idle-window before the trials, the cluster settled
	RSS       uint64  // bytes, at the end of the idle window
}

// idleSpan is when the idle CPU is measured: over window, from settle
// after the cluster first agreed.
type idleSpan struct{ settle, window time.Duration }

// The defaults of -idle-window, how long each agent's CPU is measured
// once the cluster first agreed, and -idle-settle, how long after the
// agreement that starts (before the trials).
const (
	defaultIdleWindow = 5 * time.Second
	defaultIdleSettle = 2 * time.Second
)

// cpuTime is a process's CPU time (user and system) and when it was read.
type cpuTime struct {
	cpu time.Duration
	at  time.Time
}

// percent is the CPU used between a and b, in % of one core.
func percent(a, b cpuTime) float64 {
	return 100 * (b.cpu - a.cpu).Seconds() / b.at.Sub(a.at).Seconds()
}

func run(o options, stdout, stderr io.Writer) int {
	r := &runner{out: stdout, log: stderr, verbose: o.verbose, idle: o.idle}
	rng := rand.New(rand.NewPCG(o.seed, 0x6c616e6c65616465)) // "lanleade"
	fmt.Fprintf(stdout, "# %s\n", machine.This().Line())
	hosts := strconv.Itoa(o.hosts)
	if len(o.scale) > 0 {
		counts := make([]string, len(o.scale))
		for k, h := range o.scale {
			counts[k] = strconv.Itoa(h)
		}
		hosts = strings.Join(counts, ",")
	}
	fmt.Fprintf(stdout, "# %s hosts (network namespaces on one bridge), %d trials per row, seed %d\n", hosts, o.trials, o.seed)
	var results []result
	r.watchSignals()
	if o.vip {
		return runVIP(r, o, stdout, stderr, rng)
	}
	if len(o.scale) > 0 {
		return runScale(r, o, stdout, stderr, rng)
	}
	if len(o.losses) > 0 {
		rows := runLoss(r, o, stdout, stderr)
		failed := false
		for _, row := range rows {
			if row.Failure != "" {
				failed = true
				fmt.Fprintf(stderr, "lanfailover: %d%% loss, %s, %s: %s\n", row.Percent, row.System, row.Setting, row.Failure)
			}
		}
		if failed || r.interrupted.Load() {
			return 1
		}
		return 0
	}
	measure := func(system, base string, quorum int, mode string, f func(*result)) {
		if r.interrupted.Load() {
			return
		}
		setting := base
		if quorum >= 0 && !slices.Equal(o.quorums, []int{0}) {
			setting += ", " + quorumName(quorum)
		}
		fmt.Fprintf(stderr, "lanfailover: %s, %s, %s: %d trials…\n", system, setting, mode, o.trials)
		res := result{System: system, Setting: setting, Base: base, Quorum: quorum, Mode: mode}
		if msg := r.scope(func() { f(&res) }); msg != "" {
			res.Failures = append(res.Failures, msg)
		}
		results = append(results, res)
	}
	for _, alg := range o.algorithms {
		for _, hb := range o.heartbeats {
			for _, mode := range o.modes {
				setting := o.setting(alg, hb)
				for _, q := range o.quorums {
					measure("lanleader", setting, q, mode, func(res *result) { measureLanleader(r, o, alg, hb, q, mode, rng, res) })
				}
			}
		}
	}
	if o.keepalived {
		kaDefinitions(stdout)
		for _, adv := range o.adverts {
			for _, mode := range o.modes {
				measure("keepalived", "advert_int "+adv.String(), -1, mode, func(res *result) { measureKeepalived(r, o, adv, mode, rng, res) })
			}
		}
	}
	printTable(stdout, results, o.idle)
	failed := false
	for _, res := range results {
		for _, f := range res.Failures {
			failed = true
			fmt.Fprintf(stderr, "lanfailover: %s, %s, %s: %s\n", res.System, res.Setting, res.Mode, f)
		}
	}
	if failed || r.interrupted.Load() {
		return 1
	}
	return 0
}

func hostName(i int) string { return "host-" + strconv.Itoa(i+1) }

// measureLanleader runs o.trials trials of mode on a fresh cluster with
// heartbeat hb and quorum size quorum (0: off), into res.
func measureLanleader(r *runner, o options, alg string, hb time.Duration, quorum int, mode string, rng *rand.Rand, res *result) {
	// The state files' directory goes after the agents (cleanups run last
	// first), and lives as long as the setting: host-K's votes survive its
	// restarts.
	var stateDir string
	if quorum > 0 {
		stateDir = r.TempDirIn(o.stateDir)
	}
	n := e2e.NewNet(r, o.hosts)
	e2e.RequireNFT(r)
	n.CountPackets(r)
	obs := n.Observe(r, observePeriod(o.hosts))
	obs.LogsOnly(true) // until the start-up's agreement (startup)
	start := func(i int) *e2e.Proc {
		args := []string{"run", "--bind", n.Addr(i), "--name", hostName(i), "--node-id", strconv.Itoa(i + 1),
			"--log-format", "json", "--heartbeat", hb.String(), "--algorithm", alg}
		if quorum > 0 {
			args = append(args, "--quorum", strconv.Itoa(quorum), "--state-file", filepath.Join(stateDir, hostName(i)+".state"))
		}
		if o.realtime {
			args = append(args, "--realtime")
		}
		if o.job {
			args = append(args, "--", "sleep", "3600")
		}
		return n.Start(r, i, args...)
	}
	label := fmt.Sprintf("heartbeat %v", hb)
	if quorum > 0 {
		label += " quorum " + strconv.Itoa(quorum)
	}
	busy0, all0, busyErr := procstat.Machine()
	procs, lastStart := startAgents(r, o, n, obs, start)
	if o.logDir != "" {
		row := fmt.Sprintf("%s-%s-%dhosts-%s", alg, label, o.hosts, mode)
		ended := []*e2e.Proc{}
		defer func() {
			keepLogs(r, filepath.Join(o.logDir, strings.ReplaceAll(row, " ", "-")), append(ended, procs...))
		}()
		startNext := start
		start = func(i int) *e2e.Proc {
			ended = append(ended, procs[i])
			return startNext(i)
		}
	}
	all := n.All()
	others := all[:o.hosts-1]
	top := o.hosts - 1
	res.Hosts = o.hosts
	res.Startup = startup(r, obs, lastStart, top, all)
	if busy1, all1, err := procstat.Machine(); err == nil && busyErr == nil && all1 > all0 {
		// How saturated the start left the machine: the bed's hosts share
		// its CPUs, where a LAN's each have their own.
		r.Logf("the machine's CPUs were %.0f %% busy from the first start to the agreement", 100*float64(busy1-busy0)/float64(all1-all0))
	}
	// The idle cost: the cluster settled, nothing polling the agents.
	obs.Stop()
	res.Usage = idleUsage(r, procs)
	obs = n.Observe(r, observePeriod(o.hosts))
	frozen := hostFreeze(r, n, top)
	since := time.Now()
	var trialsFrom []cpuTime
	for trial := range o.trials {
		r.checkInterrupt()
		if why := waitAgree(r, obs, since, uint64(top+1), all); why != "" {
			r.Fatalf("trial %d: %d hosts do not agree that host-%d leads within %v: %s", trial+1, o.hosts, top+1, deadline, why)
		}
		if trial == 0 {
			trialsFrom = cpuTimes(r, procs)
		}
		// Nothing polls the agents from here to the agreement: on a bed
		// of 128 hosts the polls of /status take as much CPU as a
		// failover's packets (see e2e's LogsOnly).
		obs.LogsOnly(true)
		time.Sleep(o.settle) // the scenario: a LAN agreed for this long
		time.Sleep(time.Duration(rng.Int64N(int64(hb))))
		p0, err := n.Packets()
		if err != nil {
			r.Fatalf("%v", err)
		}
		what := fmt.Sprintf("trial %d", trial+1)
		var pids []int
		if mode == "freeze" {
			pids = frozen.list(r, what) // before t0: the listing is no part of the fault
		}
		t0 := time.Now()
		switch mode {
		case "freeze":
			frozen.freeze(r, pids, what)
		case "crash", "graceful":
			sig := syscall.SIGKILL
			if mode == "graceful" {
				sig = syscall.SIGTERM
			}
			if err := procs[top].Signal(sig); err != nil {
				r.Fatalf("%s: %v", what, err)
			}
		}
		if why := waitAgreeLogs(r, obs, t0, uint64(top), others); why != "" {
			obs.LogsOnly(false)
			res.Failures = append(res.Failures, fmt.Sprintf("trial %d: no agreement on host-%d within %v: %s",
				trial+1, top, deadline, why))
			return
		}
		p1, err := n.Packets()
		if err != nil {
			r.Fatalf("%v", err)
		}
		first, last, ok := obs.Settle(t0, uint64(top), others...)
		if !ok {
			r.Fatalf("trial %d: the hosts agree on host-%d, but not every log says so", trial+1, top)
		}
		res.First = append(res.First, first)
		res.All = append(res.All, last)
		res.Packets = append(res.Packets, p1.Sub(p0).Election)
		r.Logf("lanleader %s %s trial %d: first %v, all %v, %d election packets", label, mode, trial+1, first, last, p1.Sub(p0).Election)
		// The survivors' /status must say what their logs say: the next
		// trial's wait for host-K's return polls again.
		obs.LogsOnly(false)
		if why := waitAgree(r, obs, time.Now(), uint64(top), others); why != "" {
			r.Fatalf("trial %d: the logs agree on host-%d, /status not: %s", trial+1, top, why)
		}

		if mode == "freeze" {
			// Resumed, not restarted (see freeze.go): the next trial waits
			// until host-K leads again.
			since = time.Now()
			frozen.unfreeze(r, what)
			continue
		}
		code, err := procs[top].Wait(10 * time.Second)
		if mode == "graceful" && (err != nil || code != 0) {
			r.Fatalf("trial %d: host-%d after SIGTERM: exit %d, %v; want exit 0", trial+1, top+1, code, err)
		}
		if !procs[top].Exited() {
			r.Fatalf("trial %d: host-%d still runs 10 s after the %s", trial+1, top+1, mode)
		}
		since = time.Now()
		procs[top] = start(top)
	}
	if why := waitAgree(r, obs, since, uint64(top+1), all); why != "" {
		r.Fatalf("after the last trial: %d hosts do not agree that host-%d leads within %v: %s", o.hosts, top+1, deadline, why)
	}
	// The observer's polls are part of the CPU during the trials.
	obs.Stop()
	trialsTo := cpuTimes(r, procs)
	for i := range res.Usage {
		if i != top {
			res.Usage[i].TrialsCPU = percent(trialsFrom[i], trialsTo[i])
		}
	}
	checkSends(r, n, res)
}

// keepLogs writes the log of every process of procs into dir, one file
// each: host-N.log, host-N.2.log for its second process, and so on.
func keepLogs(r *runner, dir string, procs []*e2e.Proc) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.Logf("-logs: %v", err)
		return
	}
	seen := map[int]int{}
	for _, p := range procs {
		seen[p.Host]++
		name := hostName(p.Host)
		if k := seen[p.Host]; k > 1 {
			name += "." + strconv.Itoa(k)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".log"), []byte(p.Log()), 0o644); err != nil {
			r.Logf("-logs: %v", err)
			return
		}
	}
	r.Logf("the agents' logs are in %s", dir)
}

// idleUsage measures every agent's CPU over r.idle.window, r.idle.settle
// after the cluster agreed (memberlist's gossip of the joins dies down), and
// its RSS at the end of the window; TrialsCPU is -1 (not measured yet).
func idleUsage(r *runner, procs []*e2e.Proc) []usage {
	time.Sleep(r.idle.settle) // the measurement's schedule, not a synchronisation
	from := cpuTimes(r, procs)
	time.Sleep(r.idle.window) // the measurement window
	to := cpuTimes(r, procs)
	out := make([]usage, len(procs))
	for i, p := range procs {
		rss, err := procstat.RSS(p.Pid)
		if err != nil {
			r.Fatalf("host-%d: %v", i+1, err)
		}
		out[i] = usage{Host: i, TrialsCPU: -1, IdleCPU: percent(from[i], to[i]), RSS: rss}
	}
	busiest := slices.SortedFunc(slices.Values(out), func(a, b usage) int { return cmp.Compare(b.IdleCPU, a.IdleCPU) })
	for _, u := range busiest[:min(3, len(busiest))] {
		r.Logf("idle: %s used %.2f %% of a core over %v", hostName(u.Host), u.IdleCPU, r.idle.window)
	}
	return out
}

// startAgents starts the agents of hosts 1 to o.hosts one after another
// (o.startEvery apart), within e2e.StartBound: a LAN that saturates the
// machine while it starts ends the setting as not converging. last is
// when the last agent's start began: taken after it, on a machine that
// the starting LAN saturates, the time came late, sometimes after the
// agreement it is the start of.
func startAgents(r *runner, o options, n *e2e.Net, obs *e2e.Observer, start func(int) *e2e.Proc) (procs []*e2e.Proc, last time.Time) {
	procs = make([]*e2e.Proc, o.hosts)
	begin, bound := time.Now(), e2e.StartBound(o.hosts, o.startEvery)
	for i := range procs {
		r.checkInterrupt()
		if i > 0 && o.startEvery > 0 {
			time.Sleep(o.startEvery) // the start schedule asked for, not a synchronisation
		}
		if time.Since(begin) > bound {
			r.Fatalf("start-up: no convergence: starting the agents took more than %v, %d of %d started (%d say they lead): the machine is saturated",
				bound, i, o.hosts, obs.Leading(n.All()[:i]...))
		}
		last = time.Now()
		procs[i] = start(i)
	}
	r.Logf("%d agents started in %v", o.hosts, last.Sub(begin).Round(time.Millisecond))
	return procs, last
}

// startup waits until every host agrees that host top+1 leads, the last
// agent having started at last, and returns the time from then to the
// last host's taking its view (0 when every host agreed before the last
// start). No agreement within deadline ends the setting, saying how
// many hosts lead.
func startup(r *runner, obs *e2e.Observer, last time.Time, top int, all []int) time.Duration {
	// From the logs, with the observer's polls off (LogsOnly), then from
	// /status too, once the time is taken.
	if why := waitAgreeLogs(r, obs, last, uint64(top+1), all); why != "" {
		r.Fatalf("start-up: no convergence: %d hosts do not agree that host-%d leads within %v of the last start: %s",
			len(all), top+1, deadline, why)
	}
	at, ok := obs.LastChange(all...)
	if !ok {
		r.Fatalf("start-up: the hosts agree on host-%d, but not every log says so", top+1)
	}
	obs.LogsOnly(false)
	if why := waitAgree(r, obs, time.Now(), uint64(top+1), all); why != "" {
		r.Fatalf("start-up: the logs agree on host-%d, /status not (%d say they lead): %s", top+1, obs.Leading(all...), why)
	}
	return max(at.Sub(last), 0)
}

// checkSends makes the setting a failure when a host's kernel dropped UDP
// sends (e2e's SendFailures): its figures would be of a broken test bed.
func checkSends(r *runner, n *e2e.Net, res *result) {
	counts, err := n.SendFailures()
	if err != nil {
		r.Fatalf("%v", err)
	}
	var total uint64
	for _, c := range counts {
		total += c
	}
	if total > 0 {
		res.Failures = append(res.Failures, fmt.Sprintf("the kernel dropped %d UDP sends (SndbufErrors) of %d hosts: the test bed is broken (neighbour table full?)", total, len(counts)))
	}
}

// observePeriod is the observer's polling period for a LAN of hosts:
// observeEvery, longer for big LANs, so that the polls of /status (hosts
// per period) do not load the machine whose agents are measured.
func observePeriod(hosts int) time.Duration {
	return max(observeEvery, time.Duration(hosts)*observeEvery/8)
}

// cpuTimes reads the CPU time of every process.
func cpuTimes(r *runner, procs []*e2e.Proc) []cpuTime {
	out := make([]cpuTime, len(procs))
	for i, p := range procs {
		c, err := procstat.CPU(p.Pid)
		if err != nil {
			r.Fatalf("host-%d: %v", i+1, err)
		}
		out[i] = cpuTime{c, time.Now()}
	}
	return out
}

// waitAgree polls obs until hosts agree on leader in polls after after;
// "" when they do, why not when they do not within deadline.
func waitAgree(r *runner, obs *e2e.Observer, after time.Time, leader uint64, hosts []int) string {
	return waitUntil(r, func() (bool, string) { return obs.Agree(after, leader, hosts...) })
}

// waitAgreeLogs is waitAgree on the agents' logs alone (the observer's
// polls off).
func waitAgreeLogs(r *runner, obs *e2e.Observer, after time.Time, leader uint64, hosts []int) string {
	return waitUntil(r, func() (bool, string) { return obs.AgreeLogs(after, leader, hosts...) })
}

// waitUntil waits up to deadline for agree, and returns its last reason
// when it never does.
func waitUntil(r *runner, agree func() (bool, string)) string {
	why := ""
	for end := time.Now().Add(deadline); time.Now().Before(end); time.Sleep(observeEvery / 2) {
		r.checkInterrupt()
		var ok bool
		if ok, why = agree(); ok {
			return ""
		}
	}
	return why
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
}

func printTable(w io.Writer, results []result, idle idleSpan) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "system\tsetting\tmode\tn\tfirst median\tp90\tp99\tmax\tall agree median\tp90\tp99\tmax\tpackets median\tmax\t")
	for _, res := range results {
		f, a := stats.Summarize(res.First), stats.Summarize(res.All)
		if f.N == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t0\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t\n", res.System, res.Setting, res.Mode)
			continue
		}
		pk := packetStats(res.Packets)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", res.System, res.Setting, res.Mode, f.N,
			ms(f.Median), ms(f.P90), ms(f.P99), ms(f.Max), ms(a.Median), ms(a.P90), ms(a.P99), ms(a.Max), pk[0], pk[1])
	}
	tw.Flush()
	fmt.Fprintln(w, "# times in ms from the kill (SIGKILL, SIGTERM for graceful, the first SIGSTOP of the host's processes for")
	fmt.Fprintln(w, "# freeze, whose host's link then goes down): lanleader's on the agents' log stamps,")
	fmt.Fprintln(w, "# keepalived's on the VRRP frames' kernel stamps on the bridge (see its lines above);")
	fmt.Fprintln(w, "# packets: election packets (lanleader: every election-port packet but heartbeats and beacons, i.e.")
	fmt.Fprintln(w, "# bully's ELECTION, ANSWER, COORDINATOR, RESIGN, the ring family's messages and acks; keepalived: VRRP)")
	fmt.Fprintln(w, "# on the bridge from the kill to the agreement, each frame counted once")
	if slices.ContainsFunc(results, func(res result) bool { return res.Quorum > 0 }) {
		fmt.Fprintln(w, "# quorum N: agents run with --quorum N (a leader needs a majority of N's acknowledgements) and a")
		fmt.Fprintln(w, "# --state-file each; a host names the new leader once a majority confirmed it; its packets include")
		fmt.Fprintln(w, "# the HEARTBEAT_ACKs (the claim's votes, and the acks of the new leader's heartbeats until all agree)")
	}
	printRatios(w, results)
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "system\tsetting\tmode\thost\tCPU % trials\tCPU % idle\tRSS MiB\t")
	for _, res := range results {
		for _, u := range res.Usage {
			trials := "-"
			if u.TrialsCPU >= 0 {
				trials = strconv.FormatFloat(u.TrialsCPU, 'f', 2, 64)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.2f\t%.1f\t\n", res.System, res.Setting, res.Mode, hostName(u.Host),
				trials, u.IdleCPU, float64(u.RSS)/(1<<20))
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "# CPU in % of one core: during the trials (the last host restarts, or freezes, every trial: -; lanleader's")
	fmt.Fprintf(w, "# include answering the benchmark's /status polls, every %v, longer beyond 8 hosts), and idle: over %v with\n", observeEvery, idle.window)
	fmt.Fprintf(w, "# the cluster settled and nothing polling (lanleader: before the trials, %v after all first agreed;\n", idle.settle)
	fmt.Fprintln(w, "# keepalived: after them); RSS at the end of the idle window")
}

// printRatios compares every quorum row with the plain row (quorum off)
// of the same system, algorithm, heartbeat and mode, if both ran: the
// ratios of their medians. Nothing when no row has both.
func printRatios(w io.Writer, results []result) {
	type pair struct{ off, q *result }
	var pairs []pair
	for i := range results {
		q := &results[i]
		if q.Quorum <= 0 {
			continue
		}
		for j := range results {
			off := &results[j]
			if off.Quorum == 0 && off.System == q.System && off.Base == q.Base && off.Mode == q.Mode {
				pairs = append(pairs, pair{off, q})
				break
			}
		}
	}
	if len(pairs) == 0 {
		return
	}
	ratio := func(q, off time.Duration) string {
		if off <= 0 {
			return "-"
		}
		return strconv.FormatFloat(float64(q)/float64(off), 'f', 2, 64)
	}
	median := func(xs []time.Duration) (string, time.Duration) {
		s := stats.Summarize(xs)
		if s.N == 0 {
			return "-", -1
		}
		return ms(s.Median), s.Median
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "system\tsetting\tmode\tquorum\tfirst median off\tquorum\tratio\tall agree median off\tquorum\tratio\t")
	for _, p := range pairs {
		fo, fod := median(p.off.First)
		fq, fqd := median(p.q.First)
		ao, aod := median(p.off.All)
		aq, aqd := median(p.q.All)
		fr, ar := "-", "-"
		if fod >= 0 && fqd >= 0 {
			fr = ratio(fqd, fod)
		}
		if aod >= 0 && aqd >= 0 {
			ar = ratio(aqd, aod)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", p.q.System, p.q.Base, p.q.Mode, p.q.Quorum, fo, fq, fr, ao, aq, ar)
	}
	tw.Flush()
	fmt.Fprintln(w, "# quorum mode's cost: medians in ms of the rows above with quorum off and with quorum N (same")
	fmt.Fprintln(w, "# algorithm, heartbeat and mode); ratio = quorum median / off median")
}

// packetStats is the median and max of xs, as text.
func packetStats(xs []uint64) [2]string {
	if len(xs) == 0 {
		return [2]string{"-", "-"}
	}
	ds := make([]time.Duration, len(xs))
	for i, x := range xs {
		ds[i] = time.Duration(x)
	}
	s := stats.Summarize(ds)
	return [2]string{strconv.FormatInt(int64(s.Median), 10), strconv.FormatInt(int64(s.Max), 10)}
}
