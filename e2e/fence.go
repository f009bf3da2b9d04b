//go:build linux

package e2e

import (
	"bufio"
	"errors"
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

// The fenced sink, and what the quorum tests check with it and with the
// job's stamps.
//
// A FenceSink is a server of the test process, on a unix socket in the
// test's directory: a pathname socket is reached through the file system,
// not the network, so every host of the test bed reaches it and no
// network fault (all of them on the hosts' eth0) cuts it off — it is
// outside every partition, as a storage service of the real world would
// be. The job (e2e/internal/fencejob) writes "TERM NODE SEQ" lines to it;
// it accepts a write whose term is at least the highest it has accepted
// and rejects one below (the fencing token rule), and records every write.
//
// The checkers are pure functions of the records and stamps, so that
// fence_test.go can show them biting on synthetic input without root.

// SinkRecord is one write the sink received.
type SinkRecord struct {
	At       time.Time // arrival, the test process's wall clock
	Term     uint64
	Node     int
	Seq      uint64
	Accepted bool
}

func (r SinkRecord) String() string {
	verdict := "accepted"
	if !r.Accepted {
		verdict = "rejected"
	}
	return fmt.Sprintf("%s node %d term %d seq %d %s", r.At.Format("15:04:05.000000"), r.Node, r.Term, r.Seq, verdict)
}

// FenceSink is the fenced sink's server.
type FenceSink struct {
	Path string // the unix socket

	ln      net.Listener
	mu      sync.Mutex
	highest uint64
	recs    []SinkRecord
	bad     []string // lines that were not "TERM NODE SEQ"
	conns   map[net.Conn]struct{}
	closed  bool
	wg      sync.WaitGroup
}

// NewFenceSink starts a sink on a socket in dir; it stops at the end of
// the test.
func NewFenceSink(t TB, dir string) *FenceSink {
	t.Helper()
	path := filepath.Join(dir, "sink")
	if len(path) >= 100 { // sun_path is 108 bytes
		d, err := os.MkdirTemp("", Prefix+"sink-")
		if err != nil {
			t.Fatalf("e2e: %v", err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		path = filepath.Join(d, "sink")
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("e2e: the fenced sink: %v", err)
	}
	s := &FenceSink{Path: path, ln: ln, conns: make(map[net.Conn]struct{})}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.Close)
	return s
}

// Close stops the server; the records stay readable.
func (s *FenceSink) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *FenceSink) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(c)
	}
}

func (s *FenceSink) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		answer := "reject\n"
		if s.write(strings.TrimSpace(line)) {
			answer = "ok\n"
		}
		if _, err := io.WriteString(c, answer); err != nil {
			return
		}
	}
}

// write decides on one line and records it; true when accepted.
func (s *FenceSink) write(line string) bool {
	f := strings.Fields(line)
	var (
		rec  SinkRecord
		errs []error
		err  error
	)
	if len(f) != 3 {
		errs = append(errs, errors.New("not 3 fields"))
	} else {
		rec.Term, err = strconv.ParseUint(f[0], 10, 64)
		errs = append(errs, err)
		rec.Node, err = strconv.Atoi(f[1])
		errs = append(errs, err)
		rec.Seq, err = strconv.ParseUint(f[2], 10, 64)
		errs = append(errs, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if errors.Join(errs...) != nil {
		s.bad = append(s.bad, line)
		return false
	}
	// The arrival time is taken under the lock: the records' order is the
	// order of the decisions.
	rec.At = time.Now()
	if rec.Term >= s.highest {
		s.highest = rec.Term
		rec.Accepted = true
	}
	s.recs = append(s.recs, rec)
	return rec.Accepted
}

// Records is every write so far, in the order of arrival.
func (s *FenceSink) Records() []SinkRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.recs)
}

// Malformed is the lines that were not writes.
func (s *FenceSink) Malformed() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.bad)
}

