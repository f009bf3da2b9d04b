package proc

import (
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lanleader/lanleader/agent/internal/vip"
)

// Job supervision. The caller (the agent's event loop) says what it
// wants (Set: the job running, with which term and leader, or not) and
// never waits; the supervisor's goroutine (Run) owns the process and
// tells the caller what happened through Config.Report. A process is
// "running" from its start until its whole process group is gone.

// Want is what the caller wants of the supervisor.
type Want struct {
	Run bool
	// Gen grows each time the caller starts wanting the job anew (a new
	// leadership): a job that failed too often is not restarted within
	// the same Gen, and a process of an earlier Gen is stopped.
	Gen    uint64
	Term   uint64 // LANLEADER_TERM of the process started for it
	Leader uint64 // LANLEADER_LEADER_ID
}

// EventKind is what the supervisor tells the caller.
type EventKind uint8

const (
	Started   EventKind = iota // a process started
	Stopped                    // the process group is gone (asked or not)
	CrashLoop                  // too many failures in the window: hand over
	// Finished: in job mode once, the job exited on its own and is not
	// run again within this Gen. Sent after its Stopped.
	Finished
)

// Event is one report of the supervisor.
type Event struct {
	Kind EventKind
	Pid  int // the process's (Started, Stopped)
	// Code is the job's exit status (Stopped, Finished): 128+N when a
	// signal N killed it, -1 when unknown.
	Code int
}

// JobStatus is the job's part of /status.
type JobStatus struct {
	Command []string `json:"command"`
	// State is "stopped", "waiting" (leading, the previous leader's job
	// is still stopping), "running", "stopping" (SIGTERM sent), "backoff"
	// (exited, restarting after a delay), "failed" (too many failures:
	// the node handed over) or "finished" (job mode once: it exited and
	// is not run again until the next leadership).
	State    string `json:"state"`
	Pid      int    `json:"pid,omitempty"`
	Term     uint64 `json:"term,omitempty"` // LANLEADER_TERM of the running process
	Since    string `json:"since,omitempty"`
	Restarts uint64 `json:"restarts"`
	// Failures counts the exits on its own within the failure window.
	Failures int    `json:"failures"`
	LastExit string `json:"last_exit,omitempty"`
	// ExitCode is LastExit as a shell's exit status (128+N for signal N),
	// absent before the first exit.
	ExitCode *int `json:"exit_code,omitempty"`
	// Unit is the systemd unit run as the job (--job-unit), if any.
	Unit string `json:"unit,omitempty"`
}

// TimeFormat is RFC 3339 with milliseconds, as in /status.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// Restart backoff: the first restart after backoffMin, doubling with
// each failure in the window, at most backoffMax.
const (
	backoffMin = 200 * time.Millisecond
	backoffMax = 30 * time.Second
)

// Config is what a supervisor is given; it keeps no other reference to
// its caller.
type Config struct {
	Argv  []string      // the job's command line
	Grace time.Duration // from SIGTERM to the process group to SIGKILL
	// MaxFailures exits on its own (or failed starts) within
	// FailureWindow make the supervisor give up on the Gen and report
	// CrashLoop; 0 or less: never.
	MaxFailures   int
	FailureWindow time.Duration
	// Quorum: the job runs only within the lease (SetLease), which its
	// guard holds too.
	Quorum bool
	// Once (job mode once): a job that exits on its own, with any status,
	// is not restarted within its Gen (Finished).
	Once bool
	// Unit, when set, is the systemd unit started and stopped through
	// Systemd instead of forking Argv (unit.go); the job's environment
	// goes to EnvFile, which the unit reads (EnvironmentFile=).
	Unit    string
	Systemd Systemd
	EnvFile string
	// NodeID and Name are LANLEADER_NODE_ID and LANLEADER_NAME in the
	// job's environment.
	NodeID uint64
	Name   string
	Log    *slog.Logger // nil: no log
	// Running is set to 1 while a process runs, 0 otherwise; Restarts
	// counts the restarts within a Gen. Either may be nil.
	Running  prometheus.Gauge
	Restarts prometheus.Counter
	// Report is told what happened to the job. It is called from Run's
	// goroutine, one event at a time and in order, never after Run
	// returned. It may block (the supervisor waits for it) and may call
	// Set, Idle, SetLease, Kill and Status, but must not wait for Done.
	// Nil: nobody listens.
	Report func(Event)
	// Changed is called from Run's goroutine when Status changed; it must
	// not block nor call the supervisor. Nil: nobody listens.
	Changed func()
}

