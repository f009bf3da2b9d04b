//go:build linux

package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/e2e"
)

func TestParseVIP(t *testing.T) {
	o, err := parseFlags([]string{"-vip", "-trials", "20"})
	if err != nil || !o.vip || !slices.Equal(o.modes, []string{"crash", "graceful", "resign"}) ||
		!slices.Equal(o.adverts, []time.Duration{time.Second, 100 * time.Millisecond, 10 * time.Millisecond}) {
		t.Errorf("-vip's defaults: %v, modes %v, adverts %v", err, o.modes, o.adverts)
	}
	o, err = parseFlags([]string{"-vip", "-trials", "25", "-mode", "resign", "-advert-int", "100ms"})
	if err != nil || !slices.Equal(o.modes, []string{"resign"}) || !slices.Equal(o.adverts, []time.Duration{100 * time.Millisecond}) {
		t.Errorf("-vip with modes and adverts: %v, %v, %v", err, o.modes, o.adverts)
	}
	o, err = parseFlags([]string{"-vip", "-trials", "20", "-mode", "freeze,crash"})
	if err != nil || !slices.Equal(o.modes, []string{"freeze", "crash"}) {
		t.Errorf("-vip -mode freeze,crash: %v, %v", err, o.modes)
	}
	o, err = parseFlags(nil)
	if err != nil || o.vip || !slices.Equal(o.modes, []string{"crash", "graceful", "freeze"}) || len(o.adverts) != 2 {
		t.Errorf("without -vip the defaults stay: %v, %v, %v", err, o.modes, o.adverts)
	}
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"-vip"}, "-trials 30"}, // the default is 30: no error
		{[]string{"-vip", "-trials", "19"}, "want at least 20"},
		{[]string{"-mode", "resign"}, `-mode: "resign" is not crash, graceful or freeze`},
		{[]string{"-vip", "-trials", "20", "-mode", "pause"}, `-mode: "pause" is not crash, graceful, resign or freeze`},
		{[]string{"-vip", "-trials", "20", "-mode", "freeze,freeze"}, "-mode: freeze twice"},
		{[]string{"-vip", "-trials", "20", "-loss", "20"}, "one at a time"},
	} {
		_, err := parseFlags(c.args)
		if c.err == "-trials 30" {
			if err != nil {
				t.Errorf("%q: %v", c.args, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %v; want an error with %q", c.args, err, c.err)
		}
	}
}

func answers(base time.Time, items ...string) []e2e.Answer {
	var out []e2e.Answer
	for k, it := range items {
		host, msText, _ := strings.Cut(it, "@")
		d, _ := time.ParseDuration(msText + "ms")
		out = append(out, e2e.Answer{Seq: uint64(k + 1), Recv: base.Add(d), Sent: base.Add(d - 100*time.Microsecond), From: host})
	}
	return out
}

func TestVIPFigures(t *testing.T) {
	t0 := time.Unix(1764063000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	// host-3 (index 2) keeps answering 40 ms after the kill (its address
	// left behind), then host-2 from 300 ms; host-3 once more at 310 ms.
	rec := answers(t0, "host-3@10", "host-3@40", "host-2@300", "host-3@310", "host-2@311")
	v := vipFigures(rec, t0, 300*time.Millisecond, 2, at(1000))
	if v.outage != 300*time.Millisecond || v.silence != 260*time.Millisecond || v.old != 3 || !v.interleaved {
		t.Errorf("figures %+v; want outage 300ms, silence 260ms, 3 old answers, interleaved", v)
	}
	// The old holder's answer after until (its return) is not an
	// interleaving.
	if v := vipFigures(rec, t0, 300*time.Millisecond, 2, at(305)); v.interleaved {
		t.Errorf("an answer after until counted as interleaved: %+v", v)
	}
	var row vipRow
	row.add(v)
	row.add(vipTrial{outage: time.Second})
	if len(row.Outage) != 2 || row.Interleaved != 1 || row.OldAnswers[0] != 3 {
		t.Errorf("row %+v", row)
	}
}

func TestAdvertGaps(t *testing.T) {
	t0 := time.Unix(1764063000, 0)
	ev := []kaEvent{
		{At: t0, Host: 2, VRRP: true, Prio: 102},
		{At: t0.Add(5 * time.Millisecond), Host: 1, VRRP: true, Prio: 101}, // another host
		{At: t0.Add(10 * time.Millisecond), Host: 2, VRRP: true, Prio: 102},
		{At: t0.Add(12 * time.Millisecond), Host: 2},                      // its gratuitous ARP
		{At: t0.Add(20 * time.Millisecond), Host: 2, VRRP: true, Prio: 0}, // stopping
		{At: t0.Add(30 * time.Millisecond), Host: 2, VRRP: true, Prio: 102},
		{At: t0.Add(50 * time.Millisecond), Host: 2, VRRP: true, Prio: 102}, // after the kill
	}
	got := advertGaps(ev, 2, t0.Add(40*time.Millisecond))
	if !slices.Equal(got, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond}) {
		t.Errorf("advertGaps: %v, want [10ms 20ms]", got)
	}
}

func TestPrintVIPTable(t *testing.T) {
	var b strings.Builder
	printVIPTable(&b, options{hosts: 3}, []vipRow{
		{System: "lanleader", Setting: "heartbeat 100ms", Mode: "crash", Skipped: e2e.ErrNoVIPFlag.Error()},
		{System: "keepalived", Setting: "advert_int 1s (VRRPv2)", Mode: "crash",
			Outage: msList(3000, 3100, 3200), Silence: msList(1, 2, 3), OldAnswers: []time.Duration{40, 50, 60}, Interleaved: 1, TwoMasters: 2,
			Adverts: msList(1000, 1000, 1001)},
		{System: "keepalived", Setting: "advert_int 10ms (VRRPv3)", Mode: "graceful"}, // failed: no samples
		{System: "lanleader", Setting: "heartbeat 10ms", Mode: "freeze",
			Outage: msList(20, 30, 40), Silence: msList(20, 30, 40), OldAnswers: []time.Duration{0, 0, 1}, AfterLeader: msList(1, 3, 2)},
	})
	out := b.String()
	if !strings.Contains(out, "# skipped: lanleader, heartbeat 100ms, crash: lanleader has no --vip\n") {
		t.Errorf("no skipped lanleader row in:\n%s", out)
	}
	if !hasLine(out, "keepalived", "advert_int", "1s", "(VRRPv2)", "crash", "3", "3100.0", "3200.0", "3200.0", "3200.0", "2.0", "3.0", "50", "60", "1", "2", "1000.0", "-", "-") {
		t.Errorf("no keepalived crash line in:\n%s", out)
	}
	if !hasLine(out, "keepalived", "advert_int", "10ms", "(VRRPv3)", "graceful", "0", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-") {
		t.Errorf("no empty line for the failed row in:\n%s", out)
	}
	if !hasLine(out, "lanleader", "heartbeat", "10ms", "freeze", "3", "30.0", "40.0", "40.0", "40.0", "30.0", "40.0", "0", "1", "0", "-", "-", "2.0", "3.0") {
		t.Errorf("no lanleader freeze line with the times after the election in:\n%s", out)
	}
}
