package election

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// One test per claim of the O(n) election (scale_bully.go), as the agent
// runs it (hardened); textbook mode keeps the seeds' messages.

// Rank deferral: a candidate with r larger live keys sends its ELECTION
// r·T/16 after its election starts (here r = 2: 3.125ms each), not at once.
func TestScaleCandidateDefersByRank(t *testing.T) {
	n := started(t, key(3), keys(1, 2, 4, 5), hardened)
	n.expect(tStartup, fire(TimerStartup), "set-timer answer at 306.25ms")
	n.is(StateCandidate, 0, noLeader)
	n.expect(306250*time.Microsecond, fire(TimerAnswer),
		"broadcast ELECTION to larger (2) term=0",
		"set-timer answer at 356.25ms")
	// The textbook sends it at once.
	tb := started(t, key(3), keys(1, 2, 4, 5))
	tb.expect(tStartup, fire(TimerStartup), "broadcast ELECTION to larger (2) term=0", "set-timer answer at 350ms")
}

// The deferral is bounded: at most 8 ranks (T/2), whatever the number of
// larger keys.
func TestScaleDeferralBounded(t *testing.T) {
	var ids []NodeID
	for id := NodeID(2); id <= 40; id++ {
		ids = append(ids, id)
	}
	n := started(t, key(1), keys(ids...), hardened)
	n.expect(tStartup, fire(TimerStartup), "set-timer answer at 325ms")
	if got := rankDelay(&n.b.cfg, 1000); got != tAnswer/2 {
		t.Errorf("rank 1000: deferred %v, want T/2 = %v", got, tAnswer/2)
	}
}

// The largest survivor does not wait: it leads at once, as in the
// textbook's best case.
func TestScaleLargestSurvivorLeadsAtOnce(t *testing.T) {
	n := followerOf(t, key(4), keys(1, 2, 3, 5), key(5), 1, hardened)
	acts := n.step(400*ms, Event{Kind: EvSuspectLeader})
	for n.b.st.confirming {
		acts = n.step(n.b.deadline[TimerConfirm], fire(TimerConfirm))
	}
	if !has(acts, "broadcast COORDINATOR to all (4) term=2") {
		t.Fatalf("largest survivor: %q, want its claim at once", actStrings(acts))
	}
	n.is(StateLeader, 2, 4)
}

// While it defers, an ELECTION or an ANSWER of a larger key silences it:
// it waits for COORDINATOR, and sends no ELECTION.
func TestScaleLargerElectionOrAnswerSilences(t *testing.T) {
	for _, ev := range []Event{election(4, 0), answer(5, 0)} {
		n := started(t, key(3), keys(1, 2, 4, 5), hardened)
		n.step(tStartup, fire(TimerStartup))
		n.expect(302*ms, ev, "cancel-timer answer", "set-timer coordinator at 502ms")
		if acts := n.step(306250*time.Microsecond, fire(TimerAnswer)); len(acts) != 0 {
			t.Errorf("after %v: the cancelled turn still acts: %q", describe(ev), actStrings(acts))
		}
	}
	// A smaller key's ELECTION does not silence; it is answered.
	n := started(t, key(3), keys(1, 2, 4, 5), hardened)
	n.step(tStartup, fire(TimerStartup))
	n.expect(302*ms, election(1, 0), "broadcast ANSWER to all (4) term=0")
	n.is(StateCandidate, 0, noLeader)
}

// One ANSWER for all: a multicast, and at most one a rank step (T/16)
// however many smaller ELECTIONs arrive; the textbook answers each sender.
func TestScaleOneAnswerForAll(t *testing.T) {
	n := started(t, key(4), keys(1, 2, 3, 5), hardened)
	n.step(tStartup, fire(TimerStartup)) // defers its ELECTION to 303.125ms
	n.expect(301*ms, election(1, 0), "broadcast ANSWER to all (4) term=0")
	n.expect(302*ms, election(2, 0))
	n.expect(304*ms, election(3, 0))
	n.expect(305*ms, election(1, 0), "broadcast ANSWER to all (4) term=0")
	tb := started(t, key(4), keys(1, 2, 3, 5))
	tb.step(tStartup, fire(TimerStartup))
	tb.expect(301*ms, election(1, 0), "send ANSWER to 1 term=0")
	tb.expect(302*ms, election(2, 0), "send ANSWER to 2 term=0")
}

// A leader answers a late ELECTION with its ANSWER and its claim to all,
// so that the nodes that ELECTION silenced follow at once.
func TestScaleLeaderTellsAll(t *testing.T) {
	n := leaderOf(t, key(5), keys(1, 2, 3, 4), hardened)
	n.expect(320*ms, election(2, 0), "broadcast ANSWER to all (4) term=1", "broadcast COORDINATOR to all (4) term=1")
	// A silenced smaller candidate follows that claim.
	m := started(t, key(1), keys(2, 3, 4, 5), hardened)
	m.step(tStartup, fire(TimerStartup))
	m.step(301*ms, election(2, 0))
	m.step(302*ms, coord(5, 1))
	m.is(StateFollower, 1, 5)
}

