package proc

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/internal/vip"
	"github.com/lanleader/lanleader/internal/waitfor"
	"github.com/prometheus/procfs"
)

// asKeptAgentEnv makes the test binary play an agent with virtual
// addresses: it starts their keeper, prints the keeper's pid, and waits
// to be killed. The variable holds the addresses, in the guard's form.
const asKeptAgentEnv = "PROC_TEST_AS_KEPT_AGENT"

func asKeptAgent() {
	addrs, err := parseAddrs(os.Getenv(asKeptAgentEnv))
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	k, err := StartKeeper(addrs, nil)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	fmt.Println(k.Pid())
	if len(os.Args) > 1 && os.Args[len(os.Args)-1] == "stop" {
		k.Stop()
		fmt.Println("stopped")
	}
	select {}
}

func parseAddrs(s string) ([]vip.Addr, error) {
	var out []vip.Addr
	for _, f := range strings.Fields(s) {
		a, err := vip.Parse(f)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// keeperNet is a network namespace with an interface (a veth pair's end)
// holding the
// address 198.18.7.1/24 and the virtual address 198.18.7.100/24.
func keeperNet(t *testing.T) (ns string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the address keeper's test needs root: it makes a network namespace")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("the address keeper's test needs ip (iproute2)")
	}
	ns = "llkeep" + strconv.Itoa(os.Getpid())
	run := func(args ...string) {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	run("netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	run("-n", ns, "link", "add", "kd0", "type", "veth", "peer", "name", "kd1")
	run("-n", ns, "link", "set", "kd0", "up")
	run("-n", ns, "addr", "add", "198.18.7.1/24", "dev", "kd0")
	run("-n", ns, "addr", "add", "198.18.7.100/24", "dev", "kd0")
	return ns
}

// hasAddr says whether ns's kd0 holds 198.18.7.100.
func hasAddr(t *testing.T, ns string) bool {
	out, err := exec.Command("ip", "-n", ns, "-br", "addr", "show", "dev", "kd0").CombinedOutput()
	if err != nil {
		t.Fatalf("ip addr: %v: %s", err, out)
	}
	return strings.Contains(string(out), netip.MustParseAddr("198.18.7.100").String()+"/24")
}

// startKeptAgent starts the test binary as an agent with a keeper in ns
// and returns it and the keeper's pid.
func startKeptAgent(t *testing.T, ns string, args ...string) (*exec.Cmd, int) {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, os.Args[0], "-test.run=^$"}, args...)...)
	cmd.Env = append(os.Environ(), asKeptAgentEnv+"=198.18.7.100/24,dev=kd0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("the agent's first line %q (%v): want the keeper's pid", line, err)
	}
	return cmd, pid
}

// A SIGKILLed agent's addresses are removed by its keeper, which then
// ends.
func TestKeeperRemovesAtTheAgentsDeath(t *testing.T) {
	ns := keeperNet(t)
	agent, keeper := startKeptAgent(t, ns)
	if !hasAddr(t, ns) {
		t.Fatal("the virtual address is not there at the start")
	}
	if err := agent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	agent.Wait()
	waitfor.Until(t, "the keeper removes the address", 5*time.Second, 10*time.Millisecond, func() (bool, string) {
		return !hasAddr(t, ns), "198.18.7.100/24 still on kd0"
	})
	waitfor.Until(t, "the keeper ends", 5*time.Second, 10*time.Millisecond, func() (bool, string) {
		return ended(keeper), fmt.Sprintf("pid %d alive", keeper)
	})
}

// A keeper stopped by its agent ends and leaves the addresses alone (the
// agent removed them, or its next start does); a SIGTERM, which reaches
// the keeper with the rest of a unit, is not its business.
func TestKeeperStopLeavesTheAddresses(t *testing.T) {
	ns := keeperNet(t)
	agent, keeper := startKeptAgent(t, ns)
	waitfor.Until(t, "the keeper ignores SIGTERM", 5*time.Second, 5*time.Millisecond, func() (bool, string) {
		return ignores(keeper, syscall.SIGTERM), fmt.Sprintf("pid %d does not ignore SIGTERM yet", keeper)
	})
	if err := syscall.Kill(keeper, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	agent.Process.Kill()
	agent.Wait()
	waitfor.Until(t, "the keeper removes the address after the agent's death, SIGTERM or not", 5*time.Second, 10*time.Millisecond, func() (bool, string) {
		return !hasAddr(t, ns), "198.18.7.100/24 still on kd0"
	})

	exec.Command("ip", "-n", ns, "addr", "add", "198.18.7.100/24", "dev", "kd0").Run()
	_, keeper2 := startKeptAgent(t, ns, "stop")
	waitfor.Until(t, "the stopped keeper ends", 5*time.Second, 10*time.Millisecond, func() (bool, string) {
		return ended(keeper2), fmt.Sprintf("pid %d alive", keeper2)
	})
	// The keeper has exited: a removal of its, if any, is done.
	if !hasAddr(t, ns) {
		t.Fatal("a keeper that its agent stopped removed the address")
	}
}

// ignores says whether process pid ignores sig (SigIgn of its status).
func ignores(pid int, sig syscall.Signal) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(uint(sig)-1)) != 0
		}
	}
	return false
}

// ended says whether process pid has exited: gone, or a zombie that its
// new parent (init, for an orphan) has not reaped yet.
func ended(pid int) bool {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return true
	}
	st, err := p.Stat()
	return err != nil || st.State == "Z" || st.State == "X"
}
