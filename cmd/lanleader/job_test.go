package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent"
	"github.com/lanleader/lanleader/internal/syncbuf"
	"github.com/lanleader/lanleader/internal/waitfor"
)

// jobScript records its start (with its pid and that of a child it
// leaves in the background) and, on SIGTERM, its stop.
const jobScript = `#!/bin/sh
f="$1"
sleep 1000 &
echo "start $$ $! $LANLEADER_TERM $LANLEADER_NODE_ID $LANLEADER_LEADER_ID" >> "$f"
trap 'echo "stop $$" >> "$f"; exit 0' TERM
echo "worker up"
while :; do sleep 0.05; done
`

// alive says whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// TestRunJobNoOrphan: a real `lanleader run -- JOB` leads alone and runs
// the job with its variables, the job's output in the agent's log. On
// SIGTERM and SIGINT the agent stops the job (the job's SIGTERM trap
// runs) before it resigns and leaves, and exits 0; on SIGKILL the job's
// guard stops it. Either way nothing of the job is left: neither the job
// nor the child it left in the background.
func TestRunJobNoOrphan(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			script := filepath.Join(dir, "job.sh")
			os.WriteFile(script, []byte(jobScript), 0o755)
			stamps := filepath.Join(dir, "stamps")
			cmd, _ := lanleader(t, "run", "--name", "solo", "--node-id", "9", "--bind", "127.0.0.1:0",
				"--transport", "unicast", "--http", "127.0.0.1:0", "--job-grace", "3s", "--", script, stamps)
			// Read while the process writes: a buffer behind a lock.
			out := &syncbuf.Buffer{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			var jobPid, childPid int
			defer func() {
				if cmd.ProcessState == nil {
					cmd.Process.Kill() // by pid
					<-exited
				}
				for _, p := range []int{jobPid, childPid} {
					if p > 0 && alive(p) {
						syscall.Kill(p, syscall.SIGKILL)
					}
				}
				if t.Failed() {
					t.Logf("its output:\n%s", out)
				}
			}()
			var f []string
			waitfor.Until(t, "the job started", 10*time.Second, 10*time.Millisecond, func() (bool, string) {
				b, _ := os.ReadFile(stamps)
				f = strings.Fields(string(b))
				return len(f) >= 6 && f[0] == "start", fmt.Sprintf("stamps %q", b)
			})
			jobPid, _ = strconv.Atoi(f[1])
			childPid, _ = strconv.Atoi(f[2])
			if f[3] != "1" || f[4] != "9" || f[5] != "9" {
				t.Errorf("the job's LANLEADER_TERM, _NODE_ID, _LEADER_ID: %q, want 1 9 9", f[3:6])
			}
			waitfor.Until(t, "the job's output in the agent's log, marked as the job's", 5*time.Second, 10*time.Millisecond, func() (bool, string) {
				return strings.Contains(out.String(), `msg=job node=solo component=job pid=`) && strings.Contains(out.String(), `stream=stdout line="worker up"`), ""
			})
			cmd.Process.Signal(sig)
			select {
			case err := <-exited:
				if sig != syscall.SIGKILL && err != nil {
					t.Fatalf("exit: %v, want status 0", err)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("no exit within 15s of the signal")
			}
			// Nothing of the job is left (for SIGKILL, its guard stops it).
			waitfor.Until(t, "the job and its child gone", 5*time.Second, 10*time.Millisecond, func() (bool, string) {
				return !alive(jobPid) && !alive(childPid), fmt.Sprintf("orphans after %v: job %d alive %v, its child %d alive %v", sig, jobPid, alive(jobPid), childPid, alive(childPid))
			})
			b, _ := os.ReadFile(stamps)
			if !strings.Contains(string(b), fmt.Sprintf("stop %d\n", jobPid)) {
				t.Errorf("the job's SIGTERM trap did not run: %q", b)
			}
			if sig == syscall.SIGKILL {
				return
			}
			log := out.String()
			stopped, leaving := strings.Index(log, `msg="job stopped"`), strings.Index(log, "msg=leaving")
			if stopped < 0 || leaving < 0 || stopped > leaving {
				t.Errorf("the job did not stop before the agent left (job stopped at %d, leaving at %d)", stopped, leaving)
			}
		})
	}
}

