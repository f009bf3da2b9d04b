//go:build linux

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Prefix starts the name of every namespace, bridge and veth the test bed
// creates; only objects with it are ever deleted.
const Prefix = "llt-"

const (
	subnet      = "198.18.0." // host i is subnet + (i+1), a /24
	maxHosts    = 128         // see hostLabel: the names stay within 15 bytes
	maxVIPHosts = 98          // hosts and client below VIP (198.18.0.100)
	cmdTimeout  = 10 * time.Second
	killTimeout = 5 * time.Second
	maxLogDump  = 32 << 10 // bytes of a process log shown when a test fails
)

// Net is a LAN of hosts: one network namespace per host, each with lo and
// an eth0 whose other end is a port of one bridge.
type Net struct {
	t      TB
	suffix string
	letter int // index of suffix's letter, freed when the test bed is gone
	bridge string
	dir    string   // logs
	hosts  []string // namespaces: the agents' hosts, then the client, if any
	agents int      // hosts that may run agents: hosts[:agents]
	procs  []*Proc
	mu     sync.Mutex

	clients  map[int]*http.Client // by host: connections opened in its namespace
	faults   []bool               // by host: its fault table exists
	counting bool                 // the bridge's packet counters exist
	timens   []string             // by host: the file of its time namespace, "" for none (timens.go)
	// pulled: by host, its cable was pulled (PullCable): its own sends
	// are dropped then, which checkSendFailures must not take for an
	// overloaded host.
	pulled map[int]bool

	neighRaised bool // the bed holds a raise of the neighbour table's limits (neigh.go)
}

// Proc is a process started in a host's namespace by Net.Start.
type Proc struct {
	Pid  int
	Host int    // the host's index
	Path string // the log: standard output and standard error
	Prog string // the program's name: lanleader, keepalived, …
	Args []string

	cmd  *exec.Cmd
	done chan struct{}
	err  error // cmd.Wait's, valid once done is closed
}

var (
	buildOnce sync.Once
	buildDir  string
	binPath   string
	buildErr  error
	// bedLetters: the letters (a–z) of the test beds alive in this
	// process; a letter is free again once its test bed is gone.
	bedMu      sync.Mutex
	bedLetters [26]bool
)

// takeLetter reserves a free test-bed letter, -1 when all 26 are taken.
func takeLetter() int {
	bedMu.Lock()
	defer bedMu.Unlock()
	for k, used := range bedLetters {
		if !used {
			bedLetters[k] = true
			return k
		}
	}
	return -1
}

func freeLetter(k int) {
	bedMu.Lock()
	bedLetters[k] = false
	bedMu.Unlock()
}

// NewNet creates hosts hosts, or skips the test when this process cannot
// (not root, no ip command). Everything it creates is removed when the
// test ends, the processes started in it first.
func NewNet(t TB, hosts int) *Net {
	t.Helper()
	return newNet(t, hosts, false)
}

// NewNetWithClient is NewNet with one more host on the bridge, the client:
// a user of the cluster's services that runs no agent (the VIP tests run
// vipclient there). It is host Client(), namespace llt-<hosts+1>-<suffix>
// at 198.18.0.<hosts+1>/24, set up as the others are; Hosts and All leave
// it out, and every method that takes a host index takes its index too.
// hosts is at most 98, so that the client's address stays below VIP's.
func NewNetWithClient(t TB, hosts int) *Net {
	t.Helper()
	if hosts > maxVIPHosts {
		t.Fatalf("NewNetWithClient: %d hosts, want 1 to %d", hosts, maxVIPHosts)
	}
	return newNet(t, hosts, true)
}

