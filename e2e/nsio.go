//go:build linux

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// TB is the part of testing.TB the test bed uses, so that a command (the
// benchmarks in bench/) can run it too. *testing.T and *testing.B are TBs.
type TB interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skip(args ...any)
	Cleanup(func())
	TempDir() string
	Failed() bool
}

// inNamespace runs f on an OS thread that has entered network namespace
// ns, so that the sockets f opens belong to ns (a socket keeps its
// namespace for life; the thread then returns to this process's
// namespace). Should the return fail, the thread is not given back to the
// scheduler: its goroutine ends locked, and the runtime ends the thread.
func inNamespace(ns string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		back := false
		defer func() {
			if back {
				runtime.UnlockOSThread()
			}
		}()
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			back = true
			errc <- err
			return
		}
		defer self.Close()
		target, err := os.Open(filepath.Join("/run/netns", ns))
		if err != nil {
			back = true
			errc <- fmt.Errorf("namespace %s: %v", ns, err)
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			back = true
			errc <- fmt.Errorf("setns %s: %v", ns, err)
			return
		}
		ferr := f()
		back = unix.Setns(int(self.Fd()), unix.CLONE_NEWNET) == nil
		errc <- ferr
	}()
	return <-errc
}

// client is an HTTP client whose connections are opened inside host i's
// namespace: http://127.0.0.1:9947/ is host i's own agent.
func (n *Net) client(i int) *http.Client {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.clients == nil {
		n.clients = make(map[int]*http.Client)
	}
	if c := n.clients[i]; c != nil {
		return c
	}
	ns := n.hosts[i]
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var c net.Conn
			err := inNamespace(ns, func() error {
				var d net.Dialer
				var err error
				c, err = d.DialContext(ctx, network, addr)
				return err
			})
			return c, err
		},
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     30 * time.Second,
	}
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	n.clients[i] = c
	return c
}

// closeClients closes the idle connections of every host's client.
func (n *Net) closeClients() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, c := range n.clients {
		c.CloseIdleConnections()
	}
}

// Get fetches url from inside host i's namespace (its own loopback, e.g.
// http://127.0.0.1:9947/metrics) and returns the body of a 200 answer.
func (n *Net) Get(i int, url string) (string, error) {
	resp, err := n.client(i).Get(url)
	if err != nil {
		return "", fmt.Errorf("%s: %v", n.hosts[i], err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return "", fmt.Errorf("%s: GET %s: %v", n.hosts[i], url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: GET %s: %s", n.hosts[i], url, resp.Status)
	}
	return string(body), nil
}

var (
	benchNet  = netip.MustParsePrefix("198.18.0.0/15")
	groupsNet = netip.MustParsePrefix("239.255.0.0/16")
)

// SendUDP sends one datagram with payload from host i (from its address,
// a free port) to dst, with IP TTL ttl. To a multicast group it goes out
// of eth0, not looped back to host i. Only 198.18.0.0/15 and
// 239.255.0.0/16 are accepted as destinations.
func (n *Net) SendUDP(i int, dst string, ttl int, payload []byte) error {
	to, err := netip.ParseAddrPort(dst)
	if err != nil {
		return err
	}
	if !to.Addr().Is4() || !benchNet.Contains(to.Addr()) && !groupsNet.Contains(to.Addr()) {
		return fmt.Errorf("%v: the test bed sends only to 198.18.0.0/15 and 239.255.0.0/16", to)
	}
	from := netip.MustParseAddr(n.Addr(i))
	return inNamespace(n.hosts[i], func() error {
		c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(from, 0)))
		if err != nil {
			return err
		}
		defer c.Close()
		p := ipv4.NewPacketConn(c)
		if to.Addr().IsMulticast() {
			ifi, err := net.InterfaceByName("eth0")
			if err != nil {
				return err
			}
			if err := errors.Join(p.SetMulticastInterface(ifi), p.SetMulticastTTL(ttl), p.SetMulticastLoopback(false)); err != nil {
				return err
			}
		} else if err := p.SetTTL(ttl); err != nil {
			return err
		}
		_, err = p.WriteTo(payload, nil, net.UDPAddrFromAddrPort(to))
		return err
	})
}

// Metrics reads the exposition of host i's agent (/metrics on the host's
// own loopback) and returns every sample's value by its series as written
// there, labels included: lanleader_leader_changes_total,
// lanleader_messages_sent_total{type="PROBE"}, …
func (n *Net) Metrics(i int) (map[string]float64, error) {
	body, err := n.Get(i, "http://127.0.0.1:9947/metrics")
	if err != nil {
		return nil, err
	}
	return ParseExposition(body), nil
}

// ParseExposition reads the samples of a text exposition: series → value.
// Comments and lines it cannot read are skipped.
func ParseExposition(body string) map[string]float64 {
	out := make(map[string]float64)
	for line := range strings.SplitSeq(body, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		series, val, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if v, err := strconv.ParseFloat(val, 64); err == nil {
			out[series] = v
		}
	}
	return out
}
