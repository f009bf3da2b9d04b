package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent"
	"github.com/lanleader/lanleader/internal/waitfor"
)

// The test binary doubles as the lanleader binary: with LANLEADER_AS_MAIN
// set it runs main with its arguments after "--" (the helper-process
// pattern of os/exec's tests), and as the guard of the jobs its agents
// start.
func TestMain(m *testing.M) {
	// The guard of a job started by a test's agent, in this process or
	// in one started as lanleader, is this binary again.
	agent.Guard()
	if os.Getenv("LANLEADER_AS_MAIN") == "1" {
		args := os.Args
		for i, a := range args {
			if a == "--" {
				args = args[i+1:]
				break
			}
		}
		os.Exit(run(args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// lanleader starts the test binary as `lanleader args...`.
func lanleader(t testing.TB, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "LANLEADER_AS_MAIN=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

func freeTCP(t testing.TB) (int, func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l.Addr().(*net.TCPAddr).Port, func() { l.Close() }
}

// TestRunBadInput: every bad flag and config value ends `lanleader run` at
// start with exit status 2, and an unopenable address (with no retry
// window) with 3, and one line naming the problem, before anything runs.
func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	badKey := filepath.Join(dir, "bad-key.yaml")
	os.WriteFile(badKey, []byte("name: a\nprioirty: 5\n"), 0o644)
	badDur := filepath.Join(dir, "bad-duration.yaml")
	os.WriteFile(badDur, []byte("heartbeat: 10 ms\n"), 0o644)
	busy, release := freeTCP(t)
	defer release()
	base := []string{"run", "--name", "t", "--node-id", "5", "--transport", "unicast"}
	cases := []struct {
		name string
		args []string
		want string
		code int
	}{
		{"unknown key", []string{"--config", badKey}, `line 2: unknown key "prioirty"`, 0},
		{"unknown flag", []string{"--prioirty", "5"}, "prioirty", 0},
		{"bad duration flag", []string{"--heartbeat", "10 ms"}, `--heartbeat: "10 ms" is not a duration`, 0},
		{"bad duration in file", []string{"--config", badDur}, `heartbeat: "10 ms" is not a duration`, 0},
		{"priority too large", []string{"--priority", "70000"}, "--priority: 70000 out of range 1…65535", 0},
		{"priority zero", []string{"--priority", "0"}, "--priority: 0 out of range 1…65535", 0},
		{"heartbeat above its ceiling", []string{"--heartbeat", "1000h"}, "--heartbeat: 1000h is above the ceiling of 1m", 0},
		{"suspect not above heartbeat", []string{"--heartbeat", "1s", "--suspect-after", "500ms"}, "--suspect-after: 500ms must be longer than --heartbeat (1s)", 0},
		{"bind not on this host", []string{"--start-timeout", "0", "--bind", "198.18.255.254:0", "--http", "127.0.0.1:0"}, "bind 198.18.255.254: address not on this host", exitNotReady},
		{"gossip port in use", []string{"--start-timeout", "0", "--bind", fmt.Sprintf("127.0.0.1:%d", busy), "--election-port", "0", "--http", "127.0.0.1:0"}, fmt.Sprintf("bind 127.0.0.1:%d: gossip port already in use", busy), exitNotReady},
		{"http port in use", []string{"--start-timeout", "0", "--bind", "127.0.0.1:0", "--http", fmt.Sprintf("127.0.0.1:%d", busy)}, fmt.Sprintf("http 127.0.0.1:%d: port already in use", busy), exitNotReady},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append(append([]string{}, base...), c.args...), &stdout, &stderr)
			msg := stderr.String()
			if want := cmp.Or(c.code, exitConfig); code != want {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, want, msg)
			}
			if !strings.HasPrefix(msg, "lanleader run: ") || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, c.want) {
				t.Fatalf("stderr %q: want one line 'lanleader run: …' containing %q", msg, c.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
		})
	}
}

// TestRunSignal: a real `lanleader run` process leads alone, serves
// /status, and on SIGTERM resigns, leaves and exits 0.
func TestRunSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			httpPort, release := freeTCP(t)
			release()
			addr := fmt.Sprintf("127.0.0.1:%d", httpPort)
			cmd, out := lanleader(t, "run", "--name", "solo", "--node-id", "9", "--bind", "127.0.0.1:0",
				"--transport", "unicast", "--http", addr)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			defer func() {
				if cmd.ProcessState == nil {
					cmd.Process.Kill() // by pid
					<-exited
				}
				if t.Failed() {
					t.Logf("its output:\n%s", out)
				}
			}()
			waitfor.Until(t, "a leader at "+addr, 10*time.Second, 10*time.Millisecond, func() (bool, string) {
				var st agent.Status
				resp, err := http.Get("http://" + addr + "/status")
				if err == nil {
					json.NewDecoder(resp.Body).Decode(&st)
					resp.Body.Close()
				}
				return st.State == "leader" && st.LeaderID == 9 && st.Name == "solo", fmt.Sprintf("%v %+v", err, st)
			})
			cmd.Process.Signal(sig)
			select {
			case err := <-exited:
				if err != nil {
					t.Fatalf("exit: %v, want status 0", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no exit within 10s of the signal")
			}
			log := out.String()
			for _, want := range []string{`msg="became leader"`, `msg=stopping signal=` + map[syscall.Signal]string{syscall.SIGTERM: "terminated", syscall.SIGINT: "interrupt"}[sig], `msg=leaving`, `msg=stopped`} {
				if !strings.Contains(log, want) {
					t.Errorf("log lacks %s", want)
				}
			}
			// Once stopped, nothing listens any more.
			if _, err := http.Get("http://" + addr + "/status"); err == nil {
				t.Errorf("the HTTP listener survived the exit")
			}
		})
	}
}

// TestStatusLive: `lanleader status` against real agents prints the table
// of members with the leader marked, and --json the live document.
func TestStatusLive(t *testing.T) {
	l, err := agent.StartLocal(agent.LocalOptions{Nodes: 3, HTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.WaitAgreement(10*time.Second, func(a agent.Agreement) bool {
		for _, x := range l.Agents {
			if len(x.Status().Members) != 2 {
				return false
			}
		}
		return a.Index == 2
	}); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"status", "--http", l.Agents[0].HTTPAddr()}, &stdout, &stderr); code != 0 {
		t.Fatalf("status: exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"node     node-1 (node_id 1, priority 100)\n",
		"state    follower, term 1\n",
		"leader   node-3 (node_id 3) since ",
		"cluster  lanleader, transport unicast, algorithm bully\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	// The table: largest key first, the leader starred, this node marked.
	rows := regexp.MustCompile(`(?m)^node-(\d) +(\d) +100 +127\.0\.0\.1:\d+ +(\S+(?: \(self\))?) *(\*?)$`).FindAllStringSubmatch(out, -1)
	if len(rows) != 3 || rows[0][1] != "3" || rows[0][4] != "*" || rows[1][1] != "2" || rows[2][1] != "1" || rows[2][3] != "follower (self)" {
		t.Errorf("table rows %q:\n%s", rows, out)
	}
	stdout.Reset()
	if code := run([]string{"status", "--json", "--http", l.Agents[2].HTTPAddr()}, &stdout, &stderr); code != 0 {
		t.Fatalf("status --json: exit %d: %s", code, stderr.String())
	}
	var st agent.Status
	if err := json.Unmarshal(stdout.Bytes(), &st); err != nil || st.State != "leader" || st.LeaderID != 3 || len(st.Members) != 2 {
		t.Errorf("status --json: %v %+v", err, st)
	}
}
