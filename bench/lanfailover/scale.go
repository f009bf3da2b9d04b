//go:build linux

package main

import (
	"cmp"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lanleader/lanleader/bench/internal/lists"
	"github.com/lanleader/lanleader/bench/internal/stats"
	"github.com/lanleader/lanleader/election"
)

// -scale: how lanleader's costs grow with the LAN. For each host count of
// the list (each -algorithm and -heartbeat; 100ms, the default, unless
// -heartbeat is given) a fresh LAN of that many hosts starts its agents
// one after another, then runs -trials crash failovers of host-K as the
// failover rows do (measureLanleader). One row per host count:
//
//   - start-up: from the last agent's start until every host agrees that
//     host-K leads (0 when they all did before it started): one sample;
//     "no convergence" when they do not within 30 s, and the row's other
//     figures are then missing (the message says how many hosts lead);
//   - failover (all agree) median and p99 from the kill, and p99 / the
//     p99 of the smallest host count of the same run and setting (the
//     run's reference, 5 hosts in the table);
//   - election packets per failover on the bridge, median and max, and
//     per host (median / n);
//   - idle CPU (% of one core, over -idle-window, 5 s, from -idle-settle,
//     2 s, after the start-up's agreement, nothing polling) and RSS per agent: median and max over
//     the agents; measured before the trials, so also when a failover
//     does not converge.
//
// -quorum 0,n (with -scale) chooses the rows' modes: 0 (the default)
// without quorum, n with --quorum N where N is each LAN's size (every
// host a voter, a majority of N/2+1 needed); a quorum row's packets
// include the acknowledgements of the new leader's claim and heartbeats
// up to the agreement (see main.go).
//
// With -keepalived, keepalived's rows follow for each -advert-int (100ms
// by default here: its default 1s would take a minute a row): the same
// LAN sizes and kills (measureKeepalived), its failover, VRRP packets per
// failover and idle cost; it has no start-up figure.
//
// A row whose hosts' kernels dropped UDP sends (SndbufErrors: the test
// bed's neighbour table was too small) fails, as does a row without
// convergence: exit status 1.

// parseScale parses -scale's list of host counts, 2 to 128 each.
func parseScale(list string) ([]int, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	return lists.Ints("-scale", list, "host count", 2, maxHosts)
}

// runScale measures every host count of o.scale, and prints the table.
func runScale(r *runner, o options, stdout, stderr io.Writer, rng *rand.Rand) int {
	var results []result
	for _, alg := range o.algorithms {
		for _, hb := range o.heartbeats {
			for _, q := range o.scaleQuorums {
				setting := o.setting(alg, hb)
				if q {
					setting += ", quorum n"
				}
				base := result{System: "lanleader", Setting: setting, Base: setting, Mode: "crash", Startup: -1}
				results = append(results, scaleRows(r, o, stderr, "lanleader, "+setting, base, func(oh options, res *result) {
					quorum := 0
					if q {
						quorum = oh.hosts
						res.Quorum = quorum
					}
					measureLanleader(r, oh, alg, hb, quorum, "crash", rng, res)
				})...)
			}
		}
	}
	if o.keepalived {
		kaDefinitions(stdout)
		for _, adv := range o.adverts {
			base := result{System: "keepalived", Mode: "crash", Quorum: -1, Startup: -1}
			rows := scaleRows(r, o, stderr, fmt.Sprintf("keepalived, advert_int %v", adv), base, func(oh options, res *result) {
				measureKeepalived(r, oh, adv, "crash", rng, res)
			})
			for i := range rows {
				rows[i].Setting = "keepalived " + rows[i].Setting
			}
			results = append(results, rows...)
		}
	}
	printScale(stdout, results, o.idle)
	failed := false
	for _, res := range results {
		for _, f := range res.Failures {
			failed = true
			fmt.Fprintf(stderr, "lanfailover: %s, %d hosts: %s\n", res.Setting, res.Hosts, f)
		}
	}
	if failed || r.interrupted.Load() {
		return 1
	}
	return 0
}

// scaleRows measures one row per host count of o.scale with measure,
// each starting from base, and says on stderr which one runs.
func scaleRows(r *runner, o options, stderr io.Writer, what string, base result, measure func(oh options, res *result)) []result {
	var rows []result
	for _, hosts := range o.scale {
		if r.interrupted.Load() {
			break
		}
		oh := o
		oh.hosts = hosts
		fmt.Fprintf(stderr, "lanfailover: %s, %d hosts, crash: %d trials…\n", what, hosts, o.trials)
		res := base
		res.Hosts = hosts
		if msg := r.scope(func() { measure(oh, &res) }); msg != "" {
			res.Failures = append(res.Failures, msg)
		}
		rows = append(rows, res)
	}
	return rows
}

