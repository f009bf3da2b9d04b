package election

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// One test per rule of harden_confirm.go, on the machine as the agent runs it
// (hardened). Defaults: heartbeat 100ms, suspect after 300ms, confirm
// timeout 5ms (PROBEs every 0.5ms in its first half).

func vouch(from NodeID, term uint64, leader NodeID, age time.Duration) Event {
	ev := claim(wire.TypeVouch, key(from), term)
	ev.Msg.Leader, ev.Msg.Age = leader, uint32(age/time.Microsecond)
	return ev
}

func probeMsg(from NodeID, term uint64, leader NodeID, age time.Duration) Event {
	ev := claim(wire.TypeProbe, key(from), term)
	ev.Msg.Leader, ev.Msg.Age = leader, uint32(age/time.Microsecond)
	return ev
}

func TestConfirmTimeoutDefault(t *testing.T) {
	for _, c := range []struct{ hb, want time.Duration }{
		{100 * ms, 5 * ms}, {10 * ms, 3 * ms}, {time.Second, 5 * ms}, {80 * ms, 4 * ms}, {40 * ms, 3 * ms},
	} {
		cfg := Config{ID: 1, HeartbeatInterval: c.hb}
		if got := cfg.WithDefaults().ConfirmTimeout; got != c.want {
			t.Errorf("heartbeat %v: confirm timeout %v, want %v", c.hb, got, c.want)
		}
	}
	cfg := DefaultConfig(1)
	cfg.ConfirmTimeout = 300 * ms
	if err := cfg.Validate(); err == nil {
		t.Error("a confirm timeout as long as suspect after validates")
	}
}

// Rule 1: the detector's alarm is a question. The follower probes, and
// the leader's VOUCH keeps it following: no ActFollow, no ELECTION.
func TestConfirmLeaderVouchKeepsFollowing(t *testing.T) {
	n := followerOf(t, key(1), keys(2, 3), key(3), 1, hardened)
	n.expect(310*ms, fire(TimerSuspect),
		"broadcast PROBE to all (2) term=1",
		"set-timer confirm at 310.125ms")
	n.is(StateFollower, 1, 3)
	n.expect(310*ms+300*time.Microsecond, vouch(3, 1, 3, 0),
		"cancel-timer confirm",
		"set-timer suspect at 610.3ms")
	n.is(StateFollower, 1, 3)
}

// Rule 1: with no VOUCH, the leader is suspected at the end of
// ConfirmTimeout, after confirmRounds PROBEs, and the election runs.
func TestConfirmSilenceSuspectsAfterConfirmTimeout(t *testing.T) {
	n := followerOf(t, key(1), keys(2, 3), key(3), 1, hardened)
	n.step(310*ms, fire(TimerSuspect))
	probes := 1
	at := 310 * ms
	for i := 0; i < 2*confirmRounds && n.b.Status().Leader != 0; i++ {
		at = n.b.deadline[TimerConfirm]
		for _, a := range n.step(at, fire(TimerConfirm)) {
			if a.Kind == ActBroadcast && a.Msg.Type == wire.TypeProbe {
				probes++
			}
		}
	}
	if probes != confirmRounds || at != 315*ms {
		t.Errorf("%d PROBEs, suspected at %v; want %d, at 315ms", probes, at, confirmRounds)
	}
	n.is(StateCandidate, 1, noLeader)
}

// Rule 1: another member that heard the leader more recently vouches with
// its own age; the follower counts the leader heard then. A vouch older
// than what it knows changes nothing.
func TestConfirmMemberVouchWithItsAge(t *testing.T) {
	n := followerOf(t, key(1), keys(2, 3), key(3), 1, hardened)
	n.step(310*ms, fire(TimerSuspect))
	n.expect(311*ms, vouch(2, 1, 3, 2*ms), "cancel-timer confirm", "set-timer suspect at 609ms")
	n.is(StateFollower, 1, 3)
	n.step(609*ms, fire(TimerSuspect))
	n.expect(610*ms, vouch(2, 1, 3, 400*ms)) // older than its own news: nothing
	n.is(StateFollower, 1, 3)
}

// Rule 1: a member vouches only with what it heard itself, and only with
// news: a follower that heard the leader only through a vouch does not
// pass it on, and one with older news than the prober stays silent.
func TestProbeAnsweredOnlyWithFirstHandNews(t *testing.T) {
	n := followerOf(t, key(2), keys(1, 3), key(3), 1, hardened)
	n.expect(20*ms, probeMsg(1, 1, 3, 50*ms), "send VOUCH to 1 term=1") // heard 3 at 10ms: 10ms ago
	n.expect(20*ms, probeMsg(1, 1, 3, 5*ms))                            // older than the prober's
	n.step(100*ms, vouch(3, 1, 3, 0))                                   // the leader itself, at 100ms
	n.step(150*ms, vouch(1, 1, 3, 0))                                   // hearsay: 1 says it heard 3 just now
	acts := n.step(160*ms, probeMsg(1, 1, 3, 80*ms))
	if len(acts) != 1 || acts[0].Msg.Age != uint32(60*ms/time.Microsecond) {
		t.Errorf("answer: %q age %v, want a VOUCH with age 60ms (its own hearing at 100ms)", actStrings(acts), acts)
	}
}

