package proc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// The notice guard: a child of the agent (its own executable again, with
// noticeEnv set, in a process group of its own) that learns of the
// agent's death from the end of its standard input (the agent holds the
// only write end) and that then sends, on the dead
// leader's behalf, the NOTICE the agent gave it (wire.TypeNotice: this
// leader of this term is gone), so that the others elect at once instead
// of waiting for their failure detector. It sends nothing while the agent
// lives, nothing after a graceful stop (the agent resigns itself and tells
// it so: Stop), and nothing when the agent did not lead (Clear).
//
// It sends only once no job of the agent can run: the agent keeps the
// write end of the hold pipe, and every job guard gets it too (Hold,
// Supervisor.SetHold) and keeps it, close-on-exec so the job does not,
// until the whole of the job's process group is gone (guard.go,
// endGroup). The notice guard reads the other end: its end of file comes
// when the agent and every job guard have exited, and only then does it
// send. A job that ignores SIGTERM delays the notice by its grace; in
// quorum mode, by the lease's end at most (the guard kills the job then).
// The address keeper holds it too (StartKeeper), until it has removed the
// virtual addresses: the notice goes out after the addresses are gone,
// as RESIGN does after a graceful stop (the job stops, the addresses go,
// then RESIGN).
//
// The notice is built and signed by the agent, which hands it over with
// its destinations (the multicast group, or every member's election
// address) at each new term and each change of the destinations: the
// notice guard holds no key. The wire's replay rule for NOTICE (once per
// sender, incarnation and term) lets a packet built long before it is
// sent through (agent/internal/auth, CheckNotice).
//
// This package opens no socket: the program that enters the guards gives
// the sending (SetNoticeSend, before Guard).
const (
	noticeEnv      = "LANLEADER_NOTICE_GUARD" // "1": this process is a notice guard
	noticeFromEnv  = "LANLEADER_NOTICE_FROM"  // the agent's election address, the notice's source
	noticeIfaceEnv = "LANLEADER_NOTICE_IFACE" // the interface multicast leaves by
	noticeHoldFD   = 3                        // the read end of the hold pipe
	// guardHoldEnv tells a job guard which descriptor is the hold pipe's
	// write end.
	guardHoldEnv = "LANLEADER_JOB_GUARD_HOLD"
)

// NoticeSend sends pkt from the address from (or, when it is taken, from
// another port of its address) to each of dsts, multicast through the
// interface iface.
type NoticeSend func(from netip.AddrPort, iface string, pkt []byte, dsts []netip.AddrPort) error

var noticeSend NoticeSend

// SetNoticeSend gives the notice guard its way to send. Call it before
// Guard, first thing in main.
func SetNoticeSend(f NoticeSend) { noticeSend = f }

// The agent's frames on the notice guard's standard input: a length u32,
// then a kind byte and its body.
const (
	frameNotice = 'N' // u16 count, count × (u8 length 4|16, address, u16 port), then the packet
	frameClear  = 'C' // not leading: no notice
	frameStop   = 'S' // a graceful stop: exit, send nothing
	maxFrame    = 1 << 20
)

// Notifier is the agent's side of its running notice guard.
type Notifier struct {
	cmd  *exec.Cmd
	hold *os.File // the hold pipe's write end
	done chan struct{}

	mu     sync.Mutex
	next   []byte // the latest frame not yet written, nil when none
	kick   chan struct{}
	closed bool
	// holdClosed: hold is closed (Stop, Kill); Hold hands out no copy.
	holdClosed bool
	ctl        *os.File
	wrote      chan struct{} // closed when the writer has ended
	// queued counts the frames queued, written those the writer has
	// written or dropped for a later one; synced is signalled at each
	// write (Sync).
	queued, written uint64
	synced          *sync.Cond
}

