package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The demo's job: every demo agent runs this program again as its job
// (`lanleader demo-job SOCKET`, a command the usage does not list). The
// job connects to the demo's Unix socket and says who it is; the demo
// stamps the connection as the run's start and its end of file as the
// run's end. The kernel closes the socket when the process ends, however
// it ends (a SIGTERM, the SIGKILL of a crashed agent's job), so the runs
// the demo checks are the jobs' own lives, not what the leadership says.

// runDemoJob is `lanleader demo-job SOCKET`: it says "start NAME TERM
// PID" on the socket, then prints a line a second until a signal ends it
// (the agent's SIGTERM, or the SIGKILL of its group) or the demo goes.
func runDemoJob(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "lanleader demo-job: want the demo's socket")
		return 2
	}
	c, err := net.Dial("unix", args[0])
	if err != nil {
		fmt.Fprintf(stderr, "lanleader demo-job: %v\n", err)
		return 1
	}
	name, term := os.Getenv("LANLEADER_NAME"), os.Getenv("LANLEADER_TERM")
	if _, err := fmt.Fprintf(c, "start %s %s %d\n", name, term, os.Getpid()); err != nil {
		fmt.Fprintf(stderr, "lanleader demo-job: %v\n", err)
		return 1
	}
	gone := make(chan struct{})
	go func() { io.Copy(io.Discard, c); close(gone) }() // the demo ended
	t0 := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-gone:
			return 0
		case <-tick.C:
			fmt.Fprintf(stdout, "the job of %s, term %s: working for %v\n", name, term, time.Since(t0).Round(time.Second))
		}
	}
}

// jobRun is one run of a demo agent's job, as the job itself told it.
type jobRun struct {
	node       string
	term       uint64
	pid        int
	start, end time.Time // end is zero while it runs
}

// jobWatch listens on the demo's socket and records the jobs' runs.
type jobWatch struct {
	dir  string
	ln   net.Listener
	conn sync.WaitGroup

	mu   sync.Mutex
	runs []jobRun
}

// watchJobs listens on a socket in a new temporary folder.
func watchJobs() (*jobWatch, error) {
	dir, err := os.MkdirTemp("", "lanleader-demo-")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "jobs.sock"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	w := &jobWatch{dir: dir, ln: ln}
	go w.accept()
	return w, nil
}

// socket is the path the jobs connect to.
func (w *jobWatch) socket() string { return w.ln.Addr().String() }

func (w *jobWatch) accept() {
	for {
		c, err := w.ln.Accept()
		if err != nil {
			return
		}
		w.conn.Add(1)
		go w.serve(c)
	}
}

// serve records the run of one connection: its start when the job says
// it, its end at the end of file.
func (w *jobWatch) serve(c net.Conn) {
	defer w.conn.Done()
	defer c.Close()
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 4 || f[0] != "start" {
		return
	}
	term, _ := strconv.ParseUint(f[2], 10, 64)
	pid, _ := strconv.Atoi(f[3])
	w.mu.Lock()
	i := len(w.runs)
	w.runs = append(w.runs, jobRun{node: f[1], term: term, pid: pid, start: time.Now()})
	w.mu.Unlock()
	io.Copy(io.Discard, r)
	w.mu.Lock()
	w.runs[i].end = time.Now()
	w.mu.Unlock()
}

// all returns a copy of the runs so far.
func (w *jobWatch) all() []jobRun {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.runs)
}

// running returns the run of node's job that runs now and started at or
// after since.
func (w *jobWatch) running(node string, since time.Time) (jobRun, bool) {
	for _, r := range w.all() {
		if r.node == node && r.end.IsZero() && !r.start.Before(since) {
			return r, true
		}
	}
	return jobRun{}, false
}

// lastEnd is the end of the latest run of node's job that ended (zero:
// none).
func (w *jobWatch) lastEnd(node string) time.Time {
	var end time.Time
	for _, r := range w.all() {
		if r.node == node && r.end.After(end) {
			end = r.end
		}
	}
	return end
}

// close stops listening, once every agent has stopped: the runs still
// open are waited for (their jobs' ends) up to wait, then the folder is
// removed.
func (w *jobWatch) close(wait time.Duration) {
	w.ln.Close()
	done := make(chan struct{})
	go func() { w.conn.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(wait):
	}
	os.RemoveAll(w.dir)
}

// overlaps lists every two runs on different nodes that ran at once, a
// run still open as running until now, in words.
func overlaps(runs []jobRun, now time.Time, since time.Time) []string {
	end := func(r jobRun) time.Time {
		if r.end.IsZero() {
			return now
		}
		return r.end
	}
	at := func(t time.Time) string { return fmt.Sprintf("%.3fs", t.Sub(since).Seconds()) }
	var out []string
	for i, a := range runs {
		for _, b := range runs[i+1:] {
			if a.node != b.node && a.start.Before(end(b)) && b.start.Before(end(a)) {
				out = append(out, fmt.Sprintf("%s's job (term %d, %s to %s) and %s's (term %d, %s to %s)",
					a.node, a.term, at(a.start), at(end(a)), b.node, b.term, at(b.start), at(end(b))))
			}
		}
	}
	return out
}
