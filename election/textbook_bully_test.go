package election

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// One test per claim of the bully description (shared/DESIGN.md, section
// "Bully (default algorithm)", and the textbook texts in shared/seeds:
// 002 for the estimates and the bounded waits, 004 for T = 2·t_max +
// t_process), in the manner of etcd-io/raft's raft_paper_test.go. Each test
// drives one machine to a state with the helpers of helpers_test.go, feeds
// it one event and compares what it does, action by action.

// The timing the expected deadlines below are written with must be the
// defaults.
func TestDefaultTiming(t *testing.T) {
	c := DefaultConfig(7)
	got := []any{c.ID, c.Priority, c.Preempt, c.PreemptDelay, c.HeartbeatInterval, c.SuspectAfter,
		c.AnswerTimeout, c.CoordinatorTimeout, c.StartupWait, c.ResignHoldoff, c.Detector == nil}
	want := []any{NodeID(7), defPrio, true, 0 * ms, tHB, tSuspect, tAnswer, tCoord, tStartup, tHoldoff, true}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("DefaultConfig(7):\n got %v\nwant %v", got, want)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("DefaultConfig(7).Validate() = %v", err)
	}
}

// The key orders by priority (the seeds' estimate) first, then by id.
func TestKeyOrder(t *testing.T) {
	for _, tc := range []struct {
		a, b Key
		less bool
	}{
		{Key{100, 1}, Key{100, 2}, true},
		{Key{100, 2}, Key{100, 1}, false},
		{Key{100, 9}, Key{150, 1}, true}, // priority before id
		{Key{150, 1}, Key{100, 9}, false},
		{Key{100, 3}, Key{100, 3}, false}, // irreflexive
	} {
		if got := tc.a.Less(tc.b); got != tc.less {
			t.Errorf("%v.Less(%v) = %v, want %v", tc.a, tc.b, got, tc.less)
		}
	}
}

// The state names are part of the /status contract.
func TestStateStrings(t *testing.T) {
	got := fmt.Sprint(StateStarting, StateFollower, StateCandidate, StateLeader, StateConflict, State(9))
	if want := "starting follower candidate leader conflict state(9)"; got != want {
		t.Errorf("state names: got %q, want %q", got, want)
	}
}

// --- Step 1 ------------------------------------------------------------------

// Step 1: a node that has just started listens for StartupWait, then sends
// ELECTION to the live nodes with a larger key only (one multicast whose
// Count is the number of those nodes) and waits T for an ANSWER.
func TestStep1StartListensThenSendsElectionToLarger(t *testing.T) {
	n := started(t, key(2), keys(1, 3, 4, 5))
	acts := n.expect(tStartup, fire(TimerStartup),
		"broadcast ELECTION to larger (3) term=0",
		"set-timer answer at 350ms")
	n.is(StateCandidate, 0, noLeader)
	want := wire.Message{Type: wire.TypeElection, From: 2, Priority: 100, Term: 0}
	if len(acts) > 0 && (!msgEq(acts[0].Msg, want) || acts[0].Scope != ScopeLarger || acts[0].Count != 3) {
		t.Errorf("ELECTION action: got msg %+v scope %v count %d, want msg %+v scope larger count 3",
			acts[0].Msg, acts[0].Scope, acts[0].Count, want)
	}
}

// Step 1: "larger" is by key, priority first; Count counts exactly the
// members with a larger key.
func TestStep1ElectionCountsLargerKeysOnly(t *testing.T) {
	for _, tc := range []struct {
		name    string
		self    Key
		members []Key
		want    string
	}{
		{"middle of five", key(3), keys(1, 2, 4, 5), "broadcast ELECTION to larger (2) term=0"},
		{"smallest of five", key(1), keys(2, 3, 4, 5), "broadcast ELECTION to larger (4) term=0"},
		{"priority before id", Key{150, 1}, []Key{{100, 2}, {200, 3}, {150, 4}, {100, 9}}, "broadcast ELECTION to larger (2) term=0"},
		{"higher priority smaller id", Key{100, 5}, []Key{{150, 1}, {100, 2}}, "broadcast ELECTION to larger (1) term=0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := started(t, tc.self, tc.members)
			n.expect(tStartup, fire(TimerStartup), tc.want, "set-timer answer at 350ms")
		})
	}
}

// Step 1, best case: a node with no larger member does not wait T; it
// claims as soon as its listen period ends (it has just started, so it
// first waits StartupWait, during which a live leader would be heard).
func TestStep1LargestClaimsWhenListenPeriodEnds(t *testing.T) {
	n := started(t, key(5), keys(1, 2, 3, 4))
	n.expect(tStartup-1, fire(TimerStartup)) // not due yet
	n.is(StateStarting, 0, noLeader)
	n.expect(tStartup, fire(TimerStartup),
		"broadcast COORDINATOR to all (4) term=1",
		"become-leader term=1",
		"set-timer heartbeat at 400ms")
	n.is(StateLeader, 1, 5)

	// The largest by priority, not by id.
	p := started(t, Key{200, 1}, keys(2, 3, 4, 5))
	p.expect(tStartup, fire(TimerStartup),
		"broadcast COORDINATOR to all (4) term=1",
		"become-leader term=1",
		"set-timer heartbeat at 400ms")
}

// Step 1: a largest node asked to elect during its listen period answers
// but claims only when the period ends: an election may already be under
// way that it has not heard of yet.
func TestStep1LargestAskedDuringListenPeriodClaimsAtItsEnd(t *testing.T) {
	n := started(t, key(5), keys(1, 2, 3, 4))
	n.expect(100*ms, election(1, 0),
		"send ANSWER to 1 term=0",
		"cancel-timer startup",
		"set-timer answer at 300ms")
	n.is(StateCandidate, 0, noLeader)
	n.expect(tStartup, fire(TimerAnswer),
		"broadcast COORDINATOR to all (4) term=1",
		"become-leader term=1",
		"set-timer heartbeat at 400ms")
}

// Step 1: an election started during the listen period waits for an ANSWER
// until the period ends, even if T would end earlier.
func TestStep1ElectionDuringListenPeriodWaitsUntilItsEnd(t *testing.T) {
	n := started(t, key(3), keys(1, 2, 4, 5))
	n.expect(100*ms, election(1, 0),
		"send ANSWER to 1 term=0",
		"cancel-timer startup",
		"broadcast ELECTION to larger (2) term=0",
		"set-timer answer at 300ms")
	n.expect(250*ms, fire(TimerAnswer)) // T has passed, the listen period has not
	n.is(StateCandidate, 0, noLeader)
	n.expect(300*ms, fire(TimerAnswer),
		"broadcast COORDINATOR to all (4) term=1",
		"become-leader term=1",
		"set-timer heartbeat at 400ms")
}

// --- Step 2 ------------------------------------------------------------------

// Step 2: no ANSWER within T: the node is the coordinator. It sends
// COORDINATOR to all, leads and starts its heartbeats.
func TestStep2NoAnswerWithinTBecomesCoordinator(t *testing.T) {
	n := electing3of5(t)
	acts := n.expect(tStartup+tAnswer, fire(TimerAnswer),
		"broadcast COORDINATOR to all (4) term=1",
		"become-leader term=1",
		"set-timer heartbeat at 450ms")
	n.is(StateLeader, 1, 3)
	want := wire.Message{Type: wire.TypeCoordinator, From: 3, Priority: 100, Term: 1}
	if len(acts) > 0 && (!msgEq(acts[0].Msg, want) || acts[0].Scope != ScopeAll) {
		t.Errorf("COORDINATOR action: got msg %+v scope %v, want msg %+v scope all", acts[0].Msg, acts[0].Scope, want)
	}
	if st := n.b.Status(); st.LeaderKey != key(3) {
		t.Errorf("LeaderKey = %v, want %v", st.LeaderKey, key(3))
	}
}

