package agent

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/auth"
	"github.com/lanleader/lanleader/agent/internal/gossip"
	"github.com/lanleader/lanleader/agent/internal/loglimit"
	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/agent/internal/udp"
	"github.com/lanleader/lanleader/agent/part"
	"github.com/lanleader/lanleader/agent/part/checks"
	"github.com/lanleader/lanleader/agent/part/lead"
	"github.com/lanleader/lanleader/agent/part/links"
	"github.com/lanleader/lanleader/agent/part/sdnotify"
	"github.com/lanleader/lanleader/agent/part/trackfile"
	"github.com/lanleader/lanleader/agent/part/vips"
	"github.com/lanleader/lanleader/detector"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/metrics"
	"github.com/lanleader/lanleader/wire"
)

// Agent is one running lanleader agent. Create it with New, then Start it;
// end it with Stop (graceful) or Crash (tests and the demo).
type Agent struct {
	cfg Config
	// initialTerm is the voted term read from StateFile by New.
	initialTerm uint64
	seams       seams
	cfgMu       sync.RWMutex // a reload changes cfg on the loop (reload.go): Config reads it under it
	log         *slog.Logger
	epoch       time.Time // the agent's clock is time.Since(epoch): monotonic
	cluster     uint32
	sent        auth.Sent // this node's latest packets, to tell a replay of them from a clone's
	// inc is the incarnation: the Unix second of the start (see package auth),
	// +1 at each wrap of the sequence. Two hosts cloned from one image and
	// started in the same second have the same one, and that is kept so:
	// what tells their packets apart is the source address
	// (ident.Classify), which two live sockets never share. A random part
	// would not fit beside the second in 32 bits without breaking the
	// replay windows' ordering: a restart within the same second could
	// draw a smaller incarnation than its previous run and be dropped as
	// a replay for auth.ReplayForget; with the second alone it continues in the
	// same window, above it by auth.StartSeq.
	inc atomic.Uint32

	auth struct {
		keys   *auth.Keys        // nil without a key
		replay *auth.ReplayGuard // nil without a key
		log    auth.Log
	}

	machine election.Machine
	tr      *udp.Transport
	ml      *memberlist.Memberlist
	del     *delegate
	joiner  *gossip.Joiner
	// beforeJoin, when set (tests, before Start), runs before each join
	// of an address.
	beforeJoin func(addr string)
	reg        *prometheus.Registry
	met        *metrics.Metrics
	web        struct {
		srv *http.Server
		ln  net.Listener
	}
	gossip netip.AddrPort // memberlist's advertised address

	pkts     chan packet
	cmds     chan func()
	quit     chan struct{} // closed: the loop ends
	loopDone chan struct{}
	readers  sync.WaitGroup
	stopOnce sync.Once
	started  atomic.Bool // Start was called
	running  atomic.Bool // Start succeeded: the loop runs until Stop or Crash

	failure failure // the agent cannot go on

	snap atomic.Pointer[Status]
	view atomic.Pointer[metrics.View]

	procs  procs          // the child processes (package proc)
	notice *proc.Notifier // the notice guard (notice.go), nil without one
	notify *sdnotify.Notifier
	track  *trackfile.Watcher // the track files
	checks *checks.Checks     // the health checks
	lead   *lead.Lead         // the job and leadership policy
	// parts are the concerns the loop drives through package part's
	// interface, in the order they are told of a change.
	parts    []part.Part
	rt       atomic.Bool  // with Realtime: the agent's threads are SCHED_FIFO
	metaPush metaPush     // the metadata broadcasts (gossip.go)
	syncKick chan syncReq // capacity 1: exchange state with this member now
	vips     *vips.VIPs   // the virtual addresses
	links    *links.Links // the carrier of the interfaces tracked

	loop loopState // owned by the event loop goroutine
}

// Config is the configuration of one agent: package config has the
// settings, their defaults and their validation.
type Config = config.Config

// Check is one health check (Config.Checks).
type Check = config.Check