// The leader answers every PROBE about itself.
func TestProbeLeaderVouchesForItself(t *testing.T) {
	n := leaderOf(t, key(3), keys(1, 2), hardened)
	acts := n.expect(350*ms, probeMsg(1, 1, 3, 340*ms), "send VOUCH to 1 term=1")
	if m := acts[0].Msg; m.Leader != 3 || m.Age != 0 {
		t.Errorf("vouch %+v, want leader 3 age 0", m)
	}
}

// Rule 2: a follower that hears its leader ignores a claim of a smaller
// key, whatever its term.
func TestStickyFollowerIgnoresSmallerClaim(t *testing.T) {
	n := followerOf(t, key(2), keys(1, 3), key(3), 1, hardened)
	n.expect(100*ms, coord(1, 1)) // its own term: ignored
	n.is(StateFollower, 1, 3)
	// A later term is ignored too, but makes it ask its leader (what it
	// heard of it may be old news); the leader's vouch settles it.
	n.expect(100*ms, coord(1, 5), "broadcast PROBE to all (2) term=1", "set-timer confirm at 100.125ms")
	n.step(101*ms, vouch(3, 1, 3, 0))
	n.is(StateFollower, 1, 3)
	// The textbook leaves its leader for the later term at once (and,
	// larger than 1, runs an election to take over from it).
	tb := followerOf(t, key(2), keys(1, 3), key(3), 1)
	tb.step(100*ms, coord(1, 5))
	tb.is(StateCandidate, 5, 1)
}

// Rule 2: an ELECTION from a key smaller than the leader's makes a
// follower that hears its leader ask it first; it elects (step 4) only if
// the leader stays silent.
func TestStickyFollowerAsksBeforeElecting(t *testing.T) {
	n := followerOf(t, key(2), keys(1, 3), key(3), 1, hardened)
	n.expect(100*ms, election(1, 1),
		"broadcast ANSWER to all (2) term=1",
		"broadcast PROBE to all (2) term=1",
		"set-timer confirm at 100.125ms")
	// A heartbeat that arrived before is no news; the leader's vouch is.
	n.expect(101*ms, vouch(3, 1, 3, 0), "cancel-timer confirm", "set-timer suspect at 401ms")
	n.is(StateFollower, 1, 3)
	// Again, and this time the leader is silent: it elects, having taken
	// over 1's election.
	n.step(200*ms, election(1, 1))
	for n.b.st.confirming {
		n.step(n.b.deadline[TimerConfirm], fire(TimerConfirm))
	}
	n.is(StateCandidate, 1, noLeader)
	if !n.b.committed {
		t.Error("the election it runs has not taken over the ELECTION it answered")
	}
}

// Rule 2: a leader answers an ELECTION of its own term with its claim,
// without a new term; the same sender electing again at that term cannot
// accept the claim, and gets a fresh term.
func TestLeaderAnswersOwnTermElectionWithoutNewTerm(t *testing.T) {
	n := leaderOf(t, key(3), keys(1, 2), hardened)
	// (Both to all: they also end the wait of the smaller nodes that the
	// ELECTION silenced, scale_bully.go.)
	n.expect(350*ms, election(1, 1), "broadcast ANSWER to all (2) term=1", "broadcast COORDINATOR to all (2) term=1")
	n.is(StateLeader, 1, 3)
	acts := n.step(600*ms, election(1, 1))
	if !has(acts, "broadcast COORDINATOR to all (2) term=2") {
		t.Errorf("second ELECTION at the leader's term: %q, want a fresh term", actStrings(acts))
	}
}

// Rule 2 (textbook mode): a claim that would make a node leave a leader it
// hears waits for the claimant's VOUCH; a claimant that cannot hear never
// answers.
func TestClaimantAskedBeforeFollowing(t *testing.T) {
	n := leaderOf(t, key(3), keys(1, 2), hardened)
	n.expect(350*ms, coord(4, 2), "send PROBE to 4 term=1")
	n.is(StateLeader, 1, 3)
	acts := n.step(351*ms, vouch(4, 2, 4, 0))
	if !has(acts, fmtFollow(4, 2)) {
		t.Errorf("after the claimant's vouch: %q, want it followed", actStrings(acts))
	}
	// It answered: its next claims are taken at once for a while.
	if acts := n.step(360*ms, coord(4, 3)); has(acts, "send PROBE to 4 term=2") {
		t.Errorf("claim right after an answer: %q", actStrings(acts))
	}
}

