package election

import "testing"

// EvSetPreempt: a reload turns preemption on or off. Turned on, a node
// larger than its leader takes over at once; turned off, it keeps
// following.
func TestSetPreempt(t *testing.T) {
	preempt := func(on bool) Event { return Event{Kind: EvSetPreempt, On: on} }
	n := started(t, key(5), keys(1, 2, 3, 4), noPreempt)
	n.step(100*ms, coord(4, 1))
	n.is(StateFollower, 1, 4)
	n.step(200*ms, preempt(false)) // unchanged
	n.is(StateFollower, 1, 4)
	if n.m.Config().Preempt {
		t.Fatal("preempt on before it was turned on")
	}
	n.step(300*ms, preempt(true))
	if st := n.m.Status(); st.State != StateCandidate && st.State != StateLeader || !n.m.Config().Preempt {
		t.Errorf("preemption turned on under a smaller leader: state %v (preempt %v), want an election of its own",
			st.State, n.m.Config().Preempt)
	}

	m := started(t, key(5), keys(1, 2, 3, 4))
	m.step(100*ms, preempt(false))
	m.step(200*ms, coord(4, 1))
	m.is(StateFollower, 1, 4) // with preemption it would have taken over
}

// A node takes over only from a leader that membership lists: one that
// has just returned hears the leader's heartbeats before its membership
// has joined, and its driver learns only from membership whether the
// displaced leader's job still runs. It follows meanwhile, and preempts
// as soon as the leader is listed. The textbook takes over at once.
func TestPreemptWaitsForTheLeaderToBeListed(t *testing.T) {
	for _, textbook := range []bool{false, true} {
		n := started(t, key(5), keys(1, 2, 3), func(c *Config) { c.ListedPreemption = !textbook })
		acts := n.step(100*ms, coord(4, 1))
		if electing := hasKind(acts, ActBroadcast) || n.m.Status().State == StateCandidate; electing != textbook {
			t.Fatalf("textbook=%v: took over from 4, which membership does not list: %v (%q)", textbook, electing, actStrings(acts))
		}
		if textbook {
			continue
		}
		n.is(StateFollower, 1, 4)
		acts = n.step(200*ms, Event{Kind: EvMemberUp, Member: key(4)})
		if st := n.m.Status(); st.State != StateCandidate && st.State != StateLeader {
			t.Fatalf("4 listed: state %v (%q), want an election of its own", st.State, actStrings(acts))
		}
	}
}
