package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lanleader/lanleader/detector"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/metrics"
	"github.com/lanleader/lanleader/wire"
)

// Agent is one running lanleader agent. Create it with New, then Start it;
// end it with Stop (graceful) or Crash (tests and the demo).
type Agent struct {
	cfg     Config
	log     *slog.Logger
	epoch   time.Time // the agent's clock is time.Since(epoch): monotonic
	cluster uint32
	inc     atomic.Uint32 // incarnation: the Unix second of the start (see auth.go), +1 at each wrap of the sequence

	keys    *authKeys    // nil without a key
	replay  *replayGuard // nil without a key
	authLog authLog

	machine election.Machine
	tr      *transport
	ml      *memberlist.Memberlist
	del     *delegate
	joiner  *joiner
	reg     *prometheus.Registry
	met     *metrics.Metrics
	http    *http.Server
	httpLn  net.Listener
	gossip  netip.AddrPort // memberlist's advertised address

	pkts     chan packet
	cmds     chan func()
	quit     chan struct{} // closed: the loop ends
	loopDone chan struct{}
	readers  sync.WaitGroup
	stopOnce sync.Once
	started  atomic.Bool // Start was called
	running  atomic.Bool // Start succeeded: the loop runs until Stop or Crash

	failed   chan struct{} // closed when the agent cannot go on
	failOnce sync.Once
	failErr  error

	snap atomic.Pointer[Status]
	view atomic.Pointer[metrics.View]

	sup      *supervisor // nil without a job
	hooks    *hookRunner // nil without hooks
	checks   *checker    // nil without checks
	notify   notifier
	metaKick chan struct{} // capacity 1: push the metadata to the members
	metaMu   sync.Mutex    // serialises memberlist's UpdateNode (metaPusher, Stop)
	// metaRepeats and updateNode are metaPusher's schedule and call
	// (metaRepeats and ml.UpdateNode; tests replace them).
	metaRepeats []time.Duration
	updateNode  func(timeout time.Duration) error
	jobDirty    chan struct{} // capacity 1: the job's status changed
	syncKick    chan syncReq  // capacity 1: exchange state with this member now

	loop loopState // owned by the event loop goroutine
}

// member is another member as the loop knows it.
type member struct {
	name     string
	addr     string // memberlist address
	status   string // alive, suspect, dead, left
	meta     meta
	metaOK   bool
	changed  time.Duration
	warnedMD bool
}

func (m *member) alive() bool { return m.status == "alive" || m.status == "suspect" }

// New checks cfg and returns an agent that has opened nothing yet. It
// takes cfg as it is: start from DefaultConfig.
func New(cfg Config) (*Agent, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Quorum > 0 && cfg.StateFile != "" {
		t, err := LoadVotedTerm(cfg.StateFile)
		if err != nil {
			return nil, err
		}
		cfg.initialTerm = t
	}
	ec := cfg.ElectionConfig()
	if cfg.Detector == DetectorPhi {
		ec.Detector = detector.NewPhi(detector.DefaultPhiConfig(cfg.Heartbeat))
	}
	m, err := election.New(ec)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	a := &Agent{
		cfg:      cfg,
		log:      cfg.Logger.With("node", cfg.Name),
		cluster:  wire.ClusterID(cfg.Cluster),
		keys:     newAuthKeys(cfg.Key, cfg.AcceptKeys),
		machine:  m,
		reg:      prometheus.NewRegistry(),
		pkts:     make(chan packet, 256),
		cmds:     make(chan func()),
		quit:     make(chan struct{}),
		loopDone: make(chan struct{}),
		failed:   make(chan struct{}),
	}
	a.loop.members = make(map[string]*member)
	a.loop.savedTerm = cfg.initialTerm
	a.inc.Store(uint32(started.Unix()))
	a.loop.seq = startSeq(started)
	if a.keys != nil {
		a.replay = newReplayGuard()
		a.loop.mac = wire.NewMAC(a.keys.election[0])
	}
	a.loop.peers = make(map[uint64]peer)
	a.loop.kicked = make(map[string]time.Duration)
	a.loop.outsiders = make(map[uint64]bool)
	a.loop.evidence = make(map[string]time.Duration)
	a.loop.fanned = make(map[uint64]bool)
	a.view.Store(&metrics.View{State: election.StateStarting.String(), Members: map[string]int{}, Priority: cfg.Priority})
	a.met = metrics.New(a.reg, cfg.Version, func() metrics.View { return *a.view.Load() })
	if len(cfg.Job) > 0 {
		a.sup = newSupervisor(a)
	}
	if cfg.OnLeader != "" || cfg.OnFollower != "" || cfg.OnChange != "" {
		a.hooks = newHookRunner(cfg.HookTimeout, a.log, a.met)
	}
	for _, c := range cfg.Checks {
		a.loop.checks = append(a.loop.checks, CheckStatus{Command: c, OK: true, Weight: cfg.CheckWeight})
	}
	a.metaKick = make(chan struct{}, 1)
	a.syncKick = make(chan syncReq, 1)
	a.metaRepeats = metaRepeats
	a.jobDirty = make(chan struct{}, 1)
	a.notify = newNotifier(a.log.Warn)
	return a, nil
}

