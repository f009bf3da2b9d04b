package proc

import (
	"log/slog"
	"slices"
	"time"
)

// runState is the state of Run's goroutine, which alone touches it.
type runState struct {
	cur       *jobProc
	stopping  bool // SIGTERM sent to cur's group
	killAt    time.Time
	restartAt time.Time
	failures  []time.Time // exits on its own, within the window
	failedGen uint64      // the Gen in which the job failed too often
	failedSet bool
	// finishedGen: job mode once, the Gen whose job exited on its own.
	finishedGen uint64
	finishedSet bool
	restarts    uint64
	lastExit    string
	lastCode    int
	exitedOnce  bool   // lastCode is set
	lastGen     uint64 // the Gen of the last start
	lastGenOK   bool
	quit        <-chan struct{} // nil once seen closed: a closed channel is always ready
	quitting    bool
}

// exited is the running process's exit, nil (never ready) when none runs.
func (r *runState) exited() <-chan struct{} {
	if r.cur == nil {
		return nil
	}
	return r.cur.exited
}

// next is what Run does after act.
type next uint8

const (
	nextWait  next = iota // wait for something to change
	nextAgain             // look again at once
	nextDone              // return
)

// Run is the supervisor's goroutine: call it once. It returns after Stop,
// once the job's process group is gone.
func (s *Supervisor) Run() {
	defer close(s.done)
	defer s.closeHold()
	r := &runState{quit: s.quit}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		w := s.observe(r, now)
		switch s.act(r, w, now) {
		case nextDone:
			s.publish(r, "stopped")
			return
		case nextAgain:
			continue
		}
		if at := s.settle(r, w); !at.IsZero() {
			timer.Reset(max(time.Until(at), 0))
		} else {
			timer.Reset(time.Hour)
		}
		select {
		case <-s.kick:
		case <-r.quit:
		case <-timer.C:
			s.onTimer(r)
		case <-r.exited():
			s.onExit(r)
		}
	}
}

// observe reads what is wanted (nothing once Stop was called) and forgets
// the failures that left the window, and a give-up of an earlier Gen.
func (s *Supervisor) observe(r *runState, now time.Time) Want {
	w := s.wanted()
	if !r.quitting {
		select {
		case <-r.quit:
			r.quitting, r.quit = true, nil
		default:
		}
	}
	if r.quitting {
		w.Run = false
	}
	r.failures = slices.DeleteFunc(r.failures, func(t time.Time) bool { return now.Sub(t) > s.limits().FailureWindow })
	if r.failedSet && (w.Gen != r.failedGen || !w.Run) {
		r.failedSet = false
	}
	if r.finishedSet && w.Gen != r.finishedGen {
		r.finishedSet = false
	}
	return w
}

// act starts or stops the job as w asks, when it may.
func (s *Supervisor) act(r *runState, w Want, now time.Time) next {
	switch {
	case r.cur == nil && r.quitting:
		return nextDone
	case r.cur == nil && w.Run && !r.failedSet && !r.finishedSet && !now.Before(r.restartAt) && MonoNow() < s.leaseFor(w.Gen):
		if s.claim(w) {
			s.launch(r, w, now)
		}
		return nextAgain
	case r.cur != nil && (!w.Run || w.Gen != r.cur.gen) && !r.stopping:
		r.stopping, r.killAt = true, now.Add(s.limits().Grace)
		s.log.Info("stopping the job", s.which(r.cur.pid()), "grace", s.limits().Grace)
		r.cur.terminate()
		s.publish(r, "stopping")
	}
	return nextWait
}

// launch starts a process for w; a start that fails counts as a failure.
func (s *Supervisor) launch(r *runState, w Want, now time.Time) {
	if r.lastGenOK && r.lastGen == w.Gen {
		r.restarts++
		s.restarts.Inc()
	}
	p, err := s.start(w)
	r.lastGen, r.lastGenOK = w.Gen, true
	if err != nil {
		s.release()
		r.lastExit = err.Error()
		s.log.Error("job did not start", "err", err)
		if s.cfg.Once {
			s.finish(r, w.Gen, 126)
			return
		}
		r.failures = append(r.failures, now)
		r.restartAt = now.Add(backoff(len(r.failures)))
		if s.tooMany(r.failures) {
			r.failedSet, r.failedGen = true, w.Gen
			s.report(Event{Kind: CrashLoop})
		}
		return
	}
	r.cur, r.stopping = p, false
	s.pgid.Store(int64(p.pgid))
	s.running.Set(1)
	s.publish(r, "running")
	s.report(Event{Kind: Started, Pid: p.pid()})
}

// settle publishes the state Run waits in and returns when it must look
// again on its own (zero: only when something changes).
func (s *Supervisor) settle(r *runState, w Want) (at time.Time) {
	state := "stopped"
	if r.cur != nil {
		state = "running"
		if r.stopping {
			at, state = r.killAt, "stopping"
		}
	} else if r.finishedSet {
		state = "finished"
	} else if w.Run && !r.failedSet {
		at, state = r.restartAt, "backoff"
	}
	if r.failedSet {
		state = "failed"
	}
	if st := s.status.Load(); st.State != state || st.Failures != len(r.failures) {
		s.publish(r, state)
	}
	return at
}