// Step 2: the new coordinator's term is one more than any term it has
// seen, in any message or its own.
func TestStep2TermIsMaxSeenPlusOne(t *testing.T) {
	t.Run("term seen in an ELECTION", func(t *testing.T) {
		n := started(t, key(3), keys(1, 2, 4, 5))
		n.expect(100*ms, election(1, 7),
			"send ANSWER to 1 term=0",
			"cancel-timer startup",
			"broadcast ELECTION to larger (2) term=0",
			"set-timer answer at 300ms")
		n.is(StateCandidate, 0, noLeader) // seeing a term is not adopting it
		n.expect(300*ms, fire(TimerAnswer),
			"broadcast COORDINATOR to all (4) term=8",
			"become-leader term=8",
			"set-timer heartbeat at 400ms")
	})
	t.Run("term seen in an ANSWER", func(t *testing.T) {
		n := electing3of5(t)
		n.expect(320*ms, answer(4, 9), "cancel-timer answer", "set-timer coordinator at 520ms")
		n.expect(520*ms, fire(TimerCoordinator), "broadcast ELECTION to larger (2) term=0", "set-timer answer at 570ms")
		n.expect(570*ms, fire(TimerAnswer),
			"broadcast COORDINATOR to all (4) term=10",
			"become-leader term=10",
			"set-timer heartbeat at 670ms")
	})
	t.Run("own term", func(t *testing.T) {
		n := followerOf(t, key(3), keys(1, 2, 4, 5), key(5), 4)
		n.expect(320*ms, evSuspect,
			"cancel-timer suspect",
			"follow leader=0 term=4",
			"broadcast ELECTION to larger (1) term=4",
			"set-timer answer at 370ms")
		n.expect(370*ms, fire(TimerAnswer),
			"broadcast COORDINATOR to all (4) term=5",
			"become-leader term=5",
			"set-timer heartbeat at 470ms")
	})
}

// --- Step 3 ------------------------------------------------------------------

// Step 3 (seed 002): an ANSWER came, so a larger node takes over: the node
// stops waiting for ANSWERs and waits CoordinatorTimeout for COORDINATOR.
// Further ANSWERs change nothing.
func TestStep3AnswerWaitsForCoordinator(t *testing.T) {
	n := electing3of5(t)
	n.expect(320*ms, answer(4, 0), "cancel-timer answer", "set-timer coordinator at 520ms")
	n.is(StateCandidate, 0, noLeader)
	n.expect(330*ms, answer(5, 0))
	n.expect(350*ms, fire(TimerAnswer)) // cancelled: T no longer matters
	n.is(StateCandidate, 0, noLeader)
}

// Step 3 (seed 002): "if it does not get COORDINATOR, Si starts a new
// election".
func TestStep3NoCoordinatorStartsNewElection(t *testing.T) {
	n := electing3of5(t)
	n.step(320*ms, answer(4, 0))
	n.expect(519*ms, fire(TimerCoordinator))
	n.expect(520*ms, fire(TimerCoordinator),
		"broadcast ELECTION to larger (2) term=0",
		"set-timer answer at 570ms")
	n.is(StateCandidate, 0, noLeader)
	// and this time nobody answers.
	n.expect(570*ms, fire(TimerAnswer),
		"broadcast COORDINATOR to all (4) term=1",
		"become-leader term=1",
		"set-timer heartbeat at 670ms")
}

// Step 3: the COORDINATOR that was awaited ends the wait.
func TestStep3CoordinatorEndsTheWait(t *testing.T) {
	n := electing3of5(t)
	n.step(320*ms, answer(4, 0))
	n.expect(400*ms, coord(5, 1),
		"cancel-timer coordinator",
		"follow leader=5 term=1",
		"set-timer suspect at 700ms")
	n.is(StateFollower, 1, 5)
	n.expect(520*ms, fire(TimerCoordinator))
}

// Step 3: an ANSWER counts only from a larger key, and only while the node
// waits for one.
func TestStep3AnswerFromSmallerOrUnaskedIgnored(t *testing.T) {
	n := electing3of5(t)
	n.expect(310*ms, answer(2, 0))
	n.is(StateCandidate, 0, noLeader)
	n.expect(350*ms, fire(TimerAnswer),
		"broadcast COORDINATOR to all (4) term=1",
		"become-leader term=1",
		"set-timer heartbeat at 450ms")
	n.expect(360*ms, answer(4, 1)) // a leader asked nothing

	f := followerOf(t, key(3), keys(1, 2, 4, 5), key(5), 1)
	f.expect(100*ms, answer(4, 1))
	f.is(StateFollower, 1, 5)
}

// --- Step 4 ------------------------------------------------------------------

// Step 4: ELECTION from a smaller key is answered, and the node starts its
// own election unless one is already running.
func TestStep4ElectionFromSmallerAnsweredThenOwnElection(t *testing.T) {
	t.Run("starting", func(t *testing.T) {
		n := started(t, key(3), keys(1, 2, 4, 5))
		n.expect(100*ms, election(1, 0),
			"send ANSWER to 1 term=0",
			"cancel-timer startup",
			"broadcast ELECTION to larger (2) term=0",
			"set-timer answer at 300ms")
		n.is(StateCandidate, 0, noLeader)
	})
	t.Run("follower", func(t *testing.T) {
		n := followerOf(t, key(3), keys(1, 2, 4, 5), key(5), 1)
		n.expect(400*ms, election(1, 1),
			"send ANSWER to 1 term=1",
			"broadcast ELECTION to larger (2) term=1",
			"set-timer answer at 450ms")
		// It has not suspected its leader itself: the leader stays known
		// (and is asked too) while the election runs.
		n.is(StateCandidate, 1, 5)
	})
	t.Run("candidate waiting for ANSWER", func(t *testing.T) {
		n := electing3of5(t)
		n.expect(310*ms, election(1, 0), "send ANSWER to 1 term=0")
		n.is(StateCandidate, 0, noLeader)
		n.expect(350*ms, fire(TimerAnswer), // its T was not restarted
			"broadcast COORDINATOR to all (4) term=1",
			"become-leader term=1",
			"set-timer heartbeat at 450ms")
	})
	t.Run("candidate waiting for COORDINATOR", func(t *testing.T) {
		n := electing3of5(t)
		n.step(320*ms, answer(5, 0))
		n.expect(330*ms, election(2, 0), "send ANSWER to 2 term=0")
		n.is(StateCandidate, 0, noLeader)
		n.expect(520*ms, fire(TimerCoordinator), "broadcast ELECTION to larger (2) term=0", "set-timer answer at 570ms")
	})
	t.Run("smaller by priority though larger by id", func(t *testing.T) {
		n := started(t, key(3), []Key{{100, 1}, {50, 9}, {100, 5}})
		n.expect(100*ms, claim(wire.TypeElection, Key{50, 9}, 0),
			"send ANSWER to 9 term=0",
			"cancel-timer startup",
			"broadcast ELECTION to larger (1) term=0",
			"set-timer answer at 300ms")
	})
}

// Step 4, stale ELECTION: one from a term before the leadership this node
// follows was sent before its sender heard of that leadership (whose
// claim is on its way to it). It is answered, but the node runs no
// election of its own: that would repeat the one just finished.
func TestStep4StaleElectionAnsweredWithoutNewElection(t *testing.T) {
	n := followerOf(t, key(3), keys(1, 2, 4, 5), key(5), 2)
	n.expect(100*ms, election(1, 1), "send ANSWER to 1 term=2")
	n.is(StateFollower, 2, 5)
	n.expect(110*ms, election(1, 2), // not stale: step 4 as usual
		"send ANSWER to 1 term=2",
		"broadcast ELECTION to larger (2) term=2",
		"set-timer answer at 300ms")
}

