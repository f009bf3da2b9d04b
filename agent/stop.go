package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/election"
)

// How an agent ends: gracefully (Stop: the job first, then RESIGN, then
// the leave), as a crash (Crash), or because it cannot go on (fail).

// Stop ends the agent gracefully: a leader sends RESIGN, the node leaves
// memberlist (so that the others need not detect its death), and every
// socket and goroutine is closed. It returns when all is closed or ctx
// ends. Before a successful Start it does nothing.
func (a *Agent) Stop(ctx context.Context) error {
	if !a.running.Load() {
		return nil
	}
	var err error
	a.stopOnce.Do(func() {
		a.notify.Send("STOPPING=1")
		// This agent resigns itself: its notice guard must not say it
		// crashed.
		a.stopNotifier()
		// The job stops first, before RESIGN: the next leader starts its
		// job at once, and must not find ours still running.
		if a.procs.sup != nil {
			a.call(a.lead.Halt)
			a.procs.sup.Stop()
			select {
			case <-a.procs.sup.Done():
			case <-ctx.Done():
				a.log.Error("the job did not stop in time: SIGKILL", "err", ctx.Err())
				a.procs.sup.Kill()
			}
		}
		a.call(func() {
			if a.machine.Status().State == election.StateLeader {
				// The job has stopped: the addresses go, then RESIGN.
				a.vips.Release("stopping")
				a.step(a.now(), election.Event{Kind: election.EvResign})
			}
			a.loop.leaving = true
			// Tell the others this is a leave, not a failure.
			a.setMeta()
			a.log.Info("leaving")
		})
		timeout := config.DefaultLeaveTimeout
		if d, ok := ctx.Deadline(); ok {
			timeout = min(timeout, time.Until(d))
		}
		// A join under way lists its peers only when it ends: a leave
		// before that is broadcast to nobody, and the peers it joined see
		// this node fail seconds later instead of leave. It ends first.
		a.waitJoiner(timeout / 4)
		if a.ml.NumMembers() > 1 {
			// Not beside a push of metaPusher: UpdateNode is not safe
			// to call twice at once.
			a.metaPush.mu.Lock()
			a.ml.UpdateNode(timeout / 4)
			a.metaPush.mu.Unlock()
		}
		if lerr := a.ml.Leave(timeout); lerr != nil {
			err = fmt.Errorf("leave: %w", lerr)
		}
		a.shutdown(ctx)
	})
	return err
}

// KillJob kills the job's process group at once (SIGKILL): for an exit
// that cannot wait for a graceful stop.
func (a *Agent) KillJob() {
	if a.procs.sup != nil {
		a.procs.sup.Kill()
	}
}

// Crash ends the agent as a crash would: no RESIGN, no leave; its sockets
// simply close. For tests and the demo. Before a successful Start it does
// nothing.
func (a *Agent) Crash() {
	if !a.running.Load() {
		return
	}
	a.stopOnce.Do(func() {
		// A crashed agent's job dies with it (its guard's parent-death
		// signal); in one process, kill it. Its notice guard, told of no
		// death (the process lives on), ends without a notice.
		a.KillJob()
		if a.notice != nil {
			a.notice.Kill()
		}
		a.shutdown(context.Background())
	})
}

// Failed is closed when the agent cannot go on (its election socket
// fails); Err says why. The caller should Stop it.
func (a *Agent) Failed() <-chan struct{} { return a.failure.ch }

// Err is why the agent failed, nil before it did.
func (a *Agent) Err() error {
	select {
	case <-a.failure.ch:
		return a.failure.err
	default:
		return nil
	}
}

func (a *Agent) fail(err error) {
	a.failure.once.Do(func() {
		a.failure.err = err
		close(a.failure.ch)
	})
}

// failure is why the agent cannot go on: ch is closed once err is set.
type failure struct {
	ch   chan struct{}
	once sync.Once
	err  error
}

func (a *Agent) shutdown(ctx context.Context) {
	a.closeChecks()
	if a.procs.sup != nil {
		a.procs.sup.Stop()
	}
	close(a.quit)
	<-a.loopDone
	if a.procs.sup != nil {
		<-a.procs.sup.Done()
	}
	a.lead.StopHooks()
	a.closeAll()
	if a.web.srv != nil {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		a.web.srv.Shutdown(sctx)
		cancel()
	}
	a.readers.Wait()
	if a.joiner != nil {
		// A join under way may wait for a TCP timeout; ctx bounds it.
		select {
		case <-a.joiner.Done():
		case <-ctx.Done():
		}
	}
}

