//go:build linux

package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
)

func TestParseQuorum(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []int  // nil: an error
		err  string // part of the error
	}{
		{nil, []int{0}, ""},
		{[]string{"-quorum", "0,5"}, []int{0, 5}, ""},
		{[]string{"-quorum", " 5 , 0"}, []int{5, 0}, ""},
		{[]string{"-quorum", "7"}, []int{7}, ""},                           // 7/2+1 = 4 of the 4 survivors of 5
		{[]string{"-quorum", "8"}, nil, "needs a majority of 5"},           // 5 > 4 survivors
		{[]string{"-hosts", "2", "-quorum", "2"}, nil, "needs a majority"}, // 2 > 1 survivor
		{[]string{"-hosts", "3", "-quorum", "0,3"}, []int{0, 3}, ""},       // 2 ≤ 2
		{[]string{"-quorum", "x"}, nil, "not a cluster size"},
		{[]string{"-quorum", "-1"}, nil, "not a cluster size"},
		{[]string{"-quorum", ""}, nil, "not a cluster size"},
		{[]string{"-quorum", "0,0"}, nil, "twice"},
	} {
		o, err := parseFlags(c.args)
		if c.want != nil {
			if err != nil || !slices.Equal(o.quorums, c.want) {
				t.Errorf("%q: %v, %v; want %v", c.args, o.quorums, err, c.want)
			}
		} else if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %v, %v; want an error with %q", c.args, o.quorums, err, c.err)
		}
	}
}

// -mode: crash, graceful and freeze (the leader's whole host stopped, its
// link down), freeze among the defaults; anything else, or a mode twice,
// is an error naming the flag.
func TestParseModes(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string // nil: an error
		err  string   // the error
	}{
		{nil, []string{"crash", "graceful", "freeze"}, ""},
		{[]string{"-mode", "freeze"}, []string{"freeze"}, ""},
		{[]string{"-mode", "crash,graceful,freeze"}, []string{"crash", "graceful", "freeze"}, ""},
		{[]string{"-mode", " freeze , crash"}, []string{"freeze", "crash"}, ""},
		{[]string{"-mode", "freeze", "-keepalived", "-advert-int", "1s", "-trials", "3", "-heartbeat", "100ms"}, []string{"freeze"}, ""},
		{[]string{"-mode", "pause"}, nil, `-mode: "pause" is not crash, graceful or freeze`},
		{[]string{"-mode", "freeze,"}, nil, `-mode: "" is not crash, graceful or freeze`},
		{[]string{"-mode", "resign"}, nil, `-mode: "resign" is not crash, graceful or freeze`},
		{[]string{"-mode", "crash,freeze,crash"}, nil, "-mode: crash twice"},
		{[]string{"-job", "-mode", "crash", "-quorum", "0,5"}, []string{"crash"}, ""},
		{[]string{"-job", "-vip"}, nil, "-job: only with failover rows, not with -scale, -vip or -loss (those run jobs of their own, or none)"},
		{[]string{"-job", "-loss", "20"}, nil, "-job: only with failover rows, not with -scale, -vip or -loss (those run jobs of their own, or none)"},
		{[]string{"-scale", "5", "-mode", "freeze"}, nil, "-scale: not with -vip, -loss, -mode or -hosts (its rows are crash failovers, one per host count)"},
	} {
		o, err := parseFlags(c.args)
		if c.want != nil {
			if err != nil || !slices.Equal(o.modes, c.want) {
				t.Errorf("%q: %v, %v; want %v", c.args, o.modes, err, c.want)
			}
		} else if err == nil || err.Error() != c.err {
			t.Errorf("%q: %v, %v; want the error %q", c.args, o.modes, err, c.err)
		}
	}
}

func msList(xs ...float64) []time.Duration {
	out := make([]time.Duration, len(xs))
	for i, x := range xs {
		out[i] = time.Duration(x * float64(time.Millisecond))
	}
	return out
}

// hasLine says whether out has a line of exactly these fields.
func hasLine(out string, fields ...string) bool {
	for l := range strings.SplitSeq(out, "\n") {
		if slices.Equal(strings.Fields(l), fields) {
			return true
		}
	}
	return false
}