// Step 4: ELECTION from a larger key is not for this node (a multicast
// reaches every member; the receiver filters): no ANSWER, no change.
func TestStep4ElectionFromLargerIgnored(t *testing.T) {
	t.Run("starting", func(t *testing.T) {
		n := started(t, key(3), keys(1, 2, 4, 5))
		n.expect(100*ms, election(4, 0))
		n.is(StateStarting, 0, noLeader)
	})
	t.Run("follower", func(t *testing.T) {
		n := followerOf(t, key(3), keys(1, 2, 4, 5), key(5), 1)
		n.expect(100*ms, election(4, 1))
		n.is(StateFollower, 1, 5)
	})
	t.Run("candidate", func(t *testing.T) {
		n := electing3of5(t)
		n.expect(310*ms, election(4, 0))
		n.is(StateCandidate, 0, noLeader)
	})
	t.Run("leader", func(t *testing.T) {
		n := electing3of5(t)
		n.step(350*ms, fire(TimerAnswer))
		n.expect(360*ms, election(4, 1))
		n.is(StateLeader, 1, 3)
	})
	t.Run("larger by priority though smaller by id", func(t *testing.T) {
		n := started(t, key(3), keys(1, 2))
		n.expect(100*ms, claim(wire.TypeElection, Key{200, 1}, 0))
		n.is(StateStarting, 0, noLeader)
	})
}

// Step 4, leader: a smaller sender that is behind (a lower term) only
// needs to hear who leads: ANSWER, then COORDINATOR to it alone.
func TestStep4LeaderTellsSenderThatIsBehind(t *testing.T) {
	n := started(t, key(5), keys(1, 2, 3, 4))
	n.step(100*ms, election(2, 4)) // it has seen term 4
	n.step(300*ms, fire(TimerAnswer))
	n.is(StateLeader, 5, 5)
	n.expect(320*ms, election(1, 3),
		"send ANSWER to 1 term=5",
		"send COORDINATOR to 1 term=5")
	n.is(StateLeader, 5, 5)
}

// Step 4, leader: a sender that has seen the leader's term (or a later
// one) and still elects cannot accept the current claim: the leader
// re-asserts under a fresh term that everyone accepts.
func TestStep4LeaderReassertsUnderFreshTerm(t *testing.T) {
	t.Run("equal term", func(t *testing.T) {
		n := leaderOf(t, key(5), keys(1, 2, 3, 4))
		n.expect(310*ms, election(2, 1),
			"broadcast COORDINATOR to all (4) term=2",
			"become-leader term=2",
			"set-timer heartbeat at 410ms",
			"send ANSWER to 2 term=2")
		n.is(StateLeader, 2, 5)
	})
	t.Run("higher term", func(t *testing.T) {
		// The later term makes the leader re-assert under a term above it;
		// the sender hears it from the broadcast, so it gets one
		// COORDINATOR, and then the ANSWER.
		n := leaderOf(t, key(5), keys(1, 2, 3, 4))
		n.expect(310*ms, election(2, 4),
			"broadcast COORDINATOR to all (4) term=5",
			"become-leader term=5",
			"set-timer heartbeat at 410ms",
			"send ANSWER to 2 term=5")
		n.is(StateLeader, 5, 5)
	})
}

// --- Step 5 ------------------------------------------------------------------

// Step 5 / seed 002 step 3: COORDINATOR from a larger key is followed, in
// every state below leader.
func TestStep5CoordinatorFromLargerFollowed(t *testing.T) {
	t.Run("follower, same term", func(t *testing.T) {
		n := followerOf(t, key(2), keys(1, 3, 4, 5), key(3), 1)
		n.expect(100*ms, coord(4, 1),
			"follow leader=4 term=1",
			"set-timer suspect at 400ms")
		n.is(StateFollower, 1, 4)
		if st := n.b.Status(); st.LeaderKey != key(4) {
			t.Errorf("LeaderKey = %v, want %v", st.LeaderKey, key(4))
		}
	})
	t.Run("candidate waiting for ANSWER", func(t *testing.T) {
		n := started(t, key(2), keys(1, 3, 4, 5))
		n.step(300*ms, fire(TimerStartup))
		n.expect(310*ms, coord(5, 1),
			"cancel-timer answer",
			"follow leader=5 term=1",
			"set-timer suspect at 610ms")
		n.is(StateFollower, 1, 5)
	})
}

// Step 5: COORDINATOR with a higher term is followed even from a smaller
// key.
func TestStep5CoordinatorWithHigherTermFollowed(t *testing.T) {
	n := followerOf(t, key(1), keys(2, 3, 4, 5), key(5), 1)
	n.expect(100*ms, coord(2, 2),
		"follow leader=2 term=2",
		"set-timer suspect at 400ms")
	n.is(StateFollower, 2, 2)
}

// Step 5 (seed 002 step 5, the "bully"): a returning node whose key is the
// largest takes over from the interim leader. It follows the leader it
// hears, runs an election, and claims when its listen period ends; the
// interim leader's heartbeats in between do not stop it.
func TestStep5ReturningLargestTakesOver(t *testing.T) {
	n := started(t, key(5), keys(1, 2, 3, 4))
	n.expect(50*ms, heartbeat(4, 3),
		"cancel-timer startup",
		"follow leader=4 term=3",
		"set-timer suspect at 350ms",
		"set-timer answer at 300ms")
	n.is(StateCandidate, 3, 4)
	// The election goes on; the heartbeat only feeds the detector, and
	// nothing is reported again.
	n.expect(150*ms, heartbeat(4, 3), "set-timer suspect at 450ms")
	n.is(StateCandidate, 3, 4)
	n.expect(300*ms, fire(TimerAnswer),
		"cancel-timer suspect",
		"broadcast COORDINATOR to all (4) term=4",
		"become-leader term=4",
		"set-timer heartbeat at 400ms")
	n.is(StateLeader, 4, 5)
}

// Step 5, during an election: a candidate that lost its leader hears a
// smaller node claim while it waits T. Its election takes over from that
// leader, because it preempts it, or (preemption off) because it answered
// an ELECTION of that leader's term and so took that election over (step
// 4): it notes the claim and elects on, and reports no ActFollow, since
// it follows nobody. Its status names the smaller leader, which is how
// the driver learns that a live leader's job may run when the candidate
// wins (sim/job's Driver, agent/lead.go: its job waits for that leader's,
// as after any takeover from a live leader).
func TestStep5CandidateNotesSmallerClaimAfterLoss(t *testing.T) {
	for _, preempt := range []bool{true, false} {
		var opts []func(*Config)
		if !preempt {
			opts = append(opts, noPreempt)
		}
		n := followerOf(t, key(3), keys(1, 2, 4, 5), key(5), 1, opts...)
		n.expect(400*ms, evSuspect,
			"cancel-timer suspect",
			"follow leader=0 term=1",
			"broadcast ELECTION to larger (1) term=1",
			"set-timer answer at 450ms")
		n.is(StateCandidate, 1, noLeader)
		if preempt {
			n.expect(420*ms, coord(2, 2), "set-timer suspect at 720ms")
		} else {
			// 1 lost 2, the leader of term 2, which 3 never heard of.
			n.expect(410*ms, election(1, 2), "send ANSWER to 1 term=1")
			n.expect(420*ms, heartbeat(2, 2), "set-timer suspect at 720ms")
		}
		n.is(StateCandidate, 2, 2)
		if st := n.m.Status(); st.LeaderKey != key(2) {
			t.Errorf("preempt %v: the noted leader's key in the status is %v, want %v", preempt, st.LeaderKey, key(2))
		}
		n.expect(450*ms, fire(TimerAnswer),
			"cancel-timer suspect",
			"broadcast COORDINATOR to all (4) term=3",
			"become-leader term=3",
			"set-timer heartbeat at 550ms")
		n.is(StateLeader, 3, 3)
	}
}

