package main

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// demoWithJobs makes the demo's agents run this test binary as their
// job, as `lanleader demo-job` (TestMain).
func demoWithJobs(t *testing.T) {
	t.Setenv("LANLEADER_AS_MAIN", "1")
	was := demoJob
	demoJob = func(socket string) ([]string, error) {
		return []string{os.Args[0], "-test.run=^$", "--", "demo-job", socket}, nil
	}
	t.Cleanup(func() { demoJob = was })
}

// TestDemo: two rounds of the demo on 3 agents (a crash, then a graceful
// stop) print each election, its failover time, where the job runs
// after it and the take-back; at the end a summary of the failovers'
// times (the median and the longest of the rounds' own lines) and of the
// jobs' runs, one at a time.
func TestDemo(t *testing.T) {
	demoWithJobs(t)
	var stdout, stderr bytes.Buffer
	code := run([]string{"demo", "--nodes", "3", "--rounds", "2", "--every", "300ms"}, &stdout, &stderr)
	out := stdout.String()
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr.String())
	}
	for _, re := range []string{
		`starting 3 agents on 127\.0\.0\.1 .*node-3 has the largest key: priority 100, node id 3\)`,
		`node-3 leads, term 1: elected \d+ms after start\n.* node-3's job runs, \d+ms after start\n`,
		`round 1: crashed \(no RESIGN\) leader node-3\n.* node-2 leads, term 2: failover \d+ms\n.* node-2's job runs, \d+ms after the take-down \(node-3's job ended \d+ms after the take-down\)`,
		`node-3 takes the lead back \(largest key, preempt\), term 3, .*\n.* node-3's job runs, \d+ms after its restart`,
		// The new leader is told when it leads, before the old agent has
		// finished leaving.
		`round 2: stopping gracefully \(RESIGN\) leader node-3\n.* node-2 leads, term 4: failover [\d.]+[mµ]?s\n.* node-2's job runs, .*\n.* node-3 has left \(its graceful stop took [\d.]+m?s\)\n`,
		`stopping every agent\n.* summary: 2 failovers \(1 crash, 1 graceful stop\)\n`,
		// Five runs: node-3's, then each round's new leader's and the
		// take-back's.
		`the job never ran on two nodes at once: 5 runs on 2 nodes, each ended before the next began \(from the jobs' own starts and ends\)\n$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks /%s/:\n%s", re, out)
		}
	}
	// The stamps: the new leader's line was printed while the old agent
	// was still leaving, not once it had left.
	m := regexp.MustCompile(`(?m)^ *([\d.]+)s +node-2 leads, term 4.*\n.*\n^ *([\d.]+)s +node-3 has left`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no round 2 lines:\n%s", out)
	}
	if leads, left := mustFloat(t, m[1]), mustFloat(t, m[2]); leads >= left {
		t.Errorf("the new leader was told at %.3fs, not before the old agent had left (%.3fs)", leads, left)
	}
	if strings.Contains(out, "no agreement") {
		t.Errorf("no agreement:\n%s", out)
	}
	// The summary's figures are the rounds' own.
	ms := func(re string) []float64 {
		var v []float64
		for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(out, -1) {
			d, err := time.ParseDuration(m[1])
			if err != nil {
				t.Fatal(err)
			}
			v = append(v, float64(d)/float64(time.Millisecond))
		}
		return v
	}
	for _, c := range []struct{ name, each, summary string }{
		{"the new leader", `failover ([\d.]+[mµ]?s)`, `take-down to the new leader: +median ([\d.]+[mµ]?s), max ([\d.]+[mµ]?s)`},
		{"its job", `job runs, ([\d.]+[mµ]?s) after the take-down`, `take-down to its job running: median ([\d.]+[mµ]?s), max ([\d.]+[mµ]?s)`},
	} {
		each := ms(c.each)
		sm := regexp.MustCompile(c.summary).FindStringSubmatch(out)
		if len(each) != 2 || sm == nil {
			t.Fatalf("%s: rounds %v, summary %q:\n%s", c.name, each, sm, out)
		}
		gotMed, gotMax := mustDur(t, sm[1]), mustDur(t, sm[2])
		wantMed, wantMax := (each[0]+each[1])/2, max(each[0], each[1])
		// Each round's time is rounded to the millisecond, as the
		// summary's: the median may differ by one.
		if gotMed < wantMed-1 || gotMed > wantMed+1 || gotMax != wantMax {
			t.Errorf("%s: summary median %vms max %vms, want %vms and %vms (the rounds' %v)", c.name, gotMed, gotMax, wantMed, wantMax, each)
		}
	}
}

func mustDur(t *testing.T, s string) float64 {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return float64(d) / float64(time.Millisecond)
}

// overlaps finds two runs on different nodes at once, a run still open
// counting as running until now; runs that touch or follow each other,
// or two of one node, are none.
func TestDemoOverlaps(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	one := []jobRun{
		{node: "node-3", term: 1, start: at(0), end: at(100)},
		{node: "node-2", term: 2, start: at(100), end: at(200)},
		{node: "node-2", term: 2, start: at(150), end: at(250)}, // its own restart
		{node: "node-3", term: 3, start: at(300)},
	}
	if got := overlaps(one, at(400), t0); got != nil {
		t.Errorf("one at a time: %q", got)
	}
	two := append(one, jobRun{node: "node-1", term: 4, start: at(350), end: at(360)})
	want := []string{"node-3's job (term 3, 0.300s to 0.400s) and node-1's (term 4, 0.350s to 0.360s)"}
	if got := overlaps(two, at(400), t0); !slices.Equal(got, want) {
		t.Errorf("two at once: %q, want %q", got, want)
	}
}

// demo --help explains the largest key (not --key-file) and every flag.
func TestDemoHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"demo", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	help := stdout.String()
	for _, want := range []string{
		"the largest election key",
		"The key is the pair (priority, node id), compared by priority\nfirst and by node id on a tie",
		"node-N has the largest key",
		"node-N has the largest key and leads while it lives; after it,\nthe next largest live node.",
		"This key is not a cryptographic key",
		"--key-file",
		"the median and the longest time to\nthe new leader and to its job running",
		"whether the job ever ran on\ntwo nodes at once",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("demo --help lacks %q:\n%s", want, help)
		}
	}
	// The text below the usage line fits a terminal of 80 columns.
	for i, l := range strings.Split(help, "\n")[1:] {
		if n := utf8.RuneCountInString(l); n >= 80 {
			t.Errorf("demo --help line %d has %d columns, want fewer than 80: %q", i+2, n, l)
		}
	}
	var flags []string
	fs := demoFlags(&demoOptions{})
	fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f.Name) })
	if len(flags) == 0 {
		t.Fatal("no flags")
	}
	for _, f := range flags {
		if !regexp.MustCompile(`(?m)^  --` + f + `\b`).MatchString(help) {
			t.Errorf("demo --help does not explain --%s", f)
		}
	}
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestDemoBadFlags(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"--nodes 1", "--nodes: 1 out of range 2…64"},
		{"--rounds -1", "--rounds: -1 must not be negative"},
		{"--every 1ms", "--every: 1ms is shorter than 100ms"},
		{"--heartbeat 2ms", "--heartbeat: 2ms is shorter than 10ms"},
		{"extra", `unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"demo"}, strings.Fields(c.args)...), &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), c.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("demo %s: exit %d, stderr %q; want 2 and %q", c.args, code, stderr.String(), c.want)
		}
	}
}
