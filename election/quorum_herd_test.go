package election

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// One test per rule of quorum mode in a herd (harden_probeherd.go, quorum.go,
// quorum_lease.go): a cluster of twelve nodes, N = 12 (a majority of 7),
// with the defaults (lease 300ms, margin 30ms: a guard of 330ms), as the
// agent runs it (hardened). Each test fails on the code before the rule.

const herdN = 12

func herdOpts(c *Config) { c.Quorum, c.Hardening = herdN, Hardened() }

// herdFollower is node self of 1 … 12 in quorum mode, following 12 from
// the HEARTBEAT (claim 1, term 1) it acknowledged at 400ms: its guard
// runs to 730ms.
func herdFollower(t *testing.T, self NodeID) tnode {
	t.Helper()
	n := newNode(t, key(self), othersOf(self, herdN, herdN), herdOpts)
	n.step(0, evStart)
	acts := n.step(400*ms, qclaim(wire.TypeHeartbeat, herdN, 1, 1))
	if !has(acts, "send HEARTBEAT_ACK to 12 term=1") {
		t.Fatalf("n%d: the HEARTBEAT at 400ms: %q, want it acknowledged", self, actStrings(acts))
	}
	n.is(StateFollower, 1, herdN)
	return n
}

// suspectAll drives n's detector alarm for its leader and the
// confirmation that follows (no VOUCH comes): the leader is suspected.
func (n tnode) suspectAll() []Action {
	n.t.Helper()
	var all []Action
	all = append(all, n.step(n.b.deadline[TimerSuspect], fire(TimerSuspect))...)
	for i := 0; n.b.st.confirming && i < 100; i++ {
		all = append(all, n.step(n.b.deadline[TimerConfirm], fire(TimerConfirm))...)
	}
	if n.b.st.confirming {
		n.t.Fatal("the confirmation does not end")
	}
	return all
}

func kinds(acts []Action, typ wire.Type) (sends, broadcasts int) {
	for _, a := range acts {
		switch {
		case a.Kind == ActSend && a.Msg.Type == typ:
			sends++
		case a.Kind == ActBroadcast && a.Msg.Type == typ:
			broadcasts++
		}
	}
	return sends, broadcasts
}

// The detector's alarm is put off by rank in quorum mode too: 8 has three
// larger candidates besides the leader.
func TestQuorumHerdSkewsTheAlarm(t *testing.T) {
	n := herdFollower(t, 8)
	deadline, _ := n.b.det.SuspectAt()
	if want := deadline + 3*tSuspect/maxSkewRank; n.b.deadline[TimerSuspect] != want {
		t.Fatalf("rank 3's alarm at %v, want %v (the detector's deadline %v, skewed)", n.b.deadline[TimerSuspect], want, deadline)
	}
	top := herdFollower(t, 11)
	if deadline, _ := top.b.det.SuspectAt(); top.b.deadline[TimerSuspect] != deadline {
		t.Fatalf("the largest survivor's alarm at %v, want the detector's deadline %v", top.b.deadline[TimerSuspect], deadline)
	}
}

// A node that membership has not listed yet counts as larger in the
// herd's ranks (quorum mode knows the cluster's size): 8, whose members
// lack 10 and 11, ranks third among the survivors as with a full view,
// both for its alarm and for its election's put-off. Right after a
// 128-host LAN started, nodes that did not know the largest yet ranked
// themselves first and elected at once.
func TestQuorumHerdRanksCountUnlistedNodes(t *testing.T) {
	var members []Key
	for _, id := range []NodeID{1, 2, 3, 4, 5, 6, 7, 9, herdN} {
		members = append(members, key(id))
	}
	n := newNode(t, key(8), members, herdOpts)
	n.step(0, evStart)
	n.step(400*ms, qclaim(wire.TypeHeartbeat, herdN, 1, 1))
	n.is(StateFollower, 1, herdN)
	deadline, _ := n.b.det.SuspectAt()
	if want := deadline + 3*tSuspect/maxSkewRank; n.b.deadline[TimerSuspect] != want {
		t.Fatalf("8's alarm at %v, want %v (rank 3: 9, and 10 and 11 unlisted)", n.b.deadline[TimerSuspect], want)
	}
	// The put-off counts the leader too until it is suspected: 9, 10, 11
	// and 12, as with a full view.
	full := herdFollower(t, 8)
	if got, want := n.b.electSkew(), 4*tSuspect/maxSkewRank; got != want || full.b.electSkew() != want {
		t.Fatalf("8's election put off %v after its guard, %v with a full view, want %v (rank 4)", got, full.b.electSkew(), want)
	}
}

