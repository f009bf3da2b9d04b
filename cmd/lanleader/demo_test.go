package main

import (
	"bytes"
	"regexp"
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
		`round 2: stopping gracefully \(RESIGN\) leader node-3\n.* node-2 leads, term 4: failover [\d.]+[mµ]?s`,
		`stopping every agent\n$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks /%s/:\n%s", re, out)
		}
	}
	if strings.Contains(out, "no agreement") {
		t.Errorf("no agreement:\n%s", out)
	}
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
