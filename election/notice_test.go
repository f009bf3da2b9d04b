package election

import (
	"testing"

	"github.com/lanleader/lanleader/wire"
)

// NOTICE: a crashed leader's guard says the leadership of its term is
// over and its job dead (core_claims.go, onNotice).

func noticeMsg(from NodeID, term uint64) Event { return claim(wire.TypeNotice, key(from), term) }

// A NOTICE from the leader followed, of the term followed, elects at
// once, as its RESIGN would: 2, the largest left, leads without waiting
// for the detector (its suspect timer is at 590ms).
func TestNoticeElectsAtOnce(t *testing.T) {
	n := followerOf(t, key(2), keys(1, 3), key(3), 1)
	n.step(290*ms, heartbeat(3, 1))
	acts := n.step(400*ms, noticeMsg(3, 1))
	if !has(acts, "become-leader term=2") {
		t.Fatalf("the leader's notice of its term: actions %q, want an election won at once", actStrings(acts))
	}
	n.is(StateLeader, 2, 2)
}

// A NOTICE of another term, or from a node that is not the leader
// followed, changes nothing: no action, the same leader.
func TestNoticeOfAnotherLeadershipIgnored(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   Event
	}{
		{"an earlier term of the leader", noticeMsg(3, 0)},
		{"a later term of the leader", noticeMsg(3, 2)},
		{"another node, the leader's term", noticeMsg(1, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := followerOf(t, key(2), keys(1, 3), key(3), 1)
			n.step(290*ms, heartbeat(3, 1))
			if acts := n.step(400*ms, tc.ev); len(acts) != 0 {
				t.Fatalf("actions %q, want none", actStrings(acts))
			}
			n.is(StateFollower, 1, 3)
		})
	}
}

// Quorum mode: a NOTICE releases this node's promise to its sender for
// that term, and that term only, as RESIGN does; a claim of a later term
// is then acknowledged at once instead of at the guard's end (730ms).
func TestNoticeReleasesThatTermOnly(t *testing.T) {
	n := started(t, key(1), keys(2, 3), quorumOf(3))
	n.step(400*ms, qclaim(wire.TypeHeartbeat, 3, 1, 1)) // acknowledged: guard until 730ms
	n.step(450*ms, noticeMsg(3, 2))                     // a term it never voted in
	n.step(451*ms, noticeMsg(2, 1))                     // another node
	if acts := n.step(500*ms, qclaim(wire.TypeCoordinator, 2, 2, 1)); hasKind(acts, ActSend) {
		t.Fatalf("supported 2 after notices of other leaderships: %q", actStrings(acts))
	}
	n.step(510*ms, noticeMsg(3, 1))
	if acts := n.step(520*ms, qclaim(wire.TypeCoordinator, 2, 2, 2)); !has(acts, "send HEARTBEAT_ACK to 2 term=2") {
		t.Fatalf("no support for 2 after 3's notice of term 1: %q", actStrings(acts))
	}
}

// NoticeActs and NoticeReleases, the drivers' filter: a notice acts on
// the leadership followed in exactly its term, and releases the vote
// given to its sender in exactly that term, followed or not (node 1 has
// heard node 2's claim and no longer follows 3); anything else is
// dropped.
func TestNoticeFilter(t *testing.T) {
	following := Status{Self: key(1), Term: 1, Leader: 3, VotedTerm: 1, VotedFor: 3}
	left := Status{Self: key(1), Term: 1, Leader: 0, VotedTerm: 1, VotedFor: 3}
	for _, tc := range []struct {
		name           string
		st             Status
		from           NodeID
		term           uint64
		acts, releases bool
	}{
		{"the leader followed, its term", following, 3, 1, true, true},
		{"the leader followed, another term", following, 3, 2, false, false},
		{"another node", following, 2, 1, false, false},
		{"no longer followed, voted for in that term", left, 3, 1, false, true},
		{"no longer followed, an earlier term", left, 3, 0, false, false},
		{"itself", Status{Self: key(3), Term: 1, Leader: 3, VotedTerm: 1, VotedFor: 3}, 3, 1, false, false},
		{"no sender", Status{Self: key(1)}, 0, 0, false, false},
	} {
		if a, r := NoticeActs(tc.st, tc.from, tc.term), NoticeReleases(tc.st, tc.from, tc.term); a != tc.acts || r != tc.releases {
			t.Errorf("%s: acts %v releases %v, want %v %v", tc.name, a, r, tc.acts, tc.releases)
		}
	}
}
