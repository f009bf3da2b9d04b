package agent

import (
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// notifySocket listens as systemd's NOTIFY_SOCKET for the test; next
// returns the datagrams up to the first that starts with want.
func notifySocket(t *testing.T) (next func(want string) []string) {
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", sock)
	return func(want string) []string {
		t.Helper()
		var got []string
		buf := make([]byte, 4096)
		deadline := time.Now().Add(10 * time.Second)
		for range 1000 {
			conn.SetReadDeadline(deadline)
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatalf("no %q: got %q (%v)", want, got, err)
			}
			got = append(got, string(buf[:n]))
			if strings.HasPrefix(string(buf[:n]), want) {
				return got
			}
		}
		t.Fatalf("no %q in 1000 datagrams", want)
		return nil
	}
}

// TestSystemdReload: systemd hears RELOADING=1 (with the monotonic time
// it asks for) before a reload and READY=1 after it.
func TestSystemdReload(t *testing.T) {
	next := notifySocket(t)
	a := newAgentSet(t).start(0, testConfig("node-1", 1))
	next("READY=1")
	cfg := a.Config()
	cfg.Priority = 120
	if err := a.Reload(func() (Config, error) { return cfg, nil }); err != nil {
		t.Fatal(err)
	}
	got := next("RELOADING=1")
	if last := got[len(got)-1]; !strings.Contains(last, "\nMONOTONIC_USEC=") {
		t.Errorf("RELOADING=1 without MONOTONIC_USEC: %q", last)
	}
	next("READY=1")
}

// TestSystemdStartRetry: while the host is not ready, systemd is told why
// and the start timeout is extended at each attempt.
func TestSystemdStartRetry(t *testing.T) {
	next := notifySocket(t)
	cfg := testConfig("node-1", 1)
	cfg.Bind, cfg.StartTimeout = "198.18.0.99:0", 200*time.Millisecond // not on this host: nothing sent
	done := make(chan error, 1)
	go func() {
		_, err := startRetrying(cfg, nil, 50*time.Millisecond, func(a *Agent) error { return a.Start() })
		done <- err
	}()
	defer func() {
		if err := <-done; !errors.Is(err, ErrNotReady) {
			t.Errorf("start: %v, want ErrNotReady", err)
		}
	}()
	got := next("STATUS=the host is not ready: bind 198.18.0.99: address not on this host")
	if last := got[len(got)-1]; !strings.HasSuffix(last, "; trying again\nEXTEND_TIMEOUT_USEC=150000") {
		t.Errorf("notification %q", last)
	}
}
