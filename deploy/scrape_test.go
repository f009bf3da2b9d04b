package deploy

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lanleader/lanleader/internal/syncbuf"
	"github.com/lanleader/lanleader/internal/waitfor"
)

// logBuffer collects a process's output; safe for the copying goroutine
// of os/exec and the test at once.
type logBuffer struct{ syncbuf.Buffer }

// tail returns the last n lines.
func (l *logBuffer) tail(n int) string {
	lines := strings.Split(strings.TrimRight(l.String(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// proc is a process the test started; it is ended by its pid.
type proc struct {
	name   string
	cmd    *exec.Cmd
	out    *logBuffer
	exited chan struct{}
}

// start starts a process and registers its end: SIGTERM, then SIGKILL
// after grace, both to its pid.
func start(t *testing.T, name string, grace time.Duration, path string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(path, args...), out: &logBuffer{}, exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(grace):
			p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("%s (pid %d), last lines:\n%s", p.name, p.cmd.Process.Pid, p.out.tail(15))
		}
	})
	return p
}

// crash kills the process with SIGKILL: no RESIGN, no leave.
func (p *proc) crash(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatalf("kill %s: %v", p.name, err)
	}
	<-p.exited
}

// freePort returns a port that is free for TCP (and UDP, if udp) on every
// address and not in used.
func freePort(t *testing.T, addrs []string, udp bool, used ...int) int {
	t.Helper()
	for range 100 {
		l, err := net.Listen("tcp", net.JoinHostPort(addrs[0], "0"))
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if slices.Contains(used, port) {
			continue
		}
		var open []io.Closer
		ok := true
		for _, a := range addrs {
			hp := net.JoinHostPort(a, strconv.Itoa(port))
			if l, err := net.Listen("tcp", hp); err == nil {
				open = append(open, l)
			} else {
				ok = false
			}
			if udp {
				if c, err := net.ListenPacket("udp", hp); err == nil {
					open = append(open, c)
				} else {
					ok = false
				}
			}
		}
		for _, c := range open {
			c.Close()
		}
		if ok {
			return port
		}
	}
	t.Fatalf("no port free on all of %v", addrs)
	return 0
}

// buildLanleader builds the lanleader binary into a temporary directory.
func buildLanleader(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lanleader")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/lanleader/lanleader/cmd/lanleader")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// sample is one element of an instant vector from Prometheus's API.
type sample struct {
	labels map[string]string
	value  float64
}

func (s sample) String() string {
	var keys []string
	for k, v := range s.labels {
		keys = append(keys, k+"="+strconv.Quote(v))
	}
	slices.Sort(keys)
	return "{" + strings.Join(keys, ",") + "} " + strconv.FormatFloat(s.value, 'g', 6, 64)
}

// promAPI is a Prometheus server's HTTP API.
type promAPI struct{ base string }

// query runs an instant query and returns its vector (a scalar result is
// one sample without labels).
func (p promAPI) query(q string) ([]sample, error) {
	resp, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %v", q, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s: %s %s", q, r.Status, r.Error)
	}
	parse := func(v [2]any) (float64, error) {
		s, _ := v[1].(string)
		return strconv.ParseFloat(s, 64)
	}
	switch r.Data.ResultType {
	case "vector":
		var vec []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(r.Data.Result, &vec); err != nil {
			return nil, err
		}
		out := make([]sample, len(vec))
		for i, s := range vec {
			f, err := parse(s.Value)
			if err != nil {
				return nil, err
			}
			out[i] = sample{s.Metric, f}
		}
		slices.SortFunc(out, func(a, b sample) int { return strings.Compare(a.String(), b.String()) })
		return out, nil
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(r.Data.Result, &v); err != nil {
			return nil, err
		}
		f, err := parse(v)
		return []sample{{labels: map[string]string{}, value: f}}, err
	}
	return nil, fmt.Errorf("%s: result type %s", q, r.Data.ResultType)
}