// stopJoiner tells the joiner to start no other join.
func (a *Agent) stopJoiner() {
	if a.joiner == nil {
		return
	}
	a.joiner.Stop()
}

// waitJoiner stops the joiner and waits up to d for a join under way.
func (a *Agent) waitJoiner(d time.Duration) {
	if a.joiner == nil {
		return
	}
	a.stopJoiner()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-a.joiner.Done():
	case <-t.C:
		a.log.Warn("a join still under way at the leave: the peers it reaches may see this node fail instead of leave", "waited", d)
	}
}

// closeAll closes whatever Start opened (some may be nil after a failed
// Start).
func (a *Agent) closeAll() {
	a.stopJoiner()
	a.stopNotifier()
	if a.ml != nil {
		a.ml.Shutdown()
	}
	if a.tr != nil {
		a.tr.Close()
	}
	if c, ok := a.procs.systemd.(interface{ Close() }); ok {
		c.Close()
	}
	for _, p := range a.parts {
		p.Close()
	}
	if a.web.ln != nil && a.web.srv == nil {
		a.web.ln.Close()
	}
}

// How an agent that cannot start yet tries again: StartRetrying.

// ErrNotReady is in the chain of a Start error caused by the host rather
// than the configuration: the bind address is not on the host (yet), a
// port is in use. Another start later may succeed.
var ErrNotReady = errors.New("the host is not ready")

// startRetryEvery is the gap between two attempts of StartRetrying.
const startRetryEvery = time.Second

// notReadyError marks err as ErrNotReady, its message unchanged.
type notReadyError struct{ err error }

func (e notReadyError) Error() string   { return e.err.Error() }
func (e notReadyError) Unwrap() []error { return []error{e.err, ErrNotReady} }

func notReady(err error) error { return notReadyError{err} }

// isNotReady says whether a Start error is the host's, not the config's.
func isNotReady(err error) bool {
	return errors.Is(err, ErrNotReady) || errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EADDRNOTAVAIL)
}

// StartRetrying creates an agent of cfg (New) and starts it; while Start
// fails because the host is not ready, it tries again with a new agent
// every second for cfg.StartTimeout, with one log line per attempt (and
// under systemd a STATUS= that says why, and EXTEND_TIMEOUT_USEC, so that
// TimeoutStartSec does not cut the retries short). A
// value received on stop ends the wait (its error is then ErrStopped).
// The last error of a host that never got ready has ErrNotReady in its
// chain; any other error is returned at once.
func StartRetrying(cfg Config, stop <-chan struct{}) (*Agent, error) {
	return startRetrying(cfg, stop, startRetryEvery, func(a *Agent) error { return a.Start() })
}

// ErrStopped: StartRetrying was stopped while it waited.
var ErrStopped = errors.New("stopped while waiting for the host to be ready")

func startRetrying(cfg Config, stop <-chan struct{}, every time.Duration, start func(*Agent) error) (*Agent, error) {
	deadline := time.Now().Add(cfg.StartTimeout)
	for attempt := 1; ; attempt++ {
		a, err := New(cfg)
		if err != nil {
			return nil, err
		}
		err = start(a)
		if err == nil {
			return a, nil
		}
		left := time.Until(deadline)
		if !isNotReady(err) {
			return nil, err
		}
		if left <= 0 {
			return nil, notReady(err)
		}
		a.log.Warn("cannot start: the host is not ready; trying again", "err", oneLine(err), "attempt", attempt,
			"next_in", every, "gives_up_in", left.Round(time.Second))
		// systemd's start timeout (TimeoutStartSec) waits for the retries.
		a.notify.Send(fmt.Sprintf("STATUS=the host is not ready: %s; trying again\nEXTEND_TIMEOUT_USEC=%d",
			oneLine(err), (3 * every).Microseconds()))
		t := time.NewTimer(min(every, left))
		select {
		case <-stop:
			t.Stop()
			return nil, ErrStopped
		case <-t.C:
		}
	}
}