// recordsBetween is the records that arrived in [from, to).
func recordsBetween(recs []SinkRecord, from, to time.Time) []SinkRecord {
	var out []SinkRecord
	for _, r := range recs {
		if !r.At.Before(from) && r.At.Before(to) {
			out = append(out, r)
		}
	}
	return out
}

// sinkCounts is the accepted and rejected writes of recs.
func sinkCounts(recs []SinkRecord) (accepted, rejected int) {
	for _, r := range recs {
		if r.Accepted {
			accepted++
		} else {
			rejected++
		}
	}
	return
}

// maxViolations bounds each checker's list.
const maxViolations = 20

// acceptedTermDecreases lists every accepted write whose term is below the
// previous accepted write's: accepted terms must never decrease.
func acceptedTermDecreases(recs []SinkRecord) []string {
	var out []string
	var prev *SinkRecord
	for i := range recs {
		r := &recs[i]
		if !r.Accepted {
			continue
		}
		if prev != nil && r.Term < prev.Term && len(out) < maxViolations {
			out = append(out, fmt.Sprintf("accepted term %d (node %d) at %s after term %d (node %d) at %s",
				r.Term, r.Node, r.At.Format("15:04:05.000000"), prev.Term, prev.Node, prev.At.Format("15:04:05.000000")))
		}
		prev = r
	}
	return out
}

// termInterleavings lists every term t accepted again after a write of a
// larger term t' was accepted: writes under two terms must not
// interleave (the fenced store never takes the stale leader's write once
// the new one's has landed).
func termInterleavings(recs []SinkRecord) []string {
	var out []string
	var top SinkRecord // the accepted write of the largest term so far
	for _, r := range recs {
		if !r.Accepted {
			continue
		}
		if r.Term < top.Term {
			if len(out) < maxViolations {
				out = append(out, fmt.Sprintf("term %d (node %d, seq %d) accepted at %s, after term %d (node %d) was accepted at %s",
					r.Term, r.Node, r.Seq, r.At.Format("15:04:05.000000"), top.Term, top.Node, top.At.Format("15:04:05.000000")))
			}
			continue
		}
		if r.Term > top.Term {
			top = r
		}
	}
	return out
}

// termNodeConflicts lists every term under which writes of two nodes were
// accepted: a term is one leadership, held by one node (the term is the
// fencing token only if two leaders never share one).
func termNodeConflicts(recs []SinkRecord) []string {
	first := map[uint64]SinkRecord{}
	seen := map[[2]uint64]bool{}
	var out []string
	for _, r := range recs {
		if !r.Accepted {
			continue
		}
		f, ok := first[r.Term]
		if !ok {
			first[r.Term] = r
			continue
		}
		key := [2]uint64{r.Term, uint64(r.Node)}
		if f.Node != r.Node && !seen[key] {
			seen[key] = true
			out = append(out, fmt.Sprintf("term %d: writes of node %d (from %s) and node %d (at %s) accepted",
				r.Term, f.Node, f.At.Format("15:04:05.000000"), r.Node, r.At.Format("15:04:05.000000")))
		}
	}
	return out
}

// Stamp is one line of the job's stamp file.
type Stamp struct {
	Kind string // start, alive, stop
	Node int
	At   time.Time // the job's wall clock
	Term uint64
	Pid  int
}

// parseStamp reads "KIND NODE UNIXNANO TERM PID".
func parseStamp(line string) (Stamp, bool) {
	f := strings.Fields(line)
	if len(f) != 5 || f[0] != "start" && f[0] != "alive" && f[0] != "stop" {
		return Stamp{}, false
	}
	node, err1 := strconv.Atoi(f[1])
	ns, err2 := strconv.ParseInt(f[2], 10, 64)
	term, err3 := strconv.ParseUint(f[3], 10, 64)
	pid, err4 := strconv.Atoi(f[4])
	if errors.Join(err1, err2, err3, err4) != nil {
		return Stamp{}, false
	}
	return Stamp{Kind: f[0], Node: node, At: time.Unix(0, ns), Term: term, Pid: pid}, true
}

