package proc

import (
	"encoding/binary"
	"math"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The lease pipe between the supervisor and the job's guard (quorum
// mode). The agent gives the supervisor the end of the leader's lease on
// CLOCK_MONOTONIC (SetLease) when it leads and each time a majority
// renews it; the supervisor hands it to the guard when it starts the job
// (guardLeaseEnv) and after (8 bytes big-endian on guardLeaseFD), and the
// guard SIGKILLs the job's process group when that time comes, whatever
// the agent is doing: an agent that is paused (SIGSTOP, a frozen VM)
// neither steps down nor stops its job, while the job would run on
// beside the next leader's. A guard that hears nothing more keeps the
// last end it was given. What the lease is, and when it moves, is the
// agent's (agent/part/lead).
//
// CLOCK_MONOTONIC, not Go's time: two processes must read one clock, and
// it is the one a time namespace gives both.

// guardLeaseEnv carries the end of the lease, CLOCK_MONOTONIC nanoseconds,
// when the guard starts; renewals follow on guardLeaseFD, 8 bytes each,
// big-endian.
const (
	guardLeaseEnv = "LANLEADER_JOB_GUARD_LEASE"
	guardLeaseFD  = 3
)

// MonoNow is CLOCK_MONOTONIC in nanoseconds: the clock of the lease.
func MonoNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("clock_gettime(CLOCK_MONOTONIC): " + err.Error())
	}
	return ts.Nano()
}

// SetLease records that the lease of generation gen ends at end
// (MonoNow's clock) and tells the running guard, if it runs that
// generation. In quorum mode (Config.Quorum) a job of a generation is
// started only while that generation's lease has not ended. It never
// blocks: a guard that does not read (stopped with the agent's whole
// group) keeps its earlier, safe, end. Any goroutine may call it.
func (s *Supervisor) SetLease(end int64, gen uint64) {
	s.mu.Lock()
	s.lease, s.leaseGen = end, gen
	p := s.cur
	s.mu.Unlock()
	if p != nil && p.gen == gen && p.leaseW != nil {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(end))
		p.leaseW.SetWriteDeadline(time.Now().Add(time.Millisecond))
		if _, err := p.leaseW.Write(b[:]); err != nil {
			s.log.Debug("cannot renew the lease in the job's guard; it keeps the earlier end", "err", err)
		} else {
			p.lease.Store(end)
		}
	}
	s.poke()
}

// leaseFor is the end of the lease for generation gen: 0 when that
// generation has none yet; math.MaxInt64 in textbook mode, which needs
// no lease.
func (s *Supervisor) leaseFor(gen uint64) int64 {
	if !s.cfg.Quorum {
		return math.MaxInt64
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leaseGen != gen {
		return 0
	}
	return s.lease
}

// guardLease is the guard's side: the end of the lease and its renewals.
//
// The guard's timer and the renewals race: on a busy host the guard may
// wake after the lease's end with a renewal, sent in time, still in the
// pipe. So the pipe is read by whoever holds mu, without blocking, and
// the expiry reads it too before it kills (current): a renewal that is
// in the pipe is never left unread when the job dies for want of it.
type guardLease struct {
	mu    sync.Mutex
	fd    int // the pipe, non-blocking; -1 once it has ended
	end   int64
	part  []byte        // a record read in part
	moved chan struct{} // cap 1: end moved
}

// openGuardLease reads the lease the agent gave, if any (nil otherwise).
func openGuardLease() (*guardLease, error) {
	v := os.Getenv(guardLeaseEnv)
	os.Unsetenv(guardLeaseEnv)
	if v == "" {
		return nil, nil
	}
	end, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(guardLeaseFD)
	if err := unix.SetNonblock(guardLeaseFD, true); err != nil {
		return nil, err
	}
	g := newGuardLease(guardLeaseFD, end)
	go g.watch()
	return g, nil
}

func newGuardLease(fd int, end int64) *guardLease {
	return &guardLease{fd: fd, end: end, moved: make(chan struct{}, 1)}
}

// watch reads the renewals as they come, until the agent's end of the
// pipe closes (the last end stands then).
func (g *guardLease) watch() {
	for {
		g.mu.Lock()
		fd := g.fd
		g.mu.Unlock()
		if fd < 0 {
			return
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
			return
		}
		g.current()
	}
}

// current reads every renewal in the pipe and returns the end of the
// lease.
func (g *guardLease) current() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	var buf [512]byte
	for g.fd >= 0 {
		n, err := unix.Read(g.fd, buf[:])
		if n > 0 {
			g.part = append(g.part, buf[:n]...)
			for len(g.part) >= 8 {
				if end := int64(binary.BigEndian.Uint64(g.part)); end > g.end {
					g.end = end
					select {
					case g.moved <- struct{}{}:
					default:
					}
				}
				g.part = g.part[8:]
			}
			continue
		}
		if err == unix.EAGAIN || err == unix.EINTR {
			break
		}
		unix.Close(g.fd) // the agent is gone (n == 0), or the pipe failed
		g.fd = -1
	}
	return g.end
}
