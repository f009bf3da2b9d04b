package sim

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
)

// The stability check's exceptions under loss (stability_test.go): a
// confirmation that lost every answer, and in quorum mode a lease whose
// every acknowledgement was lost. They are read from the run's trace, so
// that an exception is shown, not assumed.

// traceLine is one line of a simulator trace: when, which node (0 for the
// network's own lines), and the rest.
type traceLine struct {
	at   time.Duration
	node election.NodeID
	what string
}

// parseTrace reads the lines of a trace written by Config.Trace.
func parseTrace(b []byte) []traceLine {
	var out []traceLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		sec, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		l := traceLine{at: time.Duration(math.Round(sec*1e6)) * time.Microsecond}
		if id, ok := strings.CutPrefix(f[1], "n"); ok {
			if n, err := strconv.ParseUint(id, 10, 64); err == nil {
				l.node = n
				f = f[1:]
			}
		}
		l.what = strings.Join(f[1:], " ")
		out = append(out, l)
	}
	return out
}

// isProbeRound reports whether a line is a PROBE round of a confirmation
// (to all; a claimant's check goes to the claimant alone).
func isProbeRound(what string) bool {
	return strings.HasPrefix(what, "multicast PROBE ") || strings.HasPrefix(what, "unicast PROBE to all")
}

// confirmationWindow is the part of a confirmation the check reads: its
// last ConfirmTimeout (a confirmation lasts that long on its node's clock,
// which runs up to MaxClockDrift fast or slow, and the trace rounds to
// the microsecond).
func confirmationWindow(timing election.Config) time.Duration {
	c := timing.WithDefaults().ConfirmTimeout
	return c + time.Duration(float64(c)*election.MaxClockDrift) + 2*time.Microsecond
}

// lostEveryAnswer reports whether node x's confirmation about leader l,
// which ended at `at` with x leaving l ("has no leader"), lost every
// answer: in its last window (confirmationWindow), x sent PROBE rounds,
// received no VOUCH and no claim of l, and l answered with a VOUCH every
// PROBE of x that reached it. What it found is said either way.
func lostEveryAnswer(lines []traceLine, x, l election.NodeID, at, window time.Duration) (string, bool) {
	ended := false
	rounds, reached, vouched := 0, 0, 0
	pending := false // l received a PROBE of x: its answer is the next line of l
	xs, ls := "n"+strconv.FormatUint(x, 10), "n"+strconv.FormatUint(l, 10)
	for _, ln := range lines {
		if ln.at < at-window {
			continue
		}
		if ln.at > at {
			break
		}
		switch ln.node {
		case x:
			switch {
			case strings.HasPrefix(ln.what, "has no leader"):
				if ln.at == at {
					ended = true
				}
			case isProbeRound(ln.what):
				rounds++
			case strings.HasPrefix(ln.what, "recv VOUCH from "):
				return fmt.Sprintf("n%d received %s at %v", x, ln.what, ln.at), false
			case strings.HasPrefix(ln.what, "recv HEARTBEAT from "+ls+" "), strings.HasPrefix(ln.what, "recv COORDINATOR from "+ls+" "):
				return fmt.Sprintf("n%d received %s at %v", x, ln.what, ln.at), false
			}
		case l:
			if pending {
				pending = false
				if !strings.HasPrefix(ln.what, "send VOUCH to "+xs+" ") {
					return fmt.Sprintf("the leader n%d did not answer a PROBE of n%d at %v (%s)", l, x, ln.at, ln.what), false
				}
				vouched++
			}
			if strings.HasPrefix(ln.what, "recv PROBE from "+xs+" ") {
				reached++
				pending = true
			}
		}
	}
	switch {
	case !ended:
		return fmt.Sprintf("n%d did not leave n%d at %v", x, l, at), false
	case rounds == 0:
		return fmt.Sprintf("n%d left n%d at %v without a PROBE", x, l, at), false
	case pending:
		return fmt.Sprintf("the leader n%d did not answer a PROBE of n%d", l, x), false
	}
	return fmt.Sprintf("n%d sent %d PROBE rounds in the %v before it left n%d at %v; %d reached n%d, which sent %d VOUCHes; none came back, and no other answer", x, rounds, window, l, at, reached, l, vouched), true
}

