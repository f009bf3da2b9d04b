package election

import (
	"strings"
	"testing"
	"time"
)

// The estimator (harden_rtt.go): RFC 6298's srtt and rttvar, a wait never below
// the configured one nor above the limit, and a fade once no sample came
// for rttFade limits.
func TestRTTEstimator(t *testing.T) {
	var r rtt
	const base, limit = 5 * ms, 300 * ms
	if got := r.wait(0, base, limit); got != base {
		t.Fatalf("no sample: wait %v, want the configured %v", got, base)
	}
	r.sample(time.Second, 40*ms, limit) // srtt 40, rttvar 20: 120
	if got := r.wait(time.Second, base, limit); got != 120*ms {
		t.Errorf("one sample of 40ms: wait %v, want srtt+4·rttvar = 120ms", got)
	}
	r.sample(time.Second, 40*ms, limit) // rttvar 15: 100
	if got := r.wait(time.Second, base, limit); got != 100*ms {
		t.Errorf("two samples of 40ms: wait %v, want 100ms", got)
	}
	r.sample(time.Second, 10*time.Second, limit) // clamped to 300ms
	if r.srtt != (7*40*ms+300*ms)/8 {
		t.Errorf("a sample over the limit: srtt %v, want it clamped to the limit", r.srtt)
	}
	if got := r.wait(time.Second, base, limit); got != limit {
		t.Errorf("after a slow sample: wait %v, want the limit %v", got, limit)
	}
	fade := rttFade * limit
	if got, want := r.wait(time.Second+fade+ms, base, limit), min(r.srtt+4*r.rttvar, 2*limit)/2; got != min(want, limit) {
		t.Errorf("one fade after the last sample: wait %v, want half, %v", got, want)
	}
	if got := r.wait(time.Second+20*fade, base, limit); got != base {
		t.Errorf("long after the last sample: wait %v, want the configured %v", got, base)
	}
	// A pending request is timed once, from its first send; an answer
	// later than the limit is no sample.
	var q rtt
	var at time.Duration
	sent(&at, 100*ms)
	sent(&at, 101*ms)
	q.answered(&at, 130*ms, limit)
	if !q.valid || q.srtt != 30*ms || at != 0 {
		t.Errorf("answer 30ms after the first send: srtt %v (valid %v), pending %v; want 30ms, none pending", q.srtt, q.valid, at)
	}
	var late rtt
	sent(&at, 100*ms)
	late.answered(&at, 100*ms+limit+ms, limit)
	if late.valid || at != 0 {
		t.Errorf("an answer later than the limit was sampled (%v) or left pending (%v)", late.srtt, at)
	}
}

// A follower whose last confirmation's VOUCH came 60ms after its PROBE
// (a starved host) waits for the next one srtt+4·rttvar = 180ms instead of
// the configured 5ms, so that the same slow answer no longer makes it
// elect; its PROBEs still go out within the configured 2.5ms.
func TestConfirmStretchesToSlowVouches(t *testing.T) {
	n := followerOf(t, key(1), keys(2, 3), key(3), 1, hardened)
	n.step(310*ms, fire(TimerSuspect))
	for n.b.armed[TimerConfirm] && n.b.deadline[TimerConfirm] < 320*ms {
		n.step(n.b.deadline[TimerConfirm], fire(TimerConfirm))
	}
	n.is(StateCandidate, 1, 0) // 5ms passed without an answer: it elects
	// The late VOUCH of the live leader: a 60ms round trip, measured.
	n.step(370*ms, vouch(3, 1, 3, 0))
	n.step(375*ms, coord(3, 2))
	n.is(StateFollower, 2, 3)
	at := n.b.deadline[TimerSuspect] // on time: no lateness sampled
	n.step(at, fire(TimerSuspect))
	if !n.b.st.confirming {
		t.Fatal("the detector's alarm did not start a confirmation")
	}
	if got := n.b.st.confirmEnd - at; got != 180*ms {
		t.Errorf("confirmation after a 60ms round trip waits %v, want 180ms", got)
	}
	if got := n.b.deadline[TimerConfirm] - at; got != n.b.cfg.ConfirmTimeout/(2*confirmRounds) {
		t.Errorf("next PROBE in %v, want the configured spacing %v", got, n.b.cfg.ConfirmTimeout/(2*confirmRounds))
	}
	n.step(at+150*ms, vouch(3, 2, 3, 0)) // within the stretched wait
	n.is(StateFollower, 2, 3)
	if n.b.st.confirming || n.b.armed[TimerConfirm] {
		t.Error("the VOUCH within the stretched wait did not end the confirmation")
	}
}

