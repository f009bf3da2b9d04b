package agent

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// lineSignal is a log destination that keeps the lines and signals the
// first one holding want.
type lineSignal struct {
	mu    sync.Mutex
	want  string
	lines []string
	seen  chan struct{}
}

func (w *lineSignal) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, string(p))
	if strings.Contains(string(p), w.want) {
		select {
		case <-w.seen:
		default:
			close(w.seen)
		}
	}
	return len(p), nil
}

func (w *lineSignal) count(s string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, l := range w.lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

// TestStartRetryPortFreed: a port in use at the start is retried, with
// a log line per attempt, and the agent starts normally once it is free.
func TestStartRetryPortFreed(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := &lineSignal{want: "trying again", seen: make(chan struct{})}
	cfg := testConfig("a", 1)
	cfg.HTTP, cfg.StartTimeout = busy.Addr().String(), 30*time.Second
	cfg.Logger = slog.New(slog.NewTextHandler(log, nil))
	go func() {
		<-log.seen
		busy.Close()
	}()
	a, err := StartRetrying(cfg, nil)
	if err != nil {
		busy.Close()
		t.Fatalf("start: %v", err)
	}
	defer a.Stop(context.Background())
	if a.HTTPAddr() != cfg.HTTP {
		t.Errorf("listens on %s, want %s", a.HTTPAddr(), cfg.HTTP)
	}
	if n := log.count("port already in use"); n < 1 {
		t.Errorf("%d lines about the busy port, want one per failed attempt:\n%s", n, strings.Join(log.lines, ""))
	}
}

// TestStartRetryNeverReady: an address that never comes to the host
// fails the start after the window, as ErrNotReady, after several
// attempts; a config error is not retried; a stop ends the wait.
func TestStartRetryNeverReady(t *testing.T) {
	log := &lineSignal{want: "trying again", seen: make(chan struct{})}
	cfg := testConfig("a", 1)
	cfg.Bind = "198.18.0.99:0" // not on this host: nothing is sent there, the start stops before any socket
	cfg.StartTimeout = 300 * time.Millisecond
	cfg.Logger = slog.New(slog.NewTextHandler(log, nil))
	start := func(a *Agent) error { return a.Start() }
	_, err := startRetrying(cfg, nil, 50*time.Millisecond, start)
	if !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "address not on this host") {
		t.Fatalf("err %v, want ErrNotReady naming the address", err)
	}
	if n := log.count("trying again"); n < 3 {
		t.Errorf("%d attempts logged, want one every 50ms for 300ms", n)
	}

	cfg.StartTimeout = 0
	if _, err := startRetrying(cfg, nil, time.Hour, start); !errors.Is(err, ErrNotReady) {
		t.Errorf("no retry window: %v, want ErrNotReady at once", err)
	}

	bad := errors.New("vip: a config error")
	calls := 0
	cfg.StartTimeout = time.Hour
	if _, err := startRetrying(cfg, nil, time.Millisecond, func(*Agent) error { calls++; return bad }); err != bad || calls != 1 {
		t.Errorf("config error: %v after %d calls, want it at once", err, calls)
	}

	stop := make(chan struct{})
	close(stop)
	if _, err := startRetrying(cfg, stop, time.Hour, start); !errors.Is(err, ErrStopped) {
		t.Errorf("stopped: %v, want ErrStopped", err)
	}
}