// Config returns the agent's configuration, defaults filled in.
func (a *Agent) Config() Config { return a.cfg }

// Registry is the agent's own Prometheus registry (served at /metrics).
func (a *Agent) Registry() *prometheus.Registry { return a.reg }

// Start opens the sockets (HTTP, election, memberlist), starts joining in
// the background and runs the event loop. An error names what could not
// be opened and why; nothing is left open or running after one.
func (a *Agent) Start() (err error) {
	if a.started.Swap(true) {
		return errors.New("agent: started twice")
	}
	cfg := &a.cfg
	bind, err := cfg.BindAddrPort()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			a.closeAll()
			close(a.loopDone) // the loop never ran
		}
	}()

	// The health checks run once before anything opens: the node starts
	// with the priority they give it.
	if len(cfg.Checks) > 0 {
		a.checks = &checker{commands: cfg.Checks, interval: cfg.CheckInterval,
			env: hookEnv(cfg, "starting", 0, 0), quit: make(chan struct{})}
		for _, r := range a.checks.first() {
			c := &a.loop.checks[r.index]
			c.OK, c.Last, c.Detail = r.ok, r.at.UTC().Format(timeFormat), r.detail
			if !r.ok {
				a.log.Warn("check fails", "check", c.Command, "detail", r.detail, "weight", c.Weight)
			}
		}
		if p := a.effectivePriority(); p != cfg.Priority {
			ec := cfg.ElectionConfig()
			ec.Priority = p
			if cfg.Detector == DetectorPhi {
				ec.Detector = detector.NewPhi(detector.DefaultPhiConfig(cfg.Heartbeat))
			}
			if a.machine, err = election.New(ec); err != nil {
				return err
			}
		}
	}

	// The address of the election socket and the interface of the group.
	ip := bind.Addr().Unmap()
	var ifi *net.Interface
	switch {
	case ip.IsUnspecified() && ip.Is6():
		return fmt.Errorf("bind %v: give an IPv6 agent its address (the IPv4 one is found by itself)", bind.Addr())
	case ip.IsLinkLocalUnicast() && ip.Is6():
		return fmt.Errorf("bind %v: link-local IPv6 addresses are not supported; use a global or unique-local (fd00::/8) address", bind.Addr())
	}
	if ip.IsUnspecified() {
		if ip, ifi, err = advertiseAddr(); err != nil {
			return err
		}
	} else {
		if ifi, err = interfaceOf(ip); err != nil {
			return fmt.Errorf("bind %v: %w", bind.Addr(), err)
		}
		if ifi == nil {
			return fmt.Errorf("bind %v: address not on this host (it has %s)", bind.Addr(), strings.Join(hostAddrs(), ", "))
		}
	}

	if cfg.HTTP != "" {
		if a.httpLn, err = net.Listen("tcp", cfg.HTTP); err != nil {
			return listenError("http", cfg.HTTP, err)
		}
	}

	var group netip.Addr
	if cfg.Transport == TransportMulticast {
		group = cfg.Group
		if !group.IsValid() {
			group = DefaultGroup4
			if !ip.Is4() {
				group = DefaultGroup6
			}
		}
	}
	if a.tr, err = openTransport(netip.AddrPortFrom(ip, uint16(cfg.ElectionPort)), group, ifi); err != nil {
		return err
	}

	a.del = &delegate{queue: newEventQueue()}
	a.setMeta()
	mc, err := memberlistConfig(cfg, bind, a.del, a.keys)
	if err != nil {
		return err
	}
	if bind.Addr().IsUnspecified() {
		mc.AdvertiseAddr = ip.String()
	}
	if a.ml, err = memberlist.Create(mc); err != nil {
		return memberlistError(bind, err)
	}
	if a.updateNode == nil {
		a.updateNode = a.ml.UpdateNode
	}
	ln := a.ml.LocalNode()
	gip, _ := netip.AddrFromSlice(ln.Addr)
	a.gossip = netip.AddrPortFrom(gip.Unmap(), ln.Port)

	a.epoch = time.Now()
	seeds := make([]string, len(cfg.Join))
	for i, s := range cfg.Join {
		seeds[i] = normalizeSeed(s, DefaultGossipPort)
	}
	a.joiner = &joiner{ml: a.ml, seeds: seeds, log: a.log, kick: make(chan []string, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	go a.joiner.run()

	a.readers.Add(1)
	go a.read(a.tr.uni)
	if a.tr.multi != nil {
		a.readers.Add(1)
		go a.read(a.tr.multi)
	}
	if a.httpLn != nil {
		a.http = a.newHTTPServer()
		go a.http.Serve(a.httpLn)
	}
	groupText := "none (unicast)"
	if group.IsValid() {
		groupText = a.tr.group.String()
	}
	a.log.Info("started",
		"node_id", cfg.NodeID, "priority", cfg.Priority, "cluster", cfg.Cluster,
		"gossip", a.gossip.String(), "election", a.tr.local.String(), "transport", cfg.Transport,
		"group", groupText, "http", a.HTTPAddr(), "heartbeat", cfg.Heartbeat, "suspect_after", cfg.SuspectAfter,
		"detector", cfg.Detector, "preempt", cfg.Preempt, "preempt_delay", cfg.PreemptDelay)
	if cfg.Quorum > 0 {
		ec := a.machine.Config()
		a.log.Info("quorum mode: this node leads only with a lease of a majority",
			"quorum", cfg.Quorum, "majority", cfg.Quorum/2+1, "lease", ec.Lease, "lease_margin", ec.LeaseMargin,
			"claim_wait", ec.ClaimWait, "voted_term", cfg.initialTerm, "state_file", cfg.StateFile)
		if cfg.StateFile == "" {
			a.log.Warn("quorum mode without --state-file: the votes of this node are lost when it restarts, so one term (the job's fencing token) could be given to two leaders, one after the other; leases still never overlap")
		}
	}
	if a.httpLn != nil {
		if ap, err := netip.ParseAddrPort(a.httpLn.Addr().String()); err == nil && !ap.Addr().IsLoopback() {
			a.log.Warn("the HTTP listener is reachable beyond this host: /status and /metrics are readable from the network", "http", a.HTTPAddr())
		}
	}
	a.running.Store(true)
	go a.run()
	go a.metaPusher()
	go a.syncer()
	if a.sup != nil {
		go a.sup.run()
	}
	if a.hooks != nil {
		go a.hooks.run()
	}
	if a.checks != nil {
		a.checks.report = func(r checkResult) { a.call(func() { a.onCheck(r) }) }
		a.checks.start()
	}
	return nil
}

// memberlistError names the problem of a failed memberlist start.
func memberlistError(bind netip.AddrPort, err error) error {
	s := err.Error()
	switch {
	case strings.Contains(s, "address already in use"):
		return fmt.Errorf("bind %v: gossip port already in use (another lanleader, consul or serf listens there)", bind)
	case strings.Contains(s, "cannot assign requested address"):
		return fmt.Errorf("bind %v: address not on this host", bind)
	}
	return fmt.Errorf("memberlist on %v: %s", bind, oneLine(err))
}

// setMeta publishes this node's metadata for memberlist. It runs on the
// loop (or before it starts).
func (a *Agent) setMeta() {
	b := meta{Proto: wire.Version, Algorithm: a.cfg.Algorithm, NodeID: a.cfg.NodeID,
		Priority: a.machine.Status().Self.Priority, Election: a.tr.local, Leaving: a.loop.leaving,
		Job: a.loop.jobRunning}.append(nil)
	a.del.meta.Store(&b)
}

// pushMeta has the metadata sent to the members now rather than at the
// next push-pull; it never blocks.
func (a *Agent) pushMeta() {
	select {
	case a.metaKick <- struct{}{}:
	default:
	}
}

// metaPusher broadcasts the metadata after each pushMeta, one broadcast
// at a time. memberlist's UpdateNode reads the metadata and then takes a
// new incarnation: two calls at once could give the older metadata the
// higher incarnation, and a stale "job running" would win everywhere. So
// the calls are serial, and each waits for its broadcast only
// metaPushWait (the alive message is queued for gossip either way, and a
// newer one replaces it in the queue): a change (a job that stopped) goes
// out at most metaPushWait after the one before it. A kick during a call
// is kept (the channel holds one), so the last change is always sent.
// Stop's own call (the leave) takes the same lock.
//
// Each change is broadcast again metaRepeats after it, with a new
// incarnation. memberlist's broadcast queue (v0.7.0) can drop a queued
// message: when a message replaces the only one in the queue, the queue
// restarts its ids while the new message keeps its own, and a later
// message of the same length that draws the same id takes its place
// (hashicorp/memberlist pull request 263, not merged). Alive messages of
// two members with names of one length are of one length, so the loss is
// real: a new leader waited 5 s for a "job stopped" that never came, in
// 6 of 34 runs of the job hand-over test. A repeat is a new message, lost
// only if it too draws a clashing id; a takeover does not rely on either
// (see jobWaitSyncEvery).
func (a *Agent) metaPusher() {
	repeat := time.NewTimer(time.Hour)
	repeat.Stop()
	defer repeat.Stop()
	var changed time.Time // when the change being repeated was first pushed
	left := 0             // repeats of it still due
	for {
		select {
		case <-a.quit:
			return
		case <-a.metaKick:
			changed, left = time.Now(), len(a.metaRepeats)
		case <-repeat.C:
			left--
		}
		a.metaMu.Lock()
		a.updateNode(metaPushWait)
		a.metaMu.Unlock()
		if left > 0 {
			repeat.Reset(time.Until(changed.Add(a.metaRepeats[len(a.metaRepeats)-left])))
		}
	}
}

// syncReq asks syncer for a state exchange with a member.
type syncReq struct{ name, addr string }

// syncer exchanges the membership state with a member when the loop asks
// (a takeover waiting for the previous leader's job: see
// jobWaitSyncEvery) and then tells the loop. memberlist's Join with a
// member's address is that exchange: both sides merge the other's view,
// the member's own entry included, and a newer entry comes to the loop as
// a membership update, queued before Join returns. A failed exchange is
// not reported: what the loop knows then is only what gossip brought.
func (a *Agent) syncer() {
	for {
		var r syncReq
		select {
		case <-a.quit:
			return
		case r = <-a.syncKick:
		}
		if _, err := a.ml.Join([]string{r.addr}); err != nil {
			a.log.Debug("state exchange failed", "name", r.name, "addr", r.addr, "err", oneLine(err))
			continue
		}
		a.call(func() { a.onSynced(r.name) })
	}
}

// metaPushWait bounds the wait for a metadata broadcast to go out.
const metaPushWait = 50 * time.Millisecond

// metaRepeats are the delays, from a metadata change, of its repeated
// broadcasts (see metaPusher): the first is about two of memberlist's
// gossip rounds (200 ms on a LAN), by when the first broadcast has gone
// out or been lost; the second is for a loss of the first repeat.
var metaRepeats = []time.Duration{500 * time.Millisecond, 2 * time.Second}

// GossipAddr is memberlist's address (after Start).
func (a *Agent) GossipAddr() netip.AddrPort { return a.gossip }

// ElectionAddr is the election socket's address (after Start).
func (a *Agent) ElectionAddr() netip.AddrPort { return a.tr.local }

// HTTPAddr is the HTTP listener's address, "" when it is off.
func (a *Agent) HTTPAddr() string {
	if a.httpLn == nil {
		return ""
	}
	return a.httpLn.Addr().String()
}

// Status returns the latest /status document.
func (a *Agent) Status() Status {
	if s := a.snap.Load(); s != nil {
		return *s
	}
	return Status{Name: a.cfg.Name, NodeID: a.cfg.NodeID, Priority: a.cfg.Priority, BasePriority: a.cfg.Priority, State: "starting",
		Algorithm: a.cfg.Algorithm, Cluster: a.cfg.Cluster, Transport: a.cfg.Transport, Version: a.cfg.Version, Members: []Member{}}
}

// Done is closed when the event loop has ended.
func (a *Agent) Done() <-chan struct{} { return a.loopDone }

// Resign asks a leader to hand over: its job stops (SIGTERM, SIGKILL
// after JobGrace), then it sends RESIGN and stays out of elections for its
// hold-off (at least PreemptDelay). It reports whether this node was
// leading; it returns at once, before the job has stopped.
func (a *Agent) Resign() bool {
	led, _ := a.resign()
	return led
}

// resign is Resign that also returns the term of the leadership it
// resigns, read in the same turn of the loop: by the time a caller could
// read the status, the next leader's claim may have moved the term on.
func (a *Agent) resign() (led bool, term uint64) {
	a.call(func() {
		term = a.machine.Status().Term
		led = a.beginResign("asked")
	})
	return led, term
}

// Job is the job's status, nil without a job.
func (a *Agent) Job() *JobStatus {
	if a.sup == nil {
		return nil
	}
	return a.sup.status.Load()
}

// Stop ends the agent gracefully: a leader sends RESIGN, the node leaves
// memberlist (so that the others need not detect its death), and every
// socket and goroutine is closed. It returns when all is closed or ctx
// ends. Before a successful Start it does nothing.
func (a *Agent) Stop(ctx context.Context) error {
	if !a.running.Load() {
		return nil
	}
	var err error
	a.stopOnce.Do(func() {
		a.notify.send("STOPPING=1")
		// The job stops first, before RESIGN: the next leader starts its
		// job at once, and must not find ours still running.
		if a.sup != nil {
			a.call(func() {
				a.loop.haltJob = true
				a.updateJob()
			})
			close(a.sup.quit)
			select {
			case <-a.sup.done:
			case <-ctx.Done():
				a.log.Error("the job did not stop in time: SIGKILL", "err", ctx.Err())
				a.sup.kill()
			}
		}
		a.call(func() {
			if a.machine.Status().State == election.StateLeader {
				a.step(a.now(), election.Event{Kind: election.EvResign})
			}
			a.loop.leaving = true
			// Tell the others this is a leave, not a failure.
			a.setMeta()
			a.log.Info("leaving")
		})
		timeout := DefaultLeaveTimeout
		if d, ok := ctx.Deadline(); ok {
			timeout = min(timeout, time.Until(d))
		}
		if a.ml.NumMembers() > 1 {
			// Not beside a push of metaPusher: UpdateNode is not safe
			// to call twice at once.
			a.metaMu.Lock()
			a.ml.UpdateNode(timeout / 4)
			a.metaMu.Unlock()
		}
		if lerr := a.ml.Leave(timeout); lerr != nil {
			err = fmt.Errorf("leave: %w", lerr)
		}
		a.shutdown(ctx)
	})
	return err
}

// KillJob kills the job's process group at once (SIGKILL): for an exit
// that cannot wait for a graceful stop.
func (a *Agent) KillJob() {
	if a.sup != nil {
		a.sup.kill()
	}
}

// Crash ends the agent as a crash would: no RESIGN, no leave; its sockets
// simply close. For tests and the demo. Before a successful Start it does
// nothing.
func (a *Agent) Crash() {
	if !a.running.Load() {
		return
	}
	a.stopOnce.Do(func() {
		// A crashed agent's job dies with it (its guard's parent-death
		// signal); in one process, kill it.
		a.KillJob()
		a.shutdown(context.Background())
	})
}

// Failed is closed when the agent cannot go on (its election socket
// fails); Err says why. The caller should Stop it.
func (a *Agent) Failed() <-chan struct{} { return a.failed }

// Err is why the agent failed, nil before it did.
func (a *Agent) Err() error {
	select {
	case <-a.failed:
		return a.failErr
	default:
		return nil
	}
}

func (a *Agent) fail(err error) {
	a.failOnce.Do(func() {
		a.failErr = err
		close(a.failed)
	})
}

func (a *Agent) shutdown(ctx context.Context) {
	if a.checks != nil {
		a.checks.stop()
	}
	if a.sup != nil {
		select {
		case <-a.sup.quit:
		default:
			close(a.sup.quit)
		}
	}
	close(a.quit)
	<-a.loopDone
	if a.sup != nil {
		<-a.sup.done
	}
	if a.hooks != nil {
		// The hooks queued by the last changes (a leader's on_follower)
		// still run, each within its timeout.
		close(a.hooks.quit)
		t := time.NewTimer(a.cfg.HookTimeout + time.Second)
		select {
		case <-a.hooks.done:
		case <-t.C:
			a.log.Warn("hooks still queued at exit are not run")
		}
		t.Stop()
	}
	a.closeAll()
	if a.http != nil {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		a.http.Shutdown(sctx)
		cancel()
	}
	a.readers.Wait()
	if a.joiner != nil {
		// A join under way may wait for a TCP timeout; ctx bounds it.
		select {
		case <-a.joiner.done:
		case <-ctx.Done():
		}
	}
}

// closeAll closes whatever Start opened (some may be nil after a failed
// Start).
func (a *Agent) closeAll() {
	if a.joiner != nil {
		select {
		case <-a.joiner.stop:
		default:
			close(a.joiner.stop)
		}
	}
	if a.ml != nil {
		a.ml.Shutdown()
	}
	if a.tr != nil {
		a.tr.close()
	}
	if a.httpLn != nil && a.http == nil {
		a.httpLn.Close()
	}
}

// call runs f on the event loop and waits for it; after the loop ended it
// does nothing.
func (a *Agent) call(f func()) {
	done := make(chan struct{})
	select {
	case a.cmds <- func() { f(); close(done) }:
		<-done
	case <-a.loopDone:
	}
}

// now is the agent's monotonic clock.
func (a *Agent) now() time.Duration { return time.Since(a.epoch) }

// read is a socket's reader goroutine: it drops what is not for this
// cluster's election (counting why) and hands the rest to the loop.
func (a *Agent) read(c pconn) {
	defer a.readers.Done()
	buf := make([]byte, readBuffer)
	failures := 0
	var macs []*wire.MAC // this goroutine's own
	if a.keys != nil {
		macs = a.keys.macs()
	}
	for {
		n, ttl, src, err := c.readFrom(buf)
		at := a.now()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Errors such as an ICMP error reported on the socket are
			// passing; a socket that only fails is fatal.
			if failures++; failures >= maxReadFailures {
				a.log.Error("election socket keeps failing", "err", err)
				a.fail(fmt.Errorf("election socket: %d reads failed in a row, the last: %w", failures, err))
				return
			}
			a.log.Debug("election socket read", "err", err)
			continue
		}
		failures = 0
		var p packet
		if ua, ok := src.(*net.UDPAddr); ok {
			ap := ua.AddrPort()
			p.src = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		}
		reason, why := a.accept(buf[:n], ttl, &p.msg, macs, at)
		if why != "" && a.authLog.due() {
			a.log.Warn("dropped an election packet that is not authenticated with this cluster's key (one line per 10s at most; lanleader_packets_dropped_total{reason=\"auth\"} counts them)",
				"from", p.src.String(), "node_id", p.msg.From, "why", why)
		}
		if reason == "" && p.msg.Type == wire.TypeDiscover && p.msg.Addr.Addr() != p.src.Addr() {
			// A beacon announces its sender's own gossip address, never
			// another host's: an agent must not be made to connect
			// anywhere else.
			reason = "addr"
		}
		if reason != "" {
			a.met.PacketsDropped.WithLabelValues(reason).Inc()
			// Another node with this node's node_id (at another address:
			// not a late packet of our own) is evidence of a conflict.
			if reason != "conflict" || p.src == a.tr.local {
				continue
			}
			p.conflict = true
		} else {
			a.met.MessagesReceived.WithLabelValues(p.msg.Type.String()).Inc()
		}
		p.at = at
		select {
		case a.pkts <- p:
		case <-a.quit:
			return
		}
	}
}