// A machine starts once: a node that restarts has lost its memory and gets
// a new machine. EvStart given again to a running leader changes nothing,
// and it goes on sending heartbeats.
func TestStep5SecondStartIgnored(t *testing.T) {
	n := leaderOf(t, key(5), nil)
	n.expect(1000*ms, evStart)
	n.is(StateLeader, 1, 5)
	hb := n.step(1100*ms, fire(TimerHeartbeat))
	if !slices.ContainsFunc(hb, func(a Action) bool { return a.Msg.Type == wire.TypeHeartbeat }) {
		t.Errorf("after a second EvStart the leader sent no HEARTBEAT: %v", hb)
	}
}

// Step 5, preempt: false (keepalived's nopreempt): a returning node
// follows a healthy leader, even a smaller one.
func TestStep5NoPreemptFollowsHealthySmallerLeader(t *testing.T) {
	n := started(t, key(5), keys(1, 2, 3, 4), noPreempt)
	n.expect(50*ms, heartbeat(4, 3),
		"cancel-timer startup",
		"follow leader=4 term=3",
		"set-timer suspect at 350ms")
	n.is(StateFollower, 3, 4)
	n.expect(150*ms, heartbeat(4, 3), "set-timer suspect at 450ms")
	n.expect(300*ms, fire(TimerStartup)) // cancelled
	n.expect(300*ms, fire(TimerAnswer))  // never armed
	n.is(StateFollower, 3, 4)
}

// Step 5, preempt_delay: the takeover waits until start+delay
// (TimerPreempt), then happens at once.
func TestStep5PreemptDelayPostponesTakeover(t *testing.T) {
	n := newNode(t, key(5), keys(1, 2, 3, 4), preemptDelay(1000*ms))
	n.expect(0, evStart, "set-timer startup at 300ms", "set-timer preempt at 1s")
	n.expect(50*ms, heartbeat(4, 3),
		"cancel-timer startup",
		"follow leader=4 term=3",
		"set-timer suspect at 350ms",
		"set-timer preempt at 1s")
	n.is(StateFollower, 3, 4)
	n.expect(950*ms, heartbeat(4, 3),
		"set-timer suspect at 1.25s",
		"set-timer preempt at 1s")
	n.is(StateFollower, 3, 4)
	n.expect(999*ms, fire(TimerPreempt))
	n.expect(1000*ms, fire(TimerPreempt),
		"cancel-timer suspect",
		"broadcast COORDINATOR to all (4) term=4",
		"become-leader term=4",
		"set-timer heartbeat at 1.1s")
	n.is(StateLeader, 4, 5)

	// With preemption off the delay means nothing: no TimerPreempt.
	off := newNode(t, key(5), keys(1, 2, 3, 4), preemptDelay(1000*ms), noPreempt)
	off.expect(0, evStart, "set-timer startup at 300ms")
}

// --- Step 6 ------------------------------------------------------------------

// Step 6: the leader sends HEARTBEAT to all every HeartbeatInterval, with
// the interval (in ms) in the body.
func TestStep6LeaderSendsHeartbeatEveryInterval(t *testing.T) {
	n := leaderOf(t, key(5), keys(1, 2, 3, 4))
	acts := n.expect(400*ms, fire(TimerHeartbeat),
		"broadcast HEARTBEAT to all (4) term=1",
		"set-timer heartbeat at 500ms")
	want := wire.Message{Type: wire.TypeHeartbeat, From: 5, Priority: 100, Term: 1}
	if len(acts) > 0 && (!msgEq(acts[0].Msg, want) || acts[0].Scope != ScopeAll) {
		t.Errorf("HEARTBEAT action: got msg %+v scope %v, want msg %+v scope all", acts[0].Msg, acts[0].Scope, want)
	}
	n.expect(500*ms, fire(TimerHeartbeat),
		"broadcast HEARTBEAT to all (4) term=1",
		"set-timer heartbeat at 600ms")
	n.is(StateLeader, 1, 5)
}

// Step 6: each heartbeat moves the follower's suspect timer to the
// detector's new deadline (SuspectAfter after it); nothing else happens.
func TestStep6FollowerRearmsSuspectTimerOnHeartbeat(t *testing.T) {
	n := followerOf(t, key(3), keys(1, 2, 4, 5), key(5), 1)
	n.expect(100*ms, heartbeat(5, 1), "set-timer suspect at 400ms")
	n.expect(200*ms, heartbeat(5, 1), "set-timer suspect at 500ms")
	n.expect(320*ms, coord(5, 1), "set-timer suspect at 620ms") // a repeated COORDINATOR is a heartbeat
	n.expect(400*ms, fire(TimerSuspect))                        // an old deadline
	n.is(StateFollower, 1, 5)
}

// Step 6, textbook best case: when the second-largest node suspects the
// leader, the leader is left out of the larger set, so it becomes
// coordinator at once. The COORDINATOR multicast's Count includes the
// suspected leader, which is still a member in this node's view (4, not
// the textbook's n-2 = 3; see TestMemberDownOfLeaderElectsAtOnce for 3).
func TestStep6SuspicionBySecondLargestMakesItCoordinatorAtOnce(t *testing.T) {
	n := followerOf(t, key(4), keys(1, 2, 3, 5), key(5), 1)
	n.step(100*ms, heartbeat(5, 1))
	n.expect(399*ms, fire(TimerSuspect))
	n.is(StateFollower, 1, 5)
	n.expect(400*ms, fire(TimerSuspect),
		"follow leader=0 term=1",
		"broadcast COORDINATOR to all (4) term=2",
		"become-leader term=2",
		"set-timer heartbeat at 500ms")
	n.is(StateLeader, 2, 4)
}

// Step 6: a smaller node that suspects the leader sends ELECTION to the
// larger nodes other than the leader, and keeps leaving it out of the
// elections that follow until the leader speaks again.
func TestStep6SuspicionLeavesLeaderOutOfElection(t *testing.T) {
	n := followerOf(t, key(1), keys(2, 3, 4, 5), key(5), 1)
	n.expect(310*ms, fire(TimerSuspect),
		"follow leader=0 term=1",
		"broadcast ELECTION to larger (3) term=1",
		"set-timer answer at 360ms")
	n.is(StateCandidate, 1, noLeader)
	n.step(320*ms, answer(4, 1))
	n.expect(520*ms, fire(TimerCoordinator),
		"broadcast ELECTION to larger (3) term=1",
		"set-timer answer at 570ms")
	// The leader was alive after all: it speaks, and is awaited again.
	n.expect(530*ms, heartbeat(5, 1),
		"cancel-timer answer",
		"follow leader=5 term=1",
		"set-timer suspect at 830ms")
	n.expect(540*ms, evSuspect,
		"cancel-timer suspect",
		"follow leader=0 term=1",
		"broadcast ELECTION to larger (3) term=1",
		"set-timer answer at 590ms")
	n.step(550*ms, coord(4, 2))
	n.expect(560*ms, evSuspect,
		"cancel-timer suspect",
		"follow leader=0 term=2",
		"broadcast ELECTION to larger (2) term=2", // 2 and 3: 4 and 5 are both suspected
		"set-timer answer at 610ms")
}

