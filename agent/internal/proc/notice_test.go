package proc

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/internal/waitfor"
)

// The notice guard's tests: this test binary plays an agent that starts
// it (asNotifiedAgent), and its sending writes to a file instead of a
// socket (testNoticeSend).

const (
	asNotifiedAgentEnv = "PROC_TEST_AS_NOTIFIED_AGENT" // the job's grace; the job's argv after "--", if any
	noticeOutEnv       = "PROC_TEST_NOTICE_OUT"        // where testNoticeSend writes
	noticeStampsEnv    = "PROC_TEST_NOTICE_STAMPS"     // the job's stamps: pids testNoticeSend checks
)

var testNoticeDst = netip.MustParseAddrPort("192.0.2.7:7947")

// testNoticeSend writes what it would send, and whether a process the job
// stamped ("up PID", "child PID") still ran at that moment.
func testNoticeSend(from netip.AddrPort, iface string, pkt []byte, dsts []netip.AddrPort) error {
	alive := []string{}
	b, _ := os.ReadFile(os.Getenv(noticeStampsEnv))
	for _, line := range strings.Split(string(b), "\n") {
		var what string
		var pid int
		if n, _ := fmt.Sscan(line, &what, &pid); n == 2 && (what == "up" || what == "child") && pidAlive(pid) {
			alive = append(alive, line)
		}
	}
	line := fmt.Sprintf("sent %q from %v via %s to %v at %d alive %q\n", pkt, from, iface, dsts, time.Now().UnixNano(), alive)
	return os.WriteFile(os.Getenv(noticeOutEnv), []byte(line), 0o644)
}

// pidAlive is alive for the notice guard, which has no testing.T.
func pidAlive(pid int) bool { return alive(pid) }

// asNotifiedAgent starts the notice guard, gives it a notice (or, with
// the argument "clear", takes it back; with "stop", stops the guard) and
// runs the job after "--", if any, with the grace in the variable, its
// guards holding the notice guard's pipe; then waits to be killed.
func asNotifiedAgent() {
	grace, _ := time.ParseDuration(os.Getenv(asNotifiedAgentEnv))
	var argv []string
	mode := ""
	for i, a := range os.Args {
		if a == "--" {
			argv = os.Args[i+1:]
			break
		}
		if a == "clear" || a == "stop" {
			mode = a
		}
	}
	n, err := StartNotifier(netip.MustParseAddrPort("127.0.0.1:7947"), "lo")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	n.Set([]byte("notice of term 7"), []netip.AddrPort{testNoticeDst})
	switch mode {
	case "clear":
		n.Clear()
	case "stop":
		n.Stop()
	}
	fmt.Println("notifier", n.Pid())
	if len(argv) > 0 {
		s := New(Config{Argv: argv, Grace: grace})
		s.SetHold(n.Hold())
		s.Set(Want{Run: true, Gen: 1})
		go s.Run()
	}
	select {}
}

// startNotified starts this test binary as an agent with a notice guard
// (asNotifiedAgent); out is where the notice goes, stamps the job's.
func startNotified(t *testing.T, grace time.Duration, out, stamps string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$"}, args...)...)
	cmd.Env = append(os.Environ(), asNotifiedAgentEnv+"="+grace.String(), noticeOutEnv+"="+out, noticeStampsEnv+"="+stamps)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// TestNoticeAfterTheJob: when the agent is SIGKILLed, its notice guard
// sends the notice it was given, and only once the job's whole process
// group is gone: a job that ignores SIGTERM delays it by its grace, and
// neither the job nor its child runs when it goes out.
func TestNoticeAfterTheJob(t *testing.T) {
	dir := t.TempDir()
	out, stamps := filepath.Join(dir, "out"), filepath.Join(dir, "stamps")
	const grace = 700 * time.Millisecond
	agent := startNotified(t, grace, out, stamps, "--", writeScript(t, "echo \"up $$\" >> \"$1\"\n"+stubbornJob), stamps)
	job, child := pidIn(t, stamps, "up"), pidIn(t, stamps, "child")
	t0 := time.Now()
	agent.Process.Kill()
	agent.Wait()
	var got string
	waitFor(t, "the notice sent", grace+5*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(out)
		got = string(b)
		return got != "", ""
	})
	took := time.Since(t0)
	want := fmt.Sprintf("sent %q from 127.0.0.1:7947 via lo to [%v] at ", "notice of term 7", testNoticeDst)
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, " alive []\n") {
		t.Fatalf("the notice guard wrote %q, want %q…, with no process of the job alive (job %d, child %d)", got, want, job, child)
	}
	var at int64
	fmt.Sscan(strings.Fields(strings.TrimPrefix(got, want))[0], &at)
	if sent := time.Unix(0, at).Sub(t0); sent < grace {
		t.Errorf("the notice went out %v after the agent's death, before the job's grace %v ended", sent, grace)
	}
	if took > grace+3*time.Second {
		t.Errorf("the notice took %v, want the grace %v and a little", took, grace)
	}
}

// TestNoticeWithoutJob: an agent without a job has its notice sent as
// soon as it is dead.
func TestNoticeWithoutJob(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	agent := startNotified(t, 0, out, filepath.Join(dir, "none"))
	waitFor(t, "the notice guard started", 5*time.Second, func() (bool, string) { return strings.Contains(procCmdlines(), "lanleader-notice-guard"), "" })
	agent.Process.Kill()
	agent.Wait()
	waitFor(t, "the notice sent", 5*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(out)
		return strings.HasPrefix(string(b), `sent "notice of term 7"`), string(b)
	})
}

// TestNoNotice: the guard of a live agent sends nothing; nor, once the
// agent is dead, one whose notice was taken back (the agent no longer
// led) or that was stopped (a graceful stop: the agent resigned itself).
func TestNoNotice(t *testing.T) {
	for _, mode := range []string{"", "clear", "stop"} {
		t.Run("mode "+mode, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			args := []string{}
			if mode != "" {
				args = append(args, mode)
			}
			agent := startNotified(t, 0, out, filepath.Join(dir, "none"), args...)
			noFile := func() (bool, string) {
				b, err := os.ReadFile(out)
				return os.IsNotExist(err), string(b)
			}
			waitfor.Holds(t, "no notice while the agent lives", 300*time.Millisecond, 10*time.Millisecond, noFile)
			agent.Process.Kill()
			agent.Wait()
			if mode == "" {
				waitFor(t, "the notice once the agent is dead", 5*time.Second, func() (bool, string) { ok, _ := noFile(); return !ok, "" })
				return
			}
			waitfor.Holds(t, "no notice after the agent's death", 500*time.Millisecond, 10*time.Millisecond, noFile)
		})
	}
}

// procCmdlines is every process's command line, for a test's look.
func procCmdlines() string {
	var b strings.Builder
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		c, _ := os.ReadFile(p)
		b.Write(c)
		b.WriteByte('\n')
	}
	return b.String()
}