// A herd's confirmation that has sent all its rounds, and whose vouchers
// all answered without news of the leader, suspects at once instead of
// waiting out the rest of its timeout (which a round-trip estimate
// inflated by a loaded start stretched to SuspectAfter on the test bed,
// while smaller ranks elected: a storm). One voucher with news still
// ends the suspicion.
func TestQuorumHerdConfirmationEndsWhenVouchersAreSilent(t *testing.T) {
	for _, news := range []bool{false, true} {
		n := herdFollower(t, 5)
		var asked []NodeID
		for _, a := range n.step(n.b.deadline[TimerSuspect], fire(TimerSuspect)) {
			if a.Kind == ActSend && a.Msg.Type == wire.TypeProbe && a.To != herdN {
				asked = append(asked, a.To)
			}
		}
		if len(asked) != probeVouchers {
			t.Fatalf("the confirmation asked vouchers %v, want %d", asked, probeVouchers)
		}
		for i := 0; n.b.st.probes < confirmRounds && i < 2*confirmRounds; i++ {
			n.step(n.b.deadline[TimerConfirm], fire(TimerConfirm))
		}
		now, end := n.b.deadline[TimerConfirm], n.b.st.confirmEnd
		var acts []Action
		for k, id := range asked {
			v := claim(wire.TypeVouch, key(id), 1)
			v.Msg.Leader = herdN
			heard := 300 * ms // before this node's own, at 400ms
			if news && k == 0 {
				heard = now - ms
			}
			v.Msg.Age = uint32((now - heard) / time.Microsecond)
			acts = n.step(now, v)
			if k < len(asked)-1 && has(acts, "follow leader=0 term=1") {
				t.Fatalf("suspected after %d of %d vouchers answered", k+1, len(asked))
			}
		}
		if got := has(acts, "follow leader=0 term=1"); got == news || now >= end {
			t.Fatalf("news %v: suspected %v at %v (the confirmation's end %v): %q", news, got, now, end, actStrings(acts))
		}
	}
}

// A confirmation's PROBEs go to the leader and three vouchers, unicast,
// not to all: only the pre-vote needs everyone's answer.
func TestQuorumHerdConfirmationProbesTheLeaderAndVouchers(t *testing.T) {
	n := herdFollower(t, 11)
	acts := n.step(n.b.deadline[TimerSuspect], fire(TimerSuspect))
	sends, bcasts := kinds(acts, wire.TypeProbe)
	if bcasts != 0 || sends != 1+probeVouchers || !has(acts, "send PROBE to 12 term=1") {
		t.Fatalf("the confirmation's first round: %q, want PROBEs to 12 and %d vouchers", actStrings(acts), probeVouchers)
	}
}

// The election put off for the guard waits, besides, by rank: 11, the
// largest survivor, elects when its guard ends (730ms); 8 three rank
// steps later. The leader suspected does not count.
func TestQuorumHerdPutOffByRank(t *testing.T) {
	for _, c := range []struct {
		self NodeID
		at   time.Duration
	}{{11, 730 * ms}, {8, 730*ms + 3*tSuspect/maxSkewRank}, {1, 730*ms + 10*tSuspect/maxSkewRank}} {
		n := herdFollower(t, c.self)
		acts := n.suspectAll()
		want := (Action{Kind: ActSetTimer, Timer: TimerLease, At: c.at}).String()
		if !slices.Contains(actStrings(acts), want) {
			t.Errorf("n%d: %q, want %q", c.self, actStrings(acts), want)
			continue
		}
		// Meanwhile the largest survivor's claim is followed and
		// acknowledged (its guard is over), and the put-off dropped.
		if c.self != 11 {
			acts := n.step(735*ms, qclaim(wire.TypeCoordinator, 11, 2, 1))
			if !has(acts, "send HEARTBEAT_ACK to 11 term=2") {
				t.Errorf("n%d: the largest survivor's claim at 735ms: %q, want it acknowledged", c.self, actStrings(acts))
			}
			if n.b.q.pending {
				t.Errorf("n%d: still waits to elect after following 11", c.self)
			}
		}
	}
}

