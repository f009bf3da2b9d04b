package proc

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// start starts a run of the job: its unit (unit.go), or its guard.
func (s *Supervisor) start(w Want) (*jobProc, error) {
	if s.cfg.Unit != "" {
		return s.startUnit(w)
	}
	return s.startGuard(w)
}

// pid is the guard's pid, 0 for a unit.
func (p *jobProc) pid() int {
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// terminate asks the job to stop: SIGTERM to its group, or a stop of
// its unit.
func (p *jobProc) terminate() {
	if p.unit != nil {
		p.unit.stop()
		return
	}
	syscall.Kill(-p.pgid, syscall.SIGTERM)
}

// kill kills the job: SIGKILL to its group, or to its unit's processes.
func (p *jobProc) kill() {
	if p.unit != nil {
		p.unit.kill()
		return
	}
	syscall.Kill(-p.pgid, syscall.SIGKILL)
}

// exitStatus says how the run ended (once exited is closed), in words
// and as a shell's exit status.
func (p *jobProc) exitStatus() (string, int) {
	if p.unit != nil {
		return p.unit.result()
	}
	return DescribeExit(p.cmd.ProcessState, nil), exitStatus(p.cmd.ProcessState)
}

// startGuard starts the guard, which starts the job, in a new process group.
func (s *Supervisor) startGuard(w Want) (*jobProc, error) {
	if !guardInstalled.Load() {
		return nil, errNoGuard
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find this program to guard the job: %w", err)
	}
	n := 3 // stdout, stderr, life
	if s.cfg.Quorum {
		n++ // the lease
	}
	ps, err := openPipes(n)
	if err != nil {
		return nil, err
	}
	cmd := s.guardCommand(self, w)
	cmd.Stdout, cmd.Stderr = ps[0].w, ps[1].w
	// The life pipe, on the guard's input: the agent's end goes first
	// when the agent dies (top.go), and the guard takes its end of file
	// for the death signal, which comes later.
	life := toTop(ps[2].w)
	cmd.Stdin = ps[2].r
	cmd.Env = append(cmd.Env, guardLifeEnv+"=1")
	childEnds, ours := []*os.File{ps[0].w, ps[1].w, ps[2].r}, []*os.File{ps[0].r, ps[1].r, life}
	var leaseW *os.File
	var lease int64
	if s.cfg.Quorum {
		cmd.ExtraFiles = []*os.File{ps[3].r} // guardLeaseFD
		lease = s.leaseFor(w.Gen)
		cmd.Env = append(cmd.Env, guardLeaseEnv+"="+strconv.FormatInt(lease, 10))
		leaseW = ps[3].w
		childEnds, ours = append(childEnds, ps[3].r), append(ours, leaseW)
	}
	s.mu.Lock()
	hold := s.hold
	s.mu.Unlock()
	if hold != nil {
		// The notice guard sends only once every holder has exited.
		cmd.Env = append(cmd.Env, guardHoldEnv+"="+strconv.Itoa(3+len(cmd.ExtraFiles)))
		cmd.ExtraFiles = append(cmd.ExtraFiles, hold)
	}
	// The guard keeps the agent's policy (with --realtime it kills the
	// job at the lease's end on time however busy the host); it starts
	// the job with the ordinary one (guardStart).
	err = cmd.Start()
	closeAll(childEnds)
	if err != nil {
		closeAll(ours)
		return nil, err
	}
	p := &jobProc{cmd: cmd, pgid: cmd.Process.Pid, term: w.Term, gen: w.Gen, started: time.Now(), exited: make(chan struct{}),
		readers: []*os.File{ps[0].r, ps[1].r}, leaseW: leaseW, life: life}
	p.lease.Store(lease)
	s.mu.Lock()
	s.cur = p
	end, gen := s.lease, s.leaseGen
	s.mu.Unlock()
	if s.cfg.Quorum && gen == p.gen && end > lease {
		// A renewal made while the guard started.
		s.SetLease(end, gen)
	}
	log := s.log.With("pid", cmd.Process.Pid)
	log.Info("job started", "term", w.Term, "command", s.cfg.Argv)
	p.output.Add(2)
	go func() { defer p.output.Done(); logLines(log, "job", "stdout", ps[0].r) }()
	go func() { defer p.output.Done(); logLines(log, "job", "stderr", ps[1].r) }()
	go func() { cmd.Wait(); close(p.exited) }()
	return p, nil
}

// guardCommand is the guard of the job for w: this program again, in a
// process group of its own, told of its death.
func (s *Supervisor) guardCommand(self string, w Want) *exec.Cmd {
	cmd := exec.Command(self, s.cfg.Argv...)
	cmd.Args[0] = "lanleader-job-guard"
	cmd.Env = Environ(append([]string{guardEnv + "=1", guardGraceEnv + "=" + s.limits().Grace.String()}, s.jobVars(w)...)...)
	if v := s.vipsEnv(); v != "" {
		cmd.Env = append(cmd.Env, v)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: guardDeathSignal}
	return cmd
}

// jobVars are the variables the job is given for w: its term (the
// fencing token), this node and the leader.
func (s *Supervisor) jobVars(w Want) []string {
	return []string{"LANLEADER_TERM=" + strconv.FormatUint(w.Term, 10),
		"LANLEADER_NODE_ID=" + strconv.FormatUint(s.cfg.NodeID, 10),
		"LANLEADER_LEADER_ID=" + strconv.FormatUint(w.Leader, 10),
		"LANLEADER_NAME=" + s.cfg.Name}
}

type pipe struct{ r, w *os.File }

// openPipes opens n pipes, or none.
func openPipes(n int) ([]pipe, error) {
	var ps []pipe
	for range n {
		r, w, err := os.Pipe()
		if err != nil {
			for _, p := range ps {
				p.r.Close()
				p.w.Close()
			}
			return nil, err
		}
		ps = append(ps, pipe{r, w})
	}
	return ps, nil
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}
