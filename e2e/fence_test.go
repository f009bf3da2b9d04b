//go:build linux

package e2e

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lanleader/lanleader/internal/waitfor"
)

// The quorum tests' checkers on synthetic input (no root needed): they
// pass a clean history and bite on a broken one; and the sink and the
// fencejob, run as plain processes.

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func stamps(lines ...string) []Stamp {
	var out []Stamp
	for _, l := range lines {
		// "KIND NODE MS TERM PID", MS since t0
		var kind string
		var node, msec, pid int
		var term uint64
		if _, err := fmt.Sscan(l, &kind, &node, &msec, &term, &pid); err != nil {
			panic(l)
		}
		s, ok := parseStamp(fmt.Sprintf("%s %d %d %d %d", kind, node, at(msec).UnixNano(), term, pid))
		if !ok {
			panic(l)
		}
		out = append(out, s)
	}
	return out
}

func recs(lines ...string) []SinkRecord {
	var out []SinkRecord
	for _, l := range lines {
		// "MS TERM NODE SEQ ok|reject"
		var msec, node int
		var term, seq uint64
		var verdict string
		if _, err := fmt.Sscan(l, &msec, &term, &node, &seq, &verdict); err != nil {
			panic(l)
		}
		out = append(out, SinkRecord{At: at(msec), Term: term, Node: node, Seq: seq, Accepted: verdict == "ok"})
	}
	return out
}

// A clean hand-over: host-5's run (term 3) killed by its guard at 100 ms,
// host-4's (term 5) from 450 ms, stopped by SIGTERM.
var cleanStamps = stamps(
	"start 5 0 3 100", "alive 5 5 3 100", "alive 5 100 3 100",
	"start 4 450 5 200", "alive 4 455 5 200", "alive 4 460 5 200", "stop 4 470 5 200",
	"start 5 900 7 300", "alive 5 905 7 300",
)

var cleanRecs = recs("5 3 5 1 ok", "100 3 5 2 ok", "455 5 4 1 ok", "460 5 4 2 ok", "905 7 5 1 ok")

func TestFenceCheckersPass(t *testing.T) {
	if v := fenceVerdict(cleanStamps, cleanRecs); len(v) > 0 {
		t.Errorf("a clean history: %q", v)
	}
	runs := jobRuns(cleanStamps)
	if len(runs) != 3 || runs[0].Stopped || !runs[1].Stopped || runs[1].Alive != 2 || !runs[0].End.Equal(at(100)) {
		t.Errorf("runs: %v", runs)
	}
	if gap, ok := smallestGap(runs, t0, at(1000)); !ok || gap != 350*time.Millisecond {
		t.Errorf("smallest gap %v %v, want 350ms", gap, ok)
	}
	if gap, ok := smallestGap(runs, at(800), at(1000)); !ok || gap != 430*time.Millisecond {
		t.Errorf("smallest gap in [800ms, 1s) %v %v, want 430ms", gap, ok)
	}
	if d := downtime(runs, t0, at(1000)); d != 350*time.Millisecond+430*time.Millisecond+95*time.Millisecond {
		t.Errorf("downtime %v, want 875ms", d)
	}
	if d := downtime(runs, at(50), at(460)); d != 350*time.Millisecond {
		t.Errorf("downtime in [50ms, 460ms) %v, want 350ms", d)
	}
	if a, r := sinkCounts(cleanRecs); a != 5 || r != 0 {
		t.Errorf("counts %d %d", a, r)
	}
}