// TestRunJobNotFound: a job whose program does not exist is refused at
// start, with exit status 2, before anything runs.
func TestRunJobNotFound(t *testing.T) {
	var stdout, stderr strings.Builder
	code := run([]string{"run", "--name", "t", "--node-id", "5", "--bind", "127.0.0.1:0", "--http", "off", "--", "/nonexistent/worker"}, &stdout, &stderr)
	if code != 2 || stderr.String() != "lanleader run: job: /nonexistent/worker: no such file or directory\n" {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	code = run([]string{"run", "--name", "t", "--node-id", "5", "--bind", "127.0.0.1:0", "--http", "off", "--", "no-such-worker-here"}, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), `job: "no-such-worker-here" not found in PATH`) {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestResignLive: `lanleader resign` makes the leader hand over and
// prints the new leader; against a follower it exits 1 and says why.
func TestResignLive(t *testing.T) {
	l, err := agent.StartLocal(agent.LocalOptions{Nodes: 2, HTTP: true, Base: func(c *agent.Config) { c.PreemptDelay = 5 * time.Second }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ag, err := l.WaitAgreement(10*time.Second, func(a agent.Agreement) bool { return a.Index == 1 })
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	if code := run([]string{"resign", "--http", l.Agents[0].HTTPAddr()}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "lanleader resign: this node does not lead (state follower)") {
		t.Errorf("resign on the follower: exit %d, stderr %q", code, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	code := run([]string{"resign", "--http", l.Agents[1].HTTPAddr(), "--timeout", "10s"}, &stdout, &stderr)
	out := stdout.String()
	// The first election's term is 1, or more when both nodes started an
	// election at once. Every leadership has a term of its own: the next
	// leader's is the one after the term resigned, as resign reports it
	// (the term of the leadership that ended, read when it ended, not the
	// next one's).
	if code != 0 || !strings.Contains(out, fmt.Sprintf("node 2 resigns (term %d)", ag.Term)) || !strings.Contains(out, "it stays out of elections for 5s") ||
		!regexp.MustCompile(fmt.Sprintf(`node-1 \(node 1\) leads now, term %d, \d+\.\dms after the request`, ag.Term+1)).MatchString(out) {
		t.Errorf("resign on the leader: exit %d, stdout %q, stderr %q", code, out, stderr.String())
	}
	// Both agree on node 1 with that term (each agent publishes its
	// status at the end of its loop's turn: wait for it).
	if now, err := l.WaitAgreement(5*time.Second, func(a agent.Agreement) bool { return a.Index == 0 }); err != nil || now.Term != ag.Term+1 {
		t.Errorf("after the resign: %+v, %v; want both on node 1 with term %d", now, err, ag.Term+1)
	}
	if code := run([]string{"resign", "extra"}, &stdout, &stderr); code != 2 {
		t.Errorf("resign extra: exit %d, want 2", code)
	}
}

// TestResignWithKey: an agent with a key refuses `lanleader resign`
// without --key-file (401, exit 1, saying so) and with a key file it
// cannot read safely (exit 2, naming the flag), and hands over with it.
func TestResignWithKey(t *testing.T) {
	keyFile, _ := writeKeys(t)
	l, err := agent.StartLocal(agent.LocalOptions{Nodes: 2, HTTP: true, Base: func(c *agent.Config) {
		c.PreemptDelay, c.Key = 5*time.Second, testKey
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.WaitAgreement(10*time.Second, func(a agent.Agreement) bool { return a.Index == 1 }); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	if code := run([]string{"resign", "--http", l.Agents[1].HTTPAddr()}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "this agent has a key: resign needs it (lanleader resign --key-file FILE)") {
		t.Errorf("resign without the key: exit %d, stderr %q", code, stderr.String())
	}
	if l.Agents[1].Status().State != "leader" {
		t.Fatalf("a refused resign moved the leader: %+v", l.Agents[1].Status())
	}
	open := filepath.Join(t.TempDir(), "open-key")
	if err := os.WriteFile(open, testKey, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o644)
	stderr.Reset()
	if code := run([]string{"resign", "--http", l.Agents[1].HTTPAddr(), "--key-file", open}, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "lanleader resign: --key-file: "+open+" is readable by every user") {
		t.Errorf("resign with a world-readable key: exit %d, stderr %q", code, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	code := run([]string{"resign", "--http", l.Agents[1].HTTPAddr(), "--key-file", keyFile, "--timeout", "10s"}, &stdout, &stderr)
	if out := stdout.String(); code != 0 || !strings.Contains(out, "node 2 resigns (term ") || !strings.Contains(out, "node-1 (node 1) leads now") {
		t.Errorf("resign with the key: exit %d, stdout %q, stderr %q", code, out, stderr.String())
	}
}

// TestSinceText: a hand-over shorter than a millisecond still reads as a
// time, not "0s".
func TestSinceText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		400 * time.Microsecond:   "0.4ms",
		0:                        "0.0ms",
		3456 * time.Microsecond:  "3.5ms",
		1234 * time.Millisecond:  "1234.0ms",
		12340 * time.Millisecond: "12.3s",
	} {
		if got := sinceText(d); got != want {
			t.Errorf("sinceText(%v) = %q, want %q", d, got, want)
		}
	}
}