// stampFile reads a stamp file as it grows.
type stampFile struct {
	path string

	mu     sync.Mutex
	off    int64
	stamps []Stamp
	runs   runBuilder
	bad    []string
}

// read reads the lines added since the last call. f.mu is held.
func (f *stampFile) read() {
	readNewLines(f.path, &f.off, func(line string) {
		if s, ok := parseStamp(line); ok {
			f.stamps = append(f.stamps, s)
			f.runs.add(s)
		} else {
			f.bad = append(f.bad, line)
		}
	})
}

// readNewLines calls each for every whole line of the file at path from
// *off on, and moves *off past them; a partial line is left for the next
// call, and a file that cannot be read yet has none.
func readNewLines(path string, off *int64, each func(line string)) {
	fh, err := os.Open(path)
	if err != nil {
		return
	}
	defer fh.Close()
	if _, err := fh.Seek(*off, io.SeekStart); err != nil {
		return
	}
	r := bufio.NewReaderSize(fh, 1<<16)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		*off += int64(len(line))
		each(line)
	}
}

// Stamps is every stamp so far, in the file's order.
func (f *stampFile) Stamps() []Stamp {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read()
	return slices.Clone(f.stamps)
}

// Runs is jobRuns(f.Stamps()), built as the file grows.
func (f *stampFile) Runs() []JobRun {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read()
	return f.runs.sorted()
}

// Malformed is the lines that were not stamps.
func (f *stampFile) Malformed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.bad)
}

// JobRun is one run of the job: from its start stamp to its last stamp.
type JobRun struct {
	Node       int
	Pid        int
	Term       uint64
	Start, End time.Time
	Stopped    bool // it ended with its SIGTERM stamp (not killed, or still running)
	Alive      int  // its alive stamps
	NoStart    bool // stamps without a start stamp (a torn file)
}

func (r JobRun) String() string {
	how := "no stop stamp"
	if r.Stopped {
		how = "stopped"
	}
	return fmt.Sprintf("node %d pid %d term %d [%s, %s] %v, %s", r.Node, r.Pid, r.Term,
		r.Start.Format("15:04:05.000000"), r.End.Format("15:04:05.000000"), r.End.Sub(r.Start).Round(time.Millisecond), how)
}

// jobRuns groups stamps into runs, a run per start stamp (a later stamp
// of the same node and pid belongs to the latest such run); sorted by
// start.
func jobRuns(stamps []Stamp) []JobRun {
	var b runBuilder
	for _, s := range stamps {
		b.add(s)
	}
	return b.sorted()
}

// runBuilder makes runs of stamps, one at a time.
type runBuilder struct {
	runs []JobRun
	cur  map[[2]int]int // (node, pid) → its latest run's index in runs
}

func (b *runBuilder) add(s Stamp) {
	if b.cur == nil {
		b.cur = map[[2]int]int{}
	}
	key := [2]int{s.Node, s.Pid}
	k, ok := b.cur[key]
	if s.Kind == "start" || !ok {
		b.runs = append(b.runs, JobRun{Node: s.Node, Pid: s.Pid, Term: s.Term, Start: s.At, End: s.At, NoStart: s.Kind != "start"})
		k = len(b.runs) - 1
		b.cur[key] = k
	}
	r := &b.runs[k]
	if s.At.After(r.End) {
		r.End = s.At
	}
	switch s.Kind {
	case "alive":
		r.Alive++
	case "stop":
		r.Stopped = true
	}
}

func (b *runBuilder) sorted() []JobRun {
	runs := slices.Clone(b.runs)
	slices.SortStableFunc(runs, func(a, b JobRun) int { return a.Start.Compare(b.Start) })
	return runs
}