// Rule 3 (quorum mode): a node elects only once a majority granted its
// pre-vote; a VOUCH naming a live leader larger than it ends the round,
// and the pre-vote waits for that leader's claim, which ends it, or asks
// again when none comes (the voucher may not know yet that its leader is
// gone).
func TestPrevoteNeedsMajority(t *testing.T) {
	n := started(t, key(2), keys(1, 3, 4, 5), hardened, quorumOf(5))
	acts := n.step(tStartup, fire(TimerStartup))
	if !has(acts, "broadcast PROBE to all (4) term=0") || hasKind(acts, ActSetTimer) && has(acts, "broadcast ELECTION to larger (3) term=0") {
		t.Fatalf("start of the election: %q, want a pre-vote and no ELECTION", actStrings(acts))
	}
	if acts := n.step(301*ms, vouch(1, 0, 0, 0)); hasKind(acts, ActBroadcast) {
		t.Fatalf("one grant of 2 needed: %q", actStrings(acts))
	}
	acts = n.step(302*ms, vouch(3, 0, 0, 0))
	if !has(acts, "broadcast ELECTION to larger (3) term=0") {
		t.Fatalf("majority granted: %q, want the election", actStrings(acts))
	}
	// A node that hears of a larger live leader waits for it.
	m := started(t, key(2), keys(1, 3, 4, 5), hardened, quorumOf(5))
	m.step(tStartup, fire(TimerStartup))
	acts = m.step(301*ms, vouch(1, 0, 5, time.Millisecond))
	var next time.Duration
	for _, a := range acts {
		if a.Kind == ActSetTimer && a.Timer == TimerPrevote {
			next = a.At
		}
	}
	if next < 301*ms+2*m.b.confirmTimeout() || hasKind(acts, ActBroadcast) {
		t.Fatalf("a vouch for the larger live leader 5: %q, want the round ended and the next in 2×ConfirmTimeout or more", actStrings(acts))
	}
	// None came (the voucher had not noticed 5's crash): it asks again.
	if acts := m.step(next, fire(TimerPrevote)); !has(acts, "broadcast PROBE to all (4) term=0") {
		t.Fatalf("no claim of 5 after the wait: %q, want the pre-vote's next round", actStrings(acts))
	}
	// 5's claim ends it.
	m.step(next+time.Millisecond, coord(5, 1))
	if m.b.st.prevoting {
		t.Error("still pre-voting after the larger leader 5 claimed")
	}
}

// Rule 3: without a pre-vote, a node that cannot hear would claim again
// and again; with it, it stays quiet: PROBEs only, less and less often.
func TestPrevoteBacksOffQuietly(t *testing.T) {
	n := started(t, key(5), keys(1, 2, 3, 4), hardened, quorumOf(5))
	n.step(tStartup, fire(TimerStartup))
	var claims, probes int
	var last time.Duration
	for i := 0; i < 200 && n.b.armed[TimerPrevote]; i++ {
		at := n.b.deadline[TimerPrevote]
		if at > 5*time.Second {
			break
		}
		for _, a := range n.step(at, fire(TimerPrevote)) {
			switch {
			case a.Kind == ActBroadcast && a.Msg.Type == wire.TypeProbe:
				probes++
				last = at
			case a.Kind == ActBroadcast:
				claims++
			}
		}
	}
	if claims != 0 || probes == 0 || probes > 100 {
		t.Errorf("deaf for 5s: %d claims, %d PROBEs (last at %v); want no claim and a few PROBEs", claims, probes, last)
	}
}

// Leases that survive loss: the leader re-sends its latest claim, unicast,
// to the members that have not acknowledged it, resendRounds times a tenth
// of a heartbeat apart, and stops when all have.
func TestQuorumResendsLatestClaim(t *testing.T) {
	n := leaseHolder(t)
	acts := n.step(500*ms, fire(TimerHeartbeat))
	if !has(acts, "set-timer resend at 510ms") {
		t.Fatalf("heartbeat: %q", actStrings(acts))
	}
	acts = n.step(510*ms, fire(TimerResend))
	if len(acts) < 3 || acts[0].Msg.Claim != acts[1].Msg.Claim || !has(acts, "send HEARTBEAT to 1 term=1") || !has(acts, "send HEARTBEAT to 2 term=1") {
		t.Fatalf("resend: %q", actStrings(acts))
	}
	claimNo := acts[0].Msg.Claim
	n.step(511*ms, ack(1, 1, claimNo))
	acts = n.step(520*ms, fire(TimerResend))
	if has(acts, "send HEARTBEAT to 1 term=1") || !has(acts, "send HEARTBEAT to 2 term=1") {
		t.Fatalf("second resend: %q, want 2 only", actStrings(acts))
	}
	if acts := n.step(521*ms, ack(2, 1, claimNo)); !has(acts, "cancel-timer resend") {
		t.Fatalf("all acknowledged: %q", actStrings(acts))
	}
}