// StartNotifier starts the notice guard of an agent whose election
// socket is from, on the interface iface. The program must have called
// Guard. It does not wait for the guard to be ready: an agent that dies
// in the first milliseconds of its run leaves no notice, and its
// followers' detector finds it as before.
func StartNotifier(from netip.AddrPort, iface string) (*Notifier, error) {
	if !guardInstalled.Load() {
		return nil, errors.New("proc: cannot start the notice guard: this program does not enter it (it must call agent.Guard first thing in main)")
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("proc: the notice guard: %w", err)
	}
	ps, err := openPipes(2) // control, hold
	if err != nil {
		return nil, fmt.Errorf("proc: the notice guard: %w", err)
	}
	cmd := exec.Command(self)
	cmd.Args[0] = "lanleader-notice-guard"
	cmd.Env = Environ(noticeEnv+"=1", noticeFromEnv+"="+from.String(), noticeIfaceEnv+"="+iface)
	cmd.Stdin = ps[0].r
	cmd.Stderr = os.Stderr
	cmd.ExtraFiles = []*os.File{ps[1].r} // noticeHoldFD
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	ps[0].r.Close()
	ps[1].r.Close()
	if err != nil {
		ps[0].w.Close()
		ps[1].w.Close()
		return nil, fmt.Errorf("proc: the notice guard: %w", err)
	}
	// The agent's ends go first when it dies (top.go).
	n := &Notifier{cmd: cmd, hold: toTop(ps[1].w), ctl: toTop(ps[0].w), done: make(chan struct{}), kick: make(chan struct{}, 1),
		wrote: make(chan struct{})}
	n.synced = sync.NewCond(&n.mu)
	go func() { cmd.Wait(); close(n.done) }()
	go n.writer()
	return n, nil
}

// Hold is a copy of the hold pipe's write end, for every job guard
// (SetHold) and the address keeper (StartKeeper), nil once the guard is
// stopped. The caller owns the copy and closes it: the notifier closes
// only its own, so a Stop never closes a descriptor that a start is
// handing to a child at that moment.
func (n *Notifier) Hold() *os.File {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.holdClosed {
		return nil
	}
	var f *os.File
	if rc, err := n.hold.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			// Close-on-exec from its birth (F_DUPFD_CLOEXEC): a dup
			// then marked would leak into a child that another
			// goroutine forks in between (a hook, a check), which would
			// hold the notice back for as long as it runs. At the top
			// of the table: the supervisor keeps its copy for the
			// agent's life (top.go).
			if d, err := dupTop(fd); err == nil {
				f = os.NewFile(uintptr(d), "notice hold")
			}
		})
	}
	return f
}

// Kill ends the guard at once, without a notice: an agent's crash
// simulated in a process that lives on (its tests, the demo), where no
// death reaches the guard.
func (n *Notifier) Kill() {
	n.mu.Lock()
	already := n.closed
	n.next, n.closed = []byte{frameStop}, true
	n.mu.Unlock()
	n.cmd.Process.Kill()
	<-n.done
	if !already {
		select {
		case n.kick <- struct{}{}:
		default: // a kick is pending: the writer takes the stop with it
		}
		<-n.wrote // its write fails at once: the reader is gone
		n.ctl.Close()
	}
	n.closeHold()
}

// closeHold closes the notifier's own copy of the hold pipe, once.
func (n *Notifier) closeHold() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.holdClosed {
		n.holdClosed = true
		n.hold.Close()
	}
}

// Pid is the notice guard's process id.
func (n *Notifier) Pid() int { return n.cmd.Process.Pid }

// Set hands the guard the notice pkt and its destinations: what it sends
// if the agent dies now. It never blocks; any goroutine may call it.
func (n *Notifier) Set(pkt []byte, dsts []netip.AddrPort) {
	body := []byte{frameNotice, 0, 0}
	binary.BigEndian.PutUint16(body[1:], uint16(len(dsts)))
	for _, d := range dsts {
		a := d.Addr().Unmap()
		if a.Is4() {
			b := a.As4()
			body = append(append(body, 4), b[:]...)
		} else {
			b := a.As16()
			body = append(append(body, 16), b[:]...)
		}
		body = binary.BigEndian.AppendUint16(body, d.Port())
	}
	n.queue(append(body, pkt...))
}

// Clear: the agent does not lead; the guard sends nothing if it dies.
func (n *Notifier) Clear() { n.queue([]byte{frameClear}) }

