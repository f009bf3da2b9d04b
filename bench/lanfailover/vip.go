//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/lanleader/lanleader/bench/internal/stats"
	"github.com/lanleader/lanleader/e2e"
)

// -vip: what the user of the virtual address sees. Every row runs on a
// fresh test bed with a client host (e2e.NewNetWithClient): every host
// runs vipecho, which answers on any of its addresses with its name, and
// the client runs vipclient, which asks the virtual address every
// millisecond and records every answer (its send and receive times and
// who answered). Each trial waits until host-K holds the address alone
// and the client hears it, sleeps a random phase of the heartbeat (or
// advert interval), then at t0 takes host-K's agent down, and reports,
// from the client's record:
//
//   - outage: t0 to the client's first answer from host-(K−1), the new
//     holder (an answer received, so after its gratuitous ARP reached the
//     client and its own answer came back);
//   - silence: the longest time from t0 to that answer in which the
//     client heard nobody (less than the outage when the old holder kept
//     answering: a SIGKILLed keepalived leaves its address on its host);
//   - old answers: answers from host-K received after t0;
//   - interleaved: trials in which host-K answered again after
//     host-(K−1)'s first answer (and before host-K came back);
//   - after election (lanleader): from host-(K−1)'s "became leader" log
//     stamp to that first answer: what the address adds to the failover
//     of the same trial.
//
// lanleader rows run `lanleader run ... --vip 198.18.0.100/24` (e2e.VIP)
// with each -heartbeat (100ms is the default); modes crash (SIGKILL),
// graceful (SIGTERM) and resign (`lanleader resign` on host-K; every
// agent runs with --preempt-delay 2s so that host-K's hold-off, which is
// never shorter, leaves host-(K−1) the address long enough to be told
// apart from host-K's return; then host-K takes it back and the next
// trial starts), and, asked for with -mode, freeze (host-K's agent and
// vipecho SIGSTOPped, its link down, see freeze.go: its address stays on
// it, unheard; the figures are taken before the thaw, after which host-K
// takes the address back). A lanleader without --vip skips its rows,
// saying so. keepalived rows run the instances of keepalived.go (the
// address kaVIP) with each -advert-int (default here 1s, 100ms, 10ms);
// modes crash, graceful and freeze (keepalived has no resign); the
// master's adverts' interval
// seen on the wire is reported, since it tells what keepalived made of
// the setting, and so are the trials in which another backup also claimed
// the master role.

// vipPreemptDelay is the lanleader agents' --preempt-delay in resign rows.
const vipPreemptDelay = 2 * time.Second

// vipRow is one row of the -vip table.
type vipRow struct {
	System, Setting, Mode string
	Outage, Silence       []time.Duration
	OldAnswers            []time.Duration // counts, kept as durations for stats.Summarize
	Interleaved           int
	TwoMasters            int             // keepalived: trials in which another backup also claimed the master role
	Adverts               []time.Duration // keepalived: gaps between the master's adverts, on the bridge
	AfterLeader           []time.Duration // lanleader: from the new holder's election (its log) to the client's first answer from it
	Skipped               string
	Failures              []string
}

func runVIP(r *runner, o options, stdout, stderr io.Writer, rng *rand.Rand) int {
	var rows []vipRow
	measure := func(row vipRow, f func(*vipRow)) {
		if r.interrupted.Load() {
			return
		}
		if row.Skipped == "" {
			fmt.Fprintf(stderr, "lanfailover: VIP, %s, %s, %s: %d trials…\n", row.System, row.Setting, row.Mode, o.trials)
			if msg := r.scope(func() { f(&row) }); msg != "" {
				row.Failures = append(row.Failures, msg)
			}
		}
		rows = append(rows, row)
	}
	skip := ""
	if bin, err := e2e.Binary(); err != nil {
		skip = err.Error()
	} else if ok, err := e2e.VIPFlagSupported(bin); err != nil {
		skip = err.Error()
	} else if !ok {
		skip = e2e.ErrNoVIPFlag.Error()
	}
	if skip != "" {
		fmt.Fprintf(stderr, "lanfailover: the lanleader rows are skipped: %s\n", skip)
	}
	for _, hb := range o.heartbeats {
		for _, mode := range o.modes {
			setting := "heartbeat " + hb.String()
			if mode == "resign" {
				setting += ", preempt-delay " + vipPreemptDelay.String()
			}
			measure(vipRow{System: "lanleader", Setting: setting, Mode: mode, Skipped: skip},
				func(row *vipRow) { vipLanleader(r, o, hb, mode, rng, row) })
		}
	}
	if o.keepalived {
		for _, adv := range o.adverts {
			for _, mode := range o.modes {
				if mode == "resign" {
					continue
				}
				measure(vipRow{System: "keepalived", Setting: "advert_int " + adv.String(), Mode: mode},
					func(row *vipRow) { vipKeepalived(r, o, adv, mode, rng, row) })
			}
		}
	}
	printVIPTable(stdout, o, rows)
	measured, failed := false, false
	for _, row := range rows {
		if len(row.Outage) > 0 {
			measured = true
		}
		for _, f := range row.Failures {
			failed = true
			fmt.Fprintf(stderr, "lanfailover: VIP, %s, %s, %s: %s\n", row.System, row.Setting, row.Mode, f)
		}
	}
	if failed || !measured || r.interrupted.Load() {
		return 1
	}
	return 0
}

