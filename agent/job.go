package agent

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lanleader/lanleader/metrics"
)

// Job supervision. The event loop says what it wants (the job running,
// with which term and leader, or not) and never waits; the supervisor's
// goroutine owns the process and tells the loop what happened through
// Agent.call. A process is "running" from its start until its whole
// process group is gone.

// jobWant is what the loop wants of the supervisor. gen grows each time
// the loop starts wanting the job anew (a new leadership): a job that
// failed too often is not restarted within the same gen.
type jobWant struct {
	run    bool
	gen    uint64
	term   uint64
	leader uint64
}

// jobEventKind is what the supervisor tells the loop.
type jobEventKind uint8

const (
	jobStarted   jobEventKind = iota // a process started
	jobStopped                       // the process group is gone (asked or not)
	jobCrashLoop                     // too many failures in the window: hand over
)

type jobEvent struct {
	kind jobEventKind
	pid  int
}

// JobStatus is the job's part of /status.
type JobStatus struct {
	Command []string `json:"command"`
	// State is "stopped", "waiting" (leading, the previous leader's job
	// is still stopping), "running", "stopping" (SIGTERM sent), "backoff"
	// (exited, restarting after a delay) or "failed" (too many failures:
	// the node handed over).
	State    string `json:"state"`
	Pid      int    `json:"pid,omitempty"`
	Term     uint64 `json:"term,omitempty"` // LANLEADER_TERM of the running process
	Since    string `json:"since,omitempty"`
	Restarts uint64 `json:"restarts"`
	// Failures counts the exits on its own within the failure window.
	Failures int    `json:"failures"`
	LastExit string `json:"last_exit,omitempty"`
}

// Restart backoff: the first restart after jobBackoffMin, doubling with
// each failure in the window, at most jobBackoffMax.
const (
	jobBackoffMin = 200 * time.Millisecond
	jobBackoffMax = 30 * time.Second
	// jobSweep bounds the wait for a killed process group to be gone.
	jobSweep = 2 * time.Second
	// maxLogLine is the longest line of job or hook output logged as one.
	maxLogLine = 4096
)

type supervisor struct {
	a      *Agent
	argv   []string
	grace  time.Duration
	max    int // failures in window before a hand-over; 0: never
	window time.Duration
	met    *metrics.Metrics
	log    *slog.Logger

	mu     sync.Mutex
	want   jobWant
	active bool // a process is starting or its group is not gone yet
	kick   chan struct{}
	quit   chan struct{}
	done   chan struct{}

	status atomic.Pointer[JobStatus]
	pgid   atomic.Int64 // the running group, for Kill; 0 when none

	// Quorum mode (lease.go): a job of generation leaseGen runs only
	// within the leader's lease, which ends at lease (CLOCK_MONOTONIC ns,
	// under mu); cur (under mu) is the running process, whose guard is
	// told of renewals.
	quorum   bool
	lease    int64
	leaseGen uint64
	cur      *proc
}

func newSupervisor(a *Agent) *supervisor {
	cfg := &a.cfg
	s := &supervisor{
		a: a, argv: slices.Clone(cfg.Job), grace: cfg.JobGrace, max: cfg.JobMaxFailures, window: cfg.JobFailureWindow,
		met: a.met, log: a.log.With("component", "job"),
		kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
		quorum: cfg.Quorum > 0,
	}
	s.status.Store(&JobStatus{Command: s.argv, State: "stopped"})
	return s
}

// set records what the loop wants; it never blocks.
func (s *supervisor) set(w jobWant) {
	s.mu.Lock()
	changed := s.want != w
	s.want = w
	s.mu.Unlock()
	if changed {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

// idle reports whether no process of the job runs nor is about to: with
// set, it is linearisable, so that after set(run: false) and idle() ==
// true no process will start.
func (s *supervisor) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.active
}

// claim marks a start as under way, if w is still what is wanted.
func (s *supervisor) claim(w jobWant) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.want.run || s.want.gen != w.gen {
		return false
	}
	s.active = true
	return true
}

func (s *supervisor) release() {
	s.mu.Lock()
	s.active = false
	s.mu.Unlock()
}

func (s *supervisor) wanted() jobWant {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.want
}

// kill SIGKILLs the running group at once: the agent's last resort before
// an exit that cannot wait (a second signal).
func (s *supervisor) kill() {
	if pg := s.pgid.Load(); pg > 0 {
		syscall.Kill(-int(pg), syscall.SIGKILL)
	}
}

// proc is one run of the job.
type proc struct {
	cmd     *exec.Cmd
	pgid    int
	term    uint64
	gen     uint64
	started time.Time
	leaseW  *os.File      // quorum mode: renewals of the lease to the guard
	lease   atomic.Int64  // quorum mode: the last end of the lease given to the guard
	exited  chan struct{} // closed when the guard (the group leader) has been waited for
	output  sync.WaitGroup
	readers []*os.File
}