// Step 6: EvSuspectLeader (membership's suspicion) acts like the detector,
// and means nothing without a leader or to the leader itself.
func TestStep6SuspectLeaderEvent(t *testing.T) {
	n := followerOf(t, key(4), keys(1, 2, 3, 5), key(5), 1)
	n.expect(305*ms, evSuspect,
		"cancel-timer suspect",
		"follow leader=0 term=1",
		"broadcast COORDINATOR to all (4) term=2",
		"become-leader term=2",
		"set-timer heartbeat at 405ms")
	n.expect(310*ms, evSuspect) // it leads
	n.is(StateLeader, 2, 4)

	s := started(t, key(4), keys(1, 2, 3, 5))
	s.expect(100*ms, evSuspect) // no leader to suspect
	s.is(StateStarting, 0, noLeader)
}

// --- Step 7 ------------------------------------------------------------------

// Step 7: a leader that resigns sends RESIGN to all, stops its heartbeats
// and follows nobody. During the hold-off it answers no ELECTION and
// starts none; a COORDINATOR is still followed.
func TestStep7ResignBroadcastsAndHoldsOff(t *testing.T) {
	n := leaderOf(t, key(5), keys(1, 2, 3, 4))
	acts := n.expect(1000*ms, evResign,
		"broadcast RESIGN to all (4) term=1",
		"cancel-timer heartbeat",
		"follow leader=0 term=1",
		"set-timer holdoff at 2s")
	n.is(StateFollower, 1, noLeader)
	if len(acts) > 0 && !msgEq(acts[0].Msg, wire.Message{Type: wire.TypeResign, From: 5, Priority: 100, Term: 1}) {
		t.Errorf("RESIGN message: %+v", acts[0].Msg)
	}
	n.expect(1010*ms, election(1, 1))
	n.expect(1020*ms, election(4, 1))
	n.expect(1030*ms, fire(TimerHeartbeat))
	n.is(StateFollower, 1, noLeader)
	n.expect(1040*ms, coord(4, 2),
		"follow leader=4 term=2",
		"set-timer suspect at 1.34s")
	n.is(StateFollower, 2, 4) // smaller, but it holds off: no preemption
	n.expect(1050*ms, election(1, 2))
	n.expect(1060*ms, evSuspect, // suspects 4, but elects nothing while holding off
		"cancel-timer suspect",
		"follow leader=0 term=2")
	n.is(StateFollower, 2, noLeader)
	n.expect(1070*ms, evResign) // not a leader
}

// Step 7: when the hold-off ends with no leader, the node elects again
// (waiting 2T past the hold-off for claims it may have ignored).
func TestStep7HoldoffEndElectsAgain(t *testing.T) {
	n := leaderOf(t, key(5), keys(1, 2, 3, 4))
	n.step(1000*ms, evResign)
	n.expect(1999*ms, fire(TimerHoldoff))
	n.expect(2000*ms, fire(TimerHoldoff), "set-timer answer at 2.1s")
	n.is(StateCandidate, 1, noLeader)
	n.expect(2100*ms, fire(TimerAnswer),
		"broadcast COORDINATOR to all (4) term=2",
		"become-leader term=2",
		"set-timer heartbeat at 2.2s")

	m := leaderOf(t, key(3), keys(1, 2))
	m.step(1000*ms, evResign)
	m.step(1500*ms, memberUp(key(4)))
	m.expect(2000*ms, fire(TimerHoldoff),
		"broadcast ELECTION to larger (1) term=1",
		"set-timer answer at 2.1s")
}

// Step 7 with preemption on: the largest node that resigned takes the
// leadership back from the smaller leader when its hold-off ends (a
// resign moves leadership for ResignHoldoff only).
func TestStep7HoldoffEndLargestTakesBack(t *testing.T) {
	n := leaderOf(t, key(5), keys(1, 2, 3, 4))
	n.step(1000*ms, evResign)
	n.step(1010*ms, coord(4, 2))
	n.step(1900*ms, heartbeat(4, 2))
	n.expect(2000*ms, fire(TimerHoldoff), "set-timer answer at 2.1s")
	n.is(StateCandidate, 2, 4)
	n.expect(2100*ms, fire(TimerAnswer),
		"cancel-timer suspect",
		"broadcast COORDINATOR to all (4) term=3",
		"become-leader term=3",
		"set-timer heartbeat at 2.2s")

	off := leaderOf(t, key(5), keys(1, 2, 3, 4), noPreempt)
	off.step(1000*ms, evResign)
	off.step(1010*ms, coord(4, 2))
	off.step(1900*ms, heartbeat(4, 2))
	off.expect(2000*ms, fire(TimerHoldoff))
	off.is(StateFollower, 2, 4)
}

// Step 7: the receivers of RESIGN from their leader elect at once instead
// of waiting for their detector, leaving the resigner out.
func TestStep7ResignReceiversElectAtOnce(t *testing.T) {
	t.Run("second largest", func(t *testing.T) {
		n := followerOf(t, key(4), keys(1, 2, 3, 5), key(5), 1)
		n.expect(305*ms, resignMsg(5, 1),
			"cancel-timer suspect",
			"follow leader=0 term=1",
			"broadcast COORDINATOR to all (4) term=2",
			"become-leader term=2",
			"set-timer heartbeat at 405ms")
	})
	t.Run("smallest", func(t *testing.T) {
		n := followerOf(t, key(1), keys(2, 3, 4, 5), key(5), 1)
		n.expect(305*ms, resignMsg(5, 1),
			"cancel-timer suspect",
			"follow leader=0 term=1",
			"broadcast ELECTION to larger (3) term=1",
			"set-timer answer at 355ms")
	})
}

// Step 7: the resigner is left out for its hold-off less T (counted from
// the RESIGN), and awaited again after that.
func TestStep7ResignerLeftOutForHoldoff(t *testing.T) {
	for _, tc := range []struct {
		at   time.Duration
		want string
	}{
		// RESIGN at 305ms: 5 is left out until 305+1000-50 = 1255ms.
		{1254 * ms, "broadcast ELECTION to larger (2) term=2"}, // 2, 3
		{1255 * ms, "broadcast ELECTION to larger (3) term=2"}, // 2, 3, 5
	} {
		t.Run(tc.at.String(), func(t *testing.T) {
			n := followerOf(t, key(1), keys(2, 3, 4, 5), key(5), 1)
			n.step(305*ms, resignMsg(5, 1))
			n.step(310*ms, coord(4, 2))
			n.step(tc.at-10*ms, heartbeat(4, 2))
			n.expect(tc.at, evSuspect,
				"cancel-timer suspect",
				"follow leader=0 term=2",
				tc.want,
				"set-timer answer at "+(tc.at+tAnswer).String())
		})
	}
}

// Step 7: RESIGN from a node that is not the leader starts nothing, but
// that node is left out of the next election.
func TestStep7ResignFromNonLeader(t *testing.T) {
	n := followerOf(t, key(1), keys(2, 3, 4, 5), key(5), 1)
	n.expect(305*ms, resignMsg(4, 1))
	n.is(StateFollower, 1, 5)
	n.expect(308*ms, evSuspect,
		"cancel-timer suspect",
		"follow leader=0 term=1",
		"broadcast ELECTION to larger (2) term=1", // 2, 3
		"set-timer answer at 358ms")
}

// --- Terms -------------------------------------------------------------------

// A higher term beats a lower one, whatever the keys.
func TestTermHigherBeatsLower(t *testing.T) {
	n := followerOf(t, key(1), keys(2, 3, 4, 5), key(5), 1)
	n.expect(100*ms, coord(3, 2),
		"follow leader=3 term=2",
		"set-timer suspect at 400ms")
	n.expect(150*ms, heartbeat(5, 1)) // the old leader, larger, but term 1
	n.expect(160*ms, coord(5, 1))
	n.is(StateFollower, 2, 3)
}