func TestPrintTableQuorum(t *testing.T) {
	var b strings.Builder
	printTable(&b, []result{
		{System: "lanleader", Setting: "heartbeat 100ms", Base: "heartbeat 100ms", Mode: "crash", First: msList(100, 110, 120), All: msList(101, 111, 121), Packets: []uint64{3, 3, 3}},
	}, idleSpan{settle: defaultIdleSettle, window: defaultIdleWindow})
	if strings.Contains(b.String(), "quorum") {
		t.Errorf("no quorum row, yet the output says quorum:\n%s", b.String())
	}

	b.Reset()
	printTable(&b, []result{
		{System: "lanleader", Setting: "heartbeat 100ms, quorum off", Base: "heartbeat 100ms", Mode: "crash", First: msList(100, 110, 120), All: msList(101, 111, 121)},
		{System: "lanleader", Setting: "heartbeat 100ms, quorum 5", Base: "heartbeat 100ms", Quorum: 5, Mode: "crash", First: msList(200, 220, 240), All: msList(303, 333, 363)},
		{System: "lanleader", Setting: "heartbeat 100ms, quorum off", Base: "heartbeat 100ms", Mode: "graceful", First: msList(10)},
		{System: "lanleader", Setting: "heartbeat 100ms, quorum 5", Base: "heartbeat 100ms", Quorum: 5, Mode: "graceful"},               // failed: no samples
		{System: "lanleader", Setting: "heartbeat 10ms, quorum 5", Base: "heartbeat 10ms", Quorum: 5, Mode: "crash", First: msList(10)}, // no plain row
		{System: "keepalived", Setting: "advert_int 1s", Base: "advert_int 1s", Quorum: -1, Mode: "crash", First: msList(3000)},
	}, idleSpan{settle: defaultIdleSettle, window: defaultIdleWindow})
	out := b.String()
	if !hasLine(out, "lanleader", "heartbeat", "100ms", "crash", "5", "110.0", "220.0", "2.00", "111.0", "333.0", "3.00") {
		t.Errorf("no crash ratio line in:\n%s", out)
	}
	if !hasLine(out, "lanleader", "heartbeat", "100ms", "graceful", "5", "10.0", "-", "-", "-", "-", "-") {
		t.Errorf("no graceful ratio line (without samples) in:\n%s", out)
	}
	if strings.Contains(out, "10ms  crash  5") {
		t.Errorf("a ratio for a quorum row without a plain row:\n%s", out)
	}
}

func TestParseScale(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []int  // nil: an error, or no -scale when err is ""
		err  string // part of the error
	}{
		{nil, nil, ""},
		{[]string{"-scale", "5,32,64,128"}, []int{5, 32, 64, 128}, ""},
		{[]string{"-scale", " 128 , 5"}, []int{128, 5}, ""},
		{[]string{"-scale", "129"}, nil, "not a host count from 2 to 128"},
		{[]string{"-scale", "1"}, nil, "not a host count"},
		{[]string{"-scale", "5,5"}, nil, "twice"},
		{[]string{"-scale", "5,128", "-keepalived"}, []int{5, 128}, ""},
		{[]string{"-scale", "5", "-vip"}, nil, "not with"},
		{[]string{"-scale", "5", "-loss", "20"}, nil, "not with"},
		{[]string{"-scale", "5", "-hosts", "7"}, nil, "not with"},
		{[]string{"-hosts", "128"}, nil, ""},
		{[]string{"-hosts", "129"}, nil, "out of range 2…128"},
		{[]string{"-vip", "-hosts", "99"}, nil, "at most 98"},
	} {
		o, err := parseFlags(c.args)
		if c.err == "" && c.want != nil && !slices.Equal(o.adverts, []time.Duration{100 * time.Millisecond}) {
			t.Errorf("%q: advert_int %v, want 100ms alone", c.args, o.adverts)
		}
		if c.err == "" {
			if err != nil || !slices.Equal(o.scale, c.want) {
				t.Errorf("%q: %v, %v; want %v", c.args, o.scale, err, c.want)
			}
			if c.want != nil && !slices.Equal(o.heartbeats, []time.Duration{100 * time.Millisecond}) {
				t.Errorf("%q: heartbeats %v, want 100ms alone", c.args, o.heartbeats)
			}
		} else if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %v, %v; want an error with %q", c.args, o.scale, err, c.err)
		}
	}
}

