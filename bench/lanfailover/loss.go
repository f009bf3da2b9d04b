//go:build linux

package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lanleader/lanleader/e2e"
)

// -loss: stability under loss instead of failover. For each loss level
// (percent), each system runs on a fresh set of hosts: lanleader with the
// defaults (textbook) and with --quorum N (N = -hosts), both with a job
// that records its starts, and keepalived for each -advert-int. Once host-K
// leads (is MASTER), random loss of that percent starts on the input of
// every host, every IP packet alike (nftables numgen random; e2e's
// LossAll: the same rule for every system, VRRP included) for -loss-for;
// then the row reports, for that window:
//
//   - changes: lanleader: the sum over the hosts of the increase of
//     lanleader_leader_changes_total; keepalived: the instances that
//     entered MASTER state (the backups keep no record of the master);
//   - claims: lanleader: COORDINATORs sent by hosts other than host-K
//     (lanleader_messages_sent_total); keepalived: MASTER entries of hosts
//     other than host-K;
//   - job starts: lanleader: starts of the job anywhere (in quorum mode a
//     start means the lease had lapsed); keepalived runs no job;
//   - leaderless: lanleader: the longest time a host's /status or log
//     named no leader, or another one, than host-K;
//   - dropped: the packets the loss rules dropped (the fault did bite).

// lossRow is one row of the loss table.
type lossRow struct {
	Percent           int
	System, Setting   string
	Changes, Claims   int
	JobStarts         int // -1: no job (keepalived)
	Leaderless        time.Duration
	Dropped           uint64
	Failure           string
	Probes, Vouches   int
	HasLeaderlessData bool
}

func runLoss(r *runner, o options, stdout, stderr io.Writer) []lossRow {
	var rows []lossRow
	measure := func(row lossRow, f func(*lossRow)) {
		if r.interrupted.Load() {
			return
		}
		fmt.Fprintf(stderr, "lanfailover: %d%% loss for %v, %s, %s…\n", row.Percent, o.lossFor, row.System, row.Setting)
		if msg := r.scope(func() { f(&row) }); msg != "" {
			row.Failure = msg
		}
		rows = append(rows, row)
	}
	for _, pct := range o.losses {
		hb := o.heartbeats[0]
		for _, q := range o.lossQuorums {
			setting := "heartbeat " + hb.String()
			if o.realtime {
				setting += ", realtime"
			}
			if q > 0 {
				setting += fmt.Sprintf(", quorum %d", q)
			}
			measure(lossRow{Percent: pct, System: "lanleader", Setting: setting},
				func(row *lossRow) { lossLanleader(r, o, pct, hb, q, row) })
		}
		if o.keepalived {
			for _, adv := range o.adverts {
				measure(lossRow{Percent: pct, System: "keepalived", Setting: "advert_int " + adv.String(), JobStarts: -1},
					func(row *lossRow) { lossKeepalived(r, o, pct, adv, row) })
			}
		}
	}
	printLossTable(stdout, o, rows)
	return rows
}

// lossLanleader measures one lanleader row.
func lossLanleader(r *runner, o options, pct int, hb time.Duration, quorum int, row *lossRow) {
	dir := r.TempDir()
	starts := filepath.Join(dir, "starts")
	n := e2e.NewNet(r, o.hosts)
	e2e.RequireNFT(r)
	obs := n.Observe(r, observeEvery)
	all := make([]int, o.hosts)
	procs := make([]*e2e.Proc, o.hosts)
	if o.logDir != "" {
		setting := fmt.Sprintf("loss-%d-heartbeat-%v-quorum-%d", pct, hb, quorum)
		if o.realtime {
			setting += "-realtime"
		}
		defer func() { keepLogs(r, filepath.Join(o.logDir, setting), procs) }()
	}
	for i := range all {
		all[i] = i
		args := []string{"run", "--bind", n.Addr(i), "--name", hostName(i), "--node-id", strconv.Itoa(i + 1),
			"--log-format", "json", "--heartbeat", hb.String()}
		if quorum > 0 {
			args = append(args, "--quorum", strconv.Itoa(quorum), "--state-file", filepath.Join(dir, hostName(i)+".state"))
		}
		if o.realtime {
			args = append(args, "--realtime")
		}
		args = append(args, "--", "sh", "-c", `echo "$LANLEADER_NODE_ID" >> `+starts+`; exec sleep 3600`)
		procs[i] = n.Start(r, i, args...)
	}
	top := o.hosts - 1
	if why := waitAgree(r, obs, obs.Start, uint64(top+1), all); why != "" {
		r.Fatalf("%d hosts do not agree that host-%d leads within %v: %s", o.hosts, top+1, deadline, why)
	}
	for end := time.Now().Add(deadline); e2e.CountLines(starts, nil) == 0; time.Sleep(observeEvery) {
		if time.Now().After(end) {
			r.Fatalf("host-%d's job did not start within %v", top+1, deadline)
		}
	}
	before, jobs := agentCounters(r, n, o.hosts), e2e.CountLines(starts, nil)
	t0 := time.Now()
	n.LossAll(r, pct, all...)
	sleepChecked(r, o.lossFor)
	t1 := time.Now()
	row.Dropped = droppedSum(r, n, o.hosts)
	n.Heal(r)
	after := agentCounters(r, n, o.hosts)
	for i := range after {
		row.Changes += int(after[i].changes - before[i].changes)
		if i != top {
			row.Claims += int(after[i].coordinators - before[i].coordinators)
		}
		row.Probes += int(after[i].probes - before[i].probes)
		row.Vouches += int(after[i].vouches - before[i].vouches)
	}
	row.JobStarts = e2e.CountLines(starts, nil) - jobs
	row.Leaderless, row.HasLeaderlessData = longestOther(obs, uint64(top+1), t0, t1), true
}

