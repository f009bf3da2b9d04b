//go:build linux

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Status is the part of the /status document (DESIGN.md's contract) that
// the test bed reads: the JSON, not the agent's Go type.
type Status struct {
	Name         string   `json:"name"`
	NodeID       uint64   `json:"node_id"`
	Priority     uint16   `json:"priority"`
	State        string   `json:"state"`
	Term         uint64   `json:"term"`
	LeaderID     uint64   `json:"leader_id"`
	LeaderName   string   `json:"leader_name"`
	Members      []Member `json:"members"`
	Cluster      string   `json:"cluster"`
	Algorithm    string   `json:"algorithm"`
	Transport    string   `json:"transport"`
	GossipAddr   string   `json:"gossip_addr"`
	ElectionAddr string   `json:"election_addr"`
	Role         string   `json:"role"`
	VotedTerm    uint64   `json:"voted_term"`
	// Fault says why the node takes no part in elections now (a link
	// without carrier, a failed check of weight 0, ...); empty when it does.
	Fault    []string `json:"fault"`
	Conflict []string `json:"conflict"` // what puts a node in state conflict
}

// Member is one entry of Status.Members.
type Member struct {
	Name   string `json:"name"`
	NodeID uint64 `json:"node_id"`
	Addr   string `json:"addr"`
	Alive  bool   `json:"alive"`
	Status string `json:"status"`
	Role   string `json:"role"`
}

// Member finds the member named name.
func (s Status) Member(name string) (Member, bool) {
	for _, m := range s.Members {
		if m.Name == name {
			return m, true
		}
	}
	return Member{}, false
}

// Sample is what one host said about the leadership at one moment.
type Sample struct {
	At     time.Time // wall clock, the same for every host of the test bed
	Host   int
	Source string // "status" (a poll of /status) or "log" (a line of its log)
	State  string
	Term   uint64
	Leader uint64
	Err    string // "status": the poll failed (agent down or paused)
}

func (s Sample) same(o Sample) bool {
	return s.State == o.State && s.Term == o.Term && s.Leader == o.Leader && (s.Err == "") == (o.Err == "")
}

func (s Sample) String() string {
	if s.Err != "" {
		return fmt.Sprintf("host-%d %s: %s", s.Host+1, s.Source, s.Err)
	}
	return fmt.Sprintf("host-%d %s: %s term %d leader %d", s.Host+1, s.Source, s.State, s.Term, s.Leader)
}

// Observer polls the /status of every host's agent (over the host's own
// loopback: faults on eth0 do not blind it) and reads every agent's log
// (agents must run with --log-format json), and records every change of
// leadership at every host on one clock: the test process's wall clock,
// which is also the clock of the agents' log stamps, since every host of
// the test bed is a namespace of this one machine.
type Observer struct {
	n     *Net
	every time.Duration
	Start time.Time

	mu      sync.Mutex
	latest  []Sample // by host: the last poll
	status  []Status // by host: the last successful poll
	last    map[string]Sample
	events  []Sample // changes only, per host and source
	offsets map[string]int64

	stop chan struct{}
	wg   sync.WaitGroup
	// quiet: the hosts' /status is not polled, only their logs are read
	// (LogsOnly).
	quiet atomic.Bool
}

// The agents' log lines that report a change of leadership (agent/loop.go).
var leadershipMsgs = []string{"became leader", "following", "no leader", "electing", "state", "not leading: node_id conflict"}

// Observe starts an observer that polls every host every every. It stops
// at the end of the test, or with Stop; at the end of a failed test it
// first logs its trace.
func (n *Net) Observe(t TB, every time.Duration) *Observer {
	o := &Observer{
		n: n, every: every, Start: time.Now(),
		latest: make([]Sample, n.Hosts()), status: make([]Status, n.Hosts()),
		last: make(map[string]Sample), offsets: make(map[string]int64),
		stop: make(chan struct{}),
	}
	for i := range n.Hosts() {
		o.wg.Add(1)
		go o.poll(i)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("leadership trace (s since the observer started):\n%s", o.Trace(o.Start))
		}
		o.Stop()
	})
	return o
}

// Stop stops the polling; what was recorded stays readable.
func (o *Observer) Stop() {
	select {
	case <-o.stop:
		return
	default:
	}
	close(o.stop)
	o.wg.Wait()
	o.readLogs()
}

// LogsOnly stops (on) or resumes the polls of /status; the logs are read
// all the same. A poll of /status wakes the agent and has it encode its
// member list, which the observer decodes: on a bed of 128 hosts, 400
// polls a second that take CPU from the agents whose failover a
// benchmark times. While the polls are off, AgreeLogs tells agreement
// from the logs.
func (o *Observer) LogsOnly(on bool) { o.quiet.Store(on) }