func newNet(t TB, hosts int, client bool) *Net {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("e2e: needs root to create network namespaces (run ./test.sh as root, as CI does)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("e2e: needs the ip command: install iproute2 (./test.sh does, as root: apt-get install iproute2)")
	}
	if hosts < 1 || hosts > maxHosts {
		t.Fatalf("NewNet: %d hosts, want 1 to %d", hosts, maxHosts)
	}
	k := takeLetter()
	if k < 0 {
		t.Fatalf("NewNet: more than 26 test beds at once in one process")
	}
	removeLeftovers(t)

	// The log directory is made first, so that it is removed last: the
	// cleanups below still read the logs.
	n := &Net{t: t, dir: t.TempDir(), suffix: strconv.Itoa(os.Getpid()) + string(rune('a'+k)), letter: k, agents: hosts}
	n.bridge = Prefix + "br" + n.suffix
	t.Cleanup(n.close)
	if hosts >= bigNeighBed {
		if err := raiseNeigh(k, hosts); err != nil {
			t.Fatalf("e2e: %v", err)
		}
		n.neighRaised = true
	}

	n.ip(t, "link", "add", "name", n.bridge, "type", "bridge", "stp_state", "0", "mcast_snooping", "0")
	disableIPv6(n.bridge)
	n.ip(t, "link", "set", n.bridge, "up")
	all := hosts
	if client {
		all++
	}
	for i := range all {
		ns := Prefix + hostLabel(i+1) + "-" + n.suffix
		n.hosts = append(n.hosts, ns)
		n.ip(t, "netns", "add", ns)
		n.ip(t, "-n", ns, "link", "set", "lo", "up")
		// The bridge's end has the namespace's name (names of links and of
		// namespaces are apart); the other end is created in the namespace.
		n.ip(t, "link", "add", "name", ns, "type", "veth", "peer", "name", "eth0", "netns", ns)
		disableIPv6(ns)
		n.ip(t, "link", "set", ns, "master", n.bridge)
		n.ip(t, "link", "set", ns, "up")
		// No IPv6 (no link-local address, router solicitation or MLD
		// report leaves the host), and IGMPv1: its reports go to the
		// group itself (v3's go to 224.0.0.22), and it has no leave
		// message (v2's goes to 224.0.0.2).
		n.sh(t, i, "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; "+
			"echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6; "+
			"echo 1 > /proc/sys/net/ipv6/conf/eth0/disable_ipv6; "+
			"echo 1 > /proc/sys/net/ipv4/conf/eth0/force_igmp_version")
		n.ip(t, "-n", ns, "addr", "add", n.Addr(i)+"/24", "dev", "eth0")
		n.ip(t, "-n", ns, "link", "set", "eth0", "up")
	}
	return n
}

// hostLabel is how host number k (1 to 128) appears in its namespace's
// name, llt-<label>-<pid><letter>: k itself below 100, and for 100 to 128
// a letter for the first two digits (a: 10, b: 11, c: 12) then the last
// one, "c8" for 128; so that the name, with a pid of up to 7 digits,
// stays within Linux's 15 bytes of a link's name.
func hostLabel(k int) string {
	if k < 100 {
		return strconv.Itoa(k)
	}
	return string(rune('a'+k/10-10)) + strconv.Itoa(k%10)
}

// StartBound bounds the start of hosts agents one after another, every
// apart: a start (ip netns exec) takes milliseconds, but seconds on a
// machine that the agents already started saturate (a LAN that collapsed
// while it started). Past it, a test or benchmark says so rather than
// go on starting.
func StartBound(hosts int, every time.Duration) time.Duration {
	return 30*time.Second + time.Duration(hosts)*(every+250*time.Millisecond)
}

// Hosts is the number of hosts that may run agents (the client is not
// one of them).
func (n *Net) Hosts() int { return n.agents }

// Client is the index of the client host of a Net made by
// NewNetWithClient, -1 for a Net without one.
func (n *Net) Client() int {
	if len(n.hosts) > n.agents {
		return n.agents
	}
	return -1
}

// All is every agent host's index, 0 to Hosts()-1.
func (n *Net) All() []int {
	h := make([]int, n.Hosts())
	for i := range h {
		h[i] = i
	}
	return h
}

// Addr is host i's address, 198.18.0.<i+1>.
func (n *Net) Addr(i int) string { return subnet + strconv.Itoa(i+1) }

// Namespace is the name of host i's network namespace.
func (n *Net) Namespace(i int) string { return n.hosts[i] }

// Binary builds the lanleader binary under test, once per test process,
// and returns its path.
func Binary() (string, error) {
	buildOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			buildErr = err
			return
		}
		dir, err := binDir()
		if err != nil {
			buildErr = err
			return
		}
		bin := filepath.Join(dir, "lanleader")
		if buildErr = goBuild(root, "./cmd/lanleader", bin); buildErr == nil {
			binPath = bin
		}
	})
	return binPath, buildErr
}

