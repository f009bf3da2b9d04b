package agent

import (
	"encoding/binary"
	"io"
	"math"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lanleader/lanleader/election"
)

// The lease in the job's guard (quorum mode). The election machine steps
// down when its lease runs out, and the agent then stops the job; but an
// agent that is paused (SIGSTOP, a frozen VM, a long swap storm) does
// neither, while its job would run on beside the next leader's. So the
// guard, a process of its own, holds the lease too: the agent gives it the
// end of the lease on CLOCK_MONOTONIC when it starts the job and each time
// a majority renews it, and the guard SIGKILLs the job's process group
// when that time comes, whatever the agent is doing. A guard that hears
// nothing more keeps the last end it was given; an end is never moved
// back by a leader that steps down, which stops the job with SIGTERM and
// leaves the guard's deadline as the last word: the job has until the end
// of the lease, JobGrace at most.
//
// CLOCK_MONOTONIC, not Go's time: two processes must read one clock, and
// it is the one a time namespace gives both. The end is computed from the
// machine's time (the agent's monotonic clock) by reading CLOCK_MONOTONIC
// first, so that the conversion can only make the end earlier.

// guardLeaseEnv carries the end of the lease, CLOCK_MONOTONIC nanoseconds,
// when the guard starts; renewals follow on guardLeaseFD, 8 bytes each,
// big-endian.
const (
	guardLeaseEnv = "LANLEADER_JOB_GUARD_LEASE"
	guardLeaseFD  = 3
)

// monoNow is CLOCK_MONOTONIC in nanoseconds.
func monoNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("clock_gettime(CLOCK_MONOTONIC): " + err.Error())
	}
	return ts.Nano()
}

// toMono converts a time of the agent's clock to CLOCK_MONOTONIC.
func (a *Agent) toMono(d time.Duration) int64 {
	m := monoNow()
	return m + int64(d-a.now())
}

// updateLease gives the job's guard the lease of this node, when it leads
// in quorum mode and the lease has moved on. It runs after updateJob: the
// lease is for the generation of the job that updateJob asked for, and
// the supervisor starts no job of a generation without its lease.
func (a *Agent) updateLease(st election.Status) {
	l := &a.loop
	// Also while the job stops for a resign or a graceful stop: the node
	// still holds its lease, and the job its grace period.
	if a.sup == nil || a.cfg.Quorum == 0 || st.State != election.StateLeader || st.LeaseUntil <= 0 {
		return
	}
	end := a.toMono(st.LeaseUntil)
	if end <= l.leaseMono && l.gen == l.leaseGen {
		return
	}
	l.leaseMono, l.leaseGen = max(end, l.leaseMono), l.gen
	a.sup.setLease(l.leaseMono, l.gen)
}

// setLease records the end of the lease of generation gen and tells the
// running guard, if it runs that generation. It never blocks the loop: a
// guard that does not read (stopped with the agent's whole group) keeps
// its earlier, safe, end.
func (s *supervisor) setLease(end int64, gen uint64) {
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
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// leaseFor is the end of the lease for generation gen: 0 when that
// generation has none yet; math.MaxInt64 in textbook mode, which needs
// no lease.
func (s *supervisor) leaseFor(gen uint64) int64 {
	if !s.quorum {
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
type guardLease struct {
	end   int64
	renew chan int64
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
	g := &guardLease{end: end, renew: make(chan int64, 16)}
	f := os.NewFile(guardLeaseFD, "lease")
	go func() {
		defer f.Close()
		var b [8]byte
		for {
			if _, err := io.ReadFull(f, b[:]); err != nil {
				return // the agent is gone: the last end stands
			}
			g.renew <- int64(binary.BigEndian.Uint64(b[:]))
		}
	}()
	return g, nil
}