// runOverlaps lists every two runs whose intervals [start, last stamp]
// overlap: the job ran twice at once. (A run killed by SIGKILL lived up
// to one stamp period past its last stamp, which the interval leaves
// out.)
func runOverlaps(runs []JobRun) []string {
	var out []string
	for i := range runs {
		for j := i + 1; j < len(runs); j++ {
			a, b := runs[i], runs[j]
			if a.Start.Before(b.End) && b.Start.Before(a.End) {
				if len(out) < maxViolations {
					ov := earliest(a.End, b.End).Sub(latest(a.Start, b.Start))
					out = append(out, fmt.Sprintf("two runs overlap %v: %v and %v", ov.Round(time.Microsecond), a, b))
				}
			}
		}
	}
	return out
}

// smallestGap is the smallest time from the end of the runs so far to the
// start of the next run, over the runs that start in [from, to) (each
// compared with every run that started before it): negative when runs
// overlap; ok is false when no run starts in the window after another.
func smallestGap(runs []JobRun, from, to time.Time) (gap time.Duration, ok bool) {
	var end time.Time // the latest end of the runs before
	for i, r := range runs {
		if i > 0 && !r.Start.Before(from) && r.Start.Before(to) {
			if g := r.Start.Sub(end); !ok || g < gap {
				gap, ok = g, true
			}
		}
		if r.End.After(end) {
			end = r.End
		}
	}
	return gap, ok
}

// Belief is an interval in which a host believed it led: from its log
// line that says it became leader to its next line that says otherwise
// (or its death, or the end of the record).
type Belief struct {
	Host     int
	Term     uint64
	From, To time.Time
}

// beliefs is every interval of leadership belief in events (only the
// agents' own log lines count: they carry the moment the agent itself
// changed its mind; a sample with Source "exit" ends a belief: the
// agent died), the open ones ending at until.
func beliefs(events []Sample, until time.Time) []Belief {
	ev := slices.Clone(events)
	slices.SortStableFunc(ev, func(a, b Sample) int { return a.At.Compare(b.At) })
	open := map[int]*Belief{}
	var out []Belief
	for _, s := range ev {
		if s.Source != "log" && s.Source != "exit" {
			continue
		}
		b := open[s.Host]
		leads := s.Source == "log" && s.State == "leader"
		switch {
		case leads && b == nil:
			open[s.Host] = &Belief{Host: s.Host, Term: s.Term, From: s.At}
		case !leads && b != nil:
			b.To = s.At
			out = append(out, *b)
			delete(open, s.Host)
		}
	}
	for _, b := range open {
		b.To = until
		out = append(out, *b)
	}
	slices.SortFunc(out, func(a, b Belief) int { return a.From.Compare(b.From) })
	return out
}

// longestBeliefOverlap is the longest time two hosts both believed they
// led, within [from, to), and the two beliefs.
func longestBeliefOverlap(bs []Belief, from, to time.Time) (time.Duration, Belief, Belief) {
	var (
		best   time.Duration
		ba, bb Belief
	)
	for i := range bs {
		for j := i + 1; j < len(bs); j++ {
			a, b := bs[i], bs[j]
			if a.Host == b.Host {
				continue
			}
			lo := latest(a.From, b.From, from)
			hi := earliest(a.To, b.To, to)
			if d := hi.Sub(lo); d > best {
				best, ba, bb = d, a, b
			}
		}
	}
	return best, ba, bb
}

func latest(ts ...time.Time) time.Time   { return slices.MaxFunc(ts, time.Time.Compare) }
func earliest(ts ...time.Time) time.Time { return slices.MinFunc(ts, time.Time.Compare) }

var (
	fenceJobMu   sync.Mutex
	fenceJobBins = map[string]string{}
)

// buildFenceJob builds e2e/internal/fencejob into dir (once per dir) and
// returns its path.
func buildFenceJob(t TB, dir string) string {
	t.Helper()
	fenceJobMu.Lock()
	defer fenceJobMu.Unlock()
	if bin, ok := fenceJobBins[dir]; ok {
		return bin
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatalf("e2e: %v", err)
	}
	bin := filepath.Join(dir, "fencejob")
	if err := goBuild(root, "./e2e/internal/fencejob", bin); err != nil {
		t.Fatalf("e2e: %v", err)
	}
	fenceJobBins[dir] = bin
	return bin
}