func TestPrintScale(t *testing.T) {
	mib := uint64(1 << 20)
	results := []result{
		{Setting: "heartbeat 100ms", Hosts: 5, Startup: 120 * time.Millisecond, All: msList(200, 250, 300), Packets: []uint64{8, 10, 12},
			Usage: []usage{{Host: 0, IdleCPU: 0.5, RSS: 10 * mib}, {Host: 2, IdleCPU: 1.5, RSS: 12 * mib}, {Host: 1, IdleCPU: 0.25, RSS: 11 * mib}}},
		{Setting: "heartbeat 100ms", Hosts: 32, Startup: 0, All: msList(300, 450, 600), Packets: []uint64{64, 64, 70},
			Usage: []usage{{IdleCPU: 0.75, RSS: 14 * mib}}},
		{Setting: "heartbeat 100ms", Hosts: 128, Startup: -1, Failures: []string{"start-up: no convergence: 128 hosts do not agree"}},
	}
	var b strings.Builder
	printScale(&b, results, idleSpan{settle: defaultIdleSettle, window: defaultIdleWindow})
	out := b.String()
	for _, want := range [][]string{
		{"heartbeat", "100ms", "5", "120.0", "3", "250.0", "300.0", "1.00", "10", "12", "2.00", "0.50", "0.50", "1.50", "11.0", "12.0"},
		{"heartbeat", "100ms", "32", "0.0", "3", "450.0", "600.0", "2.00", "64", "70", "2.00", "0.75", "-", "0.75", "14.0", "14.0"},
		{"heartbeat", "100ms", "128", "no", "convergence", "0", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-"},
	} {
		if !hasLine(out, want...) {
			t.Errorf("no line %q in:\n%s", want, out)
		}
	}
}

// -scale's -quorum takes 0 (off) and n (N = each LAN's size), nothing else.
func TestParseScaleQuorum(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []bool // nil: an error
		err  string
	}{
		{[]string{"-scale", "5,32"}, []bool{false}, ""},
		{[]string{"-scale", "5,32", "-quorum", "n"}, []bool{true}, ""},
		{[]string{"-scale", "5,32", "-quorum", "0, n"}, []bool{false, true}, ""},
		{[]string{"-scale", "5", "-quorum", "5"}, nil, "neither 0 (off) nor n"},
		{[]string{"-scale", "2,5", "-quorum", "n"}, nil, "want at least 3"},
		{[]string{"-scale", "5", "-quorum", "n,n"}, nil, "twice"},
	} {
		o, err := parseFlags(c.args)
		switch {
		case c.err == "" && (err != nil || !slices.Equal(o.scaleQuorums, c.want)):
			t.Errorf("%q: %v, %v; want %v", c.args, o.scaleQuorums, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v; want an error with %q", c.args, err, c.err)
		case c.err == "" && !slices.Equal(o.quorums, []int{0}):
			t.Errorf("%q: quorums %v, want [0] (the scale rows choose theirs)", c.args, o.quorums)
		}
	}
}

// A row's setting says when its agents ran a job (-job).
func TestSettingNamesTheJob(t *testing.T) {
	o, err := parseFlags([]string{"-job", "-mode", "crash"})
	if err != nil {
		t.Fatal(err)
	}
	if got := o.setting(election.AlgorithmBully, 100*time.Millisecond); got != "heartbeat 100ms, job" {
		t.Errorf("setting %q, want %q", got, "heartbeat 100ms, job")
	}
	o.job = false
	if got := o.setting(election.AlgorithmBully, 100*time.Millisecond); got != "heartbeat 100ms" {
		t.Errorf("without -job: setting %q, want %q", got, "heartbeat 100ms")
	}
}

// -realtime: the rows say so.
func TestSettingNamesRealtime(t *testing.T) {
	o, err := parseFlags([]string{"-realtime", "-loss", "0"})
	if err != nil || !o.realtime {
		t.Fatalf("-realtime: %v, realtime %v", err, o.realtime)
	}
	if got := o.setting(election.AlgorithmBully, 10*time.Millisecond); got != "heartbeat 10ms, realtime" {
		t.Errorf("setting %q, want %q", got, "heartbeat 10ms, realtime")
	}
}
