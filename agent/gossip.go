package agent

// memberlist, adapted: the delegate that queues membership events for the
// loop, memberlist's configuration and logs, and the joiner that keeps
// trying the seeds.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/auth"
)

// memberEvent is a membership change, queued for the event loop.
type memberEvent struct {
	kind   memberEventKind
	name   string
	addr   string // memberlist address
	meta   []byte // copied: memberlist may reuse its buffer (a conflict: the other node's)
	state  memberlist.NodeStateType
	detail string // for conflicts
}

type memberEventKind uint8

const (
	memberJoin memberEventKind = iota
	memberUpdate
	memberLeave
	memberNameConflict
)

// eventQueue is an unbounded queue that memberlist's delegates push to
// without ever blocking, and the event loop drains. memberlist calls its
// delegates from its own goroutines and requires them not to block; a
// bounded channel would have to drop events, and a lost leave would leave
// a dead member in the election.
type eventQueue struct {
	mu     sync.Mutex
	q      []memberEvent
	signal chan struct{} // capacity 1: "the queue is not empty"
}

func newEventQueue() *eventQueue { return &eventQueue{signal: make(chan struct{}, 1)} }

func (e *eventQueue) push(ev memberEvent) {
	e.mu.Lock()
	e.q = append(e.q, ev)
	e.mu.Unlock()
	select {
	case e.signal <- struct{}{}:
	default:
	}
}

// drain returns the queued events in order and empties the queue.
func (e *eventQueue) drain(dst []memberEvent) []memberEvent {
	e.mu.Lock()
	dst = append(dst, e.q...)
	clear(e.q)
	e.q = e.q[:0]
	e.mu.Unlock()
	return dst
}

// delegate is memberlist's Delegate, EventDelegate and ConflictDelegate.
// memberlist calls them from its goroutines, possibly concurrently; they
// only read the atomic metadata or push to the queue, and never block.
type delegate struct {
	meta  atomic.Pointer[[]byte]
	queue *eventQueue
}

func (d *delegate) NodeMeta(limit int) []byte {
	b := *d.meta.Load()
	if len(b) > limit {
		return nil
	}
	return b
}
func (d *delegate) NotifyMsg([]byte)                           {}
func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte { return nil }
func (d *delegate) LocalState(join bool) []byte                { return nil }
func (d *delegate) MergeRemoteState(buf []byte, join bool)     {}

func (d *delegate) event(k memberEventKind, n *memberlist.Node) {
	d.queue.push(memberEvent{kind: k, name: n.Name, addr: n.Address(), meta: bytes.Clone(n.Meta), state: n.State})
}

func (d *delegate) NotifyJoin(n *memberlist.Node)   { d.event(memberJoin, n) }
func (d *delegate) NotifyLeave(n *memberlist.Node)  { d.event(memberLeave, n) }
func (d *delegate) NotifyUpdate(n *memberlist.Node) { d.event(memberUpdate, n) }

func (d *delegate) NotifyConflict(existing, other *memberlist.Node) {
	d.queue.push(memberEvent{kind: memberNameConflict, name: existing.Name, addr: existing.Address(),
		detail: other.Address(), meta: bytes.Clone(other.Meta)})
}

// memberlistConfig builds memberlist's configuration: the LAN profile,
// bound to the agent's gossip address, its log sent to the agent's logger
// at debug level. Its Label is the cluster name: memberlist drops packets
// and streams of another cluster (and, with a key, authenticates the
// label with the data). With keys its traffic is encrypted (AES-256-GCM)
// with the gossip key of the signing secret, the accepted secrets' keys
// decrypt too, and unencrypted traffic is refused both ways.
func memberlistConfig(cfg *Config, bind netip.AddrPort, d *delegate, keys *auth.Keys) (*memberlist.Config, error) {
	mc := memberlist.DefaultLANConfig()
	mc.Name = cfg.Name
	mc.BindAddr = bind.Addr().String()
	mc.BindPort = int(bind.Port())
	// memberlist advertises AdvertisePort when AdvertiseAddr is set, and
	// the port it bound only when BindPort is 0.
	mc.AdvertisePort = int(bind.Port())
	if !bind.Addr().IsUnspecified() {
		mc.AdvertiseAddr = bind.Addr().String()
	}
	mc.Label = cfg.Cluster
	if keys != nil {
		kr, err := memberlist.NewKeyring(keys.Gossip, keys.Gossip[0])
		if err != nil {
			return nil, fmt.Errorf("memberlist keyring: %w", err)
		}
		mc.Keyring = kr
		mc.GossipVerifyIncoming = true
		mc.GossipVerifyOutgoing = true
	}
	mc.Delegate = d
	mc.Events = d
	mc.Conflict = d
	mc.LogOutput = nil
	mc.Logger = log.New(newSlogWriter(cfg.Logger.With("component", "memberlist")), "", 0)
	return mc, nil
}

