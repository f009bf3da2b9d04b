// Package lead is the part of the agent that decides what a leadership
// means for the operator: when the job runs (the supervisor's want), the
// hooks of a change, the waits of a takeover (--takeover-wait, and the
// previous leader's job when it was alive a moment ago), the penalty of a
// job that fails too often, the resign that hands the leadership over
// after the job has stopped, and in quorum mode the lease the job's guard
// enforces.
//
// It is told of the election machine's changes by the driver, which
// keeps the machine, the sockets and membership; what it needs of them,
// and of the other concerns (the addresses, the links, the metadata, the
// priority and the standby), comes through Driver, a set of callbacks
// given at New. Its deadlines are the part's Next and Due.
package lead

import (
	"time"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/agent/part"
	"github.com/lanleader/lanleader/election"
)

// JobWaitMargin is added to the job grace for the longest wait of a node
// that took the leadership over from a live leader, for that leader's job
// to stop: the old leader kills its job by the end of its grace period
// (its own --job-grace, which its metadata carries: GraceOf) and then
// says so in its metadata, which gossip spreads within a few hundred
// milliseconds.
const JobWaitMargin = 2 * time.Second

// jobWaitSyncEvery: while a new leader waits for the previous leader's
// job to stop, it exchanges state with that member (memberlist's
// push-pull, over TCP) at once and then this often. The previous
// leader's "job stopped" normally comes by gossip within a gossip round
// (200 ms), but memberlist's broadcast queue can drop it, and then only
// the next periodic push-pull, up to 30 s later, would carry it; its
// "job started" may not have come yet when the wait begins. The exchange
// reads the member's own current metadata.
const jobWaitSyncEvery = 500 * time.Millisecond

// Member is what the part reads of a member of the cluster (another
// node), from membership and the member's metadata.
type Member struct {
	Name   string // memberlist's name
	NodeID uint64
	Alive  bool // alive or suspect
	MetaOK bool // its metadata was read; the fields below come from it
	Job    bool // its job runs
	// Grace is its --job-grace; HasGrace is false for an agent whose
	// metadata does not say it (an older one).
	Grace    time.Duration
	HasGrace bool
}

// Driver is what the part needs of the driver and of the other
// concerns. Every callback runs on the event loop and must not block.
type Driver struct {
	// Status is the election machine's status now.
	Status func() election.Status
	// Leaving: a graceful stop is under way; the election is over for
	// this node.
	Leaving func() bool
	// Members are the members now; Member is one by name, false when
	// membership does not list it.
	Members func() []Member
	Member  func(name string) (Member, bool)
	// Sync starts a state exchange with the member name, unless one is
	// under way.
	Sync func(name string)
	// Resign steps the machine's RESIGN.
	Resign func()
	// The virtual addresses: VIPsReady says they are held (the job
	// starts only then), VIPHeld that this leadership took them,
	// AcquireVIPs takes them again, ReleaseVIPs lets them go,
	// UpdateVIPs follows the leadership.
	VIPsReady   func() bool
	VIPHeld     func() bool
	AcquireVIPs func()
	ReleaseVIPs func(why string)
	UpdateVIPs  func()
	// LinksGone: the election interface lost its carrier, and the node
	// stepped down for it.
	LinksGone func() bool
	// PushMeta gossips the node's metadata anew (its job runs or not,
	// its grace).
	PushMeta func()
	// ApplyPriority and ApplyStandby judge the priority and the standby
	// again (the penalty changed; a resign for a standby ended).
	ApplyPriority func()
	ApplyStandby  func()
	// CountHook counts a hook's run by its outcome.
	CountHook func(hook, outcome string)
}

// Lead is the part. Every method runs on the event loop.
type Lead struct {
	host part.Host
	d    Driver
	sup  *proc.Supervisor // nil without a job
	cfg  config.Config    // the running settings this part reads

	wantRun    bool
	gen        uint64
	jobRunning bool // the supervisor reported a process (until its group is gone)
	haltJob    bool // a graceful stop: the job must stop for good
	resigning  bool // a resign waits for the job to stop
	resignWhy  string
	// leaderLost: the machine reported no leader (a suspicion, a RESIGN)
	// since its status last named one (LeadershipChanged); set and
	// cleared in the order of a step's actions (Follow), even within the
	// step that elects the next leader.
	leaderLost bool
	// steppedDown (quorum mode): this node stopped leading within the
	// step being handled (its lease ran out), until EndStep.
	steppedDown bool

	// lostToResign: the leader lost since the status last named one was
	// lost to its RESIGN (its job stopped before it resigned).
	lostToResign bool
	// takeoverUntil: Config.TakeoverWait, the job waits until then (0:
	// no wait).
	takeoverUntil time.Duration

	// jobWait is the member whose job must stop before ours starts (a
	// takeover from a live leader), until jobWaitUntil.
	jobWait      string
	jobWaitUntil time.Duration
	jobWaitMax   time.Duration // how long it may last
	jobWaitSync  time.Duration // the next state exchange with jobWait's member
	// formerLeader is the leader this node's status last named (one it
	// followed or was, or a claim it noted as a candidate), 0 before the
	// first: the one a leadership without a hand-over follows.
	formerLeader uint64

	penaltyUntil time.Duration // the job failed too often: priority 1 until then
	penalised    bool

	followed  bool // this node followed a leader (or led) since it started
	awaitJoin bool // Config.JoinBeforeLead: no member has joined yet

	hooks      hookRunner
	ran, ended latch // the first start and the first end of the job in job mode once

	leaseMono int64  // quorum mode: the lease given to the job's guard, CLOCK_MONOTONIC ns; 0: none
	leaseGen  uint64 // the job's generation that lease is for
}

