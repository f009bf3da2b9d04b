package agent

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/part/lead"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

// A candidate that lost its leader and hears a smaller node claim while
// its own election goes on notes that claim and elects on: the machine
// reports no ActFollow for it, and its status names it. When the
// candidate wins, that leader is alive and its job may run: the job waits
// for it as for any takeover from a live leader. Before, the loss of the
// earlier leader stood ("leader lost"), and the job was wanted at once,
// beside the displaced leader's.
//
// The loop is driven by hand, without its goroutine and sockets: node-3,
// with a job, follows node-5; membership suspects node-5, which nobody
// vouches for; node-3 elects (ELECTION to node-4, which never answers),
// node-2's COORDINATOR comes meanwhile, and node-3 leads at the end of
// its wait.
func TestTakeoverFromNotedLeaderWaitsForItsJob(t *testing.T) {
	cfg := testConfig("node-3", 3)
	cfg.Job = []string{"true"} // never started: the supervisor does not run
	// node-2 sends no heartbeat here: its alarm must not ring before
	// node-3's election ends (at 1.5 heartbeats it rang first, and node-3
	// took over from nobody).
	cfg.SuspectAfter = 3 * cfg.Heartbeat
	h := newHandLoop(t, cfg, []uint64{1, 2, 4, 5}, func(id uint64) bool { return id == 2 })
	a, sink, claim, fire := h.a, h.sink, h.claim, h.fire
	a.step(0, election.Event{Kind: election.EvStart})
	claim(5, 1)
	if st := a.machine.Status(); st.State != election.StateFollower || st.Leader != 5 {
		t.Fatalf("after node-5's claim: %+v, want following 5", st)
	}
	a.step(h.now, election.Event{Kind: election.EvSuspectLeader})
	fire(func(st election.Status) bool { return st.Leader != 0 }) // no vouch: node-5 is lost
	if !a.lead.LeaderLost() {
		t.Fatal("node-5 suspected: the loop does not count it lost")
	}
	fire(func(election.Status) bool { return sink.sent[wire.TypeElection] == 0 })
	if st := a.machine.Status(); st.State != election.StateCandidate {
		t.Fatalf("after node-5's loss: %+v, want a candidate", st)
	}
	claim(2, 2)
	if st := a.machine.Status(); st.State != election.StateCandidate || st.Leader != 2 {
		t.Fatalf("node-2's claim during node-3's election: %+v, want a candidate naming node-2", st)
	}
	fire(func(st election.Status) bool { return st.State != election.StateLeader })
	if st := a.machine.Status(); st.Leader != 3 || st.Term != 3 {
		t.Fatalf("node-3 leads: %+v, want term 3", st)
	}
	wait, _, most := a.lead.JobWait()
	if wait != "node-2" || a.lead.JobWanted() || most != cfg.JobGrace+lead.JobWaitMargin {
		t.Errorf("node-3 took over from node-2, whose job runs: wait for %q (at most %v), job wanted %v; want a wait for node-2 of %v, no job yet",
			wait, most, a.lead.JobWanted(), cfg.JobGrace+lead.JobWaitMargin)
	}
	// node-2's job stopped: ours starts.
	a.loop.members["node-2"].meta.Job = false
	a.lead.MemberChanged("node-2")
	if wait, _, _ = a.lead.JobWait(); wait != "" || !a.lead.JobWanted() {
		t.Errorf("node-2's job stopped: wait for %q, job wanted %v; want no wait and the job", wait, a.lead.JobWanted())
	}
}

// A leader whose job has not started yet hears another node claim: that
// node led a moment ago and learns only now, from this leader's answer,
// that it no longer does (it had not heard this leader's claim: a
// one-way link, a partition), and its job may run until its grace after
// that. The job waits for it as for a displaced leader's (sim seed 4867
// of the Hirschberg–Sinclair role schedules: a takeover's wait counted
// from the takeover ran out 1.8 s before the displaced job stopped). A
// job that already runs keeps running: that was two leaders, and the
// other stops.
func TestClaimOfAnotherLeaderDelaysTheJob(t *testing.T) {
	for _, waiting := range []bool{true, false} {
		cfg := testConfig("node-3", 3)
		cfg.Job = []string{"true"} // never started: the supervisor does not run
		if waiting {
			cfg.TakeoverWait = time.Hour // no hand-over: the job waits
		}
		h := newHandLoop(t, cfg, []uint64{1, 2}, func(id uint64) bool { return id == 2 })
		a, p := h.a, h.a.lead
		a.step(0, election.Event{Kind: election.EvStart})
		h.fire(func(st election.Status) bool { return st.State != election.StateLeader })
		if wait, _, _ := p.JobWait(); p.JobWanted() == waiting || wait != "" {
			t.Fatalf("takeover wait %v: node-3 leads with the job wanted %v, waiting for %q", waiting, p.JobWanted(), wait)
		}
		term := a.machine.Status().Term
		h.receive(2, term+1)
		if st := a.machine.Status(); st.State != election.StateLeader || st.Term <= term+1 {
			t.Fatalf("node-2's claim of term %d: node-3 is %+v, want it to lead on in a later term", term+1, st)
		}
		wait, until, _ := p.JobWait()
		switch {
		case waiting && (wait != "node-2" || p.JobWanted()):
			t.Errorf("node-2 claimed before node-3's job started: wait for %q, job wanted %v; want a wait for node-2", wait, p.JobWanted())
		case !waiting && (wait != "" || !p.JobWanted()):
			t.Errorf("node-2 claimed while node-3's job ran: wait for %q, job wanted %v; want the job on", wait, p.JobWanted())
		}
		if !waiting {
			continue
		}
		h.receive(2, term+1) // its next heartbeat, sent before it heard node-3
		if again, againUntil, _ := p.JobWait(); again != "node-2" || againUntil < until {
			t.Errorf("node-2 claimed again: wait for %q until %v; want node-2 until %v or later", again, againUntil, until)
		}
		a.loop.members["node-2"].meta.Job = false
		p.MemberChanged("node-2")
		if wait, _, _ := p.JobWait(); wait != "" {
			t.Errorf("node-2's job stopped: still waiting for %q", wait)
		}
	}
}