// slogWriter turns memberlist's log lines ("[DEBUG] memberlist: …") into
// slog records of the matching level: memberlist's own chatter is debug,
// its warnings and errors stay warnings and errors.
type slogWriter struct {
	l     *slog.Logger
	peers auth.Log // rate of the lines about another key or cluster
	// conflicts: memberlist logs a node's name claimed from two
	// addresses ("Conflicting address") at each exchange that carries
	// it, every few hundred milliseconds while it lasts (after a cloned
	// host stopped, its old address and the other's keep meeting). One
	// line per pair of addresses per conflictLogEvery, with the count of
	// those held back; the rest at debug.
	conflicts *lineLimit
}

const conflictLogEvery = time.Minute

func newSlogWriter(l *slog.Logger) *slogWriter {
	return &slogWriter{l: l, conflicts: newLineLimit(conflictLogEvery)}
}

// keyHint follows memberlist's lines about encryption and labels: what an
// operator must fix.
const keyHint = "a peer has another --key-file (or none where this agent has one, or one where it has none) or another --cluster: every agent of a cluster needs the same key file and cluster name"

func (w *slogWriter) Write(p []byte) (int, error) {
	s := strings.TrimSpace(string(p))
	lvl := slog.LevelDebug
	for _, x := range []struct {
		tag string
		lvl slog.Level
	}{{"[ERR]", slog.LevelError}, {"[ERROR]", slog.LevelError}, {"[WARN]", slog.LevelWarn}, {"[INFO]", slog.LevelDebug}, {"[DEBUG]", slog.LevelDebug}} {
		if rest, ok := strings.CutPrefix(s, x.tag); ok {
			s, lvl = strings.TrimSpace(rest), x.lvl
			break
		}
	}
	s = strings.TrimPrefix(s, "memberlist: ")
	if strings.Contains(s, "use of closed network connection") {
		lvl = slog.LevelDebug // memberlist's goroutines racing its own shutdown
	}
	if rest, ok := strings.CutPrefix(s, "Conflicting address for "); ok && lvl > slog.LevelDebug {
		// The pair of addresses, without the state that follows it.
		key, _, _ := strings.Cut(rest, " Old state:")
		ok, held := w.conflicts.allow(key)
		switch {
		case !ok:
			lvl = slog.LevelDebug
		case held > 0:
			w.l.Log(nil, lvl, s, "repeated", held, "over", conflictLogEvery)
			return len(p), nil
		}
	}
	if ls := strings.ToLower(s); strings.Contains(ls, "crypt") || strings.Contains(ls, "label") {
		// Another key or cluster: one line at error per 10 s (a flood of
		// junk on the gossip port must not flood the log), the rest at debug.
		if w.peers.Due() {
			w.l.Log(nil, slog.LevelError, s, "hint", keyHint)
			return len(p), nil
		}
		lvl = slog.LevelDebug
	}
	w.l.Log(nil, lvl, s)
	return len(p), nil
}

var _ io.Writer = (*slogWriter)(nil)

// joiner joins the seeds in the background until the node has a peer, and
// again whenever it finds itself alone. It never ends the program: a seed
// that is down, or the node's own address among the seeds, only delays.
type joiner struct {
	ml       *memberlist.Memberlist
	seeds    []string
	log      *slog.Logger
	kick     chan []string // addresses to join now (from discovery beacons)
	stop     chan struct{}
	done     chan struct{}
	attempts atomic.Int64 // joins begun, for tests
	before   func(addr string)
}

const (
	joinRetryMin = 500 * time.Millisecond
	joinRetryMax = 30 * time.Second
)