// On equal terms the larger key wins, for a follower and for a leader.
func TestTermEqualLargerKeyWins(t *testing.T) {
	t.Run("follower", func(t *testing.T) {
		n := followerOf(t, key(1), keys(2, 3, 4, 5), key(3), 1)
		n.expect(100*ms, heartbeat(4, 1),
			"follow leader=4 term=1",
			"set-timer suspect at 400ms")
		n.expect(110*ms, heartbeat(3, 1))
		n.is(StateFollower, 1, 4)
	})
	t.Run("by priority", func(t *testing.T) {
		n := followerOf(t, key(1), keys(2, 3, 4, 5), key(4), 1)
		n.expect(100*ms, claim(wire.TypeCoordinator, Key{200, 2}, 1),
			"follow leader=2 term=1",
			"set-timer suspect at 400ms")
	})
	t.Run("smaller leader yields", func(t *testing.T) {
		n := leaderOf(t, key(3), keys(1, 2))
		n.expect(320*ms, heartbeat(4, 1),
			"cancel-timer heartbeat",
			"follow leader=4 term=1",
			"set-timer suspect at 620ms")
		n.is(StateFollower, 1, 4)
	})
	t.Run("larger leader tells the smaller", func(t *testing.T) {
		n := leaderOf(t, key(4), keys(1, 2, 3))
		n.expect(320*ms, heartbeat(3, 1), "send COORDINATOR to 3 term=1")
		n.is(StateLeader, 1, 4)
	})
}

// A stale claim (lower term) is refused, even from a larger key; a leader
// answers it with COORDINATOR so that the stale leader learns the term.
func TestTermStaleClaimRefused(t *testing.T) {
	f := followerOf(t, key(1), keys(2, 3, 4, 5), key(3), 2)
	f.expect(100*ms, heartbeat(5, 1))
	f.expect(110*ms, coord(5, 1))
	f.is(StateFollower, 2, 3)

	l := started(t, key(3), keys(1, 2))
	l.step(100*ms, election(1, 4))
	l.step(300*ms, fire(TimerAnswer))
	l.is(StateLeader, 5, 3)
	l.expect(320*ms, heartbeat(5, 3), "send COORDINATOR to 5 term=5")
	l.expect(330*ms, coord(5, 4), "send COORDINATOR to 5 term=5")
	l.is(StateLeader, 5, 3)
}

// A node never recognises two leaders of one term unless the second is
// larger: after it lost its leader of term 2, another claim to term 2
// from a smaller key is refused; a larger key or a later term is followed.
func TestTermEqualClaimFromSmallerThanRecognisedRefused(t *testing.T) {
	n := followerOf(t, key(1), keys(2, 3, 4, 5), key(4), 2)
	n.expect(305*ms, evSuspect,
		"cancel-timer suspect",
		"follow leader=0 term=2",
		"broadcast ELECTION to larger (3) term=2",
		"set-timer answer at 355ms")
	n.expect(310*ms, coord(3, 2))
	n.is(StateCandidate, 2, noLeader)
	n.expect(320*ms, coord(5, 2),
		"cancel-timer answer",
		"follow leader=5 term=2",
		"set-timer suspect at 620ms")

	m := followerOf(t, key(1), keys(2, 3, 4, 5), key(4), 2)
	m.step(305*ms, evSuspect)
	m.expect(310*ms, coord(3, 3),
		"cancel-timer answer",
		"follow leader=3 term=3",
		"set-timer suspect at 610ms")
}

// The term never decreases, whatever arrives (a deterministic mix of
// claims, elections, answers, resigns, timers and membership events).
func TestTermNeverDecreases(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for run := range 50 {
		self := NodeID(1 + run%5)
		var others []Key
		for id := NodeID(1); id <= 5; id++ {
			if id != self {
				others = append(others, key(id))
			}
		}
		n := started(t, key(self), others)
		now := time.Duration(0)
		last := uint64(0)
		var seen []string
		for range 300 {
			now += time.Duration(r.IntN(120)) * ms
			from := NodeID(1 + r.IntN(5))
			term := uint64(r.IntN(8))
			var ev Event
			switch r.IntN(9) {
			case 0:
				ev = election(from, term)
			case 1:
				ev = answer(from, term)
			case 2:
				ev = coord(from, term)
			case 3:
				ev = heartbeat(from, term)
			case 4:
				ev = resignMsg(from, term)
			case 5:
				ev = fire(TimerKind(r.IntN(int(numTimers))))
			case 6:
				ev = memberDown(from)
			case 7:
				ev = memberUp(Key{Priority: uint16(90 + r.IntN(20)), ID: from})
			case 8:
				ev = []Event{evSuspect, evResign, setPriority(uint16(90 + r.IntN(20)))}[r.IntN(3)]
			}
			n.step(now, ev)
			seen = append(seen, describe(ev))
			if st := n.b.Status(); st.Term < last {
				t.Fatalf("run %d: term went from %d to %d after %s", run, last, st.Term, describe(ev))
			} else {
				last = st.Term
			}
		}
		if last == 0 {
			t.Fatalf("run %d: the term never moved; the mix exercises nothing (%v)", run, seen[:10])
		}
	}
}

// --- Membership --------------------------------------------------------------

// Membership reports the leader dead: the node elects at once, without it.
// Here the leader is no longer a member, so the second largest's
// COORDINATOR goes to the textbook's n-2 nodes.
func TestMemberDownOfLeaderElectsAtOnce(t *testing.T) {
	t.Run("second largest", func(t *testing.T) {
		n := followerOf(t, key(4), keys(1, 2, 3, 5), key(5), 1)
		n.expect(305*ms, memberDown(5),
			"cancel-timer suspect",
			"follow leader=0 term=1",
			"broadcast COORDINATOR to all (3) term=2",
			"become-leader term=2",
			"set-timer heartbeat at 405ms")
	})
	t.Run("smallest", func(t *testing.T) {
		n := followerOf(t, key(1), keys(2, 3, 4, 5), key(5), 1)
		n.expect(305*ms, memberDown(5),
			"cancel-timer suspect",
			"follow leader=0 term=1",
			"broadcast ELECTION to larger (3) term=1",
			"set-timer answer at 355ms")
	})
	t.Run("not the leader", func(t *testing.T) {
		n := followerOf(t, key(1), keys(2, 3, 4, 5), key(5), 1)
		n.expect(305*ms, memberDown(3))
		n.is(StateFollower, 1, 5)
		if got := len(n.b.Members(nil)); got != 3 {
			t.Errorf("members after member-down: %d, want 3", got)
		}
	})
}

// The last larger node the candidate waits for leaves: no need to wait T
// (once the listen period is over).
func TestMemberDownOfLastLargerWhileWaitingForAnswer(t *testing.T) {
	t.Run("settled", func(t *testing.T) {
		n := started(t, key(3), keys(1, 2, 4))
		n.step(300*ms, fire(TimerStartup))
		n.expect(320*ms, memberDown(4),
			"cancel-timer answer",
			"broadcast COORDINATOR to all (2) term=1",
			"become-leader term=1",
			"set-timer heartbeat at 420ms")
	})
	t.Run("listen period not over", func(t *testing.T) {
		n := started(t, key(3), keys(1, 2, 4))
		n.step(100*ms, election(1, 0))
		n.expect(150*ms, memberDown(4))
		n.is(StateCandidate, 0, noLeader)
		n.expect(300*ms, fire(TimerAnswer),
			"broadcast COORDINATOR to all (2) term=1",
			"become-leader term=1",
			"set-timer heartbeat at 400ms")
	})
	t.Run("another larger remains", func(t *testing.T) {
		n := electing3of5(t)
		n.expect(320*ms, memberDown(4))
		n.is(StateCandidate, 0, noLeader)
	})
	t.Run("it had answered", func(t *testing.T) {
		// The node that answered is gone; the wait for its COORDINATOR
		// still runs out before a new election, which then ends at once.
		n := started(t, key(3), keys(1, 2, 4))
		n.step(300*ms, fire(TimerStartup))
		n.step(310*ms, answer(4, 0))
		n.expect(320*ms, memberDown(4))
		n.expect(510*ms, fire(TimerCoordinator),
			"broadcast COORDINATOR to all (2) term=1",
			"become-leader term=1",
			"set-timer heartbeat at 610ms")
	})
}