// vipClientRun bounds the client's run: the whole row, generously.
func vipClientRun(o options) time.Duration {
	return min(time.Hour, time.Duration(o.trials)*time.Minute)
}

// vipTrial is one trial's figures, from the client's record.
type vipTrial struct {
	outage, silence time.Duration
	old             int
	interleaved     bool
	// afterLeader: from the new holder's "became leader" log stamp to
	// the client's first answer from it (lanleader; ok false without)
	afterLeader time.Duration
	afterOK     bool
}

// afterElection notes in v how long after the new holder's election (its
// log's "became leader" after t0) the client first heard it.
func (v *vipTrial) afterElection(log string, t0 time.Time) {
	if at, ok := logStamp(log, "became leader", t0); ok {
		v.afterLeader, v.afterOK = t0.Add(v.outage).Sub(at), true
	}
}

// vipWaitNew waits until the client has an answer from host next received
// after t0; it returns the outage.
func vipWaitNew(r *runner, cl *e2e.VIPClient, t0 time.Time, next int) (time.Duration, bool) {
	for end := time.Now().Add(deadline); time.Now().Before(end); time.Sleep(observeEvery / 2) {
		r.checkInterrupt()
		if d, ok := e2e.Outage(cl.AnswersSince(t0), t0, e2e.VIPHostName(next)); ok {
			return d, true
		}
	}
	return 0, false
}

// vipFigures computes a trial's figures from the answers received after
// t0, the old holder's answers counting as interleaved up to until.
func vipFigures(answers []e2e.Answer, t0 time.Time, outage time.Duration, top int, until time.Time) vipTrial {
	first := t0.Add(outage)
	v := vipTrial{outage: outage, silence: e2e.LongestGap(answers, t0, first)}
	old := e2e.VIPHostName(top)
	for _, a := range answers {
		if a.From != old || a.Recv.Before(t0) {
			continue
		}
		v.old++
		if a.Recv.After(first) && a.Recv.Before(until) {
			v.interleaved = true
		}
	}
	return v
}

func (row *vipRow) add(v vipTrial) {
	row.Outage = append(row.Outage, v.outage)
	row.Silence = append(row.Silence, v.silence)
	row.OldAnswers = append(row.OldAnswers, time.Duration(v.old))
	if v.interleaved {
		row.Interleaved++
	}
	if v.afterOK {
		row.AfterLeader = append(row.AfterLeader, v.afterLeader)
	}
}

// vipHeard waits until host alone has addr and the client's latest
// answers, after since, are its.
func vipHeard(r *runner, n *e2e.Net, cl *e2e.VIPClient, addr string, host int, since time.Time, what string) {
	why := ""
	for end := time.Now().Add(deadline); time.Now().Before(end); time.Sleep(observeEvery) {
		r.checkInterrupt()
		h, err := n.Holders(addr)
		if err != nil {
			r.Fatalf("%s: %v", what, err)
		}
		if !slices.Equal(h, []int{host}) {
			why = fmt.Sprintf("%s is on hosts %v, want host-%d only", addr, h, host+1)
			continue
		}
		ans := cl.AnswersSince(since)
		if len(ans) == 0 || ans[len(ans)-1].From != e2e.VIPHostName(host) {
			why = fmt.Sprintf("the client's answers since: %v", e2e.AnswersBy(ans, since, time.Now().Add(time.Hour)))
			continue
		}
		return
	}
	r.Fatalf("%s: host-%d does not hold %s, heard by the client, within %v: %s", what, host+1, addr, deadline, why)
}