var (
	dirOnce sync.Once
	dirErr  error
)

// binDir is the directory of this process's builds (lanleader and the
// helpers), made once. The pid in its name lets removeLeftovers find it,
// should this process be killed before Main removes it.
func binDir() (string, error) {
	dirOnce.Do(func() {
		buildDir, dirErr = os.MkdirTemp("", fmt.Sprintf("%sbin-%d-", Prefix, os.Getpid()))
	})
	return buildDir, dirErr
}

// goBuild builds package pkg of the module at root into bin.
func goBuild(root, pkg, bin string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s in %s: %v\n%s", pkg, root, err, out)
	}
	return nil
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("go env GOMOD: not inside the lanleader module")
	}
	return filepath.Dir(mod), nil
}

// Start starts the lanleader binary with args in host i's namespace
// (ip netns exec, which execs it: Pid is lanleader's). Its output goes to
// Proc.Path. It is killed (SIGKILL, by pid) at the end of the test if it
// is still running.
func (n *Net) Start(t TB, i int, args ...string) *Proc {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatalf("e2e: %v", err)
	}
	return n.StartProgram(t, i, bin, args...)
}

// StartProgram is Start for another program (a path, or a name looked up
// in PATH), e.g. keepalived.
func (n *Net) StartProgram(t TB, i int, bin string, args ...string) *Proc {
	t.Helper()
	n.mu.Lock()
	path := filepath.Join(n.dir, fmt.Sprintf("host-%d.%d.log", i+1, len(n.procs)))
	n.mu.Unlock()
	f, err := os.Create(path)
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer f.Close()
	name, argv := n.argv(i, bin, args...)
	cmd := exec.Command(name, argv...)
	cmd.Stdout, cmd.Stderr = f, f
	// Should the test process die, so does the agent (the next run
	// removes what else is left).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %v in %s: %v", args, n.hosts[i], err)
	}
	p := &Proc{Pid: cmd.Process.Pid, Host: i, Path: path, Prog: filepath.Base(bin), Args: args, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	n.mu.Lock()
	n.procs = append(n.procs, p)
	n.mu.Unlock()
	t.Cleanup(func() {
		select {
		case <-p.done:
			return
		default:
		}
		p.Signal(syscall.SIGKILL)
		if _, err := p.Wait(killTimeout); err != nil && !p.Exited() {
			t.Errorf("pid %d (%s): not gone %v after SIGKILL", p.Pid, n.hosts[i], killTimeout)
		}
	})
	return p
}

// Signal sends sig to the process, by pid; nothing once it has exited.
func (p *Proc) Signal(sig syscall.Signal) error {
	if p.Exited() {
		return nil
	}
	return p.cmd.Process.Signal(sig)
}

// Exited says whether the process has exited (and been waited for).
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits up to timeout for the process to exit and returns its exit
// status; an error when it did not exit in time or was killed by a signal.
func (p *Proc) Wait(timeout time.Duration) (int, error) {
	if !p.Exited() {
		t := time.NewTimer(max(timeout, 0))
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
			return -1, fmt.Errorf("pid %d still running after %v", p.Pid, timeout)
		}
	}
	st := p.cmd.ProcessState
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, fmt.Errorf("pid %d killed by %v", p.Pid, ws.Signal())
	}
	return st.ExitCode(), nil
}

// Log is what the process has written so far.
func (p *Proc) Log() string {
	b, err := os.ReadFile(p.Path)
	if err != nil {
		return fmt.Sprintf("(log %s: %v)", p.Path, err)
	}
	return string(b)
}

// Exec runs args in host i's namespace, bounded in time, and returns its
// standard output; the error includes its standard error. An args[0] of
// "lanleader" is the binary under test.
func (n *Net) Exec(i int, args ...string) (string, error) {
	if len(args) == 0 {
		return "", errors.New("Exec: no command")
	}
	if args[0] == "lanleader" {
		bin, err := Binary()
		if err != nil {
			return "", err
		}
		args = append([]string{bin}, args[1:]...)
	}
	name, argv := n.argv(i, args[0], args[1:]...)
	return n.runCmd(nil, name, argv...)
}