// New is the part for cfg's job and hooks; sup is the job's supervisor,
// nil without a job.
func New(h part.Host, cfg *config.Config, sup *proc.Supervisor, d Driver) *Lead {
	p := &Lead{host: h, d: d, sup: sup, cfg: *cfg, ran: newLatch(), ended: newLatch()}
	if cfg.OnLeader != "" || cfg.OnFollower != "" || cfg.OnChange != "" {
		p.hooks.run = p.newHookRunner()
	}
	return p
}

// Changed: the part reads the machine's status itself when the driver
// tells it of a change (LeadershipChanged).
func (p *Lead) Changed(*part.View) {}

// Close: the driver stops the supervisor, and the hooks (StopHooks).
func (p *Lead) Close() {}

// Next is the earliest of the waits' deadlines: a takeover's, the
// previous leader's job and the next state exchange with it, the
// penalty's end.
func (p *Lead) Next() (at time.Duration, ok bool) {
	earliest := func(d time.Duration) {
		if !ok || d < at {
			at, ok = d, true
		}
	}
	if p.jobWait != "" {
		earliest(p.jobWaitUntil)
		earliest(p.jobWaitSync)
	}
	if p.penalised {
		earliest(p.penaltyUntil)
	}
	if p.takeoverUntil != 0 {
		earliest(p.takeoverUntil)
	}
	return at, ok
}

// Due ends the waits whose time came, and exchanges state with the
// member a takeover waits for when that is due.
func (p *Lead) Due(now time.Duration) {
	p.syncWait(now)
	log := p.host.Log()
	if p.jobWait != "" && now >= p.jobWaitUntil {
		log.Warn("the previous leader's job is still reported running: starting ours anyway", "previous", p.jobWait,
			"waited", p.jobWaitMax)
		p.jobWait = ""
		p.updateJob()
	}
	if p.takeoverUntil != 0 && now >= p.takeoverUntil {
		p.takeoverUntil = 0
		log.Info("takeover wait over: starting the job")
		p.updateJob()
	}
	if p.penalised && now >= p.penaltyUntil {
		p.penalised = false
		log.Info("job penalty over: priority restored")
		p.d.ApplyPriority()
	}
}

// Reload takes a reload's settings of the hooks (a new timeout needs a
// new runner) and of the job's limits; it returns the names of those
// that changed, in the order a reload reports them.
func (p *Lead) Reload(old, cfg *config.Config) (applied []string) {
	for _, s := range []struct {
		name    string
		changed bool
	}{
		{"on-leader", old.OnLeader != cfg.OnLeader}, {"on-follower", old.OnFollower != cfg.OnFollower},
		{"on-change", old.OnChange != cfg.OnChange}, {"hook-timeout", old.HookTimeout != cfg.HookTimeout},
		{"job-grace", old.JobGrace != cfg.JobGrace}, {"job-max-failures", old.JobMaxFailures != cfg.JobMaxFailures},
		{"job-failure-window", old.JobFailureWindow != cfg.JobFailureWindow},
	} {
		if s.changed {
			applied = append(applied, s.name)
		}
	}
	c := &p.cfg
	c.OnLeader, c.OnFollower, c.OnChange, c.HookTimeout = cfg.OnLeader, cfg.OnFollower, cfg.OnChange, cfg.HookTimeout
	c.JobGrace, c.JobMaxFailures, c.JobFailureWindow = cfg.JobGrace, cfg.JobMaxFailures, cfg.JobFailureWindow
	p.replaceHooks(old.HookTimeout != cfg.HookTimeout)
	if p.sup != nil {
		p.sup.SetLimits(proc.Limits{Grace: cfg.JobGrace, MaxFailures: cfg.JobMaxFailures, FailureWindow: cfg.JobFailureWindow})
	}
	if old.JobGrace != cfg.JobGrace {
		// The members' takeovers wait out the grace the metadata says.
		p.d.PushMeta()
	}
	return applied
}

// JobWanted says whether the supervisor was last asked to run the job.
func (p *Lead) JobWanted() bool { return p.wantRun }

// JobRunning says whether the supervisor reported a process of the job
// (until its group is gone): what the node's metadata says.
func (p *Lead) JobRunning() bool { return p.jobRunning }

// Penalised says whether the job failed too often lately: the priority
// is 1 until Penalty's end.
func (p *Lead) Penalised() bool { return p.penalised }

// Penalty is the end of the penalty on the Host's clock, ok false
// without one.
func (p *Lead) Penalty() (until time.Duration, ok bool) { return p.penaltyUntil, p.penalised }

// Waiting says whether the job waits for a takeover (its wait, or the
// previous leader's job).
func (p *Lead) Waiting() bool { return p.jobWait != "" || p.takeoverUntil != 0 }

// JobWait is the member whose job ours waits for ("" for none), until
// when and how long that wait may last in all.
func (p *Lead) JobWait() (name string, until, most time.Duration) {
	return p.jobWait, p.jobWaitUntil, p.jobWaitMax
}

// LeaderLost says whether the machine reported no leader since its
// status last named one.
func (p *Lead) LeaderLost() bool { return p.leaderLost }
