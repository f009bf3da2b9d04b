package proc

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/internal/vip"
	"github.com/lanleader/lanleader/internal/waitfor"
)

// The notice guard's tests: this test binary plays an agent that starts
// it (asNotifiedAgent), and its sending writes to a file instead of a
// socket (testNoticeSend).

const (
	asNotifiedAgentEnv = "PROC_TEST_AS_NOTIFIED_AGENT" // the job's grace; the job's argv after "--", if any
	noticeOutEnv       = "PROC_TEST_NOTICE_OUT"        // where testNoticeSend writes
	noticeStampsEnv    = "PROC_TEST_NOTICE_STAMPS"     // the job's stamps: pids testNoticeSend checks
	removalsEnv        = "PROC_TEST_REMOVALS"          // where testRemove stamps its removals
	removeGateEnv      = "PROC_TEST_REMOVE_GATE"       // a FIFO testRemove reads to its end before it removes
	removeFailEnv      = "PROC_TEST_REMOVE_FAIL"       // "1": testRemove fails
)

// testKeptAddr is the address the keeper of asNotifiedAgent's "keep"
// keeps; testRemove removes it from no host.
const testKeptAddr = "198.18.0.100/24,dev=kd0"

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
	removals, _ := os.ReadFile(os.Getenv(removalsEnv))
	line := fmt.Sprintf("sent %q from %v via %s to %v at %d removals %q alive %q\n", pkt, from, iface, dsts, time.Now().UnixNano(), removals, alive)
	return os.WriteFile(os.Getenv(noticeOutEnv), []byte(line), 0o644)
}