func TestFenceCheckersBite(t *testing.T) {
	for _, c := range []struct {
		name   string
		stamps []Stamp
		recs   []SinkRecord
		want   []string // each in some violation
	}{{
		// host-5 paused, its job not killed: it stamps on after host-4's
		// started; the sink fences it off (rejects), which is no
		// violation of the sink's, but the runs overlap.
		name: "two runs overlap",
		stamps: stamps("start 5 0 3 100", "alive 5 5 3 100", "start 4 450 5 200", "alive 4 455 5 200",
			"alive 5 460 3 100", "alive 4 470 5 200"),
		recs: recs("5 3 5 1 ok", "455 5 4 1 ok", "460 3 5 2 reject"),
		want: []string{"two runs overlap 10ms"},
	}, {
		// One node, two runs at once (a restarted agent's new job while
		// the old one's guard still lets it run).
		name:   "two runs of one node overlap",
		stamps: stamps("start 5 0 3 100", "alive 5 5 3 100", "start 5 6 7 101", "alive 5 10 3 100", "alive 5 11 7 101"),
		want:   []string{"two runs overlap 4ms"},
	}, {
		name:   "a run that starts inside another",
		stamps: stamps("start 5 0 3 100", "start 4 10 5 200", "stop 4 20 5 200", "alive 5 30 3 100"),
		want:   []string{"two runs overlap 10ms"},
	}, {
		// A sink without fencing: term 3 accepted after 5.
		name:   "accepted term decreases",
		stamps: cleanStamps,
		recs:   recs("5 3 5 1 ok", "455 5 4 1 ok", "460 3 5 2 ok", "470 5 4 2 ok"),
		want:   []string{"accepted terms decrease: accepted term 3 (node 5)", "interleave: term 3 (node 5, seq 2)"},
	}, {
		name:   "two nodes under one term",
		stamps: stamps("start 5 0 3 100", "alive 5 5 3 100", "start 4 450 3 200", "alive 4 455 3 200"),
		recs:   recs("5 3 5 1 ok", "455 3 4 1 ok"),
		want:   []string{"two nodes under one term: term 3", "two nodes ran the job under term 3", "a later leader's run has a term not above"},
	}, {
		name:   "a later leader with a smaller term",
		stamps: stamps("start 5 0 7 100", "stop 5 5 7 100", "start 4 450 5 200", "alive 4 455 5 200"),
		want:   []string{"a later leader's run has a term not above the earlier one's"},
	}, {
		name:   "a torn stamp file",
		stamps: stamps("alive 5 5 3 100"),
		want:   []string{"a run without its start stamp"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			v := fenceVerdict(c.stamps, c.recs)
			if len(v) == 0 {
				t.Fatalf("no violation found")
			}
			all := strings.Join(v, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("no violation says %q; they are:\n%s", w, all)
				}
			}
		})
	}
	// The figures bite too: an overlap is a negative gap.
	runs := jobRuns(stamps("start 5 0 3 100", "alive 5 500 3 100", "start 4 450 5 200", "alive 4 455 5 200"))
	if gap, ok := smallestGap(runs, t0, at(1000)); !ok || gap != -50*time.Millisecond {
		t.Errorf("smallest gap of overlapping runs %v %v, want -50ms", gap, ok)
	}
}

func TestBeliefOverlap(t *testing.T) {
	ev := []Sample{
		{At: at(0), Host: 4, Source: "log", State: "leader", Term: 3, Leader: 5},
		{At: at(10), Host: 3, Source: "log", State: "follower", Term: 3, Leader: 5},
		{At: at(100), Host: 4, Source: "status", Err: "timeout"}, // paused: status polls say nothing
		{At: at(450), Host: 3, Source: "log", State: "leader", Term: 5, Leader: 4},
		{At: at(2100), Host: 4, Source: "log", State: "follower", Term: 5, Leader: 0}, // woke up, lease over
		{At: at(3000), Host: 2, Source: "log", State: "leader", Term: 9, Leader: 3},
		{At: at(3100), Host: 2, Source: "exit"},
		{At: at(4000), Host: 1, Source: "log", State: "leader", Term: 11, Leader: 2},
	}
	bs := beliefs(ev, at(5000))
	if len(bs) != 4 {
		t.Fatalf("beliefs %+v", bs)
	}
	d, a, b := longestBeliefOverlap(bs, t0, at(5000))
	if d != 1650*time.Millisecond || a.Host != 4 || b.Host != 3 {
		t.Errorf("longest overlap %v of %+v and %+v, want 1.65s of host-5 and host-4", d, a, b)
	}
	// Clipped to a window. host-3's belief ends at its agent's death
	// (3.1s); host-4's (since 450ms) and host-2's (since 4s) run to the
	// end of the record.
	if d, _, _ := longestBeliefOverlap(bs, at(2500), at(5000)); d != 1000*time.Millisecond {
		t.Errorf("overlap in [2.5s, 5s): %v, want 1s (host-4 and host-2's open belief)", d)
	}
	if d, _, _ := longestBeliefOverlap(bs, at(2900), at(3050)); d != 50*time.Millisecond {
		t.Errorf("overlap in [2.9s, 3.05s): %v, want 50ms", d)
	}
}