// Past maxSkewRank ranks the put-off goes on growing, a quarter step a
// rank, so that the herd's tail does not elect all at one instant: when
// the largest survivors' claims come late (a loaded host), the tail's
// pre-votes followed one another rather than 112 at once, each a PROBE
// to every member.
func TestQuorumHerdPutOffSpreadsTheTail(t *testing.T) {
	const n = 64
	step := tSuspect / maxSkewRank
	skew := map[NodeID]time.Duration{}
	for _, self := range []NodeID{63, 48, 47, 40, 1} {
		node := newNode(t, key(self), othersOf(self, n, n), herdOpts, func(c *Config) { c.Quorum = n })
		skew[self] = node.b.electSkew()
	}
	// 64 (the leader) and the larger ids count: 63 has rank 1, 48 rank
	// 16, 47 rank 17, 40 rank 24, 1 rank 63.
	want := map[NodeID]time.Duration{63: step, 48: 16 * step, 47: 16*step + step/4, 40: 16*step + 8*step/4, 1: 16*step + 47*step/4}
	for id, w := range want {
		if skew[id] != w {
			t.Errorf("n%d: electSkew %v, want %v", id, skew[id], w)
		}
	}
}

// A pre-vote round sends one PROBE to all, not five: the majority of
// its answers comes from the many.
func TestQuorumHerdPrevoteOneProbeARound(t *testing.T) {
	n := herdFollower(t, 11)
	n.suspectAll()
	acts := n.step(730*ms, fire(TimerLease))
	if _, b := kinds(acts, wire.TypeProbe); b != 1 {
		t.Fatalf("the pre-vote's start: %q, want one PROBE to all", actStrings(acts))
	}
	for i := 0; i < 10 && n.b.armed[TimerPrevote] && n.b.now < n.b.st.roundEnd; i++ {
		acts := n.step(n.b.deadline[TimerPrevote], fire(TimerPrevote))
		if _, b := kinds(acts, wire.TypeProbe); b != 0 {
			t.Fatalf("a second PROBE in the round at %v: %q", n.b.now, actStrings(acts))
		}
	}
	// Six grants and itself: a majority of 12; it leads (the largest).
	for id := NodeID(1); id <= 6; id++ {
		v := claim(wire.TypeVouch, key(id), 1)
		v.Msg.Age = wire.MaxAge
		acts = n.step(732*ms, v)
	}
	if !has(acts, "broadcast COORDINATOR to all (11) term=2") {
		t.Fatalf("six grants: %q, want the claim", actStrings(acts))
	}
}

// A node that knows of fewer voters than a majority sends no pre-vote
// PROBE: nobody could make it win. 1 knows 10 others, N = 64 needs 33.
func TestQuorumHerdTooFewVotersDoNotProbe(t *testing.T) {
	var ids []NodeID
	for id := NodeID(2); id <= 11; id++ {
		ids = append(ids, id)
	}
	n := newNode(t, key(1), keys(ids...), herdOpts, func(c *Config) { c.Quorum = 64 })
	n.step(0, evStart)
	acts := n.step(tStartup, fire(TimerStartup))
	for i := 0; i < 5; i++ {
		if s, b := kinds(acts, wire.TypeProbe); s+b != 0 {
			t.Fatalf("round %d at %v: %q, want no PROBE with 11 of the 33 voters it needs", i, n.b.now, actStrings(acts))
		}
		if !n.b.armed[TimerPrevote] {
			t.Fatalf("round %d: no next round armed", i)
		}
		acts = n.step(n.b.deadline[TimerPrevote], fire(TimerPrevote))
	}
	// Once membership lists a majority, it asks.
	for id := NodeID(12); id <= 40; id++ {
		n.step(n.b.now, memberUp(key(id)))
	}
	for i := 0; i < 5 && n.b.armed[TimerPrevote]; i++ {
		acts = n.step(n.b.deadline[TimerPrevote], fire(TimerPrevote))
		if _, b := kinds(acts, wire.TypeProbe); b == 1 {
			return
		}
	}
	t.Fatalf("40 voters known, no PROBE: %q", actStrings(acts))
}

