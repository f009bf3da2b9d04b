package agent

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

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
