package sdnotify

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/part"
	"github.com/lanleader/lanleader/agent/part/parttest"
)

const ms = time.Millisecond

// sent records what the part sends to systemd.
type sent struct{ msgs []string }

func (s *sent) send(state string) error {
	s.msgs = append(s.msgs, state)
	return nil
}

func (s *sent) take() []string {
	m := s.msgs
	s.msgs = nil
	return m
}

// drive moves the host's clock to t and hands the part its deadline when
// it has come, as the agent's loop does.
func drive(h *parttest.FakeHost, n *Notifier, t time.Duration) {
	h.Set(t)
	part.RunDue([]part.Part{n}, t)
}

func TestReadyWhenTheElectionSettles(t *testing.T) {
	h, s := parttest.NewFakeHost(), &sent{}
	n := NewWith(h, s.send, 0)
	n.Begin(2300 * ms)
	n.Changed(&part.View{NodeID: 3, State: "starting", Priority: 100, BasePriority: 100})
	if got, want := s.take(), []string{"STATUS=starting, no leader"}; !slices.Equal(got, want) {
		t.Fatalf("starting: sent %q, want %q", got, want)
	}
	if n.Ready() {
		t.Fatal("ready before the election settled")
	}
	// A candidate is not settled; a follower of nobody neither.
	n.Changed(&part.View{NodeID: 3, State: "follower", Priority: 100, BasePriority: 100})
	n.Changed(&part.View{NodeID: 3, State: "follower", LeaderID: 7, LeaderName: "db-2", Term: 4, Priority: 100, BasePriority: 100, JobState: "stopped"})
	want := []string{"STATUS=follower, no leader", "READY=1", "STATUS=following db-2 (node 7), term 4; job stopped"}
	if got := s.take(); !slices.Equal(got, want) {
		t.Fatalf("follower: sent %q, want %q", got, want)
	}
	// The same line again sends nothing; a later deadline no READY=1.
	n.Changed(&part.View{NodeID: 3, State: "follower", LeaderID: 7, LeaderName: "db-2", Term: 4, Priority: 100, BasePriority: 100, JobState: "stopped"})
	drive(h, n, 5*time.Second)
	if got := s.take(); len(got) != 0 {
		t.Fatalf("nothing changed: sent %q", got)
	}
	if _, ok := n.Next(); ok {
		t.Fatal("ready, no watchdog: still waits for a deadline")
	}
	if strings.Contains(h.LogText(), "ready") {
		t.Errorf("a settled election logged %q", h.LogText())
	}
}

func TestStatusLines(t *testing.T) {
	for _, c := range []struct {
		v    part.View
		want string
	}{
		{part.View{State: "leader", Term: 9, Priority: 100, BasePriority: 100, JobState: "running", JobPid: 4242}, "leader, term 9; job running (pid 4242)"},
		{part.View{State: "leader", Term: 9, Priority: 1, BasePriority: 100}, "leader, term 9; priority 1 of 100"},
		{part.View{State: "conflict", NodeID: 12, Priority: 100, BasePriority: 100}, "not leading: node_id 12 conflict"},
		{part.View{State: "candidate", Priority: 100, BasePriority: 100, JobState: "waiting"}, "candidate, no leader; job waiting"},
	} {
		if got := statusLine(&c.v); got != c.want {
			t.Errorf("%+v: %q, want %q", c.v, got, c.want)
		}
	}
}

// A node that cannot settle (a lone quorum-mode node) tells systemd it
// is ready at readyBy, and says why.
func TestReadyByTheDeadline(t *testing.T) {
	h, s := parttest.NewFakeHost(), &sent{}
	n := NewWith(h, s.send, 0)
	h.Set(100 * ms)
	n.Begin(2400 * ms)
	if at, ok := n.Next(); !ok || at != 2400*ms {
		t.Fatalf("Next %v %v, want 2.4s", at, ok)
	}
	drive(h, n, 2399*ms)
	if got := s.take(); len(got) != 0 {
		t.Fatalf("before the deadline: %q", got)
	}
	drive(h, n, 2400*ms)
	if got := s.take(); !slices.Equal(got, []string{"READY=1"}) {
		t.Fatalf("at the deadline: %q", got)
	}
	if !strings.Contains(h.LogText(), `msg=ready why="the first election has not settled"`) {
		t.Errorf("log %q", h.LogText())
	}
}

// The watchdog: a ping at once, then every half interval of the loop's
// clock; the deadline is the earlier of the ping and READY=1's.
func TestWatchdog(t *testing.T) {
	h, s := parttest.NewFakeHost(), &sent{}
	n := NewWith(h, s.send, 300*ms)
	n.Begin(2 * time.Second)
	for _, step := range []struct {
		at   time.Duration
		want []string
		next time.Duration
	}{
		{0, []string{"WATCHDOG=1"}, 150 * ms},
		{149 * ms, nil, 150 * ms},
		{150 * ms, []string{"WATCHDOG=1"}, 300 * ms},
		{400 * ms, []string{"WATCHDOG=1"}, 550 * ms},
		{2 * time.Second, []string{"READY=1", "WATCHDOG=1"}, 2150 * ms},
	} {
		drive(h, n, step.at)
		if got := s.take(); !slices.Equal(got, step.want) {
			t.Errorf("at %v: sent %q, want %q", step.at, got, step.want)
		}
		if at, ok := n.Next(); !ok || at != step.next {
			t.Errorf("at %v: next %v %v, want %v", step.at, at, ok, step.next)
		}
	}
}

// Outside systemd the part sends nothing, waits for nothing, and logs
// nothing, even once the deadline has passed.
func TestOff(t *testing.T) {
	h := parttest.NewFakeHost()
	n := NewWith(h, nil, 300*ms)
	n.Begin(time.Second)
	n.Send("STOPPING=1")
	n.Changed(&part.View{State: "leader", Term: 1})
	if _, ok := n.Next(); ok {
		t.Error("off: waits for a deadline")
	}
	drive(h, n, 5*time.Second)
	if n.On() || h.LogText() != "" {
		t.Errorf("off: on %v, log %q", n.On(), h.LogText())
	}
}

// A send that fails is logged, not fatal.
func TestSendError(t *testing.T) {
	h := parttest.NewFakeHost()
	n := NewWith(h, func(string) error { return errors.New("connection refused") }, 0)
	n.Send("STOPPING=1")
	if !strings.Contains(h.LogText(), `level=WARN msg=sd_notify state="STOPPING=1" err="connection refused"`) {
		t.Errorf("log %q", h.LogText())
	}
}