// queue makes frame the next one written, in place of any not written yet.
func (n *Notifier) queue(frame []byte) {
	n.mu.Lock()
	if !n.closed {
		n.next = frame
		n.queued++
	}
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// writer writes the latest frame to the guard, one whole frame at a time.
func (n *Notifier) writer() {
	defer func() {
		n.mu.Lock()
		close(n.wrote)
		n.synced.Broadcast()
		n.mu.Unlock()
	}()
	for range n.kick {
		n.mu.Lock()
		frame, closed, upto := n.next, n.closed, n.queued
		n.next = nil
		n.mu.Unlock()
		if frame != nil {
			b := binary.BigEndian.AppendUint32(nil, uint32(len(frame)))
			if _, err := n.ctl.Write(append(b, frame...)); err != nil {
				return
			}
		}
		n.mu.Lock()
		n.written = upto
		n.synced.Broadcast()
		n.mu.Unlock()
		if closed {
			return
		}
	}
}

// Sync waits until the last frame queued (Set, Clear) is in the guard's
// pipe, or the writer has ended: from then on a death of the agent sends
// what it said. The agent never needs it (a leader that dies within
// microseconds of a new term leaves the notice of the one before, or none,
// and its followers' detector finds it); its tests wait on it.
func (n *Notifier) Sync() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for n.written < n.queued {
		select {
		case <-n.wrote:
			return
		default:
		}
		n.synced.Wait()
	}
}

// Stop ends the guard without a notice (a graceful stop: the agent
// resigns itself) and waits for it, at most a second, then kills it.
func (n *Notifier) Stop() {
	n.mu.Lock()
	already := n.closed
	n.next, n.closed = []byte{frameStop}, true
	n.mu.Unlock()
	t := time.NewTimer(time.Second)
	defer t.Stop()
	if !already {
		select {
		case n.kick <- struct{}{}:
		default: // a kick is pending: the writer takes the stop with it
		}
		select {
		case <-n.wrote:
		case <-t.C: // a guard that does not read (stopped): the close ends the write
		}
		n.ctl.Close()
		t.Reset(time.Second)
	}
	select {
	case <-n.done:
	case <-t.C:
		n.cmd.Process.Kill()
		<-n.done
	}
	n.closeHold()
}

// notice is what the guard would send: the packet and its destinations.
type notice struct {
	pkt  []byte
	dsts []netip.AddrPort
}

// parseNotice reads a frameNotice body.
func parseNotice(b []byte) (*notice, error) {
	if len(b) < 2 {
		return nil, errors.New("short notice frame")
	}
	count := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	n := &notice{}
	for range count {
		if len(b) < 1 || (b[0] != 4 && b[0] != 16) || len(b) < 1+int(b[0])+2 {
			return nil, errors.New("bad destination in a notice frame")
		}
		l := int(b[0])
		a, _ := netip.AddrFromSlice(b[1 : 1+l])
		n.dsts = append(n.dsts, netip.AddrPortFrom(a, binary.BigEndian.Uint16(b[1+l:])))
		b = b[1+l+2:]
	}
	n.pkt = append([]byte(nil), b...)
	return n, nil
}

// readFrames reads the agent's frames until its end: the notice to send
// at the end (nil: none) and whether the agent said stop.
func readFrames(r io.Reader) (last *notice, stop bool, err error) {
	br := bufio.NewReader(r)
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return last, false, nil // the agent's end: a frame cut short is dropped
		}
		size := binary.BigEndian.Uint32(hdr[:])
		if size == 0 || size > maxFrame {
			return last, false, fmt.Errorf("bad frame length %d", size)
		}
		frame := make([]byte, size)
		if _, err := io.ReadFull(br, frame); err != nil {
			return last, false, nil
		}
		switch frame[0] {
		case frameNotice:
			n, err := parseNotice(frame[1:])
			if err != nil {
				return last, false, err
			}
			last = n
		case frameClear:
			last = nil
		case frameStop:
			return nil, true, nil
		default:
			return last, false, fmt.Errorf("unknown frame %q", frame[0])
		}
	}
}