func (j *joiner) run() {
	defer close(j.done)
	wait := time.Duration(0)
	warned := false
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		var addrs []string
		select {
		case <-j.stop:
			return
		case addrs = <-j.kick:
		case <-t.C:
			addrs = nil
			if len(j.seeds) > 0 && j.ml.NumMembers() <= 1 {
				addrs = j.seeds
			}
		}
		if len(addrs) > 0 {
			n, err := j.join(addrs)
			select {
			case <-j.stop:
				if err != nil {
					return // the agent stops: not a failure to report
				}
			default:
			}
			if err == nil && j.ml.NumMembers() <= 1 {
				err = errors.New("only this node answered")
			}
			switch {
			case err == nil:
				j.log.Info("joined", "contacted", n, "members", j.ml.NumMembers(), "via", strings.Join(addrs, ","))
				wait, warned = 0, false
			case !warned:
				attrs := []any{"seeds", strings.Join(addrs, ","), "err", oneLine(err)}
				if es := strings.ToLower(err.Error()); strings.Contains(es, "eof") || strings.Contains(es, "reset by peer") ||
					strings.Contains(es, "crypt") || strings.Contains(es, "label") {
					// The peer closed the stream: what it does with a
					// stream of another key or cluster.
					attrs = append(attrs, "hint", keyHint)
				}
				j.log.Warn("join failed, retrying in the background", attrs...)
				warned = true
			default:
				j.log.Debug("join failed", "seeds", strings.Join(addrs, ","), "err", oneLine(err))
			}
		}
		switch {
		case len(j.seeds) == 0:
			wait = time.Hour // only beacons kick it
		case j.ml.NumMembers() > 1:
			wait = joinRetryMin * 10 // check now and then that it is not alone
		default:
			wait = min(max(2*wait, joinRetryMin), joinRetryMax)
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(wait)
	}
}

// join joins the seeds one at a time (a seed that drops SYNs holds a join
// for memberlist's TCP timeout) and stops early when the agent stops.
func (j *joiner) join(addrs []string) (int, error) {
	var errs []error
	n := 0
	for _, addr := range addrs {
		select {
		case <-j.stop:
			return n, errors.New("stopping")
		default:
		}
		j.attempts.Add(1)
		if j.before != nil {
			j.before(addr)
		}
		k, err := j.ml.Join([]string{addr})
		n += k
		if err != nil {
			errs = append(errs, err)
		}
	}
	if n > 0 {
		return n, nil
	}
	return 0, errors.Join(errs...)
}

// normalizeSeed adds memberlist's default port to a seed without one.
func normalizeSeed(s string, port int) string {
	if _, _, err := net.SplitHostPort(s); err == nil {
		return s
	}
	return net.JoinHostPort(strings.Trim(s, "[]"), strconv.Itoa(port))
}

func oneLine(err error) string {
	if err == nil {
		return ""
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

// memberStatus is memberlist's state of a node as shown in /status.
func memberStatus(s memberlist.NodeStateType) string {
	switch s {
	case memberlist.StateAlive:
		return "alive"
	case memberlist.StateSuspect:
		return "suspect"
	case memberlist.StateDead:
		return "dead"
	case memberlist.StateLeft:
		return "left"
	}
	return fmt.Sprintf("state(%d)", s)
}

// startMemberlist creates the memberlist on bind, announcing ip when bind
// is unspecified.
func (a *Agent) startMemberlist(bind netip.AddrPort, ip netip.Addr) (err error) {
	a.del = &delegate{queue: newEventQueue()}
	a.setMeta()
	mc, err := memberlistConfig(&a.cfg, bind, a.del, a.auth.keys)
	if err != nil {
		return err
	}
	if bind.Addr().IsUnspecified() {
		mc.AdvertiseAddr = ip.String()
	}
	if a.ml, err = memberlist.Create(mc); err != nil {
		return memberlistError(bind, err)
	}
	if a.metaPush.update == nil {
		a.metaPush.update = a.ml.UpdateNode
	}
	ln := a.ml.LocalNode()
	gip, _ := netip.AddrFromSlice(ln.Addr)
	a.gossip = netip.AddrPortFrom(gip.Unmap(), ln.Port)
	return nil
}

// memberlistError names the problem of a failed memberlist start.
func memberlistError(bind netip.AddrPort, err error) error {
	s := err.Error()
	switch {
	case strings.Contains(s, "address already in use"):
		return notReady(fmt.Errorf("bind %v: gossip port already in use (another lanleader, consul or serf listens there)", bind))
	case strings.Contains(s, "cannot assign requested address"):
		return notReady(fmt.Errorf("bind %v: address not on this host", bind))
	}
	return fmt.Errorf("memberlist on %v: %s", bind, oneLine(err))
}

// startJoiner starts joining the seeds in the background.
func (a *Agent) startJoiner() {
	seeds := make([]string, len(a.cfg.Join))
	for i, s := range a.cfg.Join {
		seeds[i] = normalizeSeed(s, config.DefaultGossipPort)
	}
	a.joiner = &joiner{ml: a.ml, seeds: seeds, log: a.log, kick: make(chan []string, 1),
		stop: make(chan struct{}), done: make(chan struct{}), before: a.beforeJoin}
	go a.joiner.run()
}