// After its pre-vote, a candidate with larger live keys defers its
// ELECTION by its rank, and answers smaller ELECTIONs with one ANSWER to
// all a rank step (scale_bully.go), as outside quorum mode.
func TestQuorumHerdDefersElection(t *testing.T) {
	n := herdFollower(t, 8)
	n.suspectAll()
	n.step(n.b.deadline[TimerLease], fire(TimerLease))
	at := n.b.now
	var acts []Action
	for id := NodeID(1); id <= 6; id++ {
		v := claim(wire.TypeVouch, key(id), 1)
		v.Msg.Age = wire.MaxAge
		acts = n.step(at, v)
	}
	// Rank 3: 9, 10 and 11 (12 is suspected).
	if want := (Action{Kind: ActSetTimer, Timer: TimerAnswer, At: at + 3*tAnswer/deferStepDiv}).String(); !slices.Contains(actStrings(acts), want) || has(acts, "broadcast ELECTION to larger (3) term=1") {
		t.Fatalf("the pre-vote won: %q, want %q and no ELECTION yet", actStrings(acts), want)
	}
	n.is(StateCandidate, 1, noLeader)
	n.expect(at+ms, election(1, 1), "broadcast ANSWER to all (11) term=1")
	n.expect(at+2*ms, election(2, 1))
}

// herdLeader is 12, leading 1 … 11 with N = 12: confirmed by the
// acknowledgements of 1 … 6 of its claim 2 (the HEARTBEAT at 400ms) at
// 401ms, its third claim went out then. 7 … 11 never acknowledged.
func herdLeader(t *testing.T) tnode {
	t.Helper()
	n := newNode(t, key(herdN), othersOf(herdN, herdN, herdN), herdOpts)
	n.step(0, evStart)
	n.step(tStartup, fire(TimerStartup))
	for id := NodeID(1); id <= 6; id++ {
		v := claim(wire.TypeVouch, key(id), 0)
		v.Msg.Age = wire.MaxAge
		n.step(tStartup, v)
	}
	n.step(400*ms, fire(TimerHeartbeat))
	var acts []Action
	for id := NodeID(1); id <= 6; id++ {
		acts = n.step(401*ms, ack(id, 1, 2))
	}
	if !has(acts, "become-leader term=1") {
		t.Fatalf("not confirmed: %q", actStrings(acts))
	}
	return n
}

// A leader stops re-sending its claim once a majority (itself included)
// acknowledged it: the lease then runs from that claim, the most any
// acknowledgement of it can give.
func TestQuorumHerdResendsStopAtMajority(t *testing.T) {
	n := herdLeader(t)
	for id := NodeID(1); id <= 11; id++ {
		n.step(402*ms, ack(id, 1, 3)) // every member heard that 12 leads
	}
	n.step(500*ms, fire(TimerHeartbeat)) // claim 4
	var acts []Action
	for id := NodeID(1); id <= 6; id++ {
		acts = n.step(501*ms, ack(id, 1, 4))
	}
	if !has(acts, "cancel-timer resend") {
		t.Fatalf("six acknowledgements of 12's latest claim: %q, want the re-sends cancelled", actStrings(acts))
	}
	if st := n.b.Status(); st.LeaseUntil != 800*ms {
		t.Fatalf("lease until %v, want 800ms (the claim at 500ms)", st.LeaseUntil)
	}
	if acts := n.step(510*ms, fire(TimerResend)); hasKind(acts, ActSend) {
		t.Fatalf("re-sent with a majority's acknowledgements: %q", actStrings(acts))
	}
}