// one returns the value of a query that must yield one sample.
func (p promAPI) one(q string) (float64, error) {
	v, err := p.query(q)
	if err != nil {
		return 0, err
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("%s: %d samples %v, want 1", q, len(v), v)
	}
	return v[0].value, nil
}

// byInstance returns a query's values by instance (and the label key, if
// given).
func (p promAPI) byInstance(q, key string) (map[string]float64, error) {
	v, err := p.query(q)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, s := range v {
		k := s.labels["instance"]
		if key != "" {
			k += " " + key + "=" + s.labels[key]
		}
		out[k] = s.value
	}
	return out, nil
}

// leadership is an agent's run of lanleader_is_leader 1 in a range, from
// its first to its last such sample.
type leadership struct {
	instance    string
	first, last time.Time
}

func (l leadership) String() string {
	return fmt.Sprintf("%s %s–%s", l.instance, l.first.Format("15:04:05.000"), l.last.Format("15:04:05.000"))
}

// leaderships runs a range query of lanleader_is_leader and returns each
// agent's leadership in it, ordered by start.
func (p promAPI) leaderships(q string) ([]leadership, error) {
	resp, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Values [][2]any          `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	if r.Status != "success" || r.Data.ResultType != "matrix" {
		return nil, fmt.Errorf("%s: %s, result type %s", q, r.Status, r.Data.ResultType)
	}
	var out []leadership
	for _, series := range r.Data.Result {
		var l leadership
		for _, v := range series.Values {
			ts, _ := v[0].(float64)
			at := time.UnixMilli(int64(ts * 1000))
			if val, _ := v[1].(string); val != "1" {
				continue
			}
			if l.first.IsZero() {
				l.first = at
			}
			l.last = at
		}
		if !l.first.IsZero() {
			l.instance = series.Metric["instance"]
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b leadership) int { return a.first.Compare(b.first) })
	return out, nil
}

// until polls check every 100 ms until it returns nil, or fails the test
// with its last error at the deadline.
func until(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	waitfor.Until(t, what, timeout, 100*time.Millisecond, func() (bool, string) {
		if err := check(); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

// TestPrometheusScrapesCluster: a real Prometheus server (Debian's
// package) on loopback scrapes five `lanleader run` processes every second,
// with deploy/prometheus/lanleader.rules.yml loaded. Through a crash of
// the leader (SIGKILL: no RESIGN, no leave) it sees exactly one leader
// before and again after, the new leader named by every survivor, leader
// changes, elections and failover times that moved as they should, the
// crashed agent down (LanleaderAgentDown pending) and no other alert
// firing. Every dashboard query returns data, and `promtool check metrics`
// passes on each live agent's /metrics. Everything stays on 127.0.0.0/8.
func TestPrometheusScrapesCluster(t *testing.T) {
	prometheus := needTool(t, "prometheus")
	promtool := needTool(t, "promtool")
	rules, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	bin := buildLanleader(t)
	t.Logf("built lanleader in %v", time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()

	// Five agents on 127.0.0.11 … 127.0.0.15, the same ports on each
	// address, as on five hosts. node-5 has the largest key and leads.
	const n = 5
	var ips []string
	for i := 1; i <= n; i++ {
		ips = append(ips, fmt.Sprintf("127.0.0.%d", 10+i))
	}
	gossip := freePort(t, ips, true)
	election := freePort(t, ips, true, gossip)
	httpPort := freePort(t, ips, false, gossip, election)
	var seeds, targets []string
	for _, ip := range ips {
		seeds = append(seeds, net.JoinHostPort(ip, strconv.Itoa(gossip)))
		targets = append(targets, net.JoinHostPort(ip, strconv.Itoa(httpPort)))
	}
	agents := make([]*proc, n)
	for i := range ips {
		agents[i] = start(t, fmt.Sprintf("node-%d", i+1), 5*time.Second, bin, "run",
			"--name", fmt.Sprintf("node-%d", i+1), "--node-id", strconv.Itoa(i+1),
			"--bind", seeds[i], "--election-port", strconv.Itoa(election), "--http", targets[i],
			"--transport", "unicast", "--join", strings.Join(seeds, ","))
	}

	// Prometheus: scrape and evaluate every second, data in a temporary
	// directory that is removed once the server has stopped.
	dir := t.TempDir()
	promPort := freePort(t, []string{"127.0.0.1"}, false, gossip, election, httpPort)
	promAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(promPort))
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - %q
scrape_configs:
  - job_name: lanleader
    static_configs:
      - targets: ["%s"]
`, rules, strings.Join(targets, `", "`))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	t.Cleanup(func() {
		// Runs after the server's own cleanup (registered below) ended it.
		if err := os.RemoveAll(data); err != nil {
			t.Errorf("removing Prometheus's data: %v", err)
		}
	})
	start(t, "prometheus", 10*time.Second, prometheus,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+data,
		"--web.listen-address="+promAddr,
		"--web.external-url=http://"+promAddr+"/",
		"--log.level=warn")
	api := promAPI{base: "http://" + promAddr}
	until(t, 15*time.Second, "Prometheus ready", func() error {
		resp, err := http.Get(api.base + "/-/ready")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("/-/ready: %s", resp.Status)
		}
		return nil
	})

	// agreement checks, through Prometheus, that the up agents are live,
	// exactly one leads, and all of them name it with one term.
	agreement := func(up int, leaderID int) func() error {
		return func() error {
			checks := []struct {
				q    string
				want float64
			}{
				{`count(up{job="lanleader"} == 1)`, float64(up)},
				{`sum(lanleader_is_leader)`, 1},
				{fmt.Sprintf(`count(lanleader_leader_info{leader_id="%d",leader_name="node-%d"})`, leaderID, leaderID), float64(up)},
				{`count(count by (leader_id) (lanleader_leader_info))`, 1},
				{`max(lanleader_term) - min(lanleader_term)`, 0},
				{`min(lanleader_members{status="alive"})`, float64(up - 1)},
			}
			for _, c := range checks {
				if v, err := api.one(c.q); err != nil || v != c.want {
					return fmt.Errorf("%s = %v (%v), want %v", c.q, v, err, c.want)
				}
			}
			return nil
		}
	}
	until(t, 20*time.Second, "Prometheus sees 5 agents agree on node-5", agreement(n, 5))
	t.Logf("Prometheus saw the 5 agents agree %v after the build", time.Since(t0).Round(time.Millisecond))

	// The values before the crash.
	leaderInstance, newLeader := targets[n-1], targets[n-2]
	type snapshot struct {
		isLeader, changes, elections, failovers, failoverSum, failoverUnder1s, term map[string]float64
	}
	snap := func(when string) snapshot {
		t.Helper()
		var s snapshot
		for _, q := range []struct {
			dst      *map[string]float64
			query    string
			labelKey string
		}{
			{&s.isLeader, `lanleader_is_leader == 1`, ""},
			{&s.changes, `lanleader_leader_changes_total`, ""},
			{&s.elections, `lanleader_elections_total`, "result"},
			{&s.failovers, `lanleader_failover_seconds_count`, ""},
			{&s.failoverSum, `lanleader_failover_seconds_sum`, ""},
			{&s.failoverUnder1s, `lanleader_failover_seconds_bucket{le="1"}`, ""},
			{&s.term, `lanleader_term`, ""},
		} {
			v, err := api.byInstance(q.query, q.labelKey)
			if err != nil {
				t.Fatal(err)
			}
			*q.dst = v
			t.Logf("%s: %s → %v", when, q.query, v)
		}
		for _, q := range []string{
			`sum(lanleader_is_leader)`,
			`count(up{job="lanleader"} == 1)`,
			`count by (leader_id, leader_name) (lanleader_leader_info)`,
			`min(lanleader_members{status="alive"})`,
			`sum(lanleader_failover_seconds_count)`,
		} {
			v, err := api.query(q)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s → %v", when, q, v)
		}
		return s
	}
	before := snap("before")
	if want := map[string]float64{leaderInstance: 1}; fmt.Sprint(before.isLeader) != fmt.Sprint(want) {
		t.Fatalf("before: lanleader_is_leader == 1 → %v, want %v", before.isLeader, want)
	}

	crashed := time.Now()
	agents[n-1].crash(t)
	t.Logf("crashed node-5 (pid %d, %s) at %s", agents[n-1].cmd.Process.Pid, leaderInstance, crashed.Format("15:04:05.000"))
	until(t, 20*time.Second, "Prometheus sees node-5 down and 4 agents agree on node-4", func() error {
		if v, err := api.one(fmt.Sprintf(`up{instance=%q}`, leaderInstance)); err != nil || v != 0 {
			return fmt.Errorf("up of the crashed leader = %v (%v), want 0", v, err)
		}
		return agreement(n-1, 4)()
	})
	t.Logf("Prometheus saw node-5 down and node-4 leading %v after the crash", time.Since(crashed).Round(time.Millisecond))
	after := snap("after")
	if want := map[string]float64{newLeader: 1}; fmt.Sprint(after.isLeader) != fmt.Sprint(want) {
		t.Errorf("after: lanleader_is_leader == 1 → %v, want %v", after.isLeader, want)
	}

	// What moved, survivor by survivor.
	var failoversRecorded float64
	for _, inst := range targets[:n-1] {
		if d := after.changes[inst] - before.changes[inst]; d != 1 {
			t.Errorf("%s: lanleader_leader_changes_total moved by %v, want 1 (node-5 → node-4)", inst, d)
		}
		won := after.elections[inst+" result=won"] - before.elections[inst+" result=won"]
		lost := after.elections[inst+" result=lost"] - before.elections[inst+" result=lost"]
		switch {
		case inst == newLeader && (won != 1 || lost != 0):
			t.Errorf("%s (new leader): elections won +%v lost +%v, want +1 and +0", inst, won, lost)
		case inst != newLeader && (won != 0 || lost < 0 || lost > 1):
			// A follower that suspected node-5 itself ran an election and
			// lost it; one that heard node-4's COORDINATOR first ran none.
			t.Errorf("%s: elections won +%v lost +%v, want +0 and +0 or +1", inst, won, lost)
		}
		if after.term[inst] != before.term[leaderInstance]+1 {
			t.Errorf("%s: term %v, want %v (one election after %v)", inst, after.term[inst], before.term[leaderInstance]+1, before.term[leaderInstance])
		}
		// Every survivor measures the failover from node-5's last
		// heartbeat it heard. node-5's notice guard tells them of its
		// crash at once (it has no job), so that is less than a heartbeat
		// (100 ms by default) and a few milliseconds, not the
		// suspect-after (300 ms) a detector would have waited.
		f := after.failovers[inst] - before.failovers[inst]
		if f != 1 {
			t.Errorf("%s: lanleader_failover_seconds_count moved by %v, want 1", inst, f)
		}
		failoversRecorded += f
		if sum := after.failoverSum[inst] - before.failoverSum[inst]; sum <= 0 || sum >= 0.2 {
			t.Errorf("%s: lanleader_failover_seconds_sum moved by %vs, want more than 0 and less than 0.2 s", inst, sum)
		}
	}
	// Every recorded failover took less than a second: the le="1" bucket
	// moved as much as the count.
	var under1s float64
	for _, inst := range targets[:n-1] {
		under1s += after.failoverUnder1s[inst] - before.failoverUnder1s[inst]
	}
	if failoversRecorded != float64(n-1) || under1s != failoversRecorded {
		t.Errorf("survivors recorded %v failovers, %v of them under 1 s; want %d, all under 1 s", failoversRecorded, under1s, n-1)
	}
	t.Logf("failovers recorded by the survivors: %v", failoversRecorded)

	// Never two leaders at once, in the raw samples: the scraped
	// leaderships, from the first to the last sample of 1 at each agent,
	// do not overlap, node-5's ends before the crash and node-4's starts
	// after it. (A sum over time would not show this: the dead leader's
	// last sample stays current until a scrape of it fails, next to its
	// successor's 1.)
	window := int(time.Since(crashed).Seconds()) + 5
	led, err := api.leaderships(fmt.Sprintf(`lanleader_is_leader[%ds]`, window))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after: lanleader_is_leader[%ds], leaderships as scraped: %v", window, led)
	if len(led) != 2 || led[0].instance != leaderInstance || led[1].instance != newLeader ||
		!led[0].last.Before(crashed) || !led[1].first.After(crashed) || !led[0].last.Before(led[1].first) {
		t.Errorf("leaderships %v, want %s's ending before the crash at %s and then %s's", led,
			leaderInstance, crashed.Format("15:04:05.000"), newLeader)
	}

	// The rules: all six loaded and evaluated without error; the crashed
	// agent's LanleaderAgentDown pending; nothing firing.
	until(t, 10*time.Second, "rules evaluated, LanleaderAgentDown pending for node-5", func() error {
		return checkRules(api, leaderInstance)
	})

	// Every dashboard query returns data from the live server.
	for _, q := range dashboardQueries(readDashboard(t)) {
		v, err := api.query(q.expr)
		if err != nil || len(v) == 0 {
			t.Errorf("dashboard panel %q %s: %s → %v (%v), want data", q.panel, q.refID, q.expr, v, err)
		}
	}

	// promtool check metrics on each survivor's /metrics, after the
	// failover (counters and the histogram are not all zero).
	for _, inst := range targets[:n-1] {
		resp, err := http.Get("http://" + inst + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(body), "\nlanleader_failover_seconds_count ") {
			t.Fatalf("%s/metrics has no lanleader_failover_seconds_count:\n%s", inst, body)
		}
		code, out := runTool(t, ".", body, promtool, "check", "metrics")
		if code != 0 || out != "" {
			t.Errorf("promtool check metrics on %s/metrics: exit %d\n%s", inst, code, out)
		}
	}
}