func TestFenceSink(t *testing.T) {
	s := NewFenceSink(t, t.TempDir())
	c, err := net.Dial("unix", s.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for _, step := range []struct{ line, want string }{
		{"3 5 1", "ok"}, {"3 5 2", "ok"}, {"5 4 1", "ok"}, {"3 5 3", "reject"}, {"5 4 2", "ok"}, {"4 2 1", "reject"},
		{"7 5 1", "ok"}, {"garbage", "reject"},
	} {
		fmt.Fprintf(c, "%s\n", step.line)
		got, err := r.ReadString('\n')
		if err != nil || strings.TrimSpace(got) != step.want {
			t.Fatalf("%q: answered %q %v, want %s", step.line, got, err, step.want)
		}
	}
	rs := s.Records()
	if a, rej := sinkCounts(rs); a != 5 || rej != 2 || len(s.Malformed()) != 1 {
		t.Errorf("%d accepted, %d rejected, %q malformed; want 5, 2, 1", a, rej, s.Malformed())
	}
	if v := append(acceptedTermDecreases(rs), termInterleavings(rs)...); len(v) > 0 {
		t.Errorf("the sink's own records: %q", v)
	}
	s.Close()
	s.Close()
}

// TestFenceJob runs the job program as a plain process against a sink:
// its stamps, its writes, its SIGTERM stamp, and -print-monotonic.
func TestFenceJob(t *testing.T) {
	if testing.Short() {
		t.Skip("builds e2e/internal/fencejob")
	}
	dir := t.TempDir()
	bin := buildFenceJob(t, dir)
	s := NewFenceSink(t, dir)
	path := filepath.Join(dir, "stamps")
	cmd := exec.Command(bin, path, s.Path)
	cmd.Env = append(os.Environ(), "LANLEADER_NODE_ID=4", "LANLEADER_TERM=17")
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitfor.Until(t, "20 writes of the fenced job at the sink", 10*time.Second, 10*time.Millisecond, func() (bool, string) {
		n := len(s.Records())
		return n >= 20, fmt.Sprintf("%d records", n)
	})
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("fencejob after SIGTERM: %v\n%s", err, out)
	}
	f := &stampFile{path: path}
	st := f.Stamps()
	runs := jobRuns(st)
	if len(runs) != 1 || runs[0].Node != 4 || runs[0].Term != 17 || runs[0].Pid != cmd.Process.Pid || !runs[0].Stopped || runs[0].Alive < 20 {
		t.Fatalf("runs %v of %d stamps (malformed %q)", runs, len(st), f.Malformed())
	}
	if st[0].Kind != "start" || st[len(st)-1].Kind != "stop" {
		t.Errorf("first stamp %v, last %v", st[0], st[len(st)-1])
	}
	rs := s.Records()
	if a, rej := sinkCounts(rs); a < 20 || rej != 0 || rs[0].Term != 17 || rs[0].Node != 4 || rs[0].Seq != 1 {
		t.Errorf("sink: %d accepted, %d rejected, first %v", a, rej, rs[0])
	}
	// Period: ≈5 ms between stamps.
	if d := runs[0].End.Sub(runs[0].Start) / time.Duration(runs[0].Alive); d < 4*time.Millisecond || d > 50*time.Millisecond {
		t.Errorf("%v between stamps, want ≈5ms", d)
	}
	b, err := exec.Command(bin, "-print-monotonic").Output()
	var mono, wall int64
	if err == nil {
		_, err = fmt.Sscan(string(b), &mono, &wall)
	}
	if err != nil || mono <= 0 || time.Since(time.Unix(0, wall)).Abs() > time.Minute {
		t.Errorf("-print-monotonic: %q %v", b, err)
	}
}