// EvMemberUp adds members and updates their keys; the election uses the
// keys it was last told.
func TestMemberUpUpdatesKeys(t *testing.T) {
	n := started(t, key(3), keys(1, 2, 4))
	n.expect(100*ms, memberUp(Key{50, 4}))
	n.expect(110*ms, memberUp(key(6)))
	n.expect(120*ms, memberUp(key(3))) // itself: ignored
	got := n.b.Members(nil)
	slices.SortFunc(got, func(a, b Key) int { return int(a.ID) - int(b.ID) })
	if want := []Key{{100, 1}, {100, 2}, {50, 4}, {100, 6}}; !slices.Equal(got, want) {
		t.Errorf("Members() = %v, want %v", got, want)
	}
	n.expect(300*ms, fire(TimerStartup),
		"broadcast ELECTION to larger (1) term=0", // 6 only
		"set-timer answer at 350ms")

	// A message carries its sender's current priority, and updates the
	// key of a known member.
	m := started(t, key(3), keys(1, 2, 4))
	m.step(100*ms, claim(wire.TypeAnswer, Key{50, 4}, 0))
	m.expect(300*ms, fire(TimerStartup),
		"broadcast COORDINATOR to all (3) term=1",
		"become-leader term=1",
		"set-timer heartbeat at 400ms")
}

// Membership reports that the leader's key dropped below this node's:
// with preemption on, the node takes over.
func TestMemberUpOfLeaderWithSmallerKeyPreempts(t *testing.T) {
	n := followerOf(t, key(3), keys(1, 2, 4), key(4), 1)
	n.expect(305*ms, memberUp(Key{50, 4}),
		"cancel-timer suspect",
		"broadcast COORDINATOR to all (3) term=2",
		"become-leader term=2",
		"set-timer heartbeat at 405ms")

	off := followerOf(t, key(3), keys(1, 2, 4), key(4), 1, noPreempt)
	off.expect(305*ms, memberUp(Key{50, 4}))
	off.is(StateFollower, 1, 4)
	if st := off.b.Status(); st.LeaderKey != (Key{50, 4}) {
		t.Errorf("LeaderKey = %v, want 50/4", st.LeaderKey)
	}
}

// EvMemberDown's id 0 means "none", as for EvMemberUp: it is ignored.
func TestMemberDownOfIDZeroIgnored(t *testing.T) {
	n := started(t, key(3), keys(1, 2, 4, 5))
	n.expect(100*ms, memberDown(0))
	n.is(StateStarting, 0, noLeader)
}

// A former leader that membership reported dead and then back, and that
// follows in silence (a follower sends nothing), must be asked again in
// the next election: it is a live node with a larger key.
func TestMemberUpOfReturnedLeaderIsAskedAgain(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose Event // how 3 loses its leader 5
	}{
		{"membership reported it dead", memberDown(5)},
		{"the detector suspected it", fire(TimerSuspect)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := followerOf(t, key(3), keys(1, 2, 4, 5), key(5), 1)
			n.step(310*ms, tc.lose)          // 3 elects: ELECTION to 4
			n.step(320*ms, coord(4, 2))      // 4 leads
			n.step(500*ms, memberUp(key(5))) // 5 is back, follows 4 and sends nothing
			n.step(600*ms, heartbeat(4, 2))
			n.expect(700*ms, evSuspect, // 4 fails in turn
				"cancel-timer suspect",
				"follow leader=0 term=2",
				"broadcast ELECTION to larger (1) term=2", // to 5
				"set-timer answer at 750ms")
		})
	}
}

// --- Priority ------------------------------------------------------------------

// A follower whose new priority exceeds the leader's takes over at once
// (with preemption on), announcing its new priority.
func TestSetPriorityFollowerAboveLeaderTakesOver(t *testing.T) {
	n := followerOf(t, key(2), keys(1, 3, 4, 5), key(5), 1)
	acts := n.expect(305*ms, setPriority(150),
		"cancel-timer suspect",
		"broadcast COORDINATOR to all (4) term=2",
		"become-leader term=2",
		"set-timer heartbeat at 405ms")
	if len(acts) > 1 && acts[1].Msg.Priority != 150 {
		t.Errorf("COORDINATOR priority = %d, want 150", acts[1].Msg.Priority)
	}
	if st := n.b.Status(); st.Self != (Key{150, 2}) || st.LeaderKey != (Key{150, 2}) {
		t.Errorf("Self = %v, LeaderKey = %v, want 150/2 for both", st.Self, st.LeaderKey)
	}

	below := followerOf(t, key(2), keys(1, 3, 4, 5), key(5), 1)
	below.expect(305*ms, setPriority(99))
	below.expect(306*ms, setPriority(100)) // still not above 100/5
	below.is(StateFollower, 1, 5)

	off := followerOf(t, key(2), keys(1, 3, 4, 5), key(5), 1, noPreempt)
	off.expect(305*ms, setPriority(150))
	off.is(StateFollower, 1, 5)
}

// A leader whose priority changes tells everyone at once with a HEARTBEAT
// carrying the new priority, and a follower that is now larger takes over
// on that heartbeat.
func TestSetPriorityLeaderHeartbeatsAtOnce(t *testing.T) {
	n := leaderOf(t, key(5), keys(1, 2, 3, 4))
	acts := n.expect(320*ms, setPriority(50), "broadcast HEARTBEAT to all (4) term=1")
	if want := (wire.Message{Type: wire.TypeHeartbeat, From: 5, Priority: 50, Term: 1}); len(acts) > 0 && !msgEq(acts[0].Msg, want) {
		t.Errorf("HEARTBEAT: got %+v, want %+v", acts[0].Msg, want)
	}
	if st := n.b.Status(); st.Self != (Key{50, 5}) || st.LeaderKey != (Key{50, 5}) {
		t.Errorf("Self = %v, LeaderKey = %v, want 50/5 for both", st.Self, st.LeaderKey)
	}
	n.expect(330*ms, setPriority(50)) // unchanged: nothing

	f := followerOf(t, key(4), keys(1, 2, 3, 5), key(5), 1)
	f.expect(320*ms, claim(wire.TypeHeartbeat, Key{50, 5}, 1),
		"set-timer suspect at 620ms",
		"cancel-timer suspect",
		"broadcast COORDINATOR to all (4) term=2",
		"become-leader term=2",
		"set-timer heartbeat at 420ms")
}

// --- Conflict ------------------------------------------------------------------

// A leader that learns that another live node has its node_id resigns
// (RESIGN to all) and goes into the conflict state.
func TestConflictLeaderResigns(t *testing.T) {
	n := leaderOf(t, key(5), keys(1, 2, 3, 4))
	n.expect(320*ms, conflict(true),
		"broadcast RESIGN to all (4) term=1",
		"cancel-timer heartbeat",
		"follow leader=0 term=1")
	n.is(StateConflict, 1, noLeader)
	n.expect(330*ms, conflict(true)) // already
}

