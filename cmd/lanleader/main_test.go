package main

import (
	"bytes"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/lanleader/lanleader/wire"
)

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// The story elects the largest, fails over to the next, takes back, hands
// over on resign and takes back after the hold-off, in that order.
func TestSimStory(t *testing.T) {
	code, out, errs := runCmd("sim", "-nodes", "4")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	got := regexp.MustCompile(`(?m)^-> node (\d+) leads with term (\d+)`).FindAllStringSubmatch(out, -1)
	var seq []string
	for _, m := range got {
		seq = append(seq, m[1]+"@"+m[2])
	}
	if want := "4@1 3@2 4@3 3@4 4@5"; strings.Join(seq, " ") != want {
		t.Fatalf("leaders@terms %q, want %q\n%s", strings.Join(seq, " "), want, out)
	}
	if strings.Contains(out, "HEARTBEAT to") || strings.Contains(out, "VIOLATION") {
		t.Fatalf("the story shows heartbeats or a violation:\n%s", out)
	}
}

func TestSimSeed(t *testing.T) {
	code, out, _ := runCmd("sim", "-seed", "12")
	if code != 0 || !strings.Contains(out, "all invariants held") || !strings.HasPrefix(out, "seed 12: ") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	_, traced, _ := runCmd("sim", "-seed", "12", "-trace")
	if !strings.Contains(traced, " LEADER term=") || len(traced) <= len(out) {
		t.Fatalf("-trace printed no events:\n%s", traced)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "usage: lanleader"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"sim", "-nodes", "2"}, "-nodes 2: want 3 to 64"},
		{[]string{"sim", "-nodes", "x"}, "invalid value"},
		{[]string{"sim", "extra"}, `unexpected argument "extra"`},
	} {
		code, _, errs := runCmd(tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

// The version line ends with the election protocol's version, which the
// package's postinst compares before it restarts an agent on an upgrade
// (packaging/postinst.sh takes the field after the last " wire ").
func TestVersion(t *testing.T) {
	code, out, _ := runCmd("version")
	want := regexp.MustCompile(`^lanleader dev( \([0-9a-f]{12}\))? go\S+ wire ` + strconv.Itoa(int(wire.Version)) + "\n$")
	if code != 0 || !want.MatchString(out) {
		t.Fatalf("exit %d, %q; want a match of %s", code, out, want)
	}
}

// The agent runs Go code on one thread unless GOMAXPROCS is set, and
// then leaves the runtime's reading of it alone.
func TestOneProc(t *testing.T) {
	was := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(was)
	runtime.GOMAXPROCS(3)
	oneProc(func(string) string { return "3" })
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("GOMAXPROCS=3 in the environment: %d threads, want 3 (left alone)", got)
	}
	oneProc(func(string) string { return "" })
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("GOMAXPROCS unset: %d threads, want 1", got)
	}
}