// vipLanleader measures one lanleader row.
func vipLanleader(r *runner, o options, hb time.Duration, mode string, rng *rand.Rand, row *vipRow) {
	n := e2e.NewNetWithClient(r, o.hosts)
	obs := n.Observe(r, observeEvery)
	n.StartResponders(r)
	start := func(i int) *e2e.Proc {
		args := []string{"run", "--bind", n.Addr(i), "--name", hostName(i), "--node-id", strconv.Itoa(i + 1),
			"--log-format", "json", "--heartbeat", hb.String(), "--vip", e2e.VIPPrefix}
		if mode == "resign" {
			args = append(args, "--preempt-delay", vipPreemptDelay.String())
		}
		return n.Start(r, i, args...)
	}
	procs := make([]*e2e.Proc, o.hosts)
	all, others := n.All(), n.All()[:o.hosts-1]
	for i := range procs {
		procs[i] = start(i)
	}
	top, next := o.hosts-1, o.hosts-2
	cl := n.StartVIPClient(r, e2e.VIP, time.Millisecond, vipClientRun(o))
	frozen := hostFreeze(r, n, top)
	since := obs.Start
	for trial := range o.trials {
		r.checkInterrupt()
		what := fmt.Sprintf("trial %d", trial+1)
		if why := waitAgree(r, obs, since, uint64(top+1), all); why != "" {
			r.Fatalf("%s: %d hosts do not agree that host-%d leads within %v: %s", what, o.hosts, top+1, deadline, why)
		}
		vipHeard(r, n, cl, e2e.VIP, top, since, what)
		time.Sleep(time.Duration(rng.Int64N(int64(hb))))
		var pids []int
		if mode == "freeze" {
			pids = frozen.list(r, what) // the agent and vipecho
		}
		t0 := time.Now()
		switch mode {
		case "freeze":
			frozen.freeze(r, pids, what)
		case "crash":
			procs[top].Signal(syscall.SIGKILL)
		case "graceful":
			procs[top].Signal(syscall.SIGTERM)
		case "resign":
			if out, err := n.Exec(top, "lanleader", "resign", "--timeout", "10s"); err != nil {
				r.Fatalf("%s: lanleader resign on host-%d: %v\n%s", what, top+1, err, out)
			}
			// From the agent's receipt of the request, as the other modes
			// are from the signal: the command's own start (ip netns exec,
			// about 4 ms here, and the CLI's) is not the agent's.
			at, ok := logStamp(procs[top].Log(), "resigning", t0)
			if !ok {
				r.Fatalf("%s: host-%d's log has no \"resigning\" after the command", what, top+1)
			}
			t0 = at
		}
		outage, ok := vipWaitNew(r, cl, t0, next)
		if !ok {
			row.Failures = append(row.Failures, fmt.Sprintf("%s: the client heard no answer from host-%d within %v", what, next+1, deadline))
			return
		}
		until := t0.Add(outage).Add(vipPreemptDelay / 2)
		if mode != "resign" {
			if why := waitAgree(r, obs, t0, uint64(top), others); why != "" {
				row.Failures = append(row.Failures, fmt.Sprintf("%s: no agreement on host-%d within %v: %s", what, top, deadline, why))
				return
			}
		}
		if mode == "freeze" {
			// The figures before the thaw: the thawed host's vipecho
			// answers what the client sent it while frozen, and its agent
			// takes the address back; the next trial waits for that.
			v := vipFigures(cl.AnswersSince(t0), t0, outage, top, time.Now())
			v.afterElection(procs[next].Log(), t0)
			row.add(v)
			r.Logf("lanleader VIP heartbeat %v %s %s: outage %v, silence %v, %d old answers, interleaved %v", hb, mode, what,
				v.outage, v.silence, v.old, v.interleaved)
			since = time.Now()
			frozen.unfreeze(r, what)
			continue
		}
		if mode != "resign" {
			code, err := procs[top].Wait(10 * time.Second)
			if mode == "graceful" && (err != nil || code != 0) {
				r.Fatalf("%s: host-%d after SIGTERM: exit %d, %v; want exit 0", what, top+1, code, err)
			}
			if !procs[top].Exited() {
				r.Fatalf("%s: host-%d still runs 10 s after the %s", what, top+1, mode)
			}
			until = time.Now()
		}
		v := vipFigures(cl.AnswersSince(t0), t0, outage, top, until)
		v.afterElection(procs[next].Log(), t0)
		row.add(v)
		r.Logf("lanleader VIP heartbeat %v %s %s: outage %v, silence %v, %d old answers, interleaved %v", hb, mode, what,
			v.outage, v.silence, v.old, v.interleaved)
		since = time.Now()
		if mode != "resign" {
			procs[top] = start(top)
		}
	}
}