// maxReadFailures is how many reads in a row may fail before the
// election socket is declared broken.
const maxReadFailures = 1000

// accept decodes b into m and returns why it must be dropped, or "". With
// "auth" it also says why in words, for the log. The order of the checks
// is the order of their cost: the TTL, the header and body (no allocation),
// the cluster, then the tag (an HMAC), then the replay window. A packet
// with this node's node_id is evidence of a conflict only once its tag
// verifies: a forged one must not take this node out of the election.
func (a *Agent) accept(b []byte, ttl int, m *wire.Message, macs []*wire.MAC, at time.Duration) (reason, why string) {
	if ttl >= 0 && ttl < LinkLocalTTL {
		return "ttl", ""
	}
	msg, tag := wire.Split(b)
	if err := wire.Decode(msg, m); err != nil {
		return decodeReason(err), ""
	}
	if m.Cluster != a.cluster {
		return "cluster", ""
	}
	switch {
	case a.keys == nil && m.Flags&wire.FlagAuth != 0:
		return "auth", "the sender signs its packets (it has a --key-file) and this agent has no key: give every agent the same --key-file"
	case a.keys == nil:
	case tag == nil:
		return "auth", "the packet has no tag: the sender runs without --key-file"
	case !verify(macs, msg, tag):
		return "auth", "the tag does not verify: the sender has another --key-file, or the packet is forged"
	}
	if m.From == a.cfg.NodeID {
		if m.Incarnation == a.inc.Load() {
			return "self", ""
		}
		return "conflict", ""
	}
	if a.replay != nil && !a.replay.check(m.From, m.Incarnation, m.Seq, at) {
		return "replay", ""
	}
	return "", ""
}

func decodeReason(err error) string {
	switch {
	case errors.Is(err, wire.ErrShort):
		return "short"
	case errors.Is(err, wire.ErrBadMagic):
		return "magic"
	case errors.Is(err, wire.ErrUnknownVersion):
		return "version"
	case errors.Is(err, wire.ErrUnknownType):
		return "type"
	case errors.Is(err, wire.ErrTrailing):
		return "trailing"
	}
	return "length"
}
