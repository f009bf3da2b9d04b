package election

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// The commands of the scenarios that test one machine step by step
// (nodes … machine=ID; see trace_test.go): the script plays the other
// members, fires the timers and moves the clock by hand.

// scriptOthers makes every node but the machine= one a scripted member,
// up from the start.
func (w *traceNet) scriptOthers() error {
	if w.machine == 0 {
		return nil
	}
	if w.nodes[w.machine] == nil {
		return fmt.Errorf("machine=%d: no such node", w.machine)
	}
	for _, id := range w.order {
		if id != w.machine {
			w.nodes[id].scripted, w.nodes[id].up = true, true
		}
	}
	return nil
}

func (w *traceNet) runMachineCmd(cmd string, args []string) error {
	switch cmd {
	case "at":
		if len(args) != 1 {
			return fmt.Errorf("at takes one time")
		}
		t, err := time.ParseDuration(args[0])
		if err != nil {
			return err
		}
		if t < w.now {
			return fmt.Errorf("at %v: the clock is at %v already", t, w.now)
		}
		w.stabilize()
		w.now = t
		return nil
	case "fire":
		return w.cmdFire(args)
	case "msg":
		return w.cmdMsg(args)
	case "member-up":
		return w.cmdMemberUp(args)
	case "members":
		return w.eachLive(args, func(n *traceNode) {
			ks := n.m.Members(nil)
			slices.SortFunc(ks, func(a, b Key) int { return int(a.ID) - int(b.ID) })
			w.out = append(w.out, fmt.Sprintf("%d knows %v", n.key.ID, ks))
		})
	}
	return fmt.Errorf("unknown command %q", cmd)
}

func (w *traceNet) cmdFire(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("fire ID TIMER")
	}
	kind := -1
	for k := range 256 {
		if TimerKind(k).String() == args[1] {
			kind = k
			break
		}
	}
	if kind < 0 {
		return fmt.Errorf("no timer %q", args[1])
	}
	err := w.eachLive(args[:1], func(n *traceNode) { w.step(n, fire(TimerKind(kind))) })
	w.stabilize()
	return err
}

// cmdMsg: msg FROM -> TO TYPE term=N [prio=P].
func (w *traceNet) cmdMsg(args []string) error {
	if len(args) < 5 || args[1] != "->" {
		return fmt.Errorf("msg FROM -> TO TYPE term=N [prio=P]")
	}
	from, err := w.nodeArgs(args[:1])
	if err != nil {
		return err
	}
	m := wire.Message{From: from[0].key.ID, Priority: from[0].key.Priority}
	typ := -1
	for t := range 256 {
		if wire.Type(t).String() == args[3] {
			typ = t
			break
		}
	}
	if typ < 0 {
		return fmt.Errorf("no message type %q", args[3])
	}
	m.Type = wire.Type(typ)
	for _, a := range args[4:] {
		k, v, _ := strings.Cut(a, "=")
		u, err := strconv.ParseUint(v, 10, 64)
		switch {
		case err != nil:
			return fmt.Errorf("bad %q", a)
		case k == "term":
			m.Term = u
		case k == "prio" && u <= 0xffff:
			m.Priority = uint16(u)
		default:
			return fmt.Errorf("unknown field %q", a)
		}
	}
	from[0].seq++
	m.Seq = from[0].seq
	err = w.eachLive(args[2:3], func(n *traceNode) { w.step(n, Event{Kind: EvMessage, Msg: m}) })
	w.stabilize()
	return err
}

// cmdMemberUp: member-up ID[:P].
func (w *traceNet) cmdMemberUp(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("member-up ID[:P]")
	}
	idText, prio, hasPrio := strings.Cut(args[0], ":")
	ns, err := w.nodeArgs([]string{idText})
	if err != nil {
		return err
	}
	up := ns[0]
	if hasPrio {
		p, err := strconv.ParseUint(prio, 10, 16)
		if err != nil {
			return fmt.Errorf("bad priority %q", args[0])
		}
		up.key.Priority = uint16(p)
	}
	if up.scripted {
		up.up = true
	}
	for _, id := range w.order {
		if n := w.nodes[id]; n.up && n.m != nil {
			w.step(n, Event{Kind: EvMemberUp, Member: up.key, Role: up.role})
		}
	}
	w.stabilize()
	return nil
}

// showTimer shows a timer set or cancelled, in a machine= scenario.
func (w *traceNet) showTimer(n *traceNode, a Action) {
	if w.machine != 0 {
		w.logf("%d %v", n.key.ID, a)
	}
}

// msgNote is what a trace line shows of a message beyond its type, term
// and body: the sender's priority when it is not the default and, in a
// machine= scenario, every other field that is set (a stray field would
// otherwise go unseen).
func (w *traceNet) msgNote(n *traceNode, m wire.Message) string {
	s := ""
	if m.Priority != defPrio {
		s = fmt.Sprintf(" prio=%d", m.Priority)
	}
	if w.machine == 0 {
		return s
	}
	rest := m
	rest.Type, rest.Priority, rest.Term, rest.Seq = 0, 0, 0, 0
	if rest.From == n.key.ID {
		rest.From = 0
	}
	if !reflect.DeepEqual(rest, wire.Message{}) {
		s += fmt.Sprintf(" other=%+v", rest)
	}
	return s
}

// machineStatus is what a machine= scenario's status line adds: the
// node's own key and its leader's, and quorum mode's lease and vote when
// they are set.
func machineStatus(st Status) string {
	s := fmt.Sprintf(" self=%v leader-key=%v", st.Self, st.LeaderKey)
	if st.LeaseUntil != 0 || st.VotedTerm != 0 {
		s += fmt.Sprintf(" lease-until=%v voted=%d", st.LeaseUntil, st.VotedTerm)
	}
	return s
}
