package agent

import "sync"

// Job mode once (Config.JobMode): the supervisor runs the job once per
// leadership; `lanleader run --once` waits on JobRan and JobEnded to run
// a command once and exit with its status.

// latch is a channel closed once, by the first fire.
type latch struct {
	ch   chan struct{}
	once *sync.Once
}

func newLatch() latch { return latch{ch: make(chan struct{}), once: new(sync.Once)} }

func (s latch) fire() { s.once.Do(func() { close(s.ch) }) }

// JobRan is closed when the job has first started; never without a job.
func (a *Agent) JobRan() <-chan struct{} { return a.procs.ran.ch }

// JobEnded is closed when, in job mode once, the job has first finished:
// it exited on its own, with the status JobExitStatus gives.
func (a *Agent) JobEnded() <-chan struct{} { return a.procs.ended.ch }

// JobExitStatus is the status of the job's last exit, as a shell gives
// it (128+N for a signal N), and false when it never exited.
func (a *Agent) JobExitStatus() (int, bool) {
	if a.procs.sup == nil {
		return 0, false
	}
	st := a.procs.sup.Status()
	if st.ExitCode == nil {
		return 0, false
	}
	return *st.ExitCode, true
}

// beginAwaitJoin keeps the node out of the elections until a member has
// joined, with Config.JoinBeforeLead and a Join list.
func (a *Agent) beginAwaitJoin() {
	if !a.cfg.JoinBeforeLead || len(a.cfg.Join) == 0 {
		return
	}
	a.loop.awaitJoin = true
	a.log.Info("taking no part in elections until this node has joined a member", "join", a.cfg.Join)
	a.applyStandby()
}

// endAwaitJoin: a member (name) has joined; the node takes part in the
// elections from now on.
func (a *Agent) endAwaitJoin(name string) {
	if !a.loop.awaitJoin {
		return
	}
	a.loop.awaitJoin = false
	a.log.Info("joined: taking part in elections", "member", name)
	a.applyStandby()
}