// The claim that tells the followers this node leads (the first after
// its confirmation, claim 3) is re-sent until every member acknowledged
// it, a majority's acknowledgements notwithstanding: a follower that
// missed it names no leader until the next heartbeat.
func TestQuorumHerdToldClaimReachesEveryone(t *testing.T) {
	n := herdLeader(t) // confirmed at 401ms; claim 3 tells the followers
	for id := NodeID(1); id <= 6; id++ {
		n.step(402*ms, ack(id, 1, 3))
	}
	resent := func(at time.Duration) []string {
		var to []string
		for _, a := range n.step(at, fire(TimerResend)) {
			if a.Kind == ActSend {
				to = append(to, a.String())
			}
		}
		return to
	}
	want := []string{"send HEARTBEAT to 7 term=1", "send HEARTBEAT to 8 term=1", "send HEARTBEAT to 9 term=1",
		"send HEARTBEAT to 10 term=1", "send HEARTBEAT to 11 term=1"}
	if to := resent(411 * ms); !slices.Equal(to, want) {
		t.Fatalf("re-sends of the claim that tells the followers: %q, want %q", to, want)
	}
	for id := NodeID(7); id <= 11; id++ {
		n.step(412*ms, ack(id, 1, 3))
	}
	if to := resent(421 * ms); len(to) > 0 {
		t.Fatalf("re-sent after every member acknowledged: %q", to)
	}
}

// The heartbeat can follow the claim that told the followers at once
// (its timer keeps the phase of the claims before the confirmation): the
// members that acknowledged neither still get the latest claim re-sent,
// for tellClaims claims, though a majority acknowledged the heartbeat. A
// follower that missed both named no leader for another heartbeat.
func TestQuorumHerdToldSurvivesTheNextHeartbeat(t *testing.T) {
	n := herdLeader(t) // confirmed at 401ms; claim 3 tells the followers
	for id := NodeID(1); id <= 9; id++ {
		n.step(402*ms, ack(id, 1, 3))
	}
	// (The telling claim's re-sends to 10 and 11 were lost.)
	n.step(500*ms, fire(TimerHeartbeat)) // claim 4
	for id := NodeID(1); id <= 6; id++ {
		n.step(501*ms, ack(id, 1, 4))
	}
	var to []string
	for _, a := range n.step(510*ms, fire(TimerResend)) {
		if a.Kind == ActSend {
			to = append(to, a.String())
		}
	}
	want := []string{"send HEARTBEAT to 10 term=1", "send HEARTBEAT to 11 term=1"}
	if !slices.Equal(to, want) {
		t.Fatalf("re-sends after the heartbeat that followed the telling claim: %q, want %q (the two that acknowledged neither)", to, want)
	}
	n.step(511*ms, ack(10, 1, 4))
	n.step(511*ms, ack(11, 1, 4))
	if acts := n.step(520*ms, fire(TimerResend)); hasKind(acts, ActSend) {
		t.Fatalf("re-sent after every member acknowledged: %q", actStrings(acts))
	}
}

// In a herd of a quorum of thinAcksFrom or more, a follower acknowledges
// the heartbeats of its parity only, and any that it must: the first
// HEARTBEAT of a leadership, one after a missed turn, and a re-send.
func TestQuorumHerdThinsAcks(t *testing.T) {
	const n64 = thinAcksFrom
	n := newNode(t, key(10), othersOf(10, n64, n64), func(c *Config) { c.Quorum, c.Hardening = n64, Hardened() })
	n.step(0, evStart)
	at := 400 * ms
	acked := func(claim uint32) bool {
		at += 100 * ms
		acts := n.step(at, qclaim(wire.TypeHeartbeat, n64, 1, claim))
		return has(acts, fmt.Sprintf("send HEARTBEAT_ACK to %d term=1", n64))
	}
	for _, c := range []struct {
		claim uint32
		want  bool
		why   string
	}{
		{1, true, "the leadership's first HEARTBEAT (it tells that 64 leads)"},
		{2, true, "its turn (10 is even)"},
		{3, false, "the other half's turn"},
		{4, true, "its turn"},
		{6, true, "its turn, the claim before lost"},
		{7, false, "the other half's turn"},
		{9, true, "not its turn, but its last acknowledgement is of 6: 8 was lost"},
		{10, true, "its turn"},
		{11, false, "the other half's turn"},
		{11, true, "a re-send: the leader lacks a majority"},
	} {
		if got := acked(c.claim); got != c.want {
			t.Fatalf("claim %d (%s): acknowledged %v, want %v", c.claim, c.why, got, c.want)
		}
	}
	// The guard runs from the last acknowledgement, at 1400ms.
	if want := 1400*ms + n.b.q.guardFor; n.b.q.guardUntil != want {
		t.Fatalf("guard until %v, want %v (from the last acknowledgement)", n.b.q.guardUntil, want)
	}

	// A herd below thinAcksFrom acknowledges every heartbeat.
	f := herdFollower(t, 4)
	for claim := uint32(2); claim <= 5; claim++ {
		if acts := f.step(400*ms+time.Duration(claim)*100*ms, qclaim(wire.TypeHeartbeat, herdN, 1, claim)); !has(acts, "send HEARTBEAT_ACK to 12 term=1") {
			t.Fatalf("N=%d: claim %d not acknowledged: %q", herdN, claim, actStrings(acts))
		}
	}
}

