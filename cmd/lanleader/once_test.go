package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent"
	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/internal/freeport"
	"github.com/lanleader/lanleader/internal/syncbuf"
	"github.com/lanleader/lanleader/internal/waitfor"
)

// onceCmd records its start and end, with its term and its name ($2), in
// the file $1; it waits for the file $1.go to exist (bounded), then exits
// with status $3.
const onceCmd = `#!/bin/sh
echo "start $2 $LANLEADER_TERM" >> "$1"
i=0
while [ ! -e "$1.go" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
echo "end $2 $LANLEADER_TERM" >> "$1"
exit $3
`

// onceAgent is one `lanleader run --once` process of a test.
type onceAgent struct {
	cmd    *exec.Cmd
	out    *syncbuf.Buffer
	exited chan struct{}
	http   string
	gossip string
}

// freePort is a port free for both TCP and UDP on 127.0.0.1, for a while,
// and never one it returned before.
func freePort(t *testing.T) int { return freeport.Get(t) }

// startOnce starts `lanleader run --once` as node id with its own ports,
// joining join (if any), with extra flags and the command line.
func startOnce(t *testing.T, id int, join string, extra []string, cmdline ...string) *onceAgent {
	t.Helper()
	return startOnceAt(t, id, fmt.Sprintf("127.0.0.1:%d", freePort(t)), join, extra, cmdline...)
}

// startOnceAt is startOnce with its gossip address.
func startOnceAt(t *testing.T, id int, gossip, join string, extra []string, cmdline ...string) *onceAgent {
	t.Helper()
	o := &onceAgent{out: &syncbuf.Buffer{}, exited: make(chan struct{}),
		http: fmt.Sprintf("127.0.0.1:%d", freePort(t)), gossip: gossip}
	args := []string{"run", "--once", "--name", "n" + strconv.Itoa(id), "--node-id", strconv.Itoa(id), "--bind", o.gossip,
		"--election-port", strconv.Itoa(freePort(t)), "--transport", "unicast", "--http", o.http, "--job-grace", "3s"}
	if join != "" {
		args = append(args, "--join", join)
	}
	args = append(append(append(args, extra...), "--"), cmdline...)
	o.cmd, _ = lanleader(t, args...)
	o.cmd.Stdout, o.cmd.Stderr = o.out, o.out
	if err := o.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { o.cmd.Wait(); close(o.exited) }()
	t.Cleanup(func() {
		select {
		case <-o.exited:
		default:
			o.cmd.Process.Kill() // by pid
			<-o.exited
		}
		if t.Failed() {
			t.Logf("node %d's output:\n%s", id, o.out)
		}
	})
	return o
}

// code waits for the exit and returns its status.
func (o *onceAgent) code(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-o.exited:
		return o.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		t.Fatalf("no exit within %v", timeout)
		return -1
	}
}