// A claimant's check is not timed (askClaimant): every follower that
// hears the claim checks the claimant at once, so its VOUCH comes after
// the herd's PROBEs, and that delay in the estimate stretched the next
// crash's confirmation (at 128 hosts by 50–70 ms). A confirmation's
// VOUCH is still timed.
func TestClaimantCheckIsNotTimed(t *testing.T) {
	n := followerOf(t, key(1), keys(2, 3), key(2), 1, hardened)
	n.step(50*ms, heartbeat(2, 1))
	if acts := n.step(60*ms, coord(3, 2)); !has(acts, "send PROBE to 3 term=1") {
		t.Fatalf("a larger claimant while the leader is heard: %q, want a PROBE to it", actStrings(acts))
	}
	n.step(120*ms, vouch(3, 2, 3, 0)) // 60ms later
	n.is(StateFollower, 2, 3)
	if n.b.rtt.valid || n.b.confirmTimeout() != n.b.cfg.ConfirmTimeout {
		t.Errorf("after a claimant's VOUCH 60ms late: estimate %v (valid %v), confirmation wait %v; want none, the configured %v",
			n.b.rtt.srtt, n.b.rtt.valid, n.b.confirmTimeout(), n.b.cfg.ConfirmTimeout)
	}
	// The next confirmation, answered 20ms late by the leader, is timed.
	at := n.b.deadline[TimerSuspect]
	n.step(at, fire(TimerSuspect))
	if !n.b.st.confirming {
		t.Fatal("the detector's alarm did not start a confirmation")
	}
	n.step(at+20*ms, vouch(3, 2, 3, 0))
	if !n.b.rtt.valid || n.b.rtt.srtt != 20*ms {
		t.Errorf("a confirmation's VOUCH 20ms late: estimate %v (valid %v), want 20ms", n.b.rtt.srtt, n.b.rtt.valid)
	}
}

// The textbook (the zero Hardening) keeps the seeds' fixed T whatever the round trips.
func TestTextbookWaitsDoNotStretch(t *testing.T) {
	n := followerOf(t, key(1), keys(2, 3), key(3), 1)
	n.b.rtt.sample(0, 200*ms, n.b.cfg.SuspectAfter)
	if got := n.b.answerTimeout(); got != n.b.cfg.AnswerTimeout {
		t.Errorf("textbook answer timeout %v, want the configured %v", got, n.b.cfg.AnswerTimeout)
	}
}

// In a herd (more than vouchers+1 nodes) a follower that heard its leader
// within the last heartbeat interval takes a smaller rival's later claim
// as no reason to ask the leader: each such question was a confirmation
// at every follower, per claim. One that has not heard it for longer
// asks, unicast to the leader and its vouchers.
func TestHeardJustNowSkipsTheQuestion(t *testing.T) {
	var ids []NodeID
	for id := NodeID(1); id <= 10; id++ {
		ids = append(ids, id)
	}
	members := append(keys(ids...), key(12))
	n := followerOf(t, key(11), members, key(12), 1, hardened)
	n.step(60*ms, heartbeat(12, 1))
	if acts := n.step(100*ms, coord(5, 2)); len(acts) != 0 || n.b.st.confirming {
		t.Errorf("a rival's claim 40ms after the leader's heartbeat: %q, want nothing", actStrings(acts))
	}
	acts := n.step(200*ms, coord(5, 3))
	if !n.b.st.confirming || !has(acts, "send PROBE to 12 term=1") || hasKind(acts, ActBroadcast) {
		t.Errorf("a rival's claim 140ms after the leader's heartbeat: %q, want PROBEs to the leader and vouchers", actStrings(acts))
	}
	n.is(StateFollower, 1, 12)
	// Small clusters ask at once, as before.
	s := followerOf(t, key(1), keys(2, 3), key(3), 1, hardened)
	s.step(60*ms, heartbeat(3, 1))
	if acts := s.step(70*ms, coord(2, 2)); !s.b.st.confirming || !has(acts, "broadcast PROBE to all (2) term=1") {
		t.Errorf("3 nodes, a rival's later claim: %q, want a PROBE to all", actStrings(acts))
	}
}

// In a herd a follower's detector alarm is put off by its rank
// (suspectSkew): node 8 of 1…11 with leader 12 has three larger
// candidates besides the leader, so its alarm rings 3·SuspectAfter/16
// after the detector's deadline; the largest survivor's claim in between
// is followed at once, without a PROBE. The largest survivor (rank 0)
// rings and confirms on the deadline.
func TestSkewedSuspicion(t *testing.T) {
	others := func(self NodeID) []Key { return othersOf(self, 12, 12) }
	n := followerOf(t, key(8), others(8), key(12), 1, hardened)
	deadline, ok := n.b.det.SuspectAt()
	if want := deadline + 3*n.b.cfg.SuspectAfter/maxSkewRank; !ok || n.b.deadline[TimerSuspect] != want {
		t.Fatalf("rank 3's alarm at %v, want %v (the detector's deadline %v, skewed)", n.b.deadline[TimerSuspect], want, deadline)
	}
	acts := n.step(deadline+10*ms, coord(11, 2))
	if len(round(acts)) != 0 || n.b.st.confirming {
		t.Errorf("the largest survivor's claim: %q, want it followed without a PROBE", actStrings(acts))
	}
	n.is(StateFollower, 2, 11)
	top := followerOf(t, key(11), others(11), key(12), 1, hardened)
	deadline, _ = top.b.det.SuspectAt()
	if top.b.deadline[TimerSuspect] != deadline {
		t.Fatalf("the largest survivor's alarm at %v, want the detector's deadline %v", top.b.deadline[TimerSuspect], deadline)
	}
	if acts := top.step(deadline, fire(TimerSuspect)); !top.b.st.confirming || len(round(acts)) == 0 {
		t.Errorf("the largest survivor's alarm: %q, want its confirmation at once", actStrings(acts))
	}
}

// round is the PROBEs among acts.
func round(acts []Action) []string {
	var got []string
	for _, a := range actStrings(acts) {
		if strings.Contains(a, "PROBE") {
			got = append(got, a)
		}
	}
	return got
}
