package freeport

import (
	"net"
	"testing"
)

// TestGetDistinct: ports come out different however many are asked for,
// and each is free for TCP at the time.
func TestGetDistinct(t *testing.T) {
	seen := map[int]bool{}
	for range 200 {
		p := Get(t)
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
	p := Get(t)
	l, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p})
	if err != nil {
		t.Fatalf("port %d: %v", p, err)
	}
	l.Close()
}