// vipKeepalived measures one keepalived row.
func vipKeepalived(r *runner, o options, advert time.Duration, mode string, rng *rand.Rand, row *vipRow) {
	bin := kaSetting(r, advert, &row.Setting)
	n := e2e.NewNetWithClient(r, o.hosts)
	top, next := o.hosts-1, o.hosts-2
	capt := kaListen(r, n)
	echo := n.StartResponders(r)
	start := kaInstances(r, n, bin, advert)
	for i := range o.hosts {
		mac, err := n.MAC(i)
		if err != nil {
			r.Fatalf("host-%d: %v", i+1, err)
		}
		capt.setMAC(i, mac)
	}
	procs := make([]*e2e.Proc, o.hosts)
	for i := range procs {
		procs[i] = start(i)
	}
	k := &kaBed{r: r, n: n, capt: capt, procs: procs, top: top, advert: advert}
	cl := n.StartVIPClient(r, kaVIP, time.Millisecond, vipClientRun(o))
	frozen := hostFreeze(r, n, top)
	since := time.Now()
	for trial := range o.trials {
		r.checkInterrupt()
		what := fmt.Sprintf("trial %d", trial+1)
		k.settle(since, what)
		vipHeard(r, n, cl, kaVIP, top, since, what)
		time.Sleep(time.Duration(rng.Int64N(int64(advert))))
		var pids []int // listed before t0
		switch mode {
		case "crash":
			pids = k.pids(top)
		case "freeze":
			pids = frozen.list(r, what) // keepalived's processes and vipecho
		}
		t0 := time.Now()
		var killEnd time.Time
		switch mode {
		case "crash":
			// The VRRP child first (see measureKeepalived).
			for _, pid := range pids {
				if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
					r.Fatalf("%s: SIGKILL %d: %v", what, pid, err)
				}
			}
			killEnd = time.Now()
		case "freeze":
			killEnd = frozen.freeze(r, pids, what)
		default:
			if err := procs[top].Signal(syscall.SIGTERM); err != nil {
				r.Fatalf("%s: %v", what, err)
			}
			killEnd = time.Now()
		}
		// The master's adverts on the wire: host-K's before the kill, since
		// it settled (and below, host-(K−1)'s after the failover): the
		// interval keepalived keeps.
		row.Adverts = append(row.Adverts, advertGaps(capt.since(since), top, t0)...)
		outage, ok := vipWaitNew(r, cl, t0, next)
		if !ok {
			row.Failures = append(row.Failures, fmt.Sprintf("%s: the client heard no answer from host-%d within %v", what, next+1, deadline))
			return
		}
		f, why := k.failover(t0, killEnd, mode)
		if why != "" {
			row.Failures = append(row.Failures, fmt.Sprintf("%s: no agreement on host-%d within %v: %s", what, next+1, deadline, why))
			return
		}
		if f.note != "" {
			row.TwoMasters++
		}
		if mode == "freeze" {
			// The figures before the thaw (see vipLanleader).
			v := vipFigures(cl.AnswersSince(t0), t0, outage, top, time.Now())
			v.afterElection(procs[next].Log(), t0)
			row.add(v)
			row.Adverts = append(row.Adverts, advertGaps(capt.since(f.all), next, time.Now())...)
			r.Logf("keepalived VIP advert_int %v %s %s: outage %v, silence %v, %d old answers, interleaved %v%s", advert, mode, what,
				v.outage, v.silence, v.old, v.interleaved, f.note)
			since = time.Now()
			frozen.unfreeze(r, what)
			continue
		}
		code, err := procs[top].Wait(10 * time.Second)
		if mode == "graceful" && (err != nil || code != 0) {
			r.Fatalf("%s: host-%d after SIGTERM: exit %d, %v; want exit 0", what, top+1, code, err)
		}
		if !procs[top].Exited() {
			r.Fatalf("%s: host-%d still runs 10 s after the %s", what, top+1, mode)
		}
		vipWaitOnly(r, n, top, echo[top].Pid, what)
		v := vipFigures(cl.AnswersSince(t0), t0, outage, top, time.Now())
		row.add(v)
		// And the new master's, from its agreement on.
		row.Adverts = append(row.Adverts, advertGaps(capt.since(f.all), next, time.Now())...)
		r.Logf("keepalived VIP advert_int %v %s %s: outage %v, silence %v, %d old answers, interleaved %v%s", advert, mode, what,
			v.outage, v.silence, v.old, v.interleaved, f.note)
		since = time.Now()
		procs[top] = start(top)
	}
}