// status reads the agent's /status.
func (o *onceAgent) status() (agent.Status, error) {
	var st agent.Status
	resp, err := http.Get("http://" + o.http + "/status")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// stampLines waits until the file has n lines and returns them.
func stampLines(t *testing.T, path string, n int, timeout time.Duration) []string {
	t.Helper()
	var lines []string
	waitfor.Until(t, fmt.Sprintf("%d lines in %s", n, path), timeout, 10*time.Millisecond, func() (bool, string) {
		b, _ := os.ReadFile(path)
		lines = strings.Split(strings.TrimSpace(string(b)), "\n")
		return len(b) > 0 && len(lines) >= n, fmt.Sprintf("%q", b)
	})
	return lines
}

// TestRunOnce: consul lock's contract. Node 2 runs its command once
// (term T); node 1, a --once agent joined meanwhile, waits; node 3, with
// --once-timeout, gives up and exits 75 without running its command.
// When node 2's command exits 0, node 2 exits 0 and resigns; node 1 then
// leads in a later term, runs its command, and exits with its status, 7.
// The two runs never overlap (the commands' own stamps).
func TestRunOnce(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "cmd.sh")
	os.WriteFile(script, []byte(onceCmd), 0o755)
	stamps := filepath.Join(dir, "stamps")
	a := startOnce(t, 2, "", nil, script, stamps, "two", "0")
	first := stampLines(t, stamps, 1, 10*time.Second)
	b := startOnce(t, 1, a.gossip, nil, script, stamps, "one", "7")
	c := startOnce(t, 3, a.gossip, []string{"--priority", "50", "--once-timeout", "1s"}, script, stamps, "three", "9")
	if code := c.code(t, 10*time.Second); code != exitTempFail || !strings.Contains(c.out.String(), "did not lead in time: the command did not run") {
		t.Errorf("node 3: exit %d, want %d and why", code, exitTempFail)
	}
	waitfor.Until(t, "node 1 follows node 2", 10*time.Second, 10*time.Millisecond, func() (bool, string) {
		st, err := b.status()
		return err == nil && st.State == "follower" && st.LeaderID == 2, fmt.Sprintf("%+v %v", st.State, err)
	})
	// Node 2's command is still the only one that ran.
	if got := stampLines(t, stamps, 1, time.Second); len(got) != 1 || !strings.HasPrefix(got[0], "start two ") {
		t.Fatalf("stamps %q before the go, want node 2's start only", got)
	}
	os.WriteFile(stamps+".go", nil, 0o644)
	if code := a.code(t, 10*time.Second); code != 0 {
		t.Errorf("node 2: exit %d, want its command's 0", code)
	}
	if code := b.code(t, 15*time.Second); code != 7 {
		t.Errorf("node 1: exit %d, want its command's 7", code)
	}
	lines := stampLines(t, stamps, 4, time.Second)
	var terms [4]uint64
	for i, l := range lines {
		f := strings.Fields(l)
		terms[i], _ = strconv.ParseUint(f[len(f)-1], 10, 64)
	}
	want := []string{"start two", "end two", "start one", "end one"}
	for i, l := range lines {
		if i >= len(want) || !strings.HasPrefix(l, want[i]+" ") {
			t.Fatalf("stamps %q, want node 2's run, then node 1's, never overlapping", lines)
		}
	}
	if terms[0] == 0 || terms[1] != terms[0] || terms[2] <= terms[0] || terms[3] != terms[2] || lines[0] != first[0] {
		t.Errorf("stamps %q: want node 1's run in a later term than node 2's", lines)
	}
	if log := a.out.String(); !strings.Contains(log, "resign") && !strings.Contains(log, "msg=leaving") {
		t.Errorf("node 2 did not say it resigned and left")
	}
}

// TestRunOnceSignal: SIGTERM while the command runs stops it as the job
// is stopped (its trap runs), and the agent exits with the command's
// status; SIGTERM while waiting to lead exits 0 without running it.
func TestRunOnceSignal(t *testing.T) {
	dir := t.TempDir()
	stamps := filepath.Join(dir, "stamps")
	script := filepath.Join(dir, "cmd.sh")
	os.WriteFile(script, []byte(`#!/bin/sh
trap 'echo "term $2" >> "$1"; exit 5' TERM
echo "start $2" >> "$1"
while :; do sleep 0.05; done
`), 0o755)
	a := startOnce(t, 2, "", nil, script, stamps, "two")
	stampLines(t, stamps, 1, 10*time.Second)
	b := startOnce(t, 1, a.gossip, nil, script, stamps, "one")
	waitfor.Until(t, "node 1 follows node 2", 10*time.Second, 10*time.Millisecond, func() (bool, string) {
		st, err := b.status()
		return err == nil && st.State == "follower" && st.LeaderID == 2, fmt.Sprintf("%+v %v", st.State, err)
	})
	b.cmd.Process.Signal(syscall.SIGTERM)
	if code := b.code(t, 10*time.Second); code != 0 {
		t.Errorf("node 1, stopped while waiting: exit %d, want 0", code)
	}
	a.cmd.Process.Signal(syscall.SIGTERM)
	if code := a.code(t, 10*time.Second); code != 5 {
		t.Errorf("node 2, stopped while its command ran: exit %d, want the command's 5", code)
	}
	if got := stampLines(t, stamps, 2, time.Second); len(got) != 2 || got[0] != "start two" || got[1] != "term two" {
		t.Errorf("stamps %q, want node 2's start and its SIGTERM only", got)
	}
}