// run is the supervisor's goroutine.
func (s *supervisor) run() {
	defer close(s.done)
	var (
		cur       *proc
		stopping  bool
		killAt    time.Time
		restartAt time.Time
		failures  []time.Time // exits on its own, within the window
		failedGen uint64      // gen in which the job failed too often
		failedSet bool
		restarts  uint64
		lastExit  string
		lastGen   uint64
		lastGenOK bool
	)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	publish := func(state string) {
		st := &JobStatus{Command: s.argv, State: state, Restarts: restarts, Failures: len(failures), LastExit: lastExit}
		if cur != nil {
			st.Pid, st.Term, st.Since = cur.cmd.Process.Pid, cur.term, cur.started.UTC().Format(timeFormat)
		}
		s.status.Store(st)
		// The loop republishes /status.
		select {
		case s.a.jobDirty <- struct{}{}:
		default:
		}
	}
	quit := s.quit // nil once seen closed: a closed channel is always ready
	quitting := false
	for {
		now := time.Now()
		w := s.wanted()
		if !quitting {
			select {
			case <-quit:
				quitting, quit = true, nil
			default:
			}
		}
		if quitting {
			w.run = false
		}
		// Forget failures that left the window.
		failures = slices.DeleteFunc(failures, func(t time.Time) bool { return now.Sub(t) > s.window })
		if failedSet && (w.gen != failedGen || !w.run) {
			failedSet = false
		}

		switch {
		case cur == nil && quitting:
			publish("stopped")
			return
		case cur == nil && w.run && !failedSet && !now.Before(restartAt) && monoNow() < s.leaseFor(w.gen):
			if !s.claim(w) {
				continue
			}
			if lastGenOK && lastGen == w.gen {
				restarts++
				s.met.JobRestarts.Inc()
			}
			p, err := s.start(w)
			lastGen, lastGenOK = w.gen, true
			if err != nil {
				s.release()
				lastExit = err.Error()
				s.log.Error("job did not start", "err", err)
				failures = append(failures, now)
				restartAt = now.Add(s.backoff(len(failures)))
				if s.tooMany(failures) {
					failedSet, failedGen = true, w.gen
					s.report(jobEvent{kind: jobCrashLoop})
				}
				continue
			}
			cur, stopping = p, false
			s.pgid.Store(int64(p.pgid))
			s.met.JobRunning.Set(1)
			publish("running")
			s.report(jobEvent{kind: jobStarted, pid: p.cmd.Process.Pid})
			continue
		case cur != nil && (!w.run || w.gen != cur.gen) && !stopping:
			stopping, killAt = true, now.Add(s.grace)
			s.log.Info("stopping the job", "pid", cur.cmd.Process.Pid, "grace", s.grace)
			syscall.Kill(-cur.pgid, syscall.SIGTERM)
			publish("stopping")
		}

		// Wait for something to change.
		var exited chan struct{}
		var next time.Time
		state := "stopped"
		if cur != nil {
			exited = cur.exited
			state = "running"
			if stopping {
				next = killAt
				state = "stopping"
			}
		} else if w.run && !failedSet {
			next = restartAt
			state = "backoff"
		}
		if failedSet {
			state = "failed"
		}
		if st := s.status.Load(); st.State != state || st.Failures != len(failures) {
			publish(state)
		}
		if !next.IsZero() {
			timer.Reset(max(time.Until(next), 0))
		} else {
			timer.Reset(time.Hour)
		}
		select {
		case <-s.kick:
		case <-quit:
		case <-timer.C:
			if cur != nil && stopping && !time.Now().Before(killAt) {
				s.log.Warn("the job did not stop within its grace period: SIGKILL", "pid", cur.cmd.Process.Pid, "grace", s.grace)
				syscall.Kill(-cur.pgid, syscall.SIGKILL)
				killAt = time.Now().Add(time.Hour)
			}
		case <-exited:
			// In quorum mode the guard kills the job when the lease runs
			// out, before the loop may have seen it (a paused agent).
			lapsed := !stopping && s.quorum && monoNow() >= cur.lease.Load()
			asked := stopping || lapsed
			ran := time.Since(cur.started)
			lastExit = describeExit(cur.cmd.ProcessState, nil)
			s.sweep(cur)
			waitOutput(&cur.output, cur.readers...)
			s.pgid.Store(0)
			s.met.JobRunning.Set(0)
			s.mu.Lock()
			s.cur = nil
			s.mu.Unlock()
			cur.leaseW.Close()
			pid := cur.cmd.Process.Pid
			cur = nil
			s.release()
			if lapsed {
				s.log.Warn("job killed by its guard: the leader's lease ran out", "pid", pid, "status", lastExit, "ran", ran.Round(time.Millisecond))
			} else if asked {
				s.log.Info("job stopped", "pid", pid, "status", lastExit, "ran", ran.Round(time.Millisecond))
			} else {
				failures = append(failures, time.Now())
				delay := s.backoff(len(failures))
				restartAt = time.Now().Add(delay)
				s.log.Warn("job exited on its own", "pid", pid, "status", lastExit, "ran", ran.Round(time.Millisecond),
					"failures", len(failures), "window", s.window, "restart_in", delay)
				if s.tooMany(failures) {
					failedSet, failedGen = true, s.wanted().gen
					s.log.Error("the job keeps failing: handing over", "failures", len(failures), "window", s.window)
				}
			}
			publish("stopped")
			s.report(jobEvent{kind: jobStopped, pid: pid})
			if failedSet {
				s.report(jobEvent{kind: jobCrashLoop})
			}
		}
	}
}

