//go:build linux

package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/e2e"
)

func TestParseLosses(t *testing.T) {
	if got, err := parseLosses(" 20, 30"); err != nil || len(got) != 2 || got[0] != 20 || got[1] != 30 {
		t.Errorf("parseLosses(20,30) = %v, %v", got, err)
	}
	if got, err := parseLosses(""); err != nil || got != nil {
		t.Errorf("parseLosses(\"\") = %v, %v; want no rows", got, err)
	}
	if got, err := parseLosses("0"); err != nil || len(got) != 1 || got[0] != 0 {
		t.Errorf("parseLosses(0) = %v, %v; want one idle row", got, err)
	}
	for _, bad := range []string{"-1", "100", "x", "20,"} {
		if _, err := parseLosses(bad); err == nil || !strings.Contains(err.Error(), "-loss:") {
			t.Errorf("parseLosses(%q): %v, want an error naming -loss", bad, err)
		}
	}
	if _, err := parseFlags([]string{"-loss", "20", "-loss-for", "0s"}); err == nil || !strings.Contains(err.Error(), "-loss-for") {
		t.Errorf("-loss-for 0s: %v", err)
	}
	// lanleader's loss rows: both modes unless -quorum says which.
	for _, c := range []struct {
		args []string
		want []int
	}{
		{[]string{"-loss", "20"}, []int{0, 5}},
		{[]string{"-loss", "20", "-hosts", "3"}, []int{0, 3}},
		{[]string{"-loss", "0", "-quorum", "0"}, []int{0}},
		{[]string{"-loss", "0", "-quorum", "5"}, []int{5}},
	} {
		o, err := parseFlags(c.args)
		if err != nil || !slices.Equal(o.lossQuorums, c.want) {
			t.Errorf("%q: loss rows' quorums %v (%v), want %v", c.args, o.lossQuorums, err, c.want)
		}
	}
}

func TestParseAgentMetrics(t *testing.T) {
	m := countersOf(e2e.ParseExposition(`# HELP lanleader_leader_changes_total Times the leader known at this node changed.
lanleader_leader_changes_total 3
lanleader_messages_sent_total{type="COORDINATOR"} 7
lanleader_messages_sent_total{type="HEARTBEAT"} 900
lanleader_messages_sent_total{type="PROBE"} 12
lanleader_messages_sent_total{type="VOUCH"} 5
`))
	if m != (agentMetrics{changes: 3, coordinators: 7, probes: 12, vouches: 5}) {
		t.Errorf("parsed %+v", m)
	}
}

func TestPrintLossTable(t *testing.T) {
	var b strings.Builder
	printLossTable(&b, options{hosts: 5, lossFor: 30 * time.Second}, []lossRow{
		{Percent: 30, System: "lanleader", Setting: "heartbeat 100ms", Probes: 80, Vouches: 60, Dropped: 500, HasLeaderlessData: true},
		{Percent: 30, System: "keepalived", Setting: "advert_int 100ms (VRRPv3)", Changes: 9, Claims: 9, JobStarts: -1, Dropped: 700},
	})
	for _, want := range []string{
		"| 30 % | lanleader | heartbeat 100ms | 0 | 0 | 0 | 0.0 ms | 80 / 60 | 500 |",
		"| 30 % | keepalived | advert_int 100ms (VRRPv3) | 9 | 9 | n/a | n/a | n/a | 700 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