// testRemove is the removal of the virtual addresses (vipRemove) in the
// processes of a test that sets removalsEnv: it reads the gate to its end
// (a removal under way until the test closes it), then stamps the
// removal, "removed ADDRS at UNIXNANO", and fails when removeFailEnv says
// so.
func testRemove(addrs []vip.Addr) ([]vip.Addr, error) {
	if g, err := os.Open(os.Getenv(removeGateEnv)); err == nil {
		io.Copy(io.Discard, g)
		g.Close()
	}
	f, err := os.OpenFile(os.Getenv(removalsEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(f, "removed %v at %d\n", addrs, time.Now().UnixNano())
	f.Close()
	if os.Getenv(removeFailEnv) == "1" {
		return nil, errors.New("no such address (a test's failure)")
	}
	return addrs, nil
}

// pidAlive is alive for the notice guard, which has no testing.T.
func pidAlive(pid int) bool { return alive(pid) }

// asNotifiedAgent starts the notice guard, gives it a notice (or, with
// the argument "clear", takes it back; with "stop", stops the guard) and
// runs the job after "--", if any, with the grace in the variable, its
// guards holding the notice guard's pipe; then waits to be killed. With
// the argument "keep" it starts the keeper of testKeptAddr, holding the
// pipe too, and stamps "keeper PID" once it runs.
func asNotifiedAgent() {
	grace, _ := time.ParseDuration(os.Getenv(asNotifiedAgentEnv))
	var argv []string
	mode, keep := "", false
	for i, a := range os.Args {
		if a == "--" {
			argv = os.Args[i+1:]
			break
		}
		if a == "clear" || a == "stop" {
			mode = a
		}
		keep = keep || a == "keep"
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
	n.Sync()
	stamp := func(line string) {
		f, _ := os.OpenFile(os.Getenv(noticeStampsEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		fmt.Fprintln(f, line)
		f.Close()
	}
	stamp(fmt.Sprintf("notifier %d", n.Pid()))
	if keep {
		addr, _ := vip.Parse(testKeptAddr)
		k, err := StartKeeper([]vip.Addr{addr}, n.Hold())
		if err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(2)
		}
		stamp(fmt.Sprintf("keeper %d", k.Pid()))
	}
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
	return startNotifiedWith(t, os.Stderr, nil, grace, out, stamps, args...)
}

// startNotifiedWith is startNotified with the agent's (and its
// children's) standard error to stderr and the variables env added. A
// file, not a pipe: the agent's Wait must not wait for its children,
// which hold it.
func startNotifiedWith(t *testing.T, stderr *os.File, env []string, grace time.Duration, out, stamps string, args ...string) *exec.Cmd {
	t.Helper()
	env = append([]string{asNotifiedAgentEnv + "=" + grace.String(), noticeOutEnv + "=" + out, noticeStampsEnv + "=" + stamps}, env...)
	return startSelf(t, stderr, env, args...)
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
	stamps := filepath.Join(dir, "stamps")
	agent := startNotified(t, 0, out, stamps)
	pidIn(t, stamps, "notifier") // the notice is in the guard's pipe
	agent.Process.Kill()
	agent.Wait()
	waitFor(t, "the notice sent", 5*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(out)
		return strings.HasPrefix(string(b), `sent "notice of term 7"`), string(b)
	})
}

// TestNoticeAfterTheKeeper: the address keeper holds the notice guard's
// pipe until it has removed the virtual addresses. When the agent is
// SIGKILLed, nothing goes out while the removal is under way; the notice
// goes once it has ended, whether it removed them or found it could not
// (and said so): the next leader, which adds them at the notice, never
// finds them on this host too.
func TestNoticeAfterTheKeeper(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("removal fails %v", fail), func(t *testing.T) {
			dir := t.TempDir()
			out, stamps, removals := filepath.Join(dir, "out"), filepath.Join(dir, "stamps"), filepath.Join(dir, "removals")
			gatePath := filepath.Join(dir, "gate")
			if err := syscall.Mkfifo(gatePath, 0o600); err != nil {
				t.Fatal(err)
			}
			// The test holds the gate's only writer: a removal reads it
			// until the test closes it. Closed after the agent's end
			// (cleanups run last first), so that a test that fails leaves
			// no keeper waiting.
			gate, err := os.OpenFile(gatePath, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { gate.Close() })
			env := []string{removalsEnv + "=" + removals, removeGateEnv + "=" + gatePath}
			if fail {
				env = append(env, removeFailEnv+"=1")
			}
			logPath := filepath.Join(dir, "log")
			logFile, err := os.Create(logPath)
			if err != nil {
				t.Fatal(err)
			}
			defer logFile.Close()
			agent := startNotifiedWith(t, logFile, env, 0, out, stamps, "keep")
			keeper := pidIn(t, stamps, "keeper")
			agent.Process.Kill()
			agent.Wait()
			waitFor(t, "the keeper's removal under way", 5*time.Second, func() (bool, string) {
				return hasOpen(keeper, gatePath), fmt.Sprintf("the keeper (pid %d) has not opened the gate", keeper)
			})
			noNotice := func() (bool, string) {
				b, err := os.ReadFile(out)
				return os.IsNotExist(err), string(b)
			}
			waitfor.Holds(t, "no notice while the keeper removes the addresses", 300*time.Millisecond, 10*time.Millisecond, noNotice)
			gate.Close()
			var got string
			waitFor(t, "the notice sent", 5*time.Second, func() (bool, string) {
				b, _ := os.ReadFile(out)
				got = string(b)
				return got != "", ""
			})
			want := fmt.Sprintf("sent %q from 127.0.0.1:7947 via lo to [%v] at ", "notice of term 7", testNoticeDst)
			rest, ok := strings.CutPrefix(got, want)
			var sent, removed int64
			var removal string
			if ok {
				_, err = fmt.Sscanf(rest, "%d removals %q", &sent, &removal)
			}
			if !ok || err != nil {
				t.Fatalf("the notice guard wrote %q, want %q… (%v)", got, want, err)
			}
			wantRemoval := "removed [" + testKeptAddr + "] at "
			if r, ok := strings.CutPrefix(removal, wantRemoval); !ok || strings.Count(removal, "\n") != 1 {
				t.Fatalf("when the notice went out the removals were %q, want one %q…", removal, wantRemoval)
			} else if fmt.Sscan(r, &removed); removed == 0 || removed > sent {
				t.Fatalf("the removal ended at %d, the notice went out at %d: want the removal first", removed, sent)
			}
			wantLog := "lanleader: the agent died: removed the virtual address " + testKeptAddr + "\n"
			if fail {
				wantLog = "lanleader: the agent died: cannot remove the virtual addresses: no such address (a test's failure)\n"
			}
			waitFor(t, "the keeper's word on the removal", 5*time.Second, func() (bool, string) {
				b, _ := os.ReadFile(logPath)
				return strings.Contains(string(b), wantLog), string(b)
			})
		})
	}
}

// hasOpen says whether process pid has the file path open.
func hasOpen(pid int, path string) bool {
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && l == path {
			return true
		}
	}
	return false
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
			stamps := filepath.Join(dir, "stamps")
			agent := startNotified(t, 0, out, stamps, args...)
			pidIn(t, stamps, "notifier") // what the agent said is in the guard's pipe
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