// seams replace what the agent reaches of the host, for the tests.
type seams struct {
	jobSystemd jobSystemd    // the D-Bus connection to systemd for the job unit
	vipDrv     *vips.Driver  // what adds, removes and probes the addresses
	linkWatch  links.Watcher // the carrier's watch of the interfaces
	// conflictMemory replaces the constant of that name in tests that
	// watch a conflict outlive it (0: the constant).
	conflictMemory time.Duration
	// saveVote replaces the state file's write of the voted term (tests
	// that watch when it comes); nil: statefile.Save.
	saveVote func(a *Agent, path string, term uint64) error
}

// New checks cfg and returns an agent that has opened nothing yet. It
// takes cfg as it is: start from DefaultConfig.
func New(cfg Config) (*Agent, error) { return newAgent(cfg, seams{}) }

// newAgent is New with the host's parts replaced where seams says.
func newAgent(cfg Config, sm seams) (*Agent, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var initialTerm uint64
	if cfg.Quorum > 0 && cfg.StateFile != "" {
		t, err := LoadVotedTerm(cfg.StateFile)
		if err != nil {
			return nil, err
		}
		initialTerm = t
	}
	m, err := newMachine(&cfg, cfg.Priority, initialTerm)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	a := &Agent{
		cfg:         cfg,
		initialTerm: initialTerm,
		seams:       sm,
		log:         cfg.Logger.With("node", cfg.Name),
		cluster:     wire.ClusterID(cfg.Cluster),
		machine:     m,
		reg:         prometheus.NewRegistry(),
		pkts:        make(chan packet, 256),
		cmds:        make(chan func()),
		quit:        make(chan struct{}),
		loopDone:    make(chan struct{}),
		failure:     failure{ch: make(chan struct{})},
	}
	a.auth.keys = auth.NewKeys(cfg.Key, cfg.AcceptKeys)
	a.inc.Store(uint32(started.Unix()))
	a.initLoop(started, initialTerm)
	a.view.Store(&metrics.View{State: election.StateStarting.String(), Members: map[string]int{}, Priority: cfg.Priority})
	a.met = metrics.New(a.reg, cfg.Version, func() metrics.View { return *a.view.Load() })
	a.metaPush.kick = make(chan struct{}, 1)
	a.syncKick = make(chan syncReq, 1)
	a.metaPush.repeats = metaRepeats
	a.newConcerns(sm)
	return a, nil
}

// initLoop gives the loop's state its maps, its first sequence number,
// the voted term read from the state file and the signing key's MAC.
func (a *Agent) initLoop(started time.Time, initialTerm uint64) {
	l := &a.loop
	l.members = make(map[string]*member)
	l.savedTerm = initialTerm
	l.seq = auth.StartSeq(started)
	if a.auth.keys != nil {
		a.auth.replay = auth.NewReplayGuard()
		l.mac = wire.NewMAC(a.auth.keys.Election[0])
	}
	l.peers = make(map[uint64]peer)
	l.kicked = make(map[string]kick)
	l.outsiders = make(map[uint64]bool)
	l.conflictLog = loglimit.New(gossip.ConflictLogEvery)
	l.listed = make(map[uint64]bool)
	l.evidence = make(map[string]time.Duration)
	l.clones = make(map[netip.AddrPort]time.Duration)
	l.fanned = make(map[uint64]bool)
}

// newConcerns builds what the agent runs around the election: the job's
// and the hooks' runners, the addresses and the links (what seams does
// not replace is the host's), and the parts.
func (a *Agent) newConcerns(sm seams) {
	cfg := &a.cfg
	a.procs.systemd = newJobSystemd(cfg, sm.jobSystemd)
	if len(cfg.Job) > 0 || cfg.JobUnit != "" {
		a.procs.sup = newSupervisor(a)
	}
	a.procs.dirty = make(chan struct{}, 1)
	h := loopHost{a}
	watch := links.System
	if sm.linkWatch != nil {
		watch = sm.linkWatch
	}
	a.links = links.New(h, watch, a.machine.Config().StartupWait, a.applyStandby)
	a.notify = sdnotify.New(h)
	a.track = trackfile.New(h, cfg.TrackFiles, trackfile.Every, a.quit, a.applyStandby)
	a.checks = checks.New(h, a.met, proc.ShellChecks(proc.HookEnv(cfg.NodeID, cfg.Name, "starting", 0, 0)), a.onChecks)
	a.vips = a.newVIPs(h, sm.vipDrv)
	a.lead = a.newLead()
	a.parts = []part.Part{a.lead, a.notify, a.track, a.checks, a.links, a.vips}
}

