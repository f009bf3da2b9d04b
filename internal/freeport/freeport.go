// Package freeport gives tests ports on 127.0.0.1 that are free for both
// TCP and UDP (an agent's gossip port is both), for a while.
package freeport

import (
	"fmt"
	"net"
	"sync"
	"testing"
)

// handedOut is every port Get has returned in this test binary: the
// kernel may give a port just closed to the next listener, and two ports
// of one agent that came out equal made it refuse to start ("election-port
// … is also the gossip port").
var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// Get is a port free for both TCP and UDP on 127.0.0.1, and never one it
// returned before in this process.
func Get(t testing.TB) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		if handedOut.ports[p] {
			l.Close()
			continue
		}
		u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", p))
		l.Close()
		if err == nil {
			u.Close()
			if handedOut.ports == nil {
				handedOut.ports = map[int]bool{}
			}
			handedOut.ports[p] = true
			return p
		}
	}
	t.Fatal("no free port")
	return 0
}
