//go:build linux

package e2e

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The VIP harness: what the user of a virtual address sees, checked first
// with keepalived (the reference, whose behaviour is known), so that the
// lanleader scenarios (vip_scenario_test.go) test lanleader, not the
// harness.

// TestVIPHarnessKeepalived: three hosts run keepalived with one virtual
// address and vipecho; the client asks the address every millisecond.
// Before the fault every answer comes from the MASTER (host-3) and the
// client's neighbour entry for the address has host-3's MAC; once
// host-3's keepalived is killed (SIGKILL), host-2 becomes MASTER, its
// gratuitous ARPs move the client's entry to host-2's MAC, and the
// answers come from host-2, never again from host-3.
func TestVIPHarnessKeepalived(t *testing.T) {
	n := NewNetWithClient(t, 3)
	bin, err := KeepalivedBinary()
	if err != nil {
		t.Skip("e2e: " + err.Error())
	}
	client := n.Client()
	n.StartResponders(t)
	start := n.KeepalivedInstances(t, Keepalived{Bin: bin, VRID: 51, VIP: VIP, Advert: 100 * time.Millisecond})
	procs := make([]*Proc, 3)
	for i := range procs {
		procs[i] = start(i)
	}
	master := func(i int) func() (bool, string) {
		return func() (bool, string) {
			h, err := n.Holders(VIP)
			if err != nil {
				return false, err.Error()
			}
			if !slices.Equal(h, []int{i}) {
				return false, fmt.Sprintf("%s is on %s, want host-%d only", VIP, hostList(h), i+1)
			}
			return true, ""
		}
	}
	took := waitFor(t, "host-3 holds the address alone", 15*time.Second, master(2))
	t.Logf("host-3 holds %s %v after the start", VIP, took.Round(time.Millisecond))

	cl := n.StartVIPClient(t, VIP, time.Millisecond, time.Minute)
	answeredBy := func(host int, since time.Time) func() (bool, string) {
		return func() (bool, string) {
			by := AnswersBy(cl.AnswersSince(since), since, time.Now().Add(time.Hour))
			return by[VIPHostName(host)] > 0, fmt.Sprintf("answers since then: %v", by)
		}
	}
	neighbour := func(host int) func() (bool, string) {
		return func() (bool, string) {
			h, mac, state, err := n.NeighbourHost(client, VIP)
			if err != nil {
				return false, err.Error()
			}
			return h == host, fmt.Sprintf("the client's entry for %s: %q %s (host %d)", VIP, mac, state, h+1)
		}
	}
	before := time.Now()
	waitFor(t, "the client hears host-3", 5*time.Second, answeredBy(2, before))
	waitFor(t, "the client's neighbour entry has host-3's MAC", 5*time.Second, neighbour(2))
	if name, err := n.AskTCP(client, VIP); err != nil || name != VIPHostName(2) {
		t.Errorf("TCP to %s:%d from the client: %q, %v; want %s", VIP, EchoPort, name, err, VIPHostName(2))
	}

	// The kill: every keepalived process of host-3, its VRRP child first
	// (a child whose parent died first stops gracefully), vipecho spared.
	pids, err := n.NamespacePids(2)
	if err != nil {
		t.Fatal(err)
	}
	var kill []int
	for _, pid := range pids {
		if pid != procs[2].Pid && isChildOf(pid, procs[2].Pid) {
			kill = append(kill, pid)
		}
	}
	kill = append(kill, procs[2].Pid)
	t0 := time.Now()
	for _, pid := range kill {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	procs[2].Wait(killTimeout)
	waitFor(t, "the client hears host-2 after host-3's keepalived is killed", 10*time.Second, answeredBy(1, t0))
	waitFor(t, "the client's neighbour entry has host-2's MAC", 10*time.Second, neighbour(1))
	if name, err := n.AskTCP(client, VIP); err != nil || name != VIPHostName(1) {
		t.Errorf("TCP to %s:%d from the client after the failover: %q, %v; want %s", VIP, EchoPort, name, err, VIPHostName(1))
	}
	time.Sleep(500 * time.Millisecond) // the client asks on: 500 answers after the move
	sum, answers, err := cl.Stop()
	if err != nil {
		t.Fatal(err)
	}
	outage, ok := Outage(answers, t0, VIPHostName(1))
	if !ok {
		t.Fatalf("no answer from host-2 after the kill in the record")
	}
	first := t0.Add(outage)
	if bad := Interleavings(answers, first); len(bad) > 0 {
		t.Errorf("after host-2's first answer, the answers interleave:\n%s", strings.Join(bad, "\n"))
	}
	if by := AnswersBy(answers, before, t0); len(by) != 1 || by[VIPHostName(2)] == 0 {
		t.Errorf("before the kill: answers by %v, want host-3's only", by)
	}
	if by := AnswersBy(answers, first, sum.Last.Add(time.Second)); len(by) != 1 || by[VIPHostName(1)] < 100 {
		t.Errorf("after host-2's first answer: answers by %v, want host-2's only (hundreds)", by)
	}
	if sum.Sent < 500 || sum.Answers != uint64(len(answers)) {
		t.Errorf("the client's summary %+v with %d answers in the record: want ≥ 500 requests (one a millisecond for over a second), every answer recorded", sum, len(answers))
	}
	last3, _ := LastAnswer(answers, VIPHostName(2), first)
	holders, _ := n.Holders(VIP)
	t.Logf("SIGKILL of host-3's keepalived: host-2's first answer %v after it (host-3's last %v after it), the longest silence %v; %d requests, %d answers; %s is now on %s (a killed keepalived leaves its address)",
		outage.Round(100*time.Microsecond), last3.Recv.Sub(t0).Round(100*time.Microsecond),
		LongestGap(answers, t0, first).Round(100*time.Microsecond), sum.Sent, sum.Answers, VIP, hostList(holders))
}

// isChildOf says whether process pid's parent is parent (/proc/PID/stat).
func isChildOf(pid, parent int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// "pid (comm) state ppid …": comm may hold spaces, so from the last ')'.
	s := string(b)
	k := strings.LastIndexByte(s, ')')
	if k < 0 {
		return false
	}
	f := strings.Fields(s[k+1:])
	return len(f) >= 2 && f[1] == fmt.Sprint(parent)
}

func TestParseNeigh(t *testing.T) {
	for _, c := range []struct {
		out, mac, state string
		err             bool
	}{
		{"", "", "", false},
		{"198.18.0.100 lladdr 0a:1B:2c:3d:4e:5f REACHABLE\n", "0a:1b:2c:3d:4e:5f", "REACHABLE", false},
		{"198.18.0.100 lladdr 0a:1b:2c:3d:4e:5f router STALE\n", "0a:1b:2c:3d:4e:5f", "STALE", false},
		{"198.18.0.100  INCOMPLETE\n", "", "INCOMPLETE", false},
		{"198.18.0.100  FAILED\n", "", "FAILED", false},
		{"198.18.0.100 lladdr 0a:1b:2c:3d:4e:5f STALE\n198.18.0.100 lladdr 0a:1b:2c:3d:4e:60 STALE\n", "", "", true},
	} {
		mac, state, err := parseNeigh(c.out)
		if mac != c.mac || state != c.state || (err != nil) != c.err {
			t.Errorf("parseNeigh(%q) = %q, %q, %v; want %q, %q, error %v", c.out, mac, state, err, c.mac, c.state, c.err)
		}
	}
}

func TestParseClientLine(t *testing.T) {
	a, s, ok := parseClientLine(`{"seq":17,"sent":1764063000123456789,"recv":1764063000123789012,"from":"host-3"}` + "\n")
	if !ok || s != nil || a.Seq != 17 || a.From != "host-3" || a.Sent.UnixNano() != 1764063000123456789 || a.Recv.UnixNano() != 1764063000123789012 {
		t.Errorf("an answer: %+v, %v, %v", a, s, ok)
	}
	_, s, ok = parseClientLine(`{"summary":{"sent":5000,"answers":4990,"send_errors":3,"first":1764063000000000000,"last":1764063005000000000}}`)
	if !ok || s == nil || s.Sent != 5000 || s.Answers != 4990 || s.SendErrors != 3 || s.Last.Sub(s.First) != 5*time.Second {
		t.Errorf("the summary: %+v, %v", s, ok)
	}
	for _, bad := range []string{`{"seq":1,"sent":1,"recv":2}`, `{"sent":1,"recv":2,"from":"h"}`, `not json`, `{}`} {
		if _, _, ok := parseClientLine(bad); ok {
			t.Errorf("parseClientLine(%q) accepted", bad)
		}
	}
}

// answersAt makes a record: each item "HOST@MS" is an answer from HOST
// received MS milliseconds after base (sent 0.1 ms before).
func answersAt(base time.Time, items ...string) []Answer {
	var out []Answer
	for k, it := range items {
		host, msText, _ := strings.Cut(it, "@")
		var ms float64
		fmt.Sscan(msText, &ms)
		recv := base.Add(time.Duration(ms * float64(time.Millisecond)))
		out = append(out, Answer{Seq: uint64(k + 1), Sent: recv.Add(-100 * time.Microsecond), Recv: recv, From: host})
	}
	return out
}

func TestVIPCheckers(t *testing.T) {
	base := time.Unix(1764063000, 0)
	ms := func(x float64) time.Time { return base.Add(time.Duration(x * float64(time.Millisecond))) }
	move := answersAt(base, "host-3@0", "host-3@1", "host-3@2", "host-2@250", "host-2@251", "host-2@252")

	if d, ok := Outage(move, ms(1.5), "host-2"); !ok || d != 248500*time.Microsecond {
		t.Errorf("Outage from 1.5 ms to host-2's first answer at 250 ms: %v, %v; want 248.5ms", d, ok)
	}
	if _, ok := Outage(move, ms(300), "host-2"); ok {
		t.Errorf("Outage after host-2's last answer: found one")
	}
	if _, ok := Outage(move, ms(0), "host-1"); ok {
		t.Errorf("Outage to a host that never answered: found one")
	}
	// Unsorted input gives the same answer.
	shuffled := []Answer{move[4], move[0], move[3], move[5], move[2], move[1]}
	if d, ok := Outage(shuffled, ms(1.5), "host-2"); !ok || d != 248500*time.Microsecond {
		t.Errorf("Outage of the shuffled record: %v, %v", d, ok)
	}
	if g := LongestGap(move, ms(0), ms(260)); g != 248*time.Millisecond {
		t.Errorf("LongestGap over the move: %v, want 248ms (2 ms to 250 ms)", g)
	}
	if g := LongestGap(move, ms(0), ms(1000)); g != 748*time.Millisecond {
		t.Errorf("LongestGap to 1 s: %v, want 748ms (the silence after the last answer)", g)
	}
	if a, ok := LastAnswer(move, "host-3", ms(100)); !ok || a.Seq != 3 {
		t.Errorf("LastAnswer of host-3 before 100 ms: %+v, %v; want seq 3", a, ok)
	}
	if by := AnswersBy(move, ms(1), ms(251)); by["host-3"] != 2 || by["host-2"] != 1 || len(by) != 2 {
		t.Errorf("AnswersBy [1, 251) ms: %v", by)
	}

	if bad := Interleavings(move, ms(0)); len(bad) != 0 {
		t.Errorf("a clean move interleaves: %v", bad)
	}
	flap := answersAt(base, "host-3@0", "host-2@10", "host-3@11", "host-2@12", "host-2@13")
	bad := Interleavings(flap, ms(0))
	if len(bad) != 2 || !strings.HasPrefix(bad[0], "host-3 answered again (seq 3") || !strings.HasPrefix(bad[1], "host-2 answered again (seq 4") {
		t.Errorf("Interleavings of 3 2 3 2 2: %q", bad)
	}
	if bad := Interleavings(flap, ms(11.5)); len(bad) != 0 {
		t.Errorf("Interleavings from 11.5 ms (host-2 only): %v", bad)
	}
	// A thawed host answers what was queued before its freeze: those
	// answers, sent before the thaw, are left out of the move after it.
	thaw := answersAt(base, "host-2@0", "host-2@1", "host-3@2", "host-2@3", "host-3@4", "host-3@5")
	thaw[2].Sent = ms(-500)
	if got := SentSince(thaw, ms(0.5)); len(got) != 4 || got[0].Seq != 2 || got[1].Seq != 4 {
		t.Errorf("SentSince 0.5 ms: %+v; want seqs 2, 4, 5, 6", got)
	}
	if bad := Interleavings(thaw, ms(0)); len(bad) != 2 {
		t.Errorf("with the queued answer, 2 3 2 3 interleaves twice: %v", bad)
	}
	if bad := Interleavings(SentSince(thaw, ms(0)), ms(0)); len(bad) != 0 {
		t.Errorf("without the answer sent before the thaw, 2 2 3 3 interleaves: %v", bad)
	}
	back := answersAt(base, "host-3@0", "host-2@10", "host-2@11", "host-3@2000")
	if bad := Interleavings(back, ms(0)); len(bad) != 1 {
		t.Errorf("a move there and back is a return, and Interleavings says so: %v", bad)
	}
}
