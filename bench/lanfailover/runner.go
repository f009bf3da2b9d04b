//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
)

// runner lets the test bed of e2e/, written for tests, run in a command:
// it is an e2e.TB whose Fatalf and Skip end the current setting (by
// panicking with abort, recovered by scope), and whose cleanups run when
// the setting that registered them ends.
type runner struct {
	out     io.Writer // the results
	log     io.Writer // progress and errors
	verbose bool
	idle    idleSpan // -idle-settle and -idle-window

	mu       sync.Mutex
	cleanups []func()
	failed   bool

	interrupted atomic.Bool // SIGINT or SIGTERM arrived
}

// watchSignals makes SIGINT and SIGTERM end the benchmark cleanly: the
// running setting aborts at its next check (checkInterrupt), its cleanups
// run (processes, namespaces, counters), and no further setting starts.
func (r *runner) watchSignals() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-c
		fmt.Fprintf(r.log, "lanfailover: %v: stopping after cleaning up\n", sig)
		r.interrupted.Store(true)
	}()
}

// checkInterrupt aborts the current setting once a signal has arrived.
func (r *runner) checkInterrupt() {
	if r.interrupted.Load() {
		r.Fatalf("interrupted")
	}
}

// abort is the panic value of Fatalf and Skip.
type abort struct{ msg string }

func (r *runner) Helper() {}

func (r *runner) Logf(format string, args ...any) {
	if r.verbose {
		fmt.Fprintf(r.log, "lanfailover: "+format+"\n", args...)
	}
}

func (r *runner) Errorf(format string, args ...any) {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	fmt.Fprintf(r.log, "lanfailover: "+format+"\n", args...)
}

func (r *runner) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	panic(abort{fmt.Sprintf(format, args...)})
}

func (r *runner) Skip(args ...any) {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	panic(abort{fmt.Sprint(args...)})
}

func (r *runner) Cleanup(f func()) {
	r.mu.Lock()
	r.cleanups = append(r.cleanups, f)
	r.mu.Unlock()
}

func (r *runner) TempDir() string { return r.TempDirIn("") }

// TempDirIn is TempDir in parent ("": the system's temporary directory).
func (r *runner) TempDirIn(parent string) string {
	dir, err := os.MkdirTemp(parent, "lanfailover-")
	if err != nil {
		r.Fatalf("%v", err)
	}
	r.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func (r *runner) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

// scope runs f; when f returns or aborts, it runs the cleanups f
// registered, last first, and returns the abort's message ("" when f
// returned).
func (r *runner) scope(f func()) (msg string) {
	r.mu.Lock()
	mark := len(r.cleanups)
	r.mu.Unlock()
	defer func() {
		if v := recover(); v != nil {
			a, ok := v.(abort)
			if !ok {
				r.unwind(mark)
				panic(v)
			}
			msg = a.msg
		}
		r.unwind(mark)
	}()
	f()
	return ""
}

func (r *runner) unwind(mark int) {
	for {
		r.mu.Lock()
		if len(r.cleanups) <= mark {
			r.mu.Unlock()
			return
		}
		f := r.cleanups[len(r.cleanups)-1]
		r.cleanups = r.cleanups[:len(r.cleanups)-1]
		r.mu.Unlock()
		f()
	}
}