// printScale prints the -scale table (see above).
func printScale(w io.Writer, results []result, idle idleSpan) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "setting\thosts\tstart-up\tn\tfailover median\tp99\tp99 ratio\tpackets median\tmax\tper host\tidle CPU % median\tmax but leader\tleader\tRSS MiB median\tmax\t")
	for _, res := range results {
		ref := scaleReference(results, res)
		a := stats.Summarize(res.All)
		up := "-"
		switch {
		case res.Startup >= 0:
			up = ms(res.Startup)
		case len(res.Failures) > 0 && strings.Contains(res.Failures[0], "no convergence"):
			up = "no convergence"
		}
		cols := []string{res.Setting, strconv.Itoa(res.Hosts), up, strconv.Itoa(a.N), "-", "-", "-", "-", "-", "-"}
		if a.N == 0 && len(res.Failures) > 0 && strings.Contains(res.Failures[0], "no agreement") {
			cols[4] = "no convergence"
		}
		if a.N > 0 {
			pk := packetStats(res.Packets)
			ratio := "-"
			if r := stats.Summarize(ref.All); r.N > 0 && r.P99 > 0 {
				ratio = strconv.FormatFloat(float64(a.P99)/float64(r.P99), 'f', 2, 64)
			}
			med, _ := strconv.ParseFloat(pk[0], 64)
			cols = append(cols[:4], ms(a.Median), ms(a.P99), ratio, pk[0], pk[1], strconv.FormatFloat(med/float64(res.Hosts), 'f', 2, 64))
		}
		cols = append(cols, usageColumns(res.Usage)...)
		fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
	}
	tw.Flush()
	fmt.Fprintln(w, "# crash failover (SIGKILL of host-K, the leader) on LANs of n hosts, each started afresh, its agents")
	fmt.Fprintln(w, "# one after another; start-up: ms from the last agent's start until all agree on host-K (one sample;")
	fmt.Fprintln(w, "# 0: they agreed before); failover: ms from the kill until every survivor names host-(K-1), from the")
	fmt.Fprintln(w, "# agents' log stamps, over n trials; p99 ratio: p99 / the p99 of the run's smallest LAN (same setting);")
	fmt.Fprintln(w, "# packets: election packets on the bridge per failover (neither heartbeats nor beacons), per host =")
	fmt.Fprintf(w, "# median / hosts; idle CPU (%% of one core, over %v from %v after the start-up's agreement, before\n", idle.window, idle.settle)
	fmt.Fprintf(w, "# the trials, nothing polling; CPU time is counted in 10 ms ticks: %.2g %% steps) and RSS (at the end\n", 100*0.01/idle.window.Seconds())
	fmt.Fprintln(w, "# of that window): median over the agents, max over all but the leader, the leader's (host-K; it pays")
	fmt.Fprintln(w, "# here for the kernel's delivery of its multicasts into every other namespace: a switch's work on a LAN);")
	fmt.Fprintln(w, "# RSS: median and max over the agents")
	if slices.ContainsFunc(results, func(res result) bool { return res.Quorum > 0 }) {
		fmt.Fprintln(w, "# quorum n: agents run with --quorum N, N the LAN's size (a leader needs N/2+1 acknowledgements);")
		fmt.Fprintln(w, "# its packets include the HEARTBEAT_ACKs of the new leader's claim and heartbeats until the agreement")
	}
}

// scaleReference is the row of the smallest host count with res's
// setting: the reference of its p99 ratio.
func scaleReference(results []result, res result) result {
	ref := res
	for _, x := range results {
		if x.Setting == res.Setting && x.Hosts < ref.Hosts && len(x.All) > 0 {
			ref = x
		}
	}
	return ref
}

// usageColumns is the idle CPU's median over the agents, its max over
// all but the leader, and the leader's (host-K, the last host), then the
// RSS's median and max; "-" without them. The leader's column stands
// apart: on this test bed the kernel delivers each multicast heartbeat
// into every other namespace in the sender's send call, and counts that
// as the sender's CPU (a switch does that work on a real LAN), so the
// leader pays for the LAN's size; keepalived's master, which advertises
// at the same rate, pays the same.
func usageColumns(us []usage) []string {
	if len(us) == 0 {
		return []string{"-", "-", "-", "-", "-"}
	}
	leader := slices.MaxFunc(us, func(a, b usage) int { return cmp.Compare(a.Host, b.Host) })
	cpu, others, rss := make([]time.Duration, len(us)), []time.Duration{}, make([]time.Duration, len(us))
	for i, u := range us {
		// stats works on durations: CPU in 1/1000 of a percent, RSS in bytes.
		cpu[i] = time.Duration(u.IdleCPU * 1000)
		rss[i] = time.Duration(u.RSS)
		if u.Host != leader.Host {
			others = append(others, cpu[i])
		}
	}
	c, o, m := stats.Summarize(cpu), stats.Summarize(others), stats.Summarize(rss)
	pct := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1000, 'f', 2, 64) }
	mib := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/(1<<20), 'f', 1, 64) }
	otherMax := "-"
	if o.N > 0 {
		otherMax = pct(o.Max)
	}
	return []string{pct(c.Median), otherMax, pct(time.Duration(leader.IdleCPU * 1000)), mib(m.Median), mib(m.Max)}
}

// setting names a row's algorithm (when the run has more than bully
// alone) and heartbeat.
func (o options) setting(alg string, hb time.Duration) string {
	s := "heartbeat " + hb.String()
	if len(o.algorithms) > 1 || alg != election.AlgorithmBully {
		s = alg + ", " + s
	}
	if o.job {
		s += ", job" // -job: a job runs on the leader
	}
	if o.realtime {
		s += ", realtime"
	}
	return s
}