// advertGaps is the gaps between host's successive adverts (priority
// above 0) stamped before t0.
func advertGaps(ev []kaEvent, host int, t0 time.Time) []time.Duration {
	var out []time.Duration
	var prev time.Time
	for _, e := range ev {
		if !e.At.Before(t0) {
			break
		}
		if !e.VRRP || e.Host != host || e.Prio <= 0 {
			continue
		}
		if !prev.IsZero() {
			out = append(out, e.At.Sub(prev))
		}
		prev = e.At
	}
	return out
}

// vipWaitOnly waits until host i's namespace has no process left but
// vipecho (pid keep): its keepalived's children are gone too.
func vipWaitOnly(r *runner, n *e2e.Net, i, keep int, what string) {
	var left []int
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(observeEvery / 2) {
		left = slices.DeleteFunc(nsPids(r, n.Namespace(i)), func(pid int) bool { return pid == keep })
		if len(left) == 0 {
			return
		}
	}
	r.Fatalf("%s: processes %v left in host-%d's namespace 10 s after its keepalived ended", what, left, i+1)
}

func printVIPTable(w io.Writer, o options, rows []vipRow) {
	fmt.Fprintf(w, "# VIP: the client host asks the virtual address every 1 ms; host-%d holds it, host-%d takes over\n", o.hosts, o.hosts-1)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "system\tsetting\tmode\tn\toutage median\tp90\tp99\tmax\tsilence median\tmax\told answers median\tmax\tinterleaved\ttwo masters\tadvert gap median\tafter election median\tmax\t")
	var skipped []string
	for _, row := range rows {
		if row.Skipped != "" {
			skipped = append(skipped, fmt.Sprintf("# skipped: %s, %s, %s: %s", row.System, row.Setting, row.Mode, shortSkip(row.Skipped)))
			continue
		}
		f := stats.Summarize(row.Outage)
		if f.N == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t0\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t\n", row.System, row.Setting, row.Mode)
			continue
		}
		s, old := stats.Summarize(row.Silence), stats.Summarize(row.OldAnswers)
		adv, two, afterMed, afterMax := "-", "-", "-", "-"
		if a := stats.Summarize(row.Adverts); a.N > 0 {
			adv = ms(a.Median)
		}
		if a := stats.Summarize(row.AfterLeader); a.N > 0 {
			afterMed, afterMax = ms(a.Median), ms(a.Max)
		}
		if row.System == "keepalived" {
			two = strconv.Itoa(row.TwoMasters)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t\n", row.System, row.Setting, row.Mode, f.N,
			ms(f.Median), ms(f.P90), ms(f.P99), ms(f.Max), ms(s.Median), ms(s.Max), int64(old.Median), int64(old.Max), row.Interleaved, two, adv, afterMed, afterMax)
	}
	tw.Flush()
	for _, l := range skipped {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w, "# outage: ms from the kill (SIGKILL; SIGTERM for graceful; for freeze the first SIGSTOP of the host's processes, whose")
	fmt.Fprintln(w, "# link then goes down; for resign the agent's \"resigning\" log stamp: `lanleader resign`")
	fmt.Fprintln(w, "# itself starts some 5 ms before, in ip netns exec and the CLI) to the client's first")
	fmt.Fprintln(w, "# answer from the new holder; silence: the longest time in it that the client heard nobody; old answers:")
	fmt.Fprintln(w, "# answers from the old holder after the kill; interleaved: trials in which the old holder answered again")
	fmt.Fprintln(w, "# after the new holder's first answer; two masters: keepalived trials in which another backup also claimed")
	fmt.Fprintln(w, "# the master role; advert gap: the master's adverts as seen on the bridge (ms), before the kill and after;")
	fmt.Fprintln(w, "# after election (lanleader): from the new holder's \"became leader\" log stamp to the client's first answer from it")
	fmt.Fprintf(w, "# lanleader: --vip %s; resign rows run every agent with --preempt-delay %v (host-%d takes the address back\n", e2e.VIPPrefix, vipPreemptDelay, o.hosts)
	fmt.Fprintf(w, "# after it); keepalived: virtual_ipaddress %s/24, VRRPv3 below 1 s\n", kaVIP)
}

// shortSkip is the first clause of a skip's reason, for the table.
func shortSkip(s string) string {
	s, _, _ = strings.Cut(s, ":")
	return s
}

// logStamp is the time of the first line of an agent's JSON log with
// message msg, stamped at or after after.
func logStamp(log, msg string, after time.Time) (time.Time, bool) {
	for line := range strings.Lines(log) {
		var l struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == msg && !l.Time.Before(after) {
			return l.Time, true
		}
	}
	return time.Time{}, false
}
