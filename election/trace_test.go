package election

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// Scripted multi-node scenarios, in the manner of etcd-io/raft's
// interaction tests and cockroachdb/datadriven, without the dependency.
//
// A file in testdata/ is a list of commands, each followed by a line
// "----" and the output it must produce, up to a blank line. Lines that
// start with # (and blank lines) between commands are comments. The
// output is the trace of what happened: who sent what to whom, timers
// that fired, and every change of role, each line stamped with the time.
//
//	go test ./election -run TestTraces -rewrite
//
// rewrites every file with the actual output. Review the diff line by line
// against the textbook before committing it: the files are the spec.
//
// The network holds the machines, a FIFO queue of messages in flight and a
// fake clock. Delivery takes no time: a message is handed over when the
// queue reaches it. A multicast (ActBroadcast) is queued for every other
// live node in the order the nodes were listed, whatever its scope, as
// over real multicast where receivers filter by key; a unicast to a node
// that is down or cut off is marked "(lost)". Timers come due in time
// order (on a tie, in node order, then in TimerKind order), and the queue
// is drained after each one.
//
// Commands:
//
//	nodes 1 2 3:150 4/witness  the nodes (id or id:priority, default 100,
//	                           then /witness or /observer: Config.Role);
//	    [preempt=false] [preempt-delay=1s]   options for all of them
//	    [algorithm=ring]       the algorithm they run (default bully)
//	    [ring-order=descending|shuffle:SEED]  Config.RingOrder
//	    [hardened]             as the agent runs them: the stability
//	                           hardening on (without: the zero Hardening)
//	start all | start ID...    start (or restart, with a fresh machine) nodes;
//	                           each is told the other live nodes (EvMemberUp)
//	                           and the live nodes are told about it
//	crash ID...                stop nodes silently: nothing is sent to them,
//	                           their timers are dropped
//	member-down ID             membership declares ID dead to every live node
//	suspect ID                 EvSuspectLeader at ID
//	resign ID                  EvResign at ID
//	priority ID P              EvSetPriority(P) at ID
//	conflict ID on|off         EvConflict at ID
//	partition 1 2 | 3 4 5      drop every message between the groups
//	deaf ID...                 drop every message to these nodes (their
//	                           input is cut; they still send)
//	heal                       end all partitions and deaf nodes
//	stabilize                  deliver until no message is in flight
//	advance D                  deliver, then move the clock by D, firing the
//	                           timers that come due and delivering after each
//	status                     one line per node
//	bug TEXT                   a known bug: the commands after it hold the
//	                           trace the machine should give (written by
//	                           hand, kept on -rewrite); while it differs the
//	                           test is skipped with TEXT, once it matches the
//	                           test fails so that the line is removed
//
// A scenario may test one machine step by step, as a unit test would: the
// option machine=ID of "nodes" runs a machine at ID only, and the other
// nodes are members played by the script, up from the start. Messages to
// them are shown and dropped; they send only what the script gives. Every
// action of the machine is shown, its timers included ("3 set-timer
// answer at 350ms", "3 cancel-timer startup"), a message's fields beyond
// its sender, type, term, priority and body are shown as other={...}, and
// its status line shows its own key and its leader's. The timers fire only
// when "fire" or "advance" says. Commands for such scenarios (any
// scenario may use them):
//
//	at T                       deliver, then set the clock to T (not back),
//	                           firing no timer
//	fire ID TIMER              EvTimer(TIMER) at ID now, whether or not it
//	                           is due: a stale timer, or one never armed
//	                           (TIMER may be timer(N), a kind out of range)
//	msg 4 -> 3 ANSWER term=9 [prio=50]   the message of that type from 4
//	                           (at its priority, or P) arrives at 3
//	member-up ID[:P]           membership declares ID alive (at priority
//	                           P) to every live machine, ID's own too, as
//	                           memberlist lists the local node
//	members ID                 the members ID knows, by id
//
// A new "nodes" command starts a new scenario, from time 0.
//
// Trace lines (without their "[time] " stamp):
//
//	3 -> all ELECTION scope=larger count=2 term=1   a multicast (Count: recipients in 3's view)
//	4 -> 1 ANSWER term=1                            a unicast
//	1 -> 2 RING_ELECTION term=1 origin=1 list=[1]   a unicast of the ring family, with its body
//	3 timer answer                                  a timer came due (heartbeat timers are not shown)
//	4 becomes leader term=2                         ActBecomeLeader
//	2 follows 4 term=2 / 2 follows nobody term=1    ActFollow
//	3 is candidate                                  a change of state no action above tells
//
// A message's "prio=" is shown when the sender's priority is not 100.

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/*.txt with the actual traces")

func TestTraces(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no scenario in testdata/*.txt")
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			runScriptFile(t, path)
		})
	}
}

// scriptCmd is one command of a scenario and the output it must produce.
type scriptCmd struct {
	line int      // 1-based line of the command
	pre  []string // comment and blank lines before it, as written
	cmd  string
	want []string
}

// parseScript splits a scenario file into its commands; tail holds the
// comment lines after the last one.
func parseScript(text string) (cmds []scriptCmd, tail []string, err error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var pre []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			pre = append(pre, l)
			continue
		}
		c := scriptCmd{line: i + 1, pre: pre, cmd: strings.TrimSpace(l)}
		pre = nil
		i++
		if i >= len(lines) || lines[i] != "----" {
			return nil, nil, fmt.Errorf("line %d: %q: want a line \"----\" after the command", c.line, c.cmd)
		}
		for i+1 < len(lines) && lines[i+1] != "" {
			i++
			c.want = append(c.want, lines[i])
		}
		if i+1 < len(lines) {
			i++ // the blank line that ends the output
		}
		cmds = append(cmds, c)
	}
	return cmds, pre, nil
}

func runScriptFile(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cmds, tail, err := parseScript(string(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	w := &traceNet{t: t}
	var out strings.Builder
	var bug string   // set by a "bug" command
	var differ []int // lines of the commands after it whose trace differs
	for _, c := range cmds {
		var got []string
		var err error
		if text, ok := strings.CutPrefix(c.cmd, "bug "); ok {
			bug = text
		} else {
			got, err = w.run(c.cmd)
		}
		if err != nil {
			if bug == "" {
				t.Fatalf("%s:%d: %s: %v", path, c.line, c.cmd, err)
			}
			got = []string{"error: " + err.Error()}
		}
		if len(got) == 0 {
			got = []string{"ok"}
		}
		mismatch := !slices.Equal(got, c.want)
		if mismatch && bug != "" && c.cmd != "bug "+bug {
			// After a "bug" command the file holds the trace the machine
			// should give, written by hand: it is kept on rewrite.
			differ = append(differ, c.line)
			t.Logf("%s:%d: %s (known bug)\n got:\n\t%s\nwant:\n\t%s",
				path, c.line, c.cmd, strings.Join(got, "\n\t"), strings.Join(c.want, "\n\t"))
			got = c.want
		} else if mismatch && !*rewrite {
			t.Errorf("%s:%d: %s\n got:\n\t%s\nwant:\n\t%s\n(go test ./election -run TestTraces -rewrite rewrites the file; review the diff)",
				path, c.line, c.cmd, strings.Join(got, "\n\t"), strings.Join(c.want, "\n\t"))
		}
		for _, l := range c.pre {
			out.WriteString(l + "\n")
		}
		out.WriteString(c.cmd + "\n----\n" + strings.Join(got, "\n") + "\n\n")
	}
	for _, l := range tail {
		out.WriteString(l + "\n")
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if bug != "" {
		if len(differ) == 0 {
			t.Errorf("%s: the trace after \"bug %s\" now matches the expected one: the bug is fixed, remove the bug line", path, bug)
		} else {
			t.Skipf("BUG: %s (%s: the commands at lines %v differ from the expected trace)", bug, path, differ)
		}
	}
}

// The script parser keeps every comment and round-trips a file.
func TestParseScriptRoundTrip(t *testing.T) {
	in := "# head\n\nnodes 1 2\n----\nok\n\n# mid\nadvance 1s\n----\n[1000ms] a\n[1000ms] b\n\n# end\n"
	cmds, tail, err := parseScript(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 2 || cmds[1].cmd != "advance 1s" || cmds[1].line != 8 || !slices.Equal(cmds[1].want, []string{"[1000ms] a", "[1000ms] b"}) ||
		!slices.Equal(cmds[0].pre, []string{"# head", ""}) || !slices.Equal(tail, []string{"# end"}) {
		t.Fatalf("parseScript: %+v tail %q", cmds, tail)
	}
	var out strings.Builder
	for _, c := range cmds {
		for _, l := range c.pre {
			out.WriteString(l + "\n")
		}
		out.WriteString(c.cmd + "\n----\n" + strings.Join(c.want, "\n") + "\n\n")
	}
	for _, l := range tail {
		out.WriteString(l + "\n")
	}
	if out.String() != in {
		t.Errorf("round trip:\n%s\nwant:\n%s", out.String(), in)
	}
	if _, _, err := parseScript("nodes 1\nok\n"); err == nil {
		t.Error("a command without ---- was accepted")
	}
}

// The network refuses what it does not understand, so a typo in a script
// cannot pass unnoticed as an empty trace.
func TestTraceNetRejectsBadCommands(t *testing.T) {
	for _, cmd := range []string{
		"advance 300ms", // no nodes yet
		"nodes",
		"nodes 1 1",
		"nodes 0",
		"nodes 1 2 preempt=maybe",
		"nodes 1 2\nstart 9",
		"nodes 1 2\nadvance soon",
		"nodes 1 2\nfly 1",
		"nodes 1 2\npartition 1 2",
		"nodes 1 2\npriority 1 high",
		"nodes 1 2\nconflict 1 maybe",
		"nodes 1 2\nsuspect 1",                    // not started
		"nodes 1 2\nstart all\ncrash 2\nresign 2", // down
		"nodes 1 2\nstart all\ncrash 2\npriority 2 5",
		"nodes 1 2 machine=3",
		"nodes 1 2 machine=1\nstart 2", // played by the script
		"nodes 1 2 machine=1\nstart 1\nmsg 2 -> 1 NOPE term=1",
		"nodes 1 2 machine=1\nstart 1\nmsg 2 -> 1 ANSWER term=x",
		"nodes 1 2 machine=1\nstart 1\nmsg 2 -> 1 ANSWER color=1",
		"nodes 1 2 machine=1\nstart 1\nmsg 1 -> 2 ANSWER term=1", // to a scripted node
		"nodes 1 2 machine=1\nstart 1\nfire 1 nope",
		"nodes 1 2 machine=1\nstart 1\nfire 2 answer",
		"nodes 1 2 machine=1\nstart 1\nat 1s\nat 500ms",
		"nodes 1 2 machine=1\nstart 1\nmember-up 9",
		"nodes 1 2 machine=1\nstart 1\nmembers 2",
	} {
		w := &traceNet{t: t}
		var err error
		for l := range strings.SplitSeq(cmd, "\n") {
			if _, err = w.run(l); err != nil {
				break
			}
		}
		if err == nil {
			t.Errorf("%q: accepted", cmd)
		}
	}
}

// traceNet is the in-test network of the scenarios.
type traceNet struct {
	t     *testing.T
	now   time.Duration
	order []NodeID
	nodes map[NodeID]*traceNode
	opts  []func(*Config)
	// hardened: the machines run with the stability hardening, as the
	// agent does; without it they follow the seeds (the zero Hardening).
	hardened bool
	alg      string
	machine  NodeID // machine=: the only node that runs a machine (0: all)
	queue    []envelope
	cut      map[[2]NodeID]bool
	out      []string
	stepped  int
}

type traceNode struct {
	key   Key
	role  Role
	m     Machine // nil before its first start, and for a scripted node
	up    bool
	armed [numTimers]bool
	at    [numTimers]time.Duration
	seq   uint32 // the sequence number of its last packet, as a driver stamps it
	// scripted: a member played by the script (machine=): it runs no
	// machine, and what is sent to it is dropped.
	scripted bool
}

type envelope struct {
	to  NodeID
	msg wire.Message
}

// maxSteps bounds one command, so that a livelock fails instead of hanging.
const maxSteps = 100_000

func (w *traceNet) run(line string) ([]string, error) {
	w.out = nil
	w.stepped = 0
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	if f[0] == "nodes" && w.nodes != nil {
		*w = traceNet{t: w.t} // a new scenario
	}
	if f[0] != "nodes" && w.nodes == nil {
		return nil, fmt.Errorf("no nodes yet: start with \"nodes\"")
	}
	args := f[1:]
	var err error
	switch f[0] {
	case "nodes":
		err = w.cmdNodes(args)
	case "start":
		err = w.cmdStart(args)
	case "crash":
		err = w.eachNode(args, func(n *traceNode) {
			n.up = false
			n.armed = [numTimers]bool{}
		})
	case "member-down":
		err = w.eachNode(args, func(down *traceNode) {
			for _, id := range w.order {
				if n := w.nodes[id]; n.up && n != down && !n.scripted {
					w.step(n, memberDown(down.key.ID))
				}
			}
		})
	case "suspect":
		err = w.eachLive(args, func(n *traceNode) { w.step(n, evSuspect) })
	case "resign":
		err = w.eachLive(args, func(n *traceNode) { w.step(n, evResign) })
	case "priority":
		err = w.cmdPriority(args)
	case "conflict":
		err = w.cmdConflict(args)
	case "partition":
		err = w.cmdPartition(args)
	case "deaf":
		err = w.cmdDeaf(args)
	case "heal":
		w.cut = nil
	case "stabilize":
		w.stabilize()
	case "advance":
		var d time.Duration
		if len(args) != 1 {
			return nil, fmt.Errorf("advance takes one duration")
		}
		if d, err = time.ParseDuration(args[0]); err == nil {
			w.advance(d)
		}
	case "status":
		for _, id := range w.order {
			if n := w.nodes[id]; !n.scripted {
				w.out = append(w.out, w.status(n))
			}
		}
	default:
		err = w.runMachineCmd(f[0], args)
	}
	if err == nil && w.stepped > maxSteps {
		err = fmt.Errorf("more than %d steps: livelock?", maxSteps)
	}
	return w.out, err
}

func (w *traceNet) cmdNodes(args []string) error {
	w.nodes = make(map[NodeID]*traceNode)
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "machine="):
			id, err := strconv.ParseUint(strings.TrimPrefix(a, "machine="), 10, 64)
			if err != nil || id == 0 {
				return fmt.Errorf("bad machine in %q", a)
			}
			w.machine = id
		case a == "preempt=false":
			w.opts = append(w.opts, noPreempt)
		case a == "hardened":
			w.hardened = true
		case a == "ring-order=descending":
			w.opts = append(w.opts, func(c *Config) { c.RingOrder.Descending = true })
		case strings.HasPrefix(a, "ring-order=shuffle:"):
			seed, err := strconv.ParseUint(strings.TrimPrefix(a, "ring-order=shuffle:"), 10, 64)
			if err != nil || seed == 0 {
				return fmt.Errorf("bad shuffle seed in %q", a)
			}
			w.opts = append(w.opts, func(c *Config) { c.RingOrder.Shuffle = seed })
		case strings.HasPrefix(a, "algorithm="):
			w.alg = strings.TrimPrefix(a, "algorithm=")
			if !slices.Contains(Algorithms, w.alg) {
				return fmt.Errorf("unknown algorithm %q", w.alg)
			}
		case strings.HasPrefix(a, "quorum="):
			q, err := strconv.Atoi(strings.TrimPrefix(a, "quorum="))
			if err != nil || q <= 0 {
				return fmt.Errorf("bad quorum in %q", a)
			}
			w.opts = append(w.opts, func(c *Config) { c.Quorum = q })
		case strings.HasPrefix(a, "preempt-delay="):
			d, err := time.ParseDuration(strings.TrimPrefix(a, "preempt-delay="))
			if err != nil {
				return err
			}
			w.opts = append(w.opts, preemptDelay(d))
		case strings.Contains(a, "="):
			return fmt.Errorf("unknown option %q", a)
		default:
			k := key(0)
			a, roleText, hasRole := strings.Cut(a, "/")
			role := RoleCandidate
			if hasRole {
				r, err := ParseRole(roleText)
				if err != nil {
					return err
				}
				role = r
			}
			idText, prio, hasPrio := strings.Cut(a, ":")
			id, err := strconv.ParseUint(idText, 10, 64)
			if err != nil || id == 0 {
				return fmt.Errorf("bad node id %q", a)
			}
			k.ID = id
			if hasPrio {
				p, err := strconv.ParseUint(prio, 10, 16)
				if err != nil {
					return fmt.Errorf("bad priority %q", a)
				}
				k.Priority = uint16(p)
			}
			if w.nodes[k.ID] != nil {
				return fmt.Errorf("node %d given twice", k.ID)
			}
			w.nodes[k.ID] = &traceNode{key: k, role: role}
			w.order = append(w.order, k.ID)
		}
	}
	if len(w.order) == 0 {
		return fmt.Errorf("nodes: no node given")
	}
	return w.scriptOthers()
}

// nodeArgs resolves ids; "all" is every node.
func (w *traceNet) nodeArgs(args []string) ([]*traceNode, error) {
	if len(args) == 1 && args[0] == "all" {
		args = nil
		for _, id := range w.order {
			args = append(args, strconv.FormatUint(id, 10))
		}
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("no node given")
	}
	var ns []*traceNode
	for _, a := range args {
		id, err := strconv.ParseUint(a, 10, 64)
		if err != nil || w.nodes[id] == nil {
			return nil, fmt.Errorf("no node %q", a)
		}
		ns = append(ns, w.nodes[id])
	}
	return ns, nil
}

func (w *traceNet) eachNode(args []string, fn func(*traceNode)) error {
	ns, err := w.nodeArgs(args)
	for _, n := range ns {
		fn(n)
	}
	return err
}

// eachLive is eachNode for commands that need the nodes running.
func (w *traceNet) eachLive(args []string, fn func(*traceNode)) error {
	ns, err := w.nodeArgs(args)
	if err != nil {
		return err
	}
	for _, n := range ns {
		if n.m == nil {
			return fmt.Errorf("node %d was never started", n.key.ID)
		}
	}
	for _, n := range ns {
		if n.up {
			fn(n)
		} else if args[0] != "all" {
			return fmt.Errorf("node %d is down", n.key.ID)
		}
	}
	return nil
}

func (w *traceNet) cmdStart(args []string) error {
	ns, err := w.nodeArgs(args)
	if err != nil {
		return err
	}
	for _, n := range ns {
		if n.scripted {
			return fmt.Errorf("node %d is played by the script", n.key.ID)
		}
	}
	for _, n := range ns {
		cfg := DefaultConfig(n.key.ID)
		// SuspectAfter follows the mode (New derives it: quorum mode and
		// the textbook keep three heartbeats).
		cfg.SuspectAfter = 0
		cfg.Priority = n.key.Priority
		cfg.Role = n.role
		if !w.hardened {
			// The seeds' machine, with the textbook's detector timeout.
			cfg.Hardening, cfg.SuspectAfter = Hardening{}, 0
		}
		if w.alg != "" {
			cfg.Algorithm = w.alg
		}
		for _, o := range w.opts {
			o(&cfg)
		}
		m, err := New(cfg)
		if err != nil {
			return err
		}
		restart := n.m != nil
		n.m, n.up, n.armed = m, true, [numTimers]bool{}
		for _, id := range w.order {
			o := w.nodes[id]
			if o == n || !(o.up || slices.Contains(ns, o)) {
				continue
			}
			w.step(n, Event{Kind: EvMemberUp, Member: o.key, Role: o.role})
			if restart && o.up && !o.scripted {
				w.step(o, Event{Kind: EvMemberUp, Member: n.key, Role: n.role}) // membership sees it come back
			}
		}
	}
	for _, n := range ns {
		w.step(n, evStart)
	}
	return nil
}

func (w *traceNet) cmdPriority(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("priority ID P")
	}
	ns, err := w.nodeArgs(args[:1])
	if err == nil && !ns[0].up {
		err = fmt.Errorf("node %s is down", args[0])
	}
	if err != nil {
		return err
	}
	p, err := strconv.ParseUint(args[1], 10, 16)
	if err != nil {
		return err
	}
	ns[0].key.Priority = uint16(p)
	w.step(ns[0], setPriority(uint16(p)))
	return nil
}

func (w *traceNet) cmdConflict(args []string) error {
	if len(args) != 2 || args[1] != "on" && args[1] != "off" {
		return fmt.Errorf("conflict ID on|off")
	}
	ns, err := w.nodeArgs(args[:1])
	if err == nil && !ns[0].up {
		err = fmt.Errorf("node %s is down", args[0])
	}
	if err != nil {
		return err
	}
	w.step(ns[0], conflict(args[1] == "on"))
	return nil
}

func (w *traceNet) cmdPartition(args []string) error {
	var groups [][]NodeID
	var g []NodeID
	for _, a := range append(args, "|") {
		if a == "|" {
			if len(g) == 0 {
				return fmt.Errorf("partition: empty group")
			}
			groups, g = append(groups, g), nil
			continue
		}
		ns, err := w.nodeArgs([]string{a})
		if err != nil {
			return err
		}
		g = append(g, ns[0].key.ID)
	}
	if len(groups) < 2 {
		return fmt.Errorf("partition: want two groups or more, split by |")
	}
	w.cut = make(map[[2]NodeID]bool)
	for i, a := range groups {
		for j, b := range groups {
			if i == j {
				continue
			}
			for _, x := range a {
				for _, y := range b {
					w.cut[[2]NodeID{x, y}] = true
				}
			}
		}
	}
	return nil
}

func (w *traceNet) cmdDeaf(args []string) error {
	ns, err := w.nodeArgs(args)
	if err != nil {
		return err
	}
	if w.cut == nil {
		w.cut = make(map[[2]NodeID]bool)
	}
	for _, n := range ns {
		for id := range w.nodes {
			if id != n.key.ID {
				w.cut[[2]NodeID{id, n.key.ID}] = true
			}
		}
	}
	return nil
}

func (w *traceNet) logf(format string, args ...any) {
	w.out = append(w.out, fmt.Sprintf("[%dms] ", w.now/ms)+fmt.Sprintf(format, args...))
}

func (w *traceNet) reaches(from, to NodeID) bool {
	return w.nodes[to].up && !w.cut[[2]NodeID{from, to}]
}

// step feeds ev to n at the network's time and carries out the actions.
func (w *traceNet) step(n *traceNode, ev Event) {
	w.stepped++
	before := n.m.Status()
	var becameLeader, followed bool
	for _, a := range n.m.Step(w.now, ev) {
		prio := w.msgNote(n, a.Msg)
		switch a.Kind {
		case ActSend:
			n.seq++
			a.Msg.Seq = n.seq
			lost := ""
			if to := w.nodes[a.To]; to == nil || !w.reaches(n.key.ID, a.To) {
				lost = " (lost)"
			} else {
				w.queue = append(w.queue, envelope{a.To, a.Msg})
			}
			w.logf("%d -> %d %v term=%d%s%s%s", n.key.ID, a.To, a.Msg.Type, a.Msg.Term, a.Msg.AppendBody(nil, ""), prio, lost)
		case ActBroadcast:
			n.seq++
			a.Msg.Seq = n.seq
			w.logf("%d -> all %v scope=%v count=%d term=%d%s", n.key.ID, a.Msg.Type, a.Scope, a.Count, a.Msg.Term, prio)
			for _, id := range w.order {
				if id != n.key.ID && w.reaches(n.key.ID, id) {
					w.queue = append(w.queue, envelope{id, a.Msg})
				}
			}
		case ActSetTimer:
			n.armed[a.Timer], n.at[a.Timer] = true, a.At
			w.showTimer(n, a)
		case ActCancelTimer:
			n.armed[a.Timer] = false
			w.showTimer(n, a)
		case ActBecomeLeader:
			becameLeader = true
			w.logf("%d becomes leader term=%d", n.key.ID, a.Term)
		case ActFollow:
			followed = true
			if a.Leader == 0 {
				w.logf("%d follows nobody term=%d", n.key.ID, a.Term)
			} else {
				w.logf("%d follows %d term=%d", n.key.ID, a.Leader, a.Term)
			}
		}
	}
	after := n.m.Status()
	told := after.State == StateLeader && becameLeader || after.State == StateFollower && followed
	if after.State != before.State && !told {
		w.logf("%d is %v", n.key.ID, after.State)
	}
}

// stabilize delivers the messages in flight, and those they cause, in
// FIFO order, to the nodes that are still up.
func (w *traceNet) stabilize() {
	for len(w.queue) > 0 && w.stepped <= maxSteps {
		e := w.queue[0]
		w.queue = w.queue[1:]
		if n := w.nodes[e.to]; n.up && !n.scripted {
			w.step(n, Event{Kind: EvMessage, Msg: e.msg})
		}
	}
}

// advance delivers what is in flight, then fires the timers that come due
// within d in time order, delivering after each.
func (w *traceNet) advance(d time.Duration) {
	end := w.now + d
	w.stabilize()
	for w.stepped <= maxSteps {
		var due *traceNode
		var kind TimerKind
		var at time.Duration
		for _, id := range w.order {
			n := w.nodes[id]
			for k := range numTimers {
				if n.up && n.armed[k] && n.at[k] <= end && (due == nil || n.at[k] < at) {
					due, kind, at = n, k, n.at[k]
				}
			}
		}
		if due == nil {
			break
		}
		w.now = max(w.now, at)
		due.armed[kind] = false
		if kind != TimerHeartbeat {
			w.logf("%d timer %v", due.key.ID, kind)
		}
		w.step(due, fire(kind))
		w.stabilize()
	}
	w.now = end
}

func (w *traceNet) status(n *traceNode) string {
	if n.m == nil {
		return fmt.Sprintf("%d not started", n.key.ID)
	}
	if !n.up {
		return fmt.Sprintf("%d down", n.key.ID)
	}
	st := n.m.Status()
	s := fmt.Sprintf("%d %v term=%d leader=%d", n.key.ID, st.State, st.Term, st.Leader)
	if st.Self.Priority != defPrio {
		s += fmt.Sprintf(" prio=%d", st.Self.Priority)
	}
	if w.machine != 0 {
		s += machineStatus(st)
	}
	return s
}