// A re-send goes only to the members that acknowledged an earlier claim
// of the leadership: 7 … 11, which never did, are bound by a guard or
// missed every claim; they hear the next heartbeat's. (The claim that
// told the followers, 3, and the next two went to everyone that had not
// acknowledged it: TestQuorumHerdToldSurvivesTheNextHeartbeat.)
func TestQuorumHerdResendsOnlyToSupporters(t *testing.T) {
	n := herdLeader(t)
	n.step(500*ms, fire(TimerHeartbeat)) // claim 4
	n.step(600*ms, fire(TimerHeartbeat)) // claim 5
	for id := NodeID(1); id <= 6; id++ {
		n.step(601*ms, ack(id, 1, 5))
	}
	n.step(700*ms, fire(TimerHeartbeat)) // claim 6
	for id := NodeID(1); id <= 3; id++ {
		n.step(701*ms, ack(id, 1, 6))
	}
	acts := n.step(710*ms, fire(TimerResend))
	var to []string
	for _, a := range acts {
		if a.Kind == ActSend {
			to = append(to, a.String())
		}
	}
	want := []string{"send HEARTBEAT to 4 term=1", "send HEARTBEAT to 5 term=1", "send HEARTBEAT to 6 term=1"}
	if !slices.Equal(to, want) {
		t.Fatalf("re-sends: %q, want %q", to, want)
	}
}

// A follower that a guard keeps from acknowledging a claim acknowledges
// it when the guard ends, echoing the latest claim it received, instead
// of waiting for the leader's next claim.
func TestQuorumHerdOwedAcknowledgement(t *testing.T) {
	n := herdFollower(t, 5) // guard for 12 until 730ms
	n.step(600*ms, qclaim(wire.TypeCoordinator, 11, 2, 1))
	acts := n.step(650*ms, qclaim(wire.TypeCoordinator, 11, 2, 2))
	if hasKind(acts, ActSend) {
		t.Fatalf("acknowledged 11 within the guard given to 12: %q", actStrings(acts))
	}
	if n.b.deadline[TimerLease] != 730*ms || !n.b.armed[TimerLease] {
		t.Fatalf("no timer at the guard's end (730ms): armed %v at %v", n.b.armed[TimerLease], n.b.deadline[TimerLease])
	}
	acts = n.step(730*ms, fire(TimerLease))
	var got string
	for _, a := range acts {
		if a.Kind == ActSend {
			got = a.String() + string(a.Msg.AppendBody(nil, ""))
		}
	}
	if want := "send HEARTBEAT_ACK to 11 term=2 ack=2"; got != want {
		t.Fatalf("at the guard's end: %q, want %q", actStrings(acts), want)
	}
	// The guard of its start, too.
	m := newNode(t, key(5), othersOf(5, herdN, herdN), herdOpts)
	m.step(0, evStart)
	if acts := m.step(100*ms, qclaim(wire.TypeHeartbeat, 12, 1, 1)); hasKind(acts, ActSend) || !has(acts, "set-timer lease at 330ms") {
		t.Fatalf("a claim within the guard of its start: %q, want the acknowledgement owed until 330ms", actStrings(acts))
	}
	if acts := m.step(330*ms, fire(TimerLease)); !has(acts, "send HEARTBEAT_ACK to 12 term=1") {
		t.Fatalf("at 330ms: %q", actStrings(acts))
	}
	// Not when it follows another leader by then.
	m = herdFollower(t, 5)
	m.step(600*ms, qclaim(wire.TypeCoordinator, 11, 2, 1))
	m.step(650*ms, qclaim(wire.TypeCoordinator, 12, 3, 1))
	if acts := m.step(730*ms, fire(TimerLease)); has(acts, "send HEARTBEAT_ACK to 11 term=2") {
		t.Fatalf("acknowledged 11 after following 12 in term 3: %q", actStrings(acts))
	}
}