// A node in its listen period that may not yet take over (nopreempt, or
// within its preempt delay) does not answer: the others elect among
// themselves and it follows.
func TestScaleStartingNodeWithinPreemptDelayStaysOut(t *testing.T) {
	for _, opt := range []func(*Config){preemptDelay(5 * time.Second), noPreempt} {
		n := newNode(t, key(5), keys(1, 2, 3, 4), hardened, opt)
		n.step(0, Event{Kind: EvStart})
		n.expect(100*ms, election(3, 1))
		n.is(StateStarting, 0, noLeader)
	}
	m := started(t, key(5), keys(1, 2, 3, 4), hardened)
	m.expect(100*ms, election(3, 1), "broadcast ANSWER to all (4) term=0", "cancel-timer startup", "set-timer answer at 300ms")
}

// Vouchers: outside quorum mode a PROBE is answered by the leader and by
// about eight of the other members, picked for each prober; in a cluster
// of up to nine nodes by every member, as before.
func TestVouchersBounded(t *testing.T) {
	for _, size := range []int{9, 64, 512} {
		var ids []NodeID
		for id := NodeID(1); id < NodeID(size); id++ {
			ids = append(ids, id)
		}
		others := func(self NodeID) []Key { return othersOf(self, size, 1000) }
		vouched := 0
		for _, self := range ids[1:] { // 1 is the prober
			n := followerOf(t, key(self), others(self), key(1000), 1, hardened)
			acts := n.step(50*ms, probeMsg(1, 1, 1000, 45*ms)) // it heard 1000 at 10ms
			if has(acts, "send VOUCH to 1 term=1") {
				vouched++
			}
		}
		if size <= vouchers+1 && vouched != size-2 || size > vouchers+1 && (vouched < 2 || vouched > 3*vouchers) {
			t.Errorf("%d nodes: %d of %d members vouched to one PROBE, want all up to %d nodes, else about %d", size, vouched, size-2, vouchers+1, vouchers)
		}
		t.Logf("%d nodes: %d members vouched", size, vouched)
	}
}

// The PROBE herd (harden_probeherd.go): in a cluster of more than nine nodes the
// leader answers PROBEs with one VOUCH to all, at most one a probe
// interval; a follower that heard herdSkip PROBEs of others about its leader
// since its last round leaves its next round out.
func TestProbeHerd(t *testing.T) {
	var ids []NodeID
	for id := NodeID(1); id <= 11; id++ {
		ids = append(ids, id)
	}
	l := leaderOf(t, key(12), keys(ids...), hardened)
	l.expect(350*ms, probeMsg(1, 1, 12, 50*ms), "broadcast VOUCH to all (11) term=1")
	l.expect(350*ms+100*time.Microsecond, probeMsg(2, 1, 12, 50*ms))
	l.expect(351*ms, probeMsg(3, 1, 12, 50*ms), "broadcast VOUCH to all (11) term=1")
	// Nine nodes or fewer: to the prober.
	small := leaderOf(t, key(9), keys(1, 2, 3, 4, 5, 6, 7, 8), hardened)
	small.expect(350*ms, probeMsg(1, 1, 9, 50*ms), "send VOUCH to 1 term=1")

	f := followerOf(t, key(11), append(keys(ids[:10]...), key(12)), key(12), 1, hardened)
	// In a herd a PROBE goes to the leader and to the first probeVouchers
	// of the prober's vouchers, one packet each, not to all: the members v
	// with mix64(v, 11) % 11 below vouchers, in ascending order, as
	// vouchesFor picks them on their side.
	want := []string{"send PROBE to 12 term=1"}
	for _, id := range ids[:10] {
		if mix64(id, 11)%11 < vouchers && len(want) <= probeVouchers {
			want = append(want, fmt.Sprintf("send PROBE to %d term=1", id))
		}
	}
	acts := f.step(310*ms, fire(TimerSuspect))
	if got := round(acts); !slices.Equal(got, want) {
		t.Fatalf("detector fired: %q, want the first round %q", got, want)
	}
	if len(want) != 1+probeVouchers {
		t.Errorf("a round of %d PROBEs, want the leader's and %d vouchers'", len(want), probeVouchers)
	}
	f.step(310*ms+10*time.Microsecond, probeMsg(1, 1, 12, 300*ms))
	if acts := f.step(f.b.deadline[TimerConfirm], fire(TimerConfirm)); !slices.Equal(round(acts), want) {
		t.Errorf("after one PROBE of another: %q, want the round %q", actStrings(acts), want)
	}
	for id := NodeID(1); id <= herdSkip; id++ {
		f.step(f.b.deadline[TimerConfirm]-time.Microsecond, probeMsg(id, 1, 12, 300*ms))
	}
	if acts := f.step(f.b.deadline[TimerConfirm], fire(TimerConfirm)); len(round(acts)) != 0 {
		t.Errorf("after %d PROBEs of others: %q, want the round left out", herdSkip, actStrings(acts))
	}
	if acts := f.step(f.b.deadline[TimerConfirm], fire(TimerConfirm)); !slices.Equal(round(acts), want) {
		t.Errorf("no PROBE of others since: %q, want the round %q", actStrings(acts), want)
	}
}