// confirmations counts the confirmations in a trace: PROBE rounds of a
// node more than a window after its previous one begin a new one.
func confirmations(lines []traceLine, window time.Duration) int {
	last := map[election.NodeID]time.Duration{}
	n := 0
	for _, ln := range lines {
		if ln.node == 0 || !isProbeRound(ln.what) {
			continue
		}
		if at, ok := last[ln.node]; !ok || ln.at-at > window {
			n++
		}
		last[ln.node] = ln.at
	}
	return n
}

// lossEpisode is a disturbance of the loss check: from the first event at
// which a node leaves the leader (it has none, follows another, or the
// leader stops leading) until every node follows one leader again, and
// goes on following it for lossEpisodeQuiet.
type lossEpisode struct {
	// end: when the cluster last settled on one leader (0: disturbed when
	// the run ended); the episode is over once it stayed settled for
	// lossEpisodeQuiet.
	start, end time.Duration
	cut        time.Duration // the start of the fault, for the reports
	leader     election.NodeID
	first      string          // the first deviation seen
	movedTo    election.NodeID // the cluster settled on another leader
	cause      string          // what the trace shows at its start
	excused    bool
}

// judgeEpisodes checks every episode against the exceptions, from the
// trace: it must begin with a confirmation that lost every answer, or (in
// quorum mode) with a lease that lapsed because every acknowledgement was
// lost; and end within lossEpisodeBound.
func (r *stabilityResult) judgeEpisodes(timing election.Config, cut, end time.Duration) {
	lines := parseTrace(r.trace.Bytes())
	window := confirmationWindow(timing)
	r.confirms = confirmations(lines, window)
	for _, ln := range lines {
		if ln.at >= cut && ln.what == "timer heartbeat" {
			r.claims++
		}
	}
	for _, ep := range r.episodes {
		ep.cause = "no node left the leader at its start"
		for _, ln := range lines {
			if ln.at > ep.start+time.Microsecond {
				break
			}
			if ln.at+time.Microsecond < ep.start {
				continue
			}
			switch {
			case ln.node == ep.leader && ln.what == "timer lease":
				ep.cause, ep.excused = lostEveryAck(lines, ep.leader, ln.at, timing)
			case ln.node != ep.leader && strings.HasPrefix(ln.what, "has no leader"):
				ep.cause, ep.excused = lostEveryAnswer(lines, ln.node, ep.leader, ln.at, window)
			default:
				continue
			}
			if ep.excused {
				break
			}
		}
		if !ep.excused {
			r.problem("%s: not a confirmation that lost every answer: %s", ep.first, ep.cause)
			continue
		}
		last := ep.end
		if last == 0 {
			last = end
		}
		if d := last - ep.start; d > lossEpisodeBound {
			r.problem("%s: the cluster did not settle on one leader within %v (%v; %s)", ep.first, lossEpisodeBound, d, ep.cause)
		}
	}
}

// The exception is read from the trace, and only a confirmation that lost
// every answer is one: a VOUCH that arrived, or a PROBE the leader did
// not answer, makes it none. (The lines are those of bully's seed 2039 at
// 30 % loss, trimmed.)
func TestLostEveryAnswerReadsTheTrace(t *testing.T) {
	const lost = `
    4.101908 n10 timer suspect
    4.101908 n10 multicast PROBE to all(2) term=1
    4.102008 n12 recv PROBE from n10 term=1
    4.102008 n12 send VOUCH to n10 term=1
    4.102408 n10 multicast PROBE to all(2) term=1
    4.103364 n11 recv PROBE from n10 term=1
    4.104086 n12 recv PROBE from n10 term=1
    4.104086 n12 send VOUCH to n10 term=1
    4.106906 n10 timer confirm
    4.106906 n10 has no leader (term=1)
`
	window := confirmationWindow(DefaultTiming())
	at := 4106906 * time.Microsecond
	if why, ok := lostEveryAnswer(parseTrace([]byte(lost)), 10, 12, at, window); !ok || !strings.Contains(why, "2 PROBE rounds") || !strings.Contains(why, "2 reached n12, which sent 2 VOUCHes") {
		t.Errorf("every answer lost: got %v, %q", ok, why)
	}
	for _, c := range []struct{ name, trace, want string }{
		{"a VOUCH came", strings.Replace(lost, "    4.106906 n10 timer confirm", "    4.104500 n10 recv VOUCH from n11 term=1\n    4.106906 n10 timer confirm", 1), "received recv VOUCH from n11"},
		{"the leader's heartbeat came", strings.Replace(lost, "    4.106906 n10 timer confirm", "    4.104500 n10 recv HEARTBEAT from n12 term=1\n    4.106906 n10 timer confirm", 1), "received recv HEARTBEAT from n12"},
		{"the leader did not answer", strings.Replace(lost, "    4.104086 n12 send VOUCH to n10 term=1\n", "", 1), "did not answer a PROBE of n10"},
		{"no PROBE", strings.ReplaceAll(lost, "n10 multicast PROBE", "n10 timer confirm"), "without a PROBE"},
	} {
		if why, ok := lostEveryAnswer(parseTrace([]byte(c.trace)), 10, 12, at, window); ok || !strings.Contains(why, c.want) {
			t.Errorf("%s: got %v, %q; want false and %q", c.name, ok, why, c.want)
		}
	}
}