// leaseBase against a naive oracle (the sort of every node's latest
// acknowledged send time it replaces): random acknowledgements, some
// late, some out of the window, some duplicated.
func TestQuorumLeaseBaseMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		nodes, need := 3+r.IntN(40), 0
		need = nodes/2 + 1
		var q quorum
		q.acked = map[NodeID]uint32{}
		latestSent := map[NodeID]time.Duration{}
		now := time.Duration(0)
		for step := 0; step < 300; step++ {
			now += time.Duration(r.IntN(3)) * ms
			if r.IntN(3) == 0 {
				// A claim (what claim() does to the window).
				q.sent[q.nSent%sentWindow] = now
				q.latest[q.nSent%sentWindow] = 0
				q.nSent++
				continue
			}
			if q.nSent == 0 {
				continue
			}
			from := NodeID(1 + r.IntN(nodes))
			back := uint32(r.IntN(int(min(q.nSent, sentWindow+4))))
			seq := q.nSent - back
			if seq == 0 || q.nSent-seq >= sentWindow {
				continue // onAck drops it
			}
			old := q.acked[from]
			if seq <= old {
				continue
			}
			q.acked[from] = seq
			if old > 0 && q.nSent-old < sentWindow {
				q.latest[(old-1)%sentWindow]--
			}
			q.latest[(seq-1)%sentWindow]++
			latestSent[from] = q.sent[(seq-1)%sentWindow]
			// The oracle: the need-th largest latest send time, of the
			// nodes whose latest acknowledgement is within the window.
			var times []time.Duration
			for id, s := range latestSent {
				if q.nSent-q.acked[id] < sentWindow {
					times = append(times, s)
				}
			}
			slices.Sort(times)
			base, ok := q.leaseBase(need)
			wantOK := len(times) >= need
			if ok != wantOK || ok && base != times[len(times)-need] {
				want := "none"
				if wantOK {
					want = fmt.Sprint(times[len(times)-need])
				}
				t.Fatalf("trial %d step %d: leaseBase(%d) = %v, %v; the oracle: %s (times %v)", trial, step, need, base, ok, want, times)
			}
		}
	}
}

// A VOUCH that names the leader this node follows grants its pre-vote
// when that leader's key is smaller, though membership does not list the
// leader yet (a node that has just restarted learns its members over
// seconds on a large LAN): the key comes from the leader's claims. A
// VOUCH naming a node neither listed nor followed grants nothing. (The
// node does not take over from an unlisted leader by preemption,
// mayPreempt, but a pre-vote may run for other reasons meanwhile.)
func TestQuorumPrevoteGrantsOverAnUnlistedLeader(t *testing.T) {
	n := newNode(t, key(5), keys(1, 2, 3), quorumOf(5), hardened)
	n.step(0, evStart)
	acts := n.step(100*ms, qclaim(wire.TypeHeartbeat, 4, 1, 1))
	if n.b.st.prevoting || n.b.leader != 4 {
		t.Fatalf("4's HEARTBEAT: %q; want 5 to follow 4, which is not listed, without a takeover", actStrings(acts))
	}
	vouch := func(leader NodeID) wire.Message {
		v := claim(wire.TypeVouch, key(1), 1).Msg
		v.Leader, v.Age = leader, 1000 // heard a millisecond ago
		return v
	}
	if v := vouch(4); !n.b.grants(&v) {
		t.Errorf("a VOUCH naming 4, the unlisted leader followed and smaller than 5, does not grant")
	}
	if v := vouch(6); n.b.grants(&v) {
		t.Errorf("a VOUCH naming 6, neither listed nor followed, grants")
	}
}