// noticeMain is the notice guard: it returns when the agent stops it, or
// once the agent is dead and no job guard holds the hold pipe any more,
// after sending the last notice it was given.
func noticeMain() int {
	from, _ := netip.ParseAddrPort(os.Getenv(noticeFromEnv))
	iface := os.Getenv(noticeIfaceEnv)
	os.Unsetenv(noticeEnv)
	os.Unsetenv(noticeFromEnv)
	os.Unsetenv(noticeIfaceEnv)
	// SIGTERM and SIGINT reach it with the rest of the agent's unit or
	// terminal (systemd's KillMode=control-group once the agent died):
	// the notice is still owed.
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	// The agent's death is the end of its input: only the agent holds the
	// pipe's write end (close-on-exec), and the kernel closes it as the
	// agent exits, however it exits; the last frame it wrote is in the
	// pipe before the end. No death signal: one that came before this
	// process had set its handlers would kill it, notice unsent (a
	// leader that dies in the guard's first milliseconds).
	type result struct {
		last *notice
		stop bool
		err  error
	}
	var r result
	r.last, r.stop, r.err = readFrames(os.Stdin)
	switch {
	case r.stop:
		return 0
	case r.err != nil:
		fmt.Fprintf(os.Stderr, "lanleader notice guard: %v: no notice\n", r.err)
		return 1
	case r.last == nil:
		return 0 // it did not lead
	}
	// Every job guard has left, its group gone, and the address keeper
	// has removed the addresses, when no one holds the pipe any more.
	hold := os.NewFile(noticeHoldFD, "hold")
	io.Copy(io.Discard, hold)
	hold.Close()
	if noticeSend == nil {
		fmt.Fprintln(os.Stderr, "lanleader notice guard: this program gives no way to send the notice")
		return 1
	}
	if err := noticeSend(from, iface, r.last.pkt, r.last.dsts); err != nil {
		fmt.Fprintf(os.Stderr, "lanleader notice guard: the agent is gone: the notice did not go out to every destination: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "lanleader notice guard: the agent is gone and no job of it runs: sent the notice to %d destinations\n", len(r.last.dsts))
	return 0
}

// holding: this job guard holds the notice guard's hold pipe, and must
// therefore outlive every other process of its group (endGroup).
var holding bool

// guardHold takes the hold pipe's descriptor a job guard was given, if
// any, and keeps it from the job (close-on-exec): only the guard holds
// it, until its end.
func guardHold() {
	v := os.Getenv(guardHoldEnv)
	os.Unsetenv(guardHoldEnv)
	var fd int
	if _, err := fmt.Sscan(v, &fd); err != nil || fd < 3 {
		return
	}
	syscall.CloseOnExec(fd)
	holding, holdFD = true, fd
}

// holdFD is the hold pipe a holding guard keeps.
var holdFD = -1

// subreaper: this job guard is a child subreaper, and reaps every child
// it has (reap.go).
var subreaper bool

// endGroup kills the job's process group pg. A guard that holds the hold
// pipe kills every other process of it and returns only once none is
// left (a zombie does not count), however long that takes, closing the
// pipe then: that is the notice guard's word that no job runs. Otherwise
// it SIGKILLs the whole group, itself included, at once; so does a guard
// that cannot read /proc. A subreaper guard with no child left knows
// that none is left without reading /proc (reap.go).
func endGroup(pg int) {
	self := os.Getpid()
	wait := time.Millisecond
	for {
		if holding && subreaper && noChildren() {
			syscall.Close(holdFD)
			holdFD = -1
			return
		}
		others, ok := groupMembers(pg, self)
		if !holding || !ok {
			syscall.Kill(-pg, syscall.SIGKILL)
			return
		}
		if len(others) == 0 {
			// The notice may go: this guard's own exit would say so
			// too, a millisecond later.
			syscall.Close(holdFD)
			holdFD = -1
			return
		}
		for _, pid := range others {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(wait) // polling the kernel; nothing to wait on
		wait = min(2*wait, 50*time.Millisecond)
	}
}