// The failures of the loss check in seeds 1..20,000 before it named its
// exceptions (bully, 3 nodes, 30 % loss) began, outside quorum mode, with
// a confirmation of five PROBEs that lost every answer: 2039: n10's 5
// PROBEs, 4 VOUCHes of n12 lost, and n11 had missed the same heartbeats;
// 5259, 17687: n11 (the second largest) claimed, n12 re-asserted; 10407:
// the same, n12 not preempting; 16299: n10's ELECTION made n11 confirm
// too. With twenty tries (confirmRounds) and the alarm after one lost
// heartbeat, the same seeds keep their first leader to the end: no
// episode. In quorum mode each is one episode, begun by a lease whose
// acknowledgements were all lost, and over within lossEpisodeBound.
func TestStabilityLossFailuresAreTheNamedExceptions(t *testing.T) {
	for _, seed := range []uint64{2039, 5259, 10407, 16299, 17687} {
		sr := stabilityRun{alg: election.AlgorithmBully, seed: seed, fault: "loss", p: 0.3}
		res := sr.run(false)
		if len(res.problems) > 0 || len(res.episodes) != 0 || res.confirms == 0 {
			t.Errorf("seed %d: %d episodes in %d confirmations, problems %q; want none in some", seed, len(res.episodes), res.confirms, res.problems)
			for _, ep := range res.episodes {
				t.Logf("seed %d: %s", seed, ep.cause)
			}
		}
	}
	// In quorum mode (3 nodes, 30 % loss): the leader's lease ran out
	// with every acknowledgement of its last two claims lost; it wins a
	// pre-vote and an election again within 35 ms.
	for _, seed := range []uint64{3891, 4531, 5259} {
		sr := stabilityRun{alg: election.AlgorithmBully, seed: seed, quorum: true, fault: "loss", p: 0.3}
		res := sr.run(false)
		if len(res.problems) > 0 || len(res.episodes) != 1 {
			t.Errorf("quorum, seed %d: %d episodes, problems %q", seed, len(res.episodes), res.problems)
			continue
		}
		if ep := res.episodes[0]; !ep.excused || !strings.Contains(ep.cause, "no acknowledgement came back") || ep.end == 0 || ep.movedTo != 0 {
			t.Errorf("quorum, seed %d: excused %v, ended %v, settled on n%d: %s", seed, ep.excused, ep.end-ep.start, ep.movedTo, ep.cause)
		}
	}
}