func (o *Observer) poll(i int) {
	defer o.wg.Done()
	tick := time.NewTicker(o.every)
	defer tick.Stop()
	for {
		if !o.quiet.Load() {
			o.pollOnce(i)
		}
		if i == 0 {
			o.readLogs()
		}
		select {
		case <-o.stop:
			return
		case <-tick.C:
		}
	}
}

func (o *Observer) pollOnce(i int) {
	// A paused agent accepts the connection (the kernel does) but never
	// answers: bound each poll so that the host's next one is not late.
	ctx, cancel := context.WithTimeout(context.Background(), max(4*o.every, 500*time.Millisecond))
	defer cancel()
	s := Sample{Host: i, Source: "status"}
	var st Status
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:9947/status", nil)
	resp, err := o.n.client(i).Do(req)
	if err == nil {
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		switch {
		case rerr != nil:
			err = rerr
		case resp.StatusCode != http.StatusOK:
			err = fmt.Errorf("%s", resp.Status)
		default:
			err = json.Unmarshal(body, &st)
		}
	}
	s.At = time.Now().Round(0)
	if err != nil {
		s.Err = shortErr(err)
	} else {
		s.State, s.Term, s.Leader = st.State, st.Term, st.LeaderID
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.latest[i] = s
	if err == nil {
		o.status[i] = st
	}
	o.record(s)
}

// shortErr keeps the last part of an HTTP client error (the cause).
func shortErr(err error) string {
	s := err.Error()
	if k := strings.LastIndex(s, ": "); k >= 0 {
		s = s[k+2:]
	}
	return s
}

// record keeps s when it differs from the previous sample of its host and
// source. o.mu is held.
func (o *Observer) record(s Sample) {
	key := fmt.Sprintf("%d/%s", s.Host, s.Source)
	if prev, ok := o.last[key]; ok && prev.same(s) {
		return
	}
	o.last[key] = s
	o.events = append(o.events, s)
}

// logLine is the part of an agent's JSON log line the observer reads.
type logLine struct {
	Time     time.Time `json:"time"`
	Msg      string    `json:"msg"`
	State    string    `json:"state"`
	Term     uint64    `json:"term"`
	LeaderID uint64    `json:"leader_id"`
}

// readLogs reads what every agent has logged since the last call.
func (o *Observer) readLogs() {
	o.n.mu.Lock()
	procs := slices.Clone(o.n.procs)
	o.n.mu.Unlock()
	for _, p := range procs {
		if len(p.Args) == 0 || p.Args[0] != "run" {
			continue
		}
		o.mu.Lock()
		off := o.offsets[p.Path]
		o.mu.Unlock()
		f, err := os.Open(p.Path)
		if err != nil {
			continue
		}
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			f.Close()
			continue
		}
		r := bufio.NewReader(f)
		var got []Sample
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				break // a partial last line is read next time
			}
			off += int64(len(line))
			if !bytes.HasPrefix(line, []byte("{")) {
				continue
			}
			var l logLine
			if json.Unmarshal(line, &l) != nil || l.State == "" || !slices.Contains(leadershipMsgs, l.Msg) {
				continue
			}
			got = append(got, Sample{At: l.Time, Host: p.Host, Source: "log", State: l.State, Term: l.Term, Leader: l.LeaderID})
		}
		f.Close()
		o.mu.Lock()
		o.offsets[p.Path] = off
		for _, s := range got {
			o.record(s)
		}
		o.mu.Unlock()
	}
}

// Status is the last /status host i answered, and when; the error of the
// last poll if it failed.
func (o *Observer) Status(i int) (Status, time.Time, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.latest[i]
	if s.Err != "" {
		return o.status[i], s.At, fmt.Errorf("host-%d: %s", i+1, s.Err)
	}
	return o.status[i], s.At, nil
}

// Events is every recorded change, by time.
func (o *Observer) Events() []Sample {
	o.readLogs()
	o.mu.Lock()
	ev := slices.Clone(o.events)
	o.mu.Unlock()
	slices.SortStableFunc(ev, func(a, b Sample) int { return a.At.Compare(b.At) })
	return ev
}

// Trace is the recorded changes since from, one per line, with times
// relative to from.
func (o *Observer) Trace(from time.Time) string {
	var b strings.Builder
	for _, s := range o.Events() {
		if s.At.Before(from) {
			continue
		}
		fmt.Fprintf(&b, "%+9.3fs %v\n", s.At.Sub(from).Seconds(), s)
	}
	return b.String()
}

