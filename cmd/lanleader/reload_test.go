package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent"
	"github.com/lanleader/lanleader/internal/syncbuf"
	"github.com/lanleader/lanleader/internal/waitfor"
)

// startRun starts `lanleader run args...` with its output in a buffer
// safe to read while it runs; the process is killed at the end of the
// test if it still runs, and its output shown if the test failed.
func startRun(t testing.TB, args ...string) (*exec.Cmd, *syncbuf.Buffer, <-chan int) {
	t.Helper()
	cmd, _ := lanleader(t, append([]string{"run"}, args...)...)
	out := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan int, 1)
	go func() {
		cmd.Wait()
		exited <- cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill() // by pid
			<-exited
		}
		if t.Failed() {
			t.Logf("its output:\n%s", out)
		}
	})
	return cmd, out, exited
}

// exitOf waits for the process's exit status, at most 20s.
func exitOf(t testing.TB, exited <-chan int) int {
	t.Helper()
	select {
	case code := <-exited:
		return code
	case <-time.After(20 * time.Second):
		t.Fatal("no exit within 20s")
		return -1
	}
}

// liveStatus is the agent's /status, the zero Status while it does not
// answer.
func liveStatus(addr string) agent.Status {
	var st agent.Status
	resp, err := http.Get("http://" + addr + "/status")
	if err == nil {
		json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
	}
	return st
}