// In quorum mode, a lease that ran out is the exception only when every
// acknowledgement was lost: one that reached the leader, or a claim a
// member did not acknowledge, makes it none. (The lines are those of
// seed 3891 at 30 % loss, trimmed.)
func TestLostEveryAckReadsTheTrace(t *testing.T) {
	const lost = `
    4.698043 n11 recv HEARTBEAT from n10 term=1
    4.698043 n11 send HEARTBEAT_ACK to n10 term=1 ack=46
    4.707924 n10 timer resend
    4.707924 n10 send HEARTBEAT to n11 term=1
    4.707924 n10 send HEARTBEAT to n12 term=1
    4.708911 n12 recv HEARTBEAT from n10 term=1
    4.708911 n12 send HEARTBEAT_ACK to n10 term=1 ack=46
    4.807874 n10 timer resend
    4.807874 n10 send HEARTBEAT to n11 term=1
    4.808485 n12 recv HEARTBEAT from n10 term=1
    4.808485 n12 send HEARTBEAT_ACK to n10 term=1 ack=47
    4.897829 n10 timer lease
    4.897829 n10 has no leader (term=1)
`
	timing := DefaultTiming()
	timing.Quorum = 3
	at := 4897829 * time.Microsecond
	if why, ok := lostEveryAck(parseTrace([]byte(lost)), 10, at, timing); !ok || !strings.Contains(why, "re-sent its claims 2 times, the members received 3 claims") {
		t.Errorf("every acknowledgement lost: got %v, %q", ok, why)
	}
	for _, c := range []struct{ name, trace, want string }{
		{"an acknowledgement came", strings.Replace(lost, "    4.807874 n10 timer resend", "    4.709500 n10 recv HEARTBEAT_ACK from n12 term=1 ack=46\n    4.807874 n10 timer resend", 1), "recv HEARTBEAT_ACK from n12"},
		{"a claim not acknowledged", strings.Replace(lost, "    4.808485 n12 send HEARTBEAT_ACK to n10 term=1 ack=47\n", "", 1), "n12 did not acknowledge a claim of n10"},
		{"no resend", strings.ReplaceAll(lost, "n10 timer resend", "n10 timer heartbeat"), "re-sent no claim"},
	} {
		if why, ok := lostEveryAck(parseTrace([]byte(c.trace)), 10, at, timing); ok || !strings.Contains(why, c.want) {
			t.Errorf("%s: got %v, %q; want false and %q", c.name, ok, why, c.want)
		}
	}
}

// The rate bound is a Poisson tail of lossEpisodeTail: with 0.04 episodes
// expected (CI's 200 bully schedules) 3 are allowed, with 4.9 (the long
// sweep's 3-node clusters) 19.
func TestLossEpisodesAllowed(t *testing.T) {
	for _, c := range []struct {
		expected float64
		want     int
	}{{0, 0}, {0.04, 3}, {4.9, 19}} {
		if got := lossEpisodesAllowed(c.expected); got != c.want {
			t.Errorf("lossEpisodesAllowed(%v) = %d, want %d", c.expected, got, c.want)
		}
	}
}

// lostEveryAck reports whether leader l's lease, which ran out at `at`
// ("timer lease": it steps down), ran out only because loss took every
// acknowledgement: in the window before `at` in which the
// acknowledgements of a claim would have renewed it (from Lease −
// StopBefore before `at`, less the time the claim sent then takes to be
// acknowledged, its resends included), l received no HEARTBEAT_ACK, every
// member that received a claim of l there acknowledged it, and l re-sent
// its claims. What it found is said either way.
func lostEveryAck(lines []traceLine, l election.NodeID, at time.Duration, timing election.Config) (string, bool) {
	c := timing.WithDefaults()
	every := max(c.HeartbeatInterval/10, time.Millisecond) // election's resendEvery
	from := at - (c.Lease - c.StopBefore) + 4*every        // a claim's three resends, and their answers
	ls := "n" + strconv.FormatUint(l, 10)
	got, acks, resends := 0, 0, 0
	pending := election.NodeID(0) // a member received a claim: its acknowledgement is its next line
	for _, ln := range lines {
		if ln.at < from {
			continue
		}
		if ln.at > at {
			break
		}
		if pending != 0 && ln.node == pending {
			if !strings.HasPrefix(ln.what, "send HEARTBEAT_ACK to "+ls+" ") {
				return fmt.Sprintf("n%d did not acknowledge a claim of n%d at %v (%s)", pending, l, ln.at, ln.what), false
			}
			pending = 0
			acks++
		}
		switch {
		case ln.node == l && strings.HasPrefix(ln.what, "recv HEARTBEAT_ACK "):
			return fmt.Sprintf("n%d %s at %v", l, ln.what, ln.at), false
		case ln.node == l && ln.what == "timer resend":
			resends++
		case ln.node != l && (strings.HasPrefix(ln.what, "recv HEARTBEAT from "+ls+" ") || strings.HasPrefix(ln.what, "recv COORDINATOR from "+ls+" ")):
			got++
			pending = ln.node
		}
	}
	switch {
	case pending != 0:
		return fmt.Sprintf("n%d did not acknowledge a claim of n%d", pending, l), false
	case resends == 0:
		return fmt.Sprintf("n%d re-sent no claim in the %v before its lease ran out at %v", l, at-from, at), false
	}
	return fmt.Sprintf("n%d's lease ran out at %v: in the %v before, it re-sent its claims %d times, the members received %d claims and acknowledged each, and no acknowledgement came back", l, at, at-from, resends, got), true
}