func (s *supervisor) tooMany(failures []time.Time) bool {
	return s.max > 0 && len(failures) >= s.max
}

func (s *supervisor) backoff(failures int) time.Duration {
	d := jobBackoffMin
	for i := 1; i < failures && d < jobBackoffMax; i++ {
		d *= 2
	}
	return min(d, jobBackoffMax)
}

// report tells the loop; after the loop ended it does nothing.
func (s *supervisor) report(ev jobEvent) {
	s.a.call(func() { s.a.onJobEvent(ev) })
}

// start starts the guard, which starts the job, in a new process group.
func (s *supervisor) start(w jobWant) (*proc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find this program to guard the job: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cfg := &s.a.cfg
	cmd := exec.Command(self, s.argv...)
	cmd.Args[0] = "lanleader-job-guard"
	cmd.Env = environ(guardEnv+"=1", guardGraceEnv+"="+s.grace.String(),
		"LANLEADER_TERM="+strconv.FormatUint(w.term, 10),
		"LANLEADER_NODE_ID="+strconv.FormatUint(cfg.NodeID, 10),
		"LANLEADER_LEADER_ID="+strconv.FormatUint(w.leader, 10),
		"LANLEADER_NAME="+cfg.Name)
	cmd.Stdout, cmd.Stderr = outW, errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: guardDeathSignal}
	var leaseR, leaseW *os.File
	var lease int64
	if s.quorum {
		if leaseR, leaseW, err = os.Pipe(); err != nil {
			outR.Close()
			outW.Close()
			errR.Close()
			errW.Close()
			return nil, err
		}
		cmd.ExtraFiles = []*os.File{leaseR} // guardLeaseFD
		lease = s.leaseFor(w.gen)
		cmd.Env = append(cmd.Env, guardLeaseEnv+"="+strconv.FormatInt(lease, 10))
	}
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if leaseR != nil {
		leaseR.Close()
	}
	if err != nil {
		outR.Close()
		errR.Close()
		if leaseW != nil {
			leaseW.Close()
		}
		return nil, err
	}
	p := &proc{cmd: cmd, pgid: cmd.Process.Pid, term: w.term, gen: w.gen, started: time.Now(), exited: make(chan struct{}),
		readers: []*os.File{outR, errR}, leaseW: leaseW}
	p.lease.Store(lease)
	s.mu.Lock()
	s.cur = p
	end, gen := s.lease, s.leaseGen
	s.mu.Unlock()
	if s.quorum && gen == p.gen && end > lease {
		// A renewal made while the guard started.
		s.setLease(end, gen)
	}
	log := s.log.With("pid", cmd.Process.Pid)
	log.Info("job started", "term", w.term, "command", s.argv)
	p.output.Add(2)
	go func() { defer p.output.Done(); logLines(log, "job", "stdout", outR) }()
	go func() { defer p.output.Done(); logLines(log, "job", "stderr", errR) }()
	go func() { cmd.Wait(); close(p.exited) }()
	return p, nil
}

// sweep kills what is left of an exited job's group and waits, bounded,
// until the group is gone: a job has stopped when nothing of it runs.
func (s *supervisor) sweep(p *proc) {
	if !groupAlive(p.pgid) {
		return
	}
	syscall.Kill(-p.pgid, syscall.SIGKILL)
	deadline := time.Now().Add(jobSweep)
	for groupAlive(p.pgid) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // polling the kernel; nothing to wait on
	}
	if groupAlive(p.pgid) {
		s.log.Warn("processes of the job's group are still there after SIGKILL", "pgid", p.pgid)
	}
}

// groupAlive says whether a process of group pgid still runs. A zombie
// does not: the processes the job left behind are reaped by init (or a
// subreaper) in its own time, which may be late.
func groupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	dir, err := os.Open("/proc")
	if err != nil {
		return true
	}
	defer dir.Close()
	names, _ := dir.Readdirnames(-1)
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 3 || f[0][0] == 'Z' || f[0][0] == 'X' {
			continue
		}
		if g, err := strconv.Atoi(string(f[2])); err == nil && g == pgid {
			return true
		}
	}
	return false
}

// logLines logs each line of r as the output of a job or hook, until r
// ends. Long lines are cut into maxLogLine pieces.
func logLines(log *slog.Logger, msg, stream string, r io.ReadCloser) {
	defer r.Close()
	br := bufio.NewReaderSize(r, maxLogLine)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			n := len(line)
			if line[n-1] == '\n' {
				n--
			}
			log.Info(msg, "stream", stream, "line", string(line[:n]))
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// timeFormat is RFC 3339 with milliseconds, as in /status.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"