// run runs ip with args (and env added to this process's), bounded in
// time.
func (n *Net) run(env []string, args ...string) (string, error) {
	return n.runCmd(env, "ip", args...)
}

// runCmd is run for another command than ip.
func (n *Net) runCmd(env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = time.Second
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %v", cmdTimeout)
	}
	if err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// ip runs the ip command and fails the test if it fails.
func (n *Net) ip(t TB, args ...string) {
	t.Helper()
	if _, err := n.run(nil, args...); err != nil {
		t.Fatalf("e2e: creating the test bed: %v", err)
	}
}

// sh runs a shell script in host i's namespace and fails the test if it
// fails.
func (n *Net) sh(t TB, i int, script string) {
	t.Helper()
	if _, err := n.run(nil, "netns", "exec", n.hosts[i], "sh", "-ec", script); err != nil {
		t.Fatalf("e2e: setting up %s: %v", n.hosts[i], err)
	}
}

// close kills what runs in the namespaces, deletes them, the veths and the
// bridge, and shows the logs of the processes when the test failed.
func (n *Net) close() {
	t := n.t
	n.closeClients()
	if t.Failed() {
		n.mu.Lock()
		procs := append([]*Proc(nil), n.procs...)
		n.mu.Unlock()
		for _, p := range procs {
			l := p.Log()
			if len(l) > maxLogDump {
				l = "…" + l[len(l)-maxLogDump:]
			}
			t.Logf("log of host %d, pid %d, %s %s:\n%s", p.Host+1, p.Pid, p.Prog, strings.Join(p.Args, " "), l)
		}
	}
	n.checkSendFailures()
	for i := len(n.hosts) - 1; i >= 0; i-- {
		if err := deleteNamespace(n.hosts[i]); err != nil {
			t.Errorf("e2e cleanup: %v", err)
		}
		if err := deleteLink(n.hosts[i]); err != nil {
			t.Errorf("e2e cleanup: %v", err)
		}
	}
	if err := deleteLink(n.bridge); err != nil {
		t.Errorf("e2e cleanup: %v", err)
	}
	if err := n.closeTimeNamespaces(); err != nil {
		t.Errorf("e2e cleanup: %v", err)
	}
	if n.counting {
		if err := deleteCountTable(n.countTable()); err != nil {
			t.Errorf("e2e cleanup: %v", err)
		}
	}
	if n.neighRaised {
		if err := releaseNeigh(n.letter); err != nil {
			t.Errorf("e2e cleanup: %v", err)
		}
	}
	// The names are free again, unless something of them may remain.
	if !t.Failed() {
		freeLetter(n.letter)
	}
}

