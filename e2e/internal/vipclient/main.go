//go:build linux

// Command vipclient is the user of the virtual address in the e2e VIP
// tests and the benchmark's -vip rows: run on the client host (a host of
// the test bed that runs no agent), it asks ADDR:PORT, where vipecho runs
// on every host, every -every and records who answered.
//
//	vipclient -to ADDR:PORT -out FILE [-every 1ms] [-for 60s] [-count 0]
//
// Each request is a UDP datagram of 16 bytes: a sequence number (from 1)
// and the send time (CLOCK_REALTIME, Unix ns), both big-endian; vipecho
// repeats them and adds its host's name. For each answer from ADDR:PORT
// it appends one JSON line to FILE:
//
//	{"seq":17,"sent":1764063000123456789,"recv":1764063000123789012,"from":"host-3"}
//
// with recv taken right after the read (CLOCK_REALTIME: the clock of
// every namespace of the machine, so a test's fault times compare). The
// lines are flushed every 20 ms. It stops after -for, after -count
// requests (0: no limit), or on SIGTERM or SIGINT; it then waits 100 ms
// for late answers, appends
//
//	{"summary":{"sent":N,"answers":M,"send_errors":E,"first":NS,"last":NS}}
//
// (first and last: the first and last send times) and exits 0. ADDR must
// be in 198.18.0.0/15, the test bed's range.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

const (
	flushEvery = 20 * time.Millisecond
	lateWait   = 100 * time.Millisecond
	maxFor     = time.Hour
)

var benchNet = netip.MustParsePrefix("198.18.0.0/15")

// answer is one line of the record.
type answer struct {
	Seq  uint64 `json:"seq"`
	Sent int64  `json:"sent"`
	Recv int64  `json:"recv"`
	From string `json:"from"`
}

type summary struct {
	Sent       uint64 `json:"sent"`
	Answers    uint64 `json:"answers"`
	SendErrors uint64 `json:"send_errors"`
	First      int64  `json:"first"`
	Last       int64  `json:"last"`
}

func main() {
	to := flag.String("to", "", "ADDR:PORT to ask (in 198.18.0.0/15)")
	out := flag.String("out", "", "the record file (JSON lines)")
	every := flag.Duration("every", time.Millisecond, "the period of the requests, at least 100µs")
	runFor := flag.Duration("for", time.Minute, "how long to ask, at most 1h")
	count := flag.Uint64("count", 0, "stop after this many requests (0: no limit but -for)")
	flag.Parse()
	dst, err := netip.ParseAddrPort(*to)
	switch {
	case flag.NArg() > 0 || *out == "":
		err = errors.New("usage: vipclient -to ADDR:PORT -out FILE [-every 1ms] [-for 60s] [-count 0]")
	case err != nil:
	case !dst.Addr().Is4() || !benchNet.Contains(dst.Addr()):
		err = fmt.Errorf("-to %v: only 198.18.0.0/15 is asked", dst)
	case *every < 100*time.Microsecond:
		err = fmt.Errorf("-every %v: at least 100µs", *every)
	case *runFor <= 0 || *runFor > maxFor:
		err = fmt.Errorf("-for %v: more than 0, at most %v", *runFor, maxFor)
	}
	if err != nil {
		fail(err)
	}
	f, err := os.Create(*out)
	if err != nil {
		fail(err)
	}
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4zero})
	if err != nil {
		fail(err)
	}
	rec := &record{w: bufio.NewWriterSize(f, 1<<16), f: f}
	go rec.flushLoop()
	go rec.read(conn, dst)

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	tick := time.NewTicker(*every)
	end := time.NewTimer(*runFor)
	target := net.UDPAddrFromAddrPort(dst)
	var (
		s   summary
		buf [16]byte
	)
	fmt.Printf("vipclient: asking %v every %v for %v\n", dst, *every, *runFor)
ask:
	for *count == 0 || s.Sent < *count {
		select {
		case <-sigs:
			break ask
		case <-end.C:
			break ask
		case <-tick.C:
		}
		now := time.Now().UnixNano()
		binary.BigEndian.PutUint64(buf[0:8], s.Sent+1)
		binary.BigEndian.PutUint64(buf[8:16], uint64(now))
		if _, err := conn.WriteToUDP(buf[:], target); err != nil {
			// No route or neighbour yet (the address is moving): a
			// request that went nowhere, counted.
			if s.SendErrors++; s.SendErrors%1000 == 1 {
				fmt.Fprintf(os.Stderr, "vipclient: send: %v (%d failed)\n", err, s.SendErrors)
			}
		}
		s.Sent++
		if s.First == 0 {
			s.First = now
		}
		s.Last = now
	}
	tick.Stop()
	time.Sleep(lateWait)
	rec.mu.Lock()
	s.Answers = rec.answers
	line, _ := json.Marshal(map[string]summary{"summary": s})
	rec.w.Write(append(line, '\n'))
	err = rec.w.Flush()
	rec.mu.Unlock()
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		fail(err)
	}
	fmt.Printf("vipclient: %d requests, %d answers, %d send errors\n", s.Sent, s.Answers, s.SendErrors)
	os.Exit(0)
}

// record is the record file, written by the reader and flushed by
// flushLoop.
type record struct {
	mu      sync.Mutex
	w       *bufio.Writer
	f       *os.File
	answers uint64
}

func (r *record) read(conn *net.UDPConn, dst netip.AddrPort) {
	buf := make([]byte, 1500)
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		recv := time.Now().UnixNano()
		if err != nil {
			fail(err)
		}
		if from.Addr().Unmap() != dst.Addr() || from.Port() != dst.Port() || n < 16 {
			continue
		}
		a := answer{
			Seq:  binary.BigEndian.Uint64(buf[0:8]),
			Sent: int64(binary.BigEndian.Uint64(buf[8:16])),
			Recv: recv,
			From: string(buf[16:n]),
		}
		line, _ := json.Marshal(a)
		r.mu.Lock()
		r.w.Write(append(line, '\n'))
		r.answers++
		r.mu.Unlock()
	}
}

func (r *record) flushLoop() {
	for range time.Tick(flushEvery) {
		r.mu.Lock()
		err := r.w.Flush()
		r.mu.Unlock()
		if err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "vipclient: %v\n", err)
	os.Exit(2)
}