// The alarm comes early only where it is a question and buys a faster
// failover: with ConfirmSuspicion outside quorum mode SuspectAfter
// defaults to 1.5 heartbeats; the textbook and quorum mode (whose
// failover waits for the lease) keep three; what must outlast lost
// heartbeats (the listen period, the lease) keeps three either way
// (LossWindow).
func TestEarlyAlarmDefaults(t *testing.T) {
	for _, tc := range []struct {
		hb               time.Duration
		confirm          bool
		quorum           int
		suspect, startup time.Duration
	}{
		{100 * ms, true, 0, 150 * ms, 300 * ms},
		{100 * ms, false, 0, 300 * ms, 300 * ms},
		{10 * ms, true, 0, 15 * ms, 30 * ms},
		{100 * ms, true, 3, 300 * ms, 300 * ms},
	} {
		c := Config{ID: 1, HeartbeatInterval: tc.hb, Quorum: tc.quorum}
		c.ConfirmSuspicion = tc.confirm
		c = c.WithDefaults()
		if c.SuspectAfter != tc.suspect || c.StartupWait != tc.startup || c.LossWindow() != tc.startup {
			t.Errorf("heartbeat %v, ConfirmSuspicion %v, quorum %d: SuspectAfter %v, StartupWait %v, LossWindow %v; want %v, %v, %v",
				tc.hb, tc.confirm, tc.quorum, c.SuspectAfter, c.StartupWait, c.LossWindow(), tc.suspect, tc.startup, tc.startup)
		}
		// The lease is the window, however early the alarm.
		c = Config{ID: 1, HeartbeatInterval: tc.hb, Quorum: 3, SuspectAfter: tc.suspect}.WithDefaults()
		if c.Lease != tc.startup {
			t.Errorf("heartbeat %v, SuspectAfter %v, quorum 3: Lease %v, want %v", tc.hb, tc.suspect, c.Lease, tc.startup)
		}
	}
	// A SuspectAfter longer than three heartbeats is the window.
	c := Config{ID: 1, SuspectAfter: 500 * ms}.WithDefaults()
	if c.LossWindow() != 500*ms || c.StartupWait != 500*ms {
		t.Errorf("SuspectAfter 500ms: LossWindow %v, StartupWait %v; want 500ms both", c.LossWindow(), c.StartupWait)
	}
}

// The agent's machine: a follower whose leader's heartbeat at 10ms is
// its last rings its alarm at 160ms (one heartbeat lost), probes, and a
// member's VOUCH with news keeps it following; the confirmation's PROBEs
// go 125µs apart.
func TestEarlyAlarmRingsAfterOneLostHeartbeat(t *testing.T) {
	n := followerOf(t, key(1), keys(2, 3), key(3), 1, earlyAlarm)
	if at := n.b.deadline[TimerSuspect]; at != 160*ms {
		t.Fatalf("alarm armed for %v, want 160ms (the heartbeat at 10ms + 150ms)", at)
	}
	n.expect(160*ms, fire(TimerSuspect),
		"broadcast PROBE to all (2) term=1",
		"set-timer confirm at 160.125ms")
	// Member 2 heard the heartbeat of 110ms that this node missed (50ms
	// ago, give or take the packet delay).
	n.expect(160*ms+200*time.Microsecond, vouch(2, 1, 3, 50*ms),
		"cancel-timer confirm",
		"set-timer suspect at 260.2ms")
	n.is(StateFollower, 1, 3)
}

// A leader that is gone: the alarm after 150ms, confirmRounds PROBEs in
// the first half of ConfirmTimeout, the election at its end: 155ms after
// the last heartbeat, where the textbook's alarm would only ring at 300ms.
func TestEarlyAlarmDeadLeaderSuspectedAfterConfirmTimeout(t *testing.T) {
	n := followerOf(t, key(1), keys(2, 3), key(3), 1, earlyAlarm)
	n.step(160*ms, fire(TimerSuspect))
	probes, at := 1, 160*ms
	for i := 0; i < 2*confirmRounds && n.b.Status().Leader != 0; i++ {
		at = n.b.deadline[TimerConfirm]
		for _, a := range n.step(at, fire(TimerConfirm)) {
			if a.Kind == ActBroadcast && a.Msg.Type == wire.TypeProbe {
				probes++
			}
		}
	}
	if probes != confirmRounds || at != 165*ms {
		t.Errorf("%d PROBEs, suspected at %v; want %d, at 165ms", probes, at, confirmRounds)
	}
	n.is(StateCandidate, 1, noLeader)
}
