package lists

import (
	"flag"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDurations(t *testing.T) {
	got, err := Durations("-heartbeat", "100ms, 10ms", time.Millisecond)
	if err != nil || !slices.Equal(got, []time.Duration{100 * time.Millisecond, 10 * time.Millisecond}) {
		t.Errorf("Durations(100ms, 10ms) = %v, %v", got, err)
	}
	for _, tc := range []struct{ in, want string }{
		{"100ms,x", `-heartbeat: "x" is not a duration (like 100ms)`},
		{"100us", "-heartbeat: 100µs is shorter than 1ms"},
		{"", `-heartbeat: "" is not a duration (like 100ms)`},
	} {
		if _, err := Durations("-heartbeat", tc.in, time.Millisecond); err == nil || err.Error() != tc.want {
			t.Errorf("Durations(%q): %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestModes(t *testing.T) {
	got, err := Modes("-mode", "crash, graceful")
	if err != nil || !slices.Equal(got, []string{"crash", "graceful"}) {
		t.Errorf("Modes(crash, graceful) = %v, %v", got, err)
	}
	if _, err := Modes("-mode", "crash,kill"); err == nil || err.Error() != `-mode: "kill" is not crash or graceful` {
		t.Errorf("Modes(crash,kill): %v", err)
	}
}

func TestParse(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	n := fs.Int("n", 1, "")
	if err := Parse(fs, []string{"-n", "3"}); err != nil || *n != 3 {
		t.Errorf("Parse(-n 3): n %d, %v", *n, err)
	}
	fs = flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Int("n", 1, "")
	if err := Parse(fs, []string{"-n", "3", "extra"}); err == nil || err.Error() != `unexpected argument "extra"` {
		t.Errorf("Parse with an argument: %v", err)
	}
	fs = flag.NewFlagSet("x", flag.ContinueOnError)
	if err := Parse(fs, []string{"-bogus"}); err == nil || !strings.Contains(err.Error(), "-bogus") {
		t.Errorf("Parse(-bogus): %v", err)
	}
}

func TestSizes(t *testing.T) {
	got, err := Sizes("-n", "8, 16,1024", 3, 1024)
	if err != nil || !slices.Equal(got, []int{8, 16, 1024}) {
		t.Fatalf("Sizes = %v, %v; want [8 16 1024]", got, err)
	}
	for _, bad := range []string{"2", "1025", "x", "8,,16", "8,16,8"} {
		if _, err := Sizes("-n", bad, 3, 1024); err == nil || !strings.HasPrefix(err.Error(), "-n: ") {
			t.Errorf("Sizes(%q): error %v, want one naming -n", bad, err)
		}
	}
}