// deleteNamespace kills the processes in namespace ns (SIGKILL, by pid),
// waits for them to be gone, and deletes it. A namespace that does not
// exist is no error.
func deleteNamespace(ns string) error {
	if !slices.Contains(listNamespaces(), ns) {
		return nil
	}
	deadline := time.Now().Add(killTimeout)
	for try := 0; ; try++ {
		out, _ := exec.Command("ip", "netns", "pids", ns).Output()
		pids := strings.Fields(string(out))
		if len(pids) == 0 {
			break
		}
		if try == 0 || try%20 == 0 {
			for _, s := range pids {
				if pid, err := strconv.Atoi(s); err == nil && pid > 1 && pid != os.Getpid() {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		if time.Now().After(deadline) || try >= 200 {
			return fmt.Errorf("namespace %s: processes %v still there %v after SIGKILL", ns, pids, killTimeout)
		}
		time.Sleep(25 * time.Millisecond)
	}
	if out, err := exec.Command("ip", "netns", "delete", ns).CombinedOutput(); err != nil {
		if !slices.Contains(listNamespaces(), ns) {
			return nil // deleted meanwhile, by the run that made it
		}
		return fmt.Errorf("ip netns delete %s: %v: %s", ns, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// deleteLink deletes link name if it exists (deleting a namespace deletes
// its veth pairs, so the bridge's end is usually gone already).
func deleteLink(name string) error {
	if exec.Command("ip", "link", "show", "dev", name).Run() != nil {
		return nil
	}
	if out, err := exec.Command("ip", "link", "delete", "dev", name).CombinedOutput(); err != nil {
		if exec.Command("ip", "link", "show", "dev", name).Run() != nil {
			return nil // gone meanwhile, with its namespace
		}
		return fmt.Errorf("ip link delete %s: %v: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// disableIPv6 turns IPv6 off on link dev of this process's namespace
// (before it is up: no link-local address, no DAD or MLD packet). A kernel
// without IPv6 has nothing to turn off.
func disableIPv6(dev string) {
	os.WriteFile("/proc/sys/net/ipv6/conf/"+dev+"/disable_ipv6", []byte("1\n"), 0)
}

func listNamespaces() []string {
	out, _ := exec.Command("ip", "netns", "list").Output()
	var names []string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			names = append(names, f[0]) // "name (id: 3)"
		}
	}
	return names
}

// leftoverName matches the names the test bed gives; the group is the pid
// of the process that created the object.
var leftoverName = regexp.MustCompile(`^` + regexp.QuoteMeta(Prefix) + `(?:br|[0-9]+-|[a-c][0-9]-)([0-9]+)[a-z]$`)

// removeLeftovers deletes the namespaces, veths and bridges that a test
// process which no longer runs (killed, say) left behind.
func removeLeftovers(t TB) {
	t.Helper()
	for _, ns := range listNamespaces() {
		if stale(ns) {
			t.Logf("e2e: removing namespace %s, left by an earlier run", ns)
			if err := deleteNamespace(ns); err != nil {
				t.Errorf("e2e: %v", err)
			}
		}
	}
	// The lanleader builds of killed runs: <tmp>/llt-bin-<pid>-<random>.
	builds, _ := filepath.Glob(filepath.Join(os.TempDir(), Prefix+"bin-*-*"))
	for _, dir := range builds {
		f := strings.Split(filepath.Base(dir), "-")
		if len(f) != 4 {
			continue
		}
		if pid, err := strconv.Atoi(f[2]); err == nil && gone(pid) {
			t.Logf("e2e: removing %s, left by an earlier run", dir)
			os.RemoveAll(dir)
		}
	}
	for _, f := range staleTimeNamespaces() {
		t.Logf("e2e: removing time namespace %s, left by an earlier run", f)
		if err := removeTimeNS(f); err != nil {
			t.Errorf("e2e: %v", err)
		}
	}
	for _, tbl := range staleCountTables() {
		t.Logf("e2e: removing nftables table bridge %s, left by an earlier run", tbl)
		if err := deleteCountTable(tbl); err != nil {
			t.Errorf("e2e: %v", err)
		}
	}
	out, _ := exec.Command("ip", "-o", "link", "show").Output()
	for _, l := range strings.Split(string(out), "\n") {
		// "12: llt-1-4242a@if2: <BROADCAST,…"
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		if stale(name) {
			t.Logf("e2e: removing link %s, left by an earlier run", name)
			if err := deleteLink(name); err != nil {
				t.Errorf("e2e: %v", err)
			}
		}
	}
}

// stale says whether name is the test bed's and its creator is gone.
func stale(name string) bool {
	m := leftoverName.FindStringSubmatch(name)
	if m == nil {
		return false
	}
	pid, err := strconv.Atoi(m[1])
	return err == nil && gone(pid)
}

// gone says whether process pid, a process that used the test bed, no
// longer runs: no process has that pid, or one that is neither a Go test
// binary nor the LAN benchmark (the pid was reused).
func gone(pid int) bool {
	if pid == os.Getpid() {
		return false
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	exe = strings.TrimSuffix(exe, " (deleted)")
	return !strings.HasSuffix(exe, ".test") && filepath.Base(exe) != "lanfailover"
}

// Main is what a TestMain of a package that uses the test bed calls:
// os.Exit(e2e.Main(m)). After the tests it removes the binary Binary
// built.
func Main(m *testing.M) int {
	code := m.Run()
	RemoveBinary()
	return code
}

// RemoveBinary removes the binary Binary built, if any. A command that
// uses the test bed calls it before it exits.
func RemoveBinary() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}
