package agent

import (
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/internal/udp"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

// sinkConn is an election socket that takes every packet and sends
// none; it counts them by type.
type sinkConn struct {
	udp.Conn
	sent map[wire.Type]int
}

func (c *sinkConn) WriteTo(b []byte, _ netip.AddrPort) error {
	var m wire.Message
	if err := wire.Decode(b, &m); err == nil {
		c.sent[m.Type]++
	}
	return nil
}

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
// handLoop drives an agent's loop by hand, without its goroutine and
// sockets: its election socket is a sink, its members are given.
type handLoop struct {
	t    *testing.T
	a    *Agent
	sink *sinkConn
	now  time.Duration
}

// newHandLoop makes an agent of cfg whose members are nodes ids (priority
// 100, node_id k named node-k), the job of node k reported running when
// running(k).
func newHandLoop(t *testing.T, cfg Config, ids []uint64, running func(uint64) bool) *handLoop {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &handLoop{t: t, a: a, sink: &sinkConn{sent: make(map[wire.Type]int)}}
	a.tr = &udp.Transport{Uni: h.sink, Group: netip.MustParseAddrPort("239.255.0.1:7947")}
	a.loop.timer = time.NewTimer(time.Hour)
	t.Cleanup(func() { a.loop.timer.Stop() })
	for _, id := range ids {
		name := "node-" + strconv.FormatUint(id, 10)
		a.loop.members[name] = &member{name: name, status: "alive", metaOK: true,
			meta: meta{NodeID: id, Priority: 100, Election: netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 18, 0, byte(id)}), 7947), Job: running(id)}}
		a.step(0, election.Event{Kind: election.EvMemberUp, Member: election.Key{Priority: 100, ID: id}})
	}
	return h
}

// claim steps a COORDINATOR of node id, 10 ms later.
func (h *handLoop) claim(id, term uint64) {
	h.now += 10 * time.Millisecond
	h.a.step(h.now, election.Event{Kind: election.EvMessage, Msg: wire.Message{Type: wire.TypeCoordinator, From: id, Priority: 100, Term: term}})
}

// receive hands the loop a COORDINATOR of node id as a packet, 10 ms
// later.
func (h *handLoop) receive(id, term uint64) {
	h.now += 10 * time.Millisecond
	h.a.onPacket(packet{msg: wire.Message{Type: wire.TypeCoordinator, From: id, Priority: 100, Term: term}, at: h.now})
}

// fire fires the armed timers, earliest first, while cond holds (at most
// 100).
func (h *handLoop) fire(cond func(election.Status) bool) {
	h.t.Helper()
	a := h.a
	for range 100 {
		if !cond(a.machine.Status()) {
			return
		}
		k := -1
		for i := range a.loop.armed {
			if a.loop.armed[i] && (k < 0 || a.loop.deadline[i] < a.loop.deadline[k]) {
				k = i
			}
		}
		if k < 0 {
			break
		}
		a.loop.armed[k] = false
		h.now = max(h.now, a.loop.deadline[k])
		a.step(h.now, election.Event{Kind: election.EvTimer, Timer: election.TimerKind(k)})
	}
	h.t.Fatalf("timers ran out: status %+v", a.machine.Status())
}

func TestTakeoverFromNotedLeaderWaitsForItsJob(t *testing.T) {
	cfg := testConfig("node-3", 3)
	cfg.Job = []string{"true"} // never started: the supervisor does not run
	h := newHandLoop(t, cfg, []uint64{1, 2, 4, 5}, func(id uint64) bool { return id == 2 })
	a, sink, claim, fire := h.a, h.sink, h.claim, h.fire
	a.step(0, election.Event{Kind: election.EvStart})
	claim(5, 1)
	if st := a.machine.Status(); st.State != election.StateFollower || st.Leader != 5 {
		t.Fatalf("after node-5's claim: %+v, want following 5", st)
	}
	a.step(h.now, election.Event{Kind: election.EvSuspectLeader})
	fire(func(st election.Status) bool { return st.Leader != 0 }) // no vouch: node-5 is lost
	if !a.loop.leaderLost {
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
	l := &a.loop
	if l.jobWait != "node-2" || l.wantRun || l.jobWaitMax != cfg.JobGrace+jobWaitMargin {
		t.Errorf("node-3 took over from node-2, whose job runs: wait for %q (at most %v), job wanted %v; want a wait for node-2 of %v, no job yet",
			l.jobWait, l.jobWaitMax, l.wantRun, cfg.JobGrace+jobWaitMargin)
	}
	// node-2's job stopped: ours starts.
	l.members["node-2"].meta.Job = false
	a.onMemberChanged("node-2")
	if l.jobWait != "" || !l.wantRun {
		t.Errorf("node-2's job stopped: wait for %q, job wanted %v; want no wait and the job", l.jobWait, l.wantRun)
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
		a, l := h.a, &h.a.loop
		a.step(0, election.Event{Kind: election.EvStart})
		h.fire(func(st election.Status) bool { return st.State != election.StateLeader })
		if l.wantRun == waiting || l.jobWait != "" {
			t.Fatalf("takeover wait %v: node-3 leads with the job wanted %v, waiting for %q", waiting, l.wantRun, l.jobWait)
		}
		term := a.machine.Status().Term
		h.receive(2, term+1)
		if st := a.machine.Status(); st.State != election.StateLeader || st.Term <= term+1 {
			t.Fatalf("node-2's claim of term %d: node-3 is %+v, want it to lead on in a later term", term+1, st)
		}
		switch {
		case waiting && (l.jobWait != "node-2" || l.wantRun):
			t.Errorf("node-2 claimed before node-3's job started: wait for %q, job wanted %v; want a wait for node-2", l.jobWait, l.wantRun)
		case !waiting && (l.jobWait != "" || !l.wantRun):
			t.Errorf("node-2 claimed while node-3's job ran: wait for %q, job wanted %v; want the job on", l.jobWait, l.wantRun)
		}
		if !waiting {
			continue
		}
		until := l.jobWaitUntil
		h.receive(2, term+1) // its next heartbeat, sent before it heard node-3
		if l.jobWait != "node-2" || l.jobWaitUntil < until {
			t.Errorf("node-2 claimed again: wait for %q until %v; want node-2 until %v or later", l.jobWait, l.jobWaitUntil, until)
		}
		l.members["node-2"].meta.Job = false
		a.onMemberChanged("node-2")
		if l.jobWait != "" {
			t.Errorf("node-2's job stopped: still waiting for %q", l.jobWait)
		}
	}
}