// TestRunReloadSIGHUP: SIGHUP to a real `lanleader run` re-reads its
// file and flags: the new priority, log level and hook show in /status
// and a setting that needs a restart is named in the log and not applied;
// a broken file keeps the running config.
func TestRunReloadSIGHUP(t *testing.T) {
	httpPort, release := freeTCP(t)
	release()
	addr := fmt.Sprintf("127.0.0.1:%d", httpPort)
	file := filepath.Join(t.TempDir(), "lanleader.yaml")
	write := func(text string) {
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("priority: 100\nbind: 127.0.0.1:0\ntransport: unicast\n")
	cmd, out, exited := startRun(t, "--config", file, "--name", "solo", "--node-id", "9", "--http", addr)
	waitfor.Until(t, "leads", 10*time.Second, 10*time.Millisecond, func() (bool, string) {
		st := liveStatus(addr)
		return st.State == "leader", st.State
	})

	write("priority: 150\nbind: 127.0.0.2:0\ntransport: unicast\nlog_level: debug\non_change: 'true'\nlog_format: json\n")
	cmd.Process.Signal(syscall.SIGHUP)
	waitfor.Until(t, "the reload shows in /status", 10*time.Second, 10*time.Millisecond, func() (bool, string) {
		st := liveStatus(addr)
		r := st.LastReload
		return r != nil && r.Result == "ok", fmt.Sprintf("%+v", r)
	})
	st := liveStatus(addr)
	if st.BasePriority != 150 || st.LogLevel != "debug" || st.State != "leader" || st.GossipAddr[:10] != "127.0.0.1:" ||
		strings.Join(st.LastReload.Applied, ",") != "on-change,log-level,priority" || strings.Join(st.LastReload.NeedRestart, ",") != "bind,log-format" {
		t.Errorf("after SIGHUP: priority %d, log level %q, state %s, gossip %s, reload %+v",
			st.BasePriority, st.LogLevel, st.State, st.GossipAddr, st.LastReload)
	}
	if log := out.String(); !strings.Contains(log, "msg=reloading signal=hangup") || !strings.Contains(log, `settings="[bind log-format]"`) ||
		strings.Contains(log, `{"time":`) {
		t.Errorf("the log lacks the reload or the settings that need a restart, or changed its format")
	}

	write("priority: 150\nprioirty: 5\n")
	cmd.Process.Signal(syscall.SIGHUP)
	waitfor.Until(t, "the failed reload shows in /status", 10*time.Second, 10*time.Millisecond, func() (bool, string) {
		r := liveStatus(addr).LastReload
		return r != nil && r.Result == "error", fmt.Sprintf("%+v", r)
	})
	if st := liveStatus(addr); st.BasePriority != 150 || !strings.Contains(st.LastReload.Error, `unknown key "prioirty"`) {
		t.Errorf("after a broken file: priority %d, reload %+v", st.BasePriority, st.LastReload)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitOf(t, exited); code != exitStopped {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
}

// TestRunNotReady: a bind address that never comes to the host ends the
// start with exit 3 after --start-timeout, one log line per attempt; 0
// gives up at once; a SIGTERM during the retries is a clean stop.
func TestRunNotReady(t *testing.T) {
	// 198.18.0.99 is not on this host: the start fails before any socket
	// opens, so nothing is ever sent to it.
	base := []string{"--name", "t", "--node-id", "5", "--bind", "198.18.0.99:0", "--transport", "unicast", "--http", "off"}
	_, out, exited := startRun(t, append(base, "--start-timeout", "1500ms")...)
	if code := exitOf(t, exited); code != exitNotReady {
		t.Errorf("exit %d, want 3", code)
	}
	if n := strings.Count(out.String(), "trying again"); n < 1 || !strings.Contains(out.String(), "address not on this host") {
		t.Errorf("%d attempts logged, want one a second, naming the address", n)
	}

	_, out, exited = startRun(t, append(base, "--start-timeout", "0")...)
	if code := exitOf(t, exited); code != exitNotReady || strings.Contains(out.String(), "trying again") {
		t.Errorf("--start-timeout 0: exit %d, want 3 at once", code)
	}

	cmd, out, exited := startRun(t, append(base, "--start-timeout", "1m")...)
	waitfor.Until(t, "retrying", 10*time.Second, 10*time.Millisecond, func() (bool, string) {
		return strings.Contains(out.String(), "trying again"), ""
	})
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitOf(t, exited); code != exitStopped || !strings.Contains(out.String(), "stopped before the start") {
		t.Errorf("SIGTERM while retrying: exit %d, want 0", code)
	}
}

// TestRunSIGABRT: SIGABRT (systemd's watchdog) dumps every goroutine's
// stack and exits 134, which systemd restarts.
func TestRunSIGABRT(t *testing.T) {
	httpPort, release := freeTCP(t)
	release()
	addr := fmt.Sprintf("127.0.0.1:%d", httpPort)
	cmd, out, exited := startRun(t, "--name", "solo", "--node-id", "9", "--bind", "127.0.0.1:0", "--transport", "unicast", "--http", addr)
	waitfor.Until(t, "leads", 10*time.Second, 10*time.Millisecond, func() (bool, string) {
		st := liveStatus(addr)
		return st.State == "leader", st.State
	})
	cmd.Process.Signal(syscall.SIGABRT)
	if code := exitOf(t, exited); code != exitAborted {
		t.Errorf("exit %d after SIGABRT, want 134", code)
	}
	log := out.String()
	for _, want := range []string{"SIGABRT: the stacks of every goroutine follow", "goroutine 1 [", "lanleader.runRun("} {
		if !strings.Contains(log, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
}

// BenchmarkReloadSIGHUP: the time from SIGHUP to a real `lanleader run`
// to its new priority in /status (polled every millisecond), reported as
// percentiles over b.N reloads: go test -run '^$' -bench ReloadSIGHUP
// -benchtime 50x ./cmd/lanleader
func BenchmarkReloadSIGHUP(b *testing.B) {
	httpPort, release := freeTCP(b)
	release()
	addr := fmt.Sprintf("127.0.0.1:%d", httpPort)
	file := filepath.Join(b.TempDir(), "lanleader.yaml")
	write := func(p int) {
		if err := os.WriteFile(file, []byte(fmt.Sprintf("priority: %d\nbind: 127.0.0.1:0\ntransport: unicast\n", p)), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	write(100)
	cmd, _, exited := startRun(b, "--config", file, "--name", "solo", "--node-id", "9", "--http", addr)
	waitfor.Until(b, "leads", 10*time.Second, 10*time.Millisecond, func() (bool, string) {
		st := liveStatus(addr)
		return st.State == "leader", st.State
	})
	var took []time.Duration
	b.ResetTimer()
	for i := range b.N {
		p := 101 + i%2
		write(p)
		t0 := time.Now()
		cmd.Process.Signal(syscall.SIGHUP)
		waitfor.Until(b, "the new priority", 10*time.Second, time.Millisecond, func() (bool, string) {
			return int(liveStatus(addr).BasePriority) == p, ""
		})
		took = append(took, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(took)
	pct := func(q float64) float64 { return float64(took[int(q*float64(len(took)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.9), "p90-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(pct(1), "max-ms")
	cmd.Process.Signal(syscall.SIGTERM)
	exitOf(b, exited)
}