// lossKeepalived measures one keepalived row.
func lossKeepalived(r *runner, o options, pct int, advert time.Duration, row *lossRow) {
	bin := kaSetting(r, advert, &row.Setting)
	n := e2e.NewNet(r, o.hosts)
	e2e.RequireNFT(r)
	capt := kaListen(r, n)
	start := kaInstances(r, n, bin, advert)
	procs := make([]*e2e.Proc, o.hosts)
	all := make([]int, o.hosts)
	for i := range procs {
		mac, err := n.Exec(i, "cat", "/sys/class/net/eth0/address")
		if err != nil {
			r.Fatalf("host-%d: %v", i+1, err)
		}
		capt.setMAC(i, strings.TrimSpace(mac))
		procs[i] = start(i)
		all[i] = i
	}
	top := o.hosts - 1
	k := &kaBed{r: r, n: n, capt: capt, procs: procs, top: top, advert: advert}
	k.settle(time.Now(), "the start")
	before := make([]int, o.hosts)
	for i, p := range procs {
		before[i] = strings.Count(p.Log(), ") Entering MASTER STATE")
	}
	n.LossAll(r, pct, all...)
	sleepChecked(r, o.lossFor)
	row.Dropped = droppedSum(r, n, o.hosts)
	n.Heal(r)
	for i, p := range procs {
		entries := strings.Count(p.Log(), ") Entering MASTER STATE") - before[i]
		row.Changes += entries
		if i != top {
			row.Claims += entries
		}
	}
}

// sleepChecked sleeps for d (the fault's duration: the measurement, not a
// synchronisation), checking for an interrupt every second.
func sleepChecked(r *runner, d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
		r.checkInterrupt()
		time.Sleep(min(time.Second, time.Until(end)))
	}
}

func droppedSum(r *runner, n *e2e.Net, hosts int) uint64 {
	var sum uint64
	for i := range hosts {
		d, err := n.Dropped(i)
		if err != nil {
			r.Fatalf("%v", err)
		}
		sum += d
	}
	return sum
}

// agentMetrics is what the loss rows read of an agent's /metrics.
type agentMetrics struct {
	changes, coordinators, probes, vouches float64
}

func agentCounters(r *runner, n *e2e.Net, hosts int) []agentMetrics {
	out := make([]agentMetrics, hosts)
	for i := range out {
		m, err := n.Metrics(i)
		if err != nil {
			r.Fatalf("host-%d /metrics: %v", i+1, err)
		}
		out[i] = countersOf(m)
	}
	return out
}

// countersOf picks the counters of the loss table from an agent's samples.
func countersOf(m map[string]float64) agentMetrics {
	return agentMetrics{
		changes:      m["lanleader_leader_changes_total"],
		coordinators: m[`lanleader_messages_sent_total{type="COORDINATOR"}`],
		probes:       m[`lanleader_messages_sent_total{type="PROBE"}`],
		vouches:      m[`lanleader_messages_sent_total{type="VOUCH"}`],
	}
}

// longestOther is the longest time, between from and to, that a host
// named a leader other than leader (or none), from the observer's record.
func longestOther(obs *e2e.Observer, leader uint64, from, to time.Time) time.Duration {
	since := map[int]time.Time{}
	var worst time.Duration
	for _, s := range obs.Events() {
		if s.Err != "" || s.Source != "status" {
			continue
		}
		at := s.At
		if at.Before(from) {
			at = from
		}
		if at.After(to) {
			break
		}
		if s.Leader != leader {
			if _, ok := since[s.Host]; !ok {
				since[s.Host] = at
			}
		} else if t, ok := since[s.Host]; ok {
			worst = max(worst, at.Sub(t))
			delete(since, s.Host)
		}
	}
	for _, t := range since {
		worst = max(worst, to.Sub(t))
	}
	return worst
}

func printLossTable(w io.Writer, o options, rows []lossRow) {
	fmt.Fprintf(w, "# loss on every host's input for %v, %d hosts; host-%d leads at the start\n", o.lossFor, o.hosts, o.hosts)
	fmt.Fprintf(w, "# changes: lanleader_leader_changes_total summed over the hosts (keepalived: MASTER entries);\n"+
		"# claims: COORDINATORs sent by hosts other than the leader (keepalived: their MASTER entries);\n"+
		"# job starts: the job started anywhere during the loss; leaderless: the longest time a host named\n"+
		"# another leader or none; dropped: packets the loss rules dropped\n")
	fmt.Fprintf(w, "| loss | system | setting | changes | claims | job starts | leaderless | PROBEs / VOUCHes | dropped |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		job, left, pv := "n/a", "n/a", "n/a"
		if r.JobStarts >= 0 {
			job = strconv.Itoa(r.JobStarts)
		}
		if r.HasLeaderlessData {
			left, pv = ms(r.Leaderless)+" ms", fmt.Sprintf("%d / %d", r.Probes, r.Vouches)
		}
		if r.Failure != "" {
			fmt.Fprintf(w, "| %d %% | %s | %s | failed: %s |||||\n", r.Percent, r.System, r.Setting, r.Failure)
			continue
		}
		fmt.Fprintf(w, "| %d %% | %s | %s | %d | %d | %s | %s | %s | %d |\n", r.Percent, r.System, r.Setting, r.Changes, r.Claims, job, left, pv, r.Dropped)
	}
}