// TestRunOnceBadFlags: --once without a command, --once-timeout without
// --once or negative, exit 2 with one line saying so.
func TestRunOnceBadFlags(t *testing.T) {
	base := []string{"run", "--name", "t", "--node-id", "5", "--transport", "unicast", "--bind", "127.0.0.1:0", "--http", "off"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--once"}, "--once: nothing to run: give the command after --"},
		{[]string{"--once-timeout", "1s", "--", "true"}, "--once-timeout: only with --once"},
		{[]string{"--once", "--once-timeout", "-1s", "--", "true"}, "once-timeout"},
		{[]string{"--once", "--job-unit", "x.service", "--", "true"}, "job-unit: the job is either a command line"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append(append([]string{}, base...), tc.args...), &stdout, &stderr)
		if code != 2 || !strings.HasPrefix(stderr.String(), "lanleader run: ") || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// TestParseRunConfigJobModeUnit: job_mode and job_unit in the file, the
// flags winning over it; --once sets job mode once.
func TestParseRunConfigJobModeUnit(t *testing.T) {
	file := writeConfig(t, "job_mode: once\njob_unit: lanleader-job-db.service\n")
	cfg, _, _ := parseOK(t, "--config", file)
	if cfg.JobMode != config.JobModeOnce || cfg.JobUnit != "lanleader-job-db.service" || len(cfg.Job) != 0 {
		t.Errorf("from the file: mode %q, unit %q, job %q", cfg.JobMode, cfg.JobUnit, cfg.Job)
	}
	cfg, _, _ = parseOK(t, "--config", file, "--job-mode", "always", "--job-unit", "lanleader-job-web.service")
	if cfg.JobMode != config.JobModeAlways || cfg.JobUnit != "lanleader-job-web.service" {
		t.Errorf("flags over the file: mode %q, unit %q", cfg.JobMode, cfg.JobUnit)
	}
	cfg, job, once, err := parseRunOnce([]string{"--once", "--once-timeout", "30s", "--", "/bin/true"}, nil, nil)
	if err != nil || cfg.JobMode != config.JobModeOnce || !once.on || once.timeout != 30*time.Second || len(job) != 1 {
		t.Errorf("--once: %v, mode %q, %+v, job %q", err, cfg.JobMode, once, job)
	}
	var stderr bytes.Buffer
	if code := run([]string{"run", "--job-mode", "twice"}, &stderr, &stderr); code != 2 || !strings.Contains(stderr.String(), `--job-mode: "twice" is not always or once`) {
		t.Errorf("--job-mode twice: exit %d, %q", code, stderr.String())
	}
}

// TestRunOnceJoinsFirst: a --once agent whose --join peers are not up
// yet takes no part in elections (alone, it would lead after its startup
// wait, 300ms, and run its command beside the cluster's leader); once a
// member has joined it, the two elect one leader, and the commands run
// one after the other.
func TestRunOnceJoinsFirst(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "cmd.sh")
	os.WriteFile(script, []byte(onceCmd), 0o755)
	stamps := filepath.Join(dir, "stamps")
	os.WriteFile(stamps+".go", nil, 0o644) // the commands end at once
	peer := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	b := startOnce(t, 2, peer, nil, script, stamps, "two", "0")
	waitfor.Until(t, "node 2 waits for a member", 10*time.Second, 10*time.Millisecond, func() (bool, string) {
		return strings.Contains(b.out.String(), "taking no part in elections until this node has joined a member"), b.out.String()
	})
	waitfor.Holds(t, "node 2, alone, neither leads nor runs its command", time.Second, 10*time.Millisecond, func() (bool, string) {
		st, err := b.status()
		_, serr := os.Stat(stamps)
		return err == nil && st.State != "leader" && serr != nil, fmt.Sprintf("%s %v; stamps: %v", st.State, err, serr)
	})
	// Node 1 joins node 2, as every --once agent of a cluster names the
	// others.
	a := startOnceAt(t, 1, peer, b.gossip, nil, script, stamps, "one", "3")
	if code := b.code(t, 15*time.Second); code != 0 {
		t.Errorf("node 2: exit %d, want 0", code)
	}
	if code := a.code(t, 15*time.Second); code != 3 {
		t.Errorf("node 1: exit %d, want 3", code)
	}
	want := []string{"start two", "end two", "start one", "end one"}
	lines := stampLines(t, stamps, 4, time.Second)
	for i, l := range lines {
		if i >= len(want) || !strings.HasPrefix(l, want[i]+" ") {
			t.Fatalf("stamps %q, want node 2's run, then node 1's", lines)
		}
	}
}