// checkRules checks the server's rules and alerts: six lanleader rules,
// all healthy (evaluated), LanleaderAgentDown pending or firing for the
// crashed instance only, no other alert active.
func checkRules(api promAPI, down string) error {
	resp, err := http.Get(api.base + "/api/v1/rules")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name      string `json:"name"`
					Health    string `json:"health"`
					LastError string `json:"lastError"`
					State     string `json:"state"`
					Alerts    []struct {
						Labels map[string]string `json:"labels"`
						State  string            `json:"state"`
					} `json:"alerts"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return err
	}
	var names, active []string
	for _, g := range r.Data.Groups {
		for _, rule := range g.Rules {
			names = append(names, rule.Name)
			if rule.Health != "ok" {
				return fmt.Errorf("rule %s: health %q %s", rule.Name, rule.Health, rule.LastError)
			}
			for _, a := range rule.Alerts {
				active = append(active, fmt.Sprintf("%s{instance=%q} %s", rule.Name, a.Labels["instance"], a.State))
			}
		}
	}
	if !slices.Equal(names, wantAlerts) {
		return fmt.Errorf("rules %q, want %q", names, wantAlerts)
	}
	want := fmt.Sprintf("LanleaderAgentDown{instance=%q} pending", down)
	if len(active) != 1 || active[0] != want {
		return fmt.Errorf("active alerts %q, want [%s]", active, want)
	}
	return nil
}