// In conflict the node neither elects nor answers; it still tracks who
// leads.
func TestConflictNoElectionsOrAnswers(t *testing.T) {
	n := started(t, key(3), keys(1, 2, 4, 5))
	n.expect(100*ms, conflict(true), "cancel-timer startup")
	n.is(StateConflict, 0, noLeader)
	n.expect(110*ms, election(1, 0))
	n.expect(300*ms, fire(TimerStartup))
	n.expect(310*ms, evSuspect)
	n.is(StateConflict, 0, noLeader)
	n.expect(320*ms, coord(2, 1),
		"follow leader=2 term=1",
		"set-timer suspect at 620ms")
	n.is(StateConflict, 1, 2) // smaller, but no preemption in conflict
	n.expect(620*ms, fire(TimerSuspect), "follow leader=0 term=1")
	n.is(StateConflict, 1, noLeader)

	c := electing3of5(t)
	c.expect(310*ms, conflict(true), "cancel-timer answer")
	c.expect(320*ms, answer(4, 0))
	c.expect(350*ms, fire(TimerAnswer))
	c.is(StateConflict, 0, noLeader)
}

// Clearing the conflict resumes: with no leader known the node elects;
// with one it follows (and preempts it if larger).
func TestConflictClearedResumes(t *testing.T) {
	t.Run("no leader, largest", func(t *testing.T) {
		n := leaderOf(t, key(5), keys(1, 2, 3, 4))
		n.step(320*ms, conflict(true))
		n.expect(400*ms, conflict(false),
			"broadcast COORDINATOR to all (4) term=2",
			"become-leader term=2",
			"set-timer heartbeat at 500ms")
	})
	t.Run("no leader", func(t *testing.T) {
		n := started(t, key(3), keys(1, 2, 4, 5))
		n.step(100*ms, conflict(true))
		n.expect(400*ms, conflict(false),
			"broadcast ELECTION to larger (2) term=0",
			"set-timer answer at 450ms")
		n.is(StateCandidate, 0, noLeader)
	})
	t.Run("leader known", func(t *testing.T) {
		n := followerOf(t, key(3), keys(1, 2, 4, 5), key(5), 1)
		n.expect(100*ms, conflict(true))
		n.is(StateConflict, 1, 5)
		n.expect(200*ms, conflict(false))
		n.is(StateFollower, 1, 5)
	})
	t.Run("smaller leader known", func(t *testing.T) {
		n := followerOf(t, key(3), keys(1, 2, 4), key(4), 1)
		n.step(100*ms, conflict(true))
		n.step(305*ms, memberUp(Key{50, 4}))
		n.is(StateConflict, 1, 4)
		n.expect(308*ms, conflict(false),
			"cancel-timer suspect",
			"broadcast COORDINATOR to all (3) term=2",
			"become-leader term=2",
			"set-timer heartbeat at 408ms")
	})
}

// --- Stale timers ----------------------------------------------------------------

// An EvTimer for a timer that was cancelled, or that fires before the
// deadline it was last set to (re-armed later), does nothing.
func TestStaleTimersDoNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) tnode
		at    time.Duration
		timer TimerKind
	}{
		{"startup before its deadline", func(t *testing.T) tnode {
			return started(t, key(3), keys(1, 2, 4, 5))
		}, 299 * ms, TimerStartup},
		{"startup cancelled by a COORDINATOR", func(t *testing.T) tnode {
			return followerOf(t, key(3), keys(1, 2, 4, 5), key(5), 1)
		}, 300 * ms, TimerStartup},
		{"answer cancelled by an ANSWER", func(t *testing.T) tnode {
			n := electing3of5(t)
			n.step(310*ms, answer(4, 0))
			return n
		}, 350 * ms, TimerAnswer},
		{"coordinator cancelled by the COORDINATOR", func(t *testing.T) tnode {
			n := electing3of5(t)
			n.step(310*ms, answer(4, 0))
			n.step(320*ms, coord(4, 1))
			return n
		}, 510 * ms, TimerCoordinator},
		{"suspect re-armed by a heartbeat", func(t *testing.T) tnode {
			n := followerOf(t, key(3), keys(1, 2, 4, 5), key(5), 1)
			n.step(100*ms, heartbeat(5, 1))
			return n
		}, 310 * ms, TimerSuspect},
		{"heartbeat re-armed under a fresh term", func(t *testing.T) tnode {
			n := leaderOf(t, key(5), keys(1, 2, 3, 4))
			n.step(310*ms, election(2, 1))
			return n
		}, 400 * ms, TimerHeartbeat},
		{"heartbeat cancelled by a resign", func(t *testing.T) tnode {
			n := leaderOf(t, key(5), keys(1, 2, 3, 4))
			n.step(350*ms, evResign)
			return n
		}, 400 * ms, TimerHeartbeat},
		{"preempt delay ending after it already leads", func(t *testing.T) tnode {
			n := newNode(t, key(5), keys(1, 2, 3, 4), preemptDelay(200*ms))
			n.step(0, evStart)
			n.step(300*ms, fire(TimerStartup))
			return n
		}, 200 * ms, TimerPreempt},
		{"never armed", func(t *testing.T) tnode {
			return followerOf(t, key(3), keys(1, 2, 4, 5), key(5), 1)
		}, 100 * ms, TimerCoordinator},
		{"unknown timer kind", func(t *testing.T) tnode {
			return started(t, key(3), keys(1, 2, 4, 5))
		}, 500 * ms, numTimers + 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.setup(t)
			before := n.b.Status()
			n.expect(tc.at, fire(tc.timer))
			if after := n.b.Status(); after != before {
				t.Errorf("status changed: %+v -> %+v", before, after)
			}
		})
	}

	// A timer that fired before its deadline stays armed and fires at it.
	n := started(t, key(3), keys(1, 2, 4, 5))
	n.step(299*ms, fire(TimerStartup))
	n.expect(300*ms, fire(TimerStartup), "broadcast ELECTION to larger (2) term=0", "set-timer answer at 350ms")
	// A timer fires once.
	n.step(350*ms, fire(TimerAnswer))
	n.is(StateLeader, 1, 3)
	n.expect(360*ms, fire(TimerAnswer))
}

// A suspicion does not last for ever: a former leader that lost its
// leadership and now follows in silence is awaited again once
// suspicionMemory×SuspectAfter has passed.
func TestSuspicionExpires(t *testing.T) {
	for _, tc := range []struct {
		name string
		at   time.Duration
		want []string
	}{
		{"still suspected: 5 is left out, 3 claims at once", 310*ms + suspicionMemory*300*ms - 1,
			[]string{"cancel-timer suspect", "follow leader=0 term=2", "broadcast COORDINATOR to all (4) term=3", "become-leader term=3"}},
		{"suspicion expired: 5 is asked", 310*ms + suspicionMemory*300*ms,
			[]string{"cancel-timer suspect", "follow leader=0 term=2", "broadcast ELECTION to larger (1) term=2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := followerOf(t, key(3), keys(1, 2, 4, 5), key(5), 1)
			n.step(310*ms, fire(TimerSuspect)) // 5 suspected
			n.step(320*ms, coord(4, 2))
			n.is(StateFollower, 2, 4)
			// 4 fails later; 5 was silent all along.
			got := actStrings(n.step(tc.at, Event{Kind: EvSuspectLeader}))
			if len(got) < len(tc.want) || !slices.Equal(got[:len(tc.want)], tc.want) {
				t.Errorf("at %v: got %q, want it to start with %q", tc.at, got, tc.want)
			}
		})
	}
}