// Supervisor runs one job: at most one process of it at a time.
//
// Concurrency: Run's goroutine alone starts, signals and waits for the
// job's processes (Kill aside), and alone calls Config.Report and
// Config.Changed, never concurrently. Set, SetLease, Idle, Kill, Status
// and Stop may be called from any goroutine, Report's included, and
// never block. Done's channel is closed by Run when it returns, by
// nothing else.
type Supervisor struct {
	cfg      Config
	log      *slog.Logger
	running  prometheus.Gauge
	restarts prometheus.Counter

	mu     sync.Mutex
	want   Want
	active bool // a process is starting or its group is not gone yet
	kick   chan struct{}
	quit   chan struct{}
	stop   sync.Once
	done   chan struct{}

	status atomic.Pointer[JobStatus]
	pgid   atomic.Int64 // the running group, for Kill; 0 when none

	// Quorum mode (lease.go): a job of generation leaseGen runs only
	// within the lease, which ends at lease (CLOCK_MONOTONIC ns, under
	// mu); cur (under mu) is the running process, whose guard is told of
	// renewals.
	lease    int64
	leaseGen uint64
	cur      *jobProc

	vips []vip.Addr // under mu: the guard removes them (vips.go)
	hold *os.File   // under mu: the notice guard's hold pipe (notice.go), nil without one
}

// New returns the supervisor of cfg.Argv; it starts nothing before Run.
func New(cfg Config) *Supervisor {
	cfg.Argv = slices.Clone(cfg.Argv)
	s := &Supervisor{cfg: cfg, log: cfg.Log, running: cfg.Running, restarts: cfg.Restarts,
		kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.log = s.log.With("component", "job")
	if s.running == nil {
		s.running = prometheus.NewGauge(prometheus.GaugeOpts{Name: "unused"})
	}
	if s.restarts == nil {
		s.restarts = prometheus.NewCounter(prometheus.CounterOpts{Name: "unused"})
	}
	s.status.Store(&JobStatus{Command: s.cfg.Argv, State: "stopped"})
	return s
}

// Set records what the caller wants. It never blocks; any goroutine may
// call it.
func (s *Supervisor) Set(w Want) {
	s.mu.Lock()
	changed := s.want != w
	s.want = w
	s.mu.Unlock()
	if changed {
		s.poke()
	}
}

func (s *Supervisor) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Idle reports whether no process of the job runs nor is about to. With
// Set it is linearisable: after Set(Want{Run: false}) and Idle() == true
// no process will start. It never blocks.
func (s *Supervisor) Idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.active
}

// Kill SIGKILLs the running process group at once: the last resort
// before an exit that cannot wait. Any goroutine may call it.
func (s *Supervisor) Kill() {
	if pg := s.pgid.Load(); pg > 0 {
		syscall.Kill(-int(pg), syscall.SIGKILL)
	}
	s.mu.Lock()
	cur := s.cur
	s.mu.Unlock()
	if cur != nil && cur.unit != nil {
		cur.unit.kill()
	}
}

// Status is the job's status now; the caller must not modify it. Any
// goroutine may call it.
func (s *Supervisor) Status() *JobStatus { return s.status.Load() }

// Stop asks Run to stop the job (SIGTERM, SIGKILL after the grace) and
// return; it does not wait (see Done) and may be called more than once.
func (s *Supervisor) Stop() { s.stop.Do(func() { close(s.quit) }) }

// Done is closed when Run has returned: no process of the job is left.
func (s *Supervisor) Done() <-chan struct{} { return s.done }

// claim marks a start as under way, if w is still what is wanted.
func (s *Supervisor) claim(w Want) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.want.Run || s.want.Gen != w.Gen {
		return false
	}
	s.active = true
	return true
}

func (s *Supervisor) release() {
	s.mu.Lock()
	s.active = false
	s.mu.Unlock()
}

func (s *Supervisor) wanted() Want {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.want
}

// jobProc is one run of the job: its guard, the leader of its group.
type jobProc struct {
	cmd     *exec.Cmd
	pgid    int
	term    uint64
	gen     uint64
	started time.Time
	leaseW  *os.File      // quorum mode: renewals of the lease to the guard
	life    *os.File      // the guard's life pipe (start.go), closed once it is reaped
	lease   atomic.Int64  // quorum mode: the last end of the lease given to the guard
	exited  chan struct{} // closed when the guard (the group leader) has been waited for
	output  sync.WaitGroup
	readers []*os.File
	unit    *unitRun // the job's systemd unit (unit.go); cmd is nil then
}
