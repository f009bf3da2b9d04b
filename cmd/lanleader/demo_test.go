package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDemo: two rounds of the demo on 3 agents (a crash, then a graceful
// stop) print each election, its failover time, and the take-back.
func TestDemo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"demo", "--nodes", "3", "--rounds", "2", "--every", "300ms"}, &stdout, &stderr)
	out := stdout.String()
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr.String())
	}
	for _, re := range []string{
		`starting 3 agents on 127\.0\.0\.1`,
		`node-3 leads, term 1: elected \d+ms after start`,
		`round 1: crashed \(no RESIGN\) leader node-3\n.* node-2 leads, term 2: failover \d+ms`,
		`node-3 takes the lead back \(largest key, preempt\), term 3`,
		// The new leader is told when it leads, before the old agent has
		// finished leaving.
		`round 2: stopping gracefully \(RESIGN\) leader node-3\n.* node-2 leads, term 4: failover [\d.]+[mµ]?s\n.* node-3 has left \(its graceful stop took [\d.]+m?s\)\n`,
		`stopping every agent\n$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks /%s/:\n%s", re, out)
		}
	}
	// The stamps: the new leader's line was printed while the old agent
	// was still leaving, not once it had left.
	m := regexp.MustCompile(`(?m)^ *([\d.]+)s +node-2 leads, term 4.*\n^ *([\d.]+)s +node-3 has left`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no round 2 lines:\n%s", out)
	}
	if leads, left := mustFloat(t, m[1]), mustFloat(t, m[2]); leads >= left {
		t.Errorf("the new leader was told at %.3fs, not before the old agent had left (%.3fs)", leads, left)
	}
	if strings.Contains(out, "no agreement") {
		t.Errorf("no agreement:\n%s", out)
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