// onTimer kills a group that outlived its grace period.
func (s *Supervisor) onTimer(r *runState) {
	if r.cur != nil && r.stopping && !time.Now().Before(r.killAt) {
		s.log.Warn("the job did not stop within its grace period: SIGKILL", s.which(r.cur.pid()), "grace", s.limits().Grace)
		r.cur.kill()
		r.killAt = time.Now().Add(time.Hour)
	}
}

// onExit: the guard exited. Once the group is gone the process counts as
// stopped, or, if nobody asked it to stop, as a failure.
func (s *Supervisor) onExit(r *runState) {
	cur := r.cur
	// In quorum mode the guard kills the job when the lease runs out,
	// before the caller may have seen it (a paused agent).
	lapsed := !r.stopping && s.cfg.Quorum && MonoNow() >= cur.lease.Load()
	asked := r.stopping || lapsed
	ran := time.Since(cur.started).Round(time.Millisecond)
	r.lastExit, r.lastCode = cur.exitStatus()
	r.exitedOnce = true
	s.reap(cur)
	r.cur = nil
	pid := cur.pid()
	s.release()
	switch {
	case lapsed:
		s.log.Warn("job killed by its guard: the leader's lease ran out", s.which(pid), "status", r.lastExit, "ran", ran)
	case asked:
		s.log.Info("job stopped", s.which(pid), "status", r.lastExit, "ran", ran)
	case s.cfg.Once:
		s.log.Info("job finished; job mode once: not restarted until the next leadership", s.which(pid), "status", r.lastExit, "ran", ran)
		r.finishedSet, r.finishedGen = true, cur.gen
	default:
		s.failed(r, pid, ran)
	}
	// The state is published before the events, so that whoever acts on
	// Finished reads "finished": published after them, it could read
	// "stopped" until the loop settled (a race that the race detector's
	// slower pass shows).
	finished, state := r.finishedSet && !asked, "stopped"
	if finished {
		state = "finished"
	}
	s.publish(r, state)
	s.report(Event{Kind: Stopped, Pid: pid, Code: r.lastCode})
	if finished {
		s.report(Event{Kind: Finished, Pid: pid, Code: r.lastCode})
	}
	if r.failedSet {
		s.report(Event{Kind: CrashLoop})
	}
}

// reap clears away an exited process: what is left of its group, its
// output, its lease and life pipes.
func (s *Supervisor) reap(p *jobProc) {
	s.sweep(p)
	waitOutput(&p.output, p.readers...)
	s.pgid.Store(0)
	s.running.Set(0)
	s.mu.Lock()
	s.cur = nil
	s.mu.Unlock()
	p.leaseW.Close()
	p.life.Close()
}

// failed counts an exit on its own: a restart after the backoff, or a
// give-up when there were too many in the window.
func (s *Supervisor) failed(r *runState, pid int, ran time.Duration) {
	now := time.Now()
	r.failures = append(r.failures, now)
	delay := backoff(len(r.failures))
	r.restartAt = now.Add(delay)
	s.log.Warn("job exited on its own", s.which(pid), "status", r.lastExit, "ran", ran,
		"failures", len(r.failures), "window", s.limits().FailureWindow, "restart_in", delay)
	if s.tooMany(r.failures) {
		r.failedSet, r.failedGen = true, s.wanted().Gen
		s.log.Error("the job keeps failing: handing over", "failures", len(r.failures), "window", s.limits().FailureWindow)
	}
}

// finish ends the Gen of a job that could not start, in job mode once:
// code is its status (126, as a shell's "cannot execute").
func (s *Supervisor) finish(r *runState, gen uint64, code int) {
	r.finishedSet, r.finishedGen = true, gen
	r.lastCode, r.exitedOnce = code, true
	s.publish(r, "finished")
	s.report(Event{Kind: Finished, Code: code})
}

// which names the run in the log: its pid, or its unit.
func (s *Supervisor) which(pid int) slog.Attr {
	if s.cfg.Unit != "" {
		return slog.String("unit", s.cfg.Unit)
	}
	return slog.Int("pid", pid)
}

// publish stores the status and tells the caller.
func (s *Supervisor) publish(r *runState, state string) {
	st := &JobStatus{Command: s.cfg.Argv, State: state, Restarts: r.restarts, Failures: len(r.failures), LastExit: r.lastExit, Unit: s.cfg.Unit}
	if r.exitedOnce {
		code := r.lastCode
		st.ExitCode = &code
	}
	if r.cur != nil {
		st.Pid, st.Term, st.Since = r.cur.pid(), r.cur.term, r.cur.started.UTC().Format(TimeFormat)
	}
	s.status.Store(st)
	if s.cfg.Changed != nil {
		s.cfg.Changed()
	}
}

// report tells the caller.
func (s *Supervisor) report(ev Event) {
	if s.cfg.Report != nil {
		s.cfg.Report(ev)
	}
}

func (s *Supervisor) tooMany(failures []time.Time) bool {
	return s.limits().MaxFailures > 0 && len(failures) >= s.limits().MaxFailures
}

// backoff is the delay before the restart that follows the given number
// of failures in the window.
func backoff(failures int) time.Duration {
	d := backoffMin
	for i := 1; i < failures && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}