// newMachine builds the election machine of cfg with priority p (the
// configured priority, or the one the health checks give), from the term
// this node voted in last.
func newMachine(cfg *Config, p uint16, initialTerm uint64) (election.Machine, error) {
	ec := cfg.ElectionConfig()
	ec.Priority, ec.InitialTerm = p, initialTerm
	if cfg.Detector == config.DetectorPhi {
		ec.Detector = detector.NewPhi(phiConfig(ec))
	}
	return election.New(ec)
}

// phiConfig is --detector phi's configuration for the election's config
// ec: threshold 1.64 (detector.ConfirmedPhiConfig, 1.5 heartbeats on a
// quiet network, as the fixed detector's SuspectAfter) where the alarm is
// confirmed before anyone elects and nothing else holds the failover
// back; Akka's 8 (2.31 heartbeats) in quorum mode, whose failover waits
// for the lease whenever the alarm rings, as the fixed detector keeps
// three heartbeats there.
func phiConfig(ec election.Config) detector.PhiConfig {
	if ec.ConfirmSuspicion && ec.Quorum == 0 {
		return detector.ConfirmedPhiConfig(ec.HeartbeatInterval)
	}
	return detector.DefaultPhiConfig(ec.HeartbeatInterval)
}

// Config returns the agent's configuration, defaults filled in, as the
// last reload left it.
func (a *Agent) Config() Config {
	a.cfgMu.RLock()
	defer a.cfgMu.RUnlock()
	return a.cfg
}

// Registry is the agent's own Prometheus registry (served at /metrics).
func (a *Agent) Registry() *prometheus.Registry { return a.reg }

// Start opens the sockets (HTTP, election, memberlist), starts joining in
// the background and runs the event loop. An error names what could not
// be opened and why; nothing is left open or running after one.
func (a *Agent) Start() (err error) {
	if a.started.Swap(true) {
		return errors.New("agent: started twice")
	}
	bind, err := a.cfg.BindAddrPort()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			a.closeAll()
			close(a.loopDone) // the loop never ran
		}
	}()
	if err := a.checkJobUnit(); err != nil {
		return err
	}
	if err := a.firstChecks(); err != nil {
		return err
	}
	ip, ifi, err := udp.ElectionAddr(bind)
	if errors.Is(err, udp.ErrNotOnHost) {
		return notReady(err)
	} else if err != nil {
		return err
	}
	// Before joining: the addresses an earlier run left go first.
	if err := a.startVIPs(ip, ifi); err != nil {
		return err
	}
	// Every link's state is known before the first election.
	if err := a.watchLinks(ifi.Name); err != nil {
		return err
	}
	if err := a.openSockets(ip, ifi); err != nil {
		return err
	}
	if err := a.startMemberlist(bind, ip); err != nil {
		return err
	}
	a.startNotifier(ifi.Name)
	// The addresses' keeper holds the notice guard's pipe: after a crash
	// the NOTICE goes out once they are gone.
	a.vips.Keep()
	a.epoch = time.Now()
	a.startJoiner()
	a.logStart()
	a.startWorkers()
	return nil
}