// Agree says whether every host of hosts, polled after after, follows one
// leader with one term, that leader is one of hosts and says it leads, and
// no other host of them leads. want is the leader's node_id, or 0 for the
// largest node_id among hosts (every host of the test bed has the same
// priority unless a test gives one; then it names want).
func (o *Observer) Agree(after time.Time, want uint64, hosts ...int) (bool, string) {
	return o.agree(want, hosts, func(h int) (Sample, string) {
		s := o.latest[h]
		switch {
		case s.At.Before(after):
			return s, "not polled since"
		case s.Err != "":
			return s, s.Err
		}
		return s, ""
	})
}

// AgreeLogs is Agree on the agents' logs as the observer has read them:
// every host of hosts has logged a change of leadership after after, and
// the latest lines agree as Agree's polls must.
func (o *Observer) AgreeLogs(after time.Time, want uint64, hosts ...int) (bool, string) {
	return o.agree(want, hosts, func(h int) (Sample, string) {
		s, ok := o.last[fmt.Sprintf("%d/log", h)]
		if !ok || s.At.Before(after) {
			return s, "no line since"
		}
		return s, ""
	})
}

// agree is Agree on what view says of each host: its sample, or why it
// has none to judge by. o.mu is held while it runs.
func (o *Observer) agree(want uint64, hosts []int, view func(h int) (Sample, string)) (bool, string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if want == 0 {
		for _, h := range hosts {
			want = max(want, o.status[h].NodeID)
		}
	}
	var term uint64
	leaders := 0
	for k, h := range hosts {
		s, why := view(h)
		switch {
		case why != "":
			return false, fmt.Sprintf("host-%d: %s", h+1, why)
		case s.Leader != want:
			return false, fmt.Sprintf("host-%d: %s, term %d, leader %d; want leader %d", h+1, s.State, s.Term, s.Leader, want)
		case k > 0 && s.Term != term:
			return false, fmt.Sprintf("host-%d: term %d, host-%d: term %d", h+1, s.Term, hosts[0]+1, term)
		}
		term = s.Term
		if s.State == "leader" {
			leaders++ // the leader it names is itself: want
		}
	}
	if leaders != 1 {
		return false, fmt.Sprintf("%d hosts say they lead, want 1 (node %d is among %v: %v)", leaders, want, hostList(hosts), slices.ContainsFunc(hosts, func(h int) bool { return o.status[h].NodeID == want }))
	}
	return true, ""
}

func hostList(hosts []int) string {
	names := make([]string, len(hosts))
	for k, h := range hosts {
		names[k] = fmt.Sprintf("host-%d", h+1)
	}
	return strings.Join(names, ",")
}

// Settle is when hosts took leader in the logs after from: the first
// host's line that names it (first), and the last host's first such line
// (all), both as durations since from. ok is false when a host has no
// such line.
func (o *Observer) Settle(from time.Time, leader uint64, hosts ...int) (first, all time.Duration, ok bool) {
	seen := make(map[int]time.Time)
	for _, s := range o.Events() {
		if s.Source != "log" || s.At.Before(from) || !slices.Contains(hosts, s.Host) {
			continue
		}
		if _, done := seen[s.Host]; !done && s.Leader == leader {
			seen[s.Host] = s.At
		}
	}
	if len(seen) != len(hosts) {
		return 0, 0, false
	}
	var lo, hi time.Time
	for _, at := range seen {
		if lo.IsZero() || at.Before(lo) {
			lo = at
		}
		if at.After(hi) {
			hi = at
		}
	}
	return lo.Sub(from), hi.Sub(from), true
}

// Leading is how many of hosts said they lead at their last successful
// poll: more than one while a LAN has not converged.
func (o *Observer) Leading(hosts ...int) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := 0
	for _, h := range hosts {
		if o.status[h].State == "leader" {
			k++
		}
	}
	return k
}

// LastChange is the stamp of the latest leadership line that the logs of
// hosts have, and whether every one of them has one: once they agree, the
// moment the last of them took its present view.
func (o *Observer) LastChange(hosts ...int) (time.Time, bool) {
	var last time.Time
	seen := map[int]bool{}
	for _, s := range o.Events() {
		if s.Source == "log" && slices.Contains(hosts, s.Host) {
			seen[s.Host] = true
			if s.At.After(last) {
				last = s.At
			}
		}
	}
	return last, len(seen) == len(hosts)
}

// Leaders is the leaders (node_ids, 0 for none) that host's log named
// between from and to, in order, without repeats in a row.
func (o *Observer) Leaders(host int, from, to time.Time) []uint64 {
	var out []uint64
	for _, s := range o.Events() {
		if s.Source != "log" || s.Host != host || s.At.Before(from) || s.At.After(to) {
			continue
		}
		if len(out) == 0 || out[len(out)-1] != s.Leader {
			out = append(out, s.Leader)
		}
	}
	return out
}
