//go:build linux

// Command fencejob is the job of the e2e tests' quorum scenarios: run by
// lanleader on the leader, it leaves stamps of its run in a file and
// writes to a fenced sink, so that the test can check from both that no
// two runs overlapped and that no stale leader's write was accepted.
//
//	fencejob [-stop-delay D] STAMPS SINK
//
// On start it appends "start NODE UNIXNANO TERM PID" to STAMPS, then every
// 5ms "alive NODE UNIXNANO TERM PID", and after each alive stamp writes
// "TERM NODE SEQ\n" to the unix stream socket SINK and reads the answer
// line ("ok" or "reject"). On SIGTERM it appends "stop NODE UNIXNANO TERM
// PID" and exits 0. NODE and TERM are LANLEADER_NODE_ID and LANLEADER_TERM
// (the fencing token). With -stop-delay D it goes on stamping (and
// writing) for D after SIGTERM before its stop stamp: a job that takes
// its time to stop. UNIXNANO is CLOCK_REALTIME, which time namespaces
// do not shift: one clock for every host of the test bed. The job may be
// SIGKILLed (the agent's job guard does at the end of a lease), so a run
// is [start, its last stamp]; every stamp is one write(2) of one line to a
// file opened O_APPEND, so lines of different runs never mix.
//
//	fencejob -print-monotonic
//
// prints this process's CLOCK_MONOTONIC in nanoseconds and CLOCK_REALTIME
// in nanoseconds, on one line: the tests check with it that a host's time
// namespace shifts its monotonic clock.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const (
	every      = 5 * time.Millisecond
	sinkWait   = 500 * time.Millisecond // at most, for the sink's answer
	redialWait = 50 * time.Millisecond  // between attempts to reach the sink
)

func main() {
	printMono := flag.Bool("print-monotonic", false, "print CLOCK_MONOTONIC and CLOCK_REALTIME (ns) and exit")
	stopDelay := flag.Duration("stop-delay", 0, "how long to go on after SIGTERM before the stop stamp")
	flag.Parse()
	if *printMono {
		var mono, wall unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono); err != nil {
			fail(err)
		}
		if err := unix.ClockGettime(unix.CLOCK_REALTIME, &wall); err != nil {
			fail(err)
		}
		fmt.Println(mono.Nano(), wall.Nano())
		return
	}
	if flag.NArg() != 2 {
		fail(fmt.Errorf("usage: fencejob [-stop-delay D] STAMPS SINK | fencejob -print-monotonic"))
	}
	stampPath, sinkPath := flag.Arg(0), flag.Arg(1)
	node, err := strconv.Atoi(os.Getenv("LANLEADER_NODE_ID"))
	if err != nil {
		fail(fmt.Errorf("LANLEADER_NODE_ID: %v", err))
	}
	term, err := strconv.ParseUint(os.Getenv("LANLEADER_TERM"), 10, 64)
	if err != nil {
		fail(fmt.Errorf("LANLEADER_TERM: %v", err))
	}
	f, err := os.OpenFile(stampPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fail(err)
	}
	j := &job{f: f, node: node, term: term, pid: os.Getpid()}

	// SIGTERM: the last stamp after -stop-delay (the work of a job that
	// takes its time to stop), then exit; the lock keeps it last.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sigs
		time.Sleep(*stopDelay)
		j.mu.Lock()
		j.stamp("stop")
		os.Exit(0)
	}()

	j.mu.Lock()
	j.stamp("start")
	j.mu.Unlock()
	fmt.Printf("fencejob: node %d term %d pid %d started\n", node, term, j.pid)
	var (
		sink     net.Conn
		answers  *bufio.Reader
		lastDial time.Time
		seq      uint64
		rejects  uint64
	)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for range tick.C {
		j.mu.Lock()
		j.stamp("alive")
		j.mu.Unlock()
		if sink == nil && time.Since(lastDial) >= redialWait {
			lastDial = time.Now()
			if c, err := net.DialTimeout("unix", sinkPath, sinkWait); err == nil {
				sink, answers = c, bufio.NewReader(c)
			} else {
				fmt.Fprintf(os.Stderr, "fencejob: sink: %v\n", err)
			}
		}
		if sink == nil {
			continue
		}
		seq++
		sink.SetDeadline(time.Now().Add(sinkWait))
		_, err := fmt.Fprintf(sink, "%d %d %d\n", term, node, seq)
		var answer string
		if err == nil {
			answer, err = answers.ReadString('\n')
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "fencejob: sink: %v\n", err)
			sink.Close()
			sink = nil
			continue
		}
		if answer != "ok\n" {
			// Fenced off: a later term has written. Kept on, so that the
			// test counts every stale write.
			if rejects++; rejects == 1 || rejects%100 == 0 {
				fmt.Fprintf(os.Stderr, "fencejob: term %d: the sink answered %q (%d rejects)\n", term, answer, rejects)
			}
		}
	}
}

type job struct {
	mu   sync.Mutex
	f    *os.File
	node int
	term uint64
	pid  int
}

// stamp appends one line, in one write. j.mu is held.
func (j *job) stamp(what string) {
	line := fmt.Sprintf("%s %d %d %d %d\n", what, j.node, time.Now().UnixNano(), j.term, j.pid)
	if _, err := j.f.WriteString(line); err != nil {
		fmt.Fprintf(os.Stderr, "fencejob: %v\n", err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "fencejob: %v\n", err)
	os.Exit(2)
}
