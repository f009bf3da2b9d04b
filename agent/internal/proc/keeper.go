package proc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/lanleader/lanleader/agent/internal/vip"
)

// The address keeper: while an agent with virtual addresses runs, a
// child of it (its own executable again, with keeperEnv set) waits for
// the agent's death, which the kernel tells it (PR_SET_PDEATHSIG), and
// then removes the addresses. Without it a SIGKILLed agent that led would
// leave them on its host, answering ARP beside the next leader's, until
// its next start; the job's guard does the same, but only while a job
// runs. An agent that ends on its own removes its addresses itself and
// ends the keeper by closing its standard input.
//
// The keeper may hold the notice guard's pipe (Notifier.Hold, as every
// job guard does: notice.go): it closes it only once it has removed the
// addresses, or found it cannot, so that a crashed leader's NOTICE goes
// out only after its addresses are gone, as its RESIGN does after a
// graceful stop: the next leader adds them at once, and must not find
// them on this host too (two hosts would answer ARP for them).
//
// Contract: StartKeeper and Stop are called by the agent's own goroutines
// (one at a time); the keeper never touches the addresses while the agent
// lives.
const (
	keeperEnv     = "LANLEADER_VIP_KEEPER"      // "1": this process is an address keeper
	keeperHoldEnv = "LANLEADER_VIP_KEEPER_HOLD" // "1": it holds the notice guard's pipe, on keeperHoldFD
	keeperHoldFD  = 3
)

// Keeper is the running address keeper of an agent.
type Keeper struct {
	cmd   *exec.Cmd
	stdin *os.File // its input's write end, at the top (top.go)
	done  chan struct{}
}

// StartKeeper starts the keeper of addrs (their Dev set), holding hold,
// the notice guard's pipe (a copy from Notifier.Hold, which StartKeeper
// takes: it closes it once the keeper has its own; nil: none, as without
// a notice guard). The program must have called Guard (the keeper is entered
// there).
func StartKeeper(addrs []vip.Addr, hold *os.File) (*Keeper, error) {
	if hold != nil {
		defer hold.Close()
	}
	if !guardInstalled.Load() {
		return nil, errors.New("proc: cannot start the address keeper: this program does not enter it (it must call agent.Guard first thing in main)")
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("proc: the address keeper: %w", err)
	}
	cmd := exec.Command(self)
	cmd.Args[0] = "lanleader-vip-keeper"
	cmd.Env = Environ(keeperEnv+"=1", addrsEnv(addrs))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: guardDeathSignal}
	if hold != nil {
		cmd.ExtraFiles = []*os.File{hold} // keeperHoldFD
		cmd.Env = append(cmd.Env, keeperHoldEnv+"=1")
	}
	// Its input: the agent's end goes first when the agent dies
	// (top.go), and its end of file is the keeper's first news of it.
	in, err := openPipes(1)
	if err != nil {
		return nil, err
	}
	cmd.Stdin = in[0].r
	stdin := toTop(in[0].w)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		in[0].r.Close()
		stdin.Close()
		return nil, err
	}
	err = cmd.Start()
	in[0].r.Close()
	if err != nil {
		stdin.Close()
		return nil, fmt.Errorf("proc: the address keeper: %w", err)
	}
	k := &Keeper{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	// StartKeeper returns once the keeper has its handler of the death
	// signal: before, that signal would end it (the kernel's default)
	// without a removal.
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && line != keeperReady {
			err = fmt.Errorf("it said %q", line)
		}
		ready <- err
		io.Copy(io.Discard, stdout)
		cmd.Wait() // after the last read of its output
		close(k.done)
	}()
	t := time.NewTimer(keeperStartWait)
	defer t.Stop()
	select {
	case err = <-ready:
	case <-t.C:
		err = fmt.Errorf("not ready within %v", keeperStartWait)
	}
	if err != nil {
		k.Stop()
		return nil, fmt.Errorf("proc: the address keeper: %w", err)
	}
	return k, nil
}

// Stop ends the keeper without a removal (the agent has removed its
// addresses, or keeps them for its next start to remove) and waits for it,
// at most a second, then kills it.
func (k *Keeper) Stop() {
	io.WriteString(k.stdin, keeperStop)
	k.stdin.Close()
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-k.done:
	case <-t.C:
		k.cmd.Process.Kill()
		<-k.done
	}
}

// Pid is the keeper's process id.
func (k *Keeper) Pid() int { return k.cmd.Process.Pid }

// keeperReady is what the keeper writes to its standard output once it
// handles the death signal; keeperStartWait bounds the wait for it.
const keeperReady = "ready\n"

const keeperStartWait = 10 * time.Second

// keeperStop is what an agent that ends the keeper writes to its standard
// input before it closes it. An input that ends without it is the agent's
// death: its end of the pipe closes with it, as its death signal comes.
const keeperStop = "stop\n"

// keeperMain is the keeper: it returns when the agent stops it, or after
// removing the addresses when the agent died (the death signal, or the
// end of its input without keeperStop). The notice guard's pipe, if it
// holds it, is closed after the removal (its exit would close it too).
func keeperMain() int {
	os.Unsetenv(keeperEnv)
	hold := keeperHold()
	addrs, err := guardVIPs()
	if err != nil {
		fmt.Fprintln(os.Stderr, "lanleader address keeper:", err)
		return 2
	}
	sigs := make(chan os.Signal, 1)
	// SIGTERM and SIGINT reach the keeper with the rest of the agent's
	// unit or terminal; the agent decides, so they are ignored.
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	signal.Notify(sigs, guardDeathSignal)
	os.Stdout.WriteString(keeperReady)
	stopped := make(chan bool, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(os.Stdin, 64))
		stopped <- string(b) == keeperStop
	}()
	select {
	case <-sigs:
	case ok := <-stopped:
		if ok {
			return 0
		}
	}
	removeVIPs(addrs, "the agent died")
	// The addresses are gone, or removeVIPs said why not: the notice
	// may go.
	if hold != nil {
		hold.Close()
	}
	return 0
}

// keeperHold is the notice guard's pipe the keeper was given, nil when
// none, kept from whatever the keeper might run (close-on-exec).
func keeperHold() *os.File {
	given := os.Getenv(keeperHoldEnv) == "1"
	os.Unsetenv(keeperHoldEnv)
	if !given {
		return nil
	}
	syscall.CloseOnExec(keeperHoldFD)
	return os.NewFile(keeperHoldFD, "notice hold")
}