// logStart logs the settings the agent started with, and warns of the
// risky ones.
func (a *Agent) logStart() {
	cfg := &a.cfg
	groupText := "none (unicast)"
	if a.tr.Group.IsValid() {
		groupText = a.tr.Group.String()
	}
	a.log.Info("started",
		"node_id", cfg.NodeID, "priority", cfg.Priority, "cluster", cfg.Cluster,
		"gossip", a.gossip.String(), "election", a.tr.Local.String(), "transport", cfg.Transport,
		"group", groupText, "http", a.HTTPAddr(), "heartbeat", cfg.Heartbeat, "suspect_after", cfg.SuspectAfter,
		"detector", cfg.Detector, "preempt", cfg.Preempt, "preempt_delay", cfg.PreemptDelay, "role", cfg.Role)
	for _, w := range cfg.RoleWarnings() {
		a.log.Warn(w)
	}
	if len(a.vips.Addrs()) > 0 {
		a.log.Info("virtual addresses, held while this node leads", "vips", a.vips.List(),
			"announce_repeat", cfg.VIPAnnounceRepeat, "announce_interval", cfg.VIPAnnounceInterval,
			"announce_delay", cfg.VIPAnnounceDelay, "announce_refresh", cfg.VIPAnnounceRefresh, "track_link", cfg.VIPTrackLink)
	}
	if cfg.Quorum > 0 {
		ec := a.machine.Config()
		a.log.Info("quorum mode: this node leads only with a lease of a majority",
			"quorum", cfg.Quorum, "majority", cfg.Quorum/2+1, "lease", ec.Lease, "lease_margin", ec.LeaseMargin,
			"claim_wait", ec.ClaimWait, "voted_term", a.initialTerm, "state_file", cfg.StateFile)
		if cfg.StateFile == "" {
			a.log.Warn("quorum mode without --state-file: the votes of this node are lost when it restarts, so one term (the job's fencing token) could be given to two leaders, one after the other; leases still never overlap")
		}
	}
	if a.web.ln != nil {
		if ap, err := netip.ParseAddrPort(a.web.ln.Addr().String()); err == nil && !ap.Addr().IsLoopback() {
			a.log.Warn("the HTTP listener is reachable beyond this host: /status and /metrics are readable from the network", "http", a.HTTPAddr())
		}
	}
}

// startWorkers starts the goroutines: the socket readers, the HTTP
// server, the event loop, the metadata pusher, the syncer, and the job's,
// hooks' and checks' runners.
func (a *Agent) startWorkers() {
	a.readers.Add(1)
	go a.read(a.tr.Uni)
	if a.tr.Multi != nil {
		a.readers.Add(1)
		go a.read(a.tr.Multi)
	}
	if a.web.ln != nil {
		a.web.srv = a.newHTTPServer()
		go a.web.srv.Serve(a.web.ln)
	}
	a.running.Store(true)
	go a.run()
	go a.metaPusher()
	go a.syncer()
	if a.procs.sup != nil {
		go a.procs.sup.Run()
	}
	a.lead.Start()
	a.checks.Start()
	a.track.Start()
}

// GossipAddr is memberlist's address (after Start).
func (a *Agent) GossipAddr() netip.AddrPort { return a.gossip }

// ElectionAddr is the election socket's address (after Start).
func (a *Agent) ElectionAddr() netip.AddrPort { return a.tr.Local }

// HTTPAddr is the HTTP listener's address, "" when it is off.
func (a *Agent) HTTPAddr() string {
	if a.web.ln == nil {
		return ""
	}
	return a.web.ln.Addr().String()
}

// Done is closed when the event loop has ended.
func (a *Agent) Done() <-chan struct{} { return a.loopDone }

// Resign asks a leader to hand over: its job stops (SIGTERM, SIGKILL
// after JobGrace), then it sends RESIGN and stays out of elections for its
// hold-off (at least PreemptDelay). It reports whether this node was
// leading; it returns at once, before the job has stopped.
func (a *Agent) Resign() bool {
	led, _, _ := a.resign()
	return led
}

// resign is Resign that also returns the term of the leadership it
// resigns and the hold-off, read in the same turn of the loop: by the
// time a caller could read the status, the next leader's claim may have
// moved the term on.
func (a *Agent) resign() (led bool, term uint64, holdOff time.Duration) {
	a.call(func() {
		term = a.machine.Status().Term
		led = a.beginResign("asked")
		// Read on the loop: a reload may change the machine's config.
		holdOff = a.machine.Config().ResignHoldoff
	})
	return led, term, holdOff
}

// Job is the job's status, nil without a job.
func (a *Agent) Job() *JobStatus {
	if a.procs.sup == nil {
		return nil
	}
	return a.procs.sup.Status()
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
