package agent

import (
	"github.com/lanleader/lanleader/agent/part/majority"
	"log/slog"
	"net/netip"
	"time"

	"github.com/lanleader/lanleader/agent/internal/loglimit"
	"github.com/lanleader/lanleader/agent/internal/realtime"
	"github.com/lanleader/lanleader/agent/part/sdnotify"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

// loopState is everything only the event loop goroutine touches.
type loopState struct {
	members map[string]*member // by memberlist name, other than this node
	peers   map[uint64]peer    // who spoke to us, by node_id: the source of its last packet
	kicked  map[string]kick    // beacon address → when it was last joined, and which process
	// outsiders: node_ids of live members whose metadata keeps them out of
	// elections (another algorithm, a bad election address): their
	// election packets are dropped.
	outsiders map[uint64]bool
	// conflictLog limits the lines about two other nodes with one name
	// (membership.go), as gossip.LogWriter limits memberlist's own.
	conflictLog *loglimit.Limit
	// listed: node_ids that memberlist lists (reset by every membership
	// change); syncedAt: when an unlisted sender last made this node sync
	// its member list (syncUnlisted).
	listed   map[uint64]bool
	syncedAt time.Duration
	synced   bool

	armed    [election.NumTimers]bool
	deadline [election.NumTimers]time.Duration
	timer    *time.Timer

	buf  []byte
	seq  uint32
	mac  *wire.MAC // the signing key's, nil without a key
	memq []memberEvent

	prev       election.Status
	lastLeader uint64 // the last non-zero leader
	lost       bool   // the leader was lost, no new one yet; its last word was heard at lostAt
	lostAt     time.Duration
	heardFrom  uint64        // the leader whose last packet (or claim) was heard at heardAt
	heardAt    time.Duration // (the start of a failover: lanleader_failover_seconds)
	electing   bool          // this node ran an election that has not ended yet
	since      time.Time
	conflict   []string
	evidence   map[string]time.Duration // conflict evidence → when last seen
	// clones: the election addresses of the nodes known to use this
	// node's node_id (from their packets, or memberlist's name conflicts)
	// → when last heard of; aged as evidence is (noticeClones).
	clones     map[netip.AddrPort]time.Duration
	fanned     map[uint64]bool // fanOut's scratch: who has been sent to
	dirty      bool            // the snapshot is out of date
	lastBeacon time.Duration
	beaconed   bool
	leaving    bool        // a graceful stop is under way: the election is over for this node
	savedTerm  uint64      // quorum mode: the voted term on stable storage (StateFile)
	aux        *time.Timer // the parts' and the driver's deadlines (rearmAux)

	reload *ReloadStatus // the last reload, nil before one (reload.go)
	notice noticeState   // what the notice guard holds (notice.go)

	standbyState

	// tooManyVoters: more voters are alive than --quorum counts (warned
	// once until it is no longer so).
	tooManyVoters bool
	// majority: whether this quorum node waits for a majority, as last
	// logged (majority.go); nil until the first judgement.
	majority *majority.Watch
}

// run is the event loop: the only goroutine that touches the machine.
func (a *Agent) run() {
	defer close(a.loopDone)
	if a.cfg.Realtime {
		if realtime.Enter(a.log) { // false: refused, and logged
			a.rt.Store(true)
			defer realtime.Leave(a.log)
		}
	}
	l := &a.loop
	l.timer = time.NewTimer(time.Hour)
	defer l.timer.Stop()
	tick := time.NewTicker(housekeepEvery)
	defer tick.Stop()
	l.aux = time.NewTimer(time.Hour)
	defer l.aux.Stop()
	a.notify.Begin(a.now() + a.machine.Config().StartupWait + sdnotify.ReadyAfter)

	l.prev = a.machine.Status()
	l.dirty = true
	a.step(a.now(), election.Event{Kind: election.EvStart})
	a.onLinks()      // a link down at the start
	a.applyStandby() // a track file or a fault check at the start
	a.lead.BeginAwaitJoin()
	a.housekeep()
	a.rearmAux()
	for {
		select {
		case <-a.quit:
			return
		case p := <-a.pkts:
			if !l.leaving {
				a.onPacket(p)
			}
		case <-a.del.queue.signal:
			a.drainMembers()
		case <-l.timer.C:
			if !l.leaving {
				a.onTimer()
			}
		case f := <-a.cmds:
			f()
		case <-l.aux.C:
			a.onAux()
		case <-a.procs.dirty:
			l.dirty = true
		case <-a.links.Kick():
			a.onLinks()
		case <-tick.C:
			a.housekeep()
		}
		a.publish()
	}
}

// step feeds one event to the machine and carries out its actions.
func (a *Agent) step(at time.Duration, ev election.Event) {
	if a.loop.leaving {
		// A node that is leaving takes no further part in elections:
		// membership events that arrive meanwhile (another node leaving at
		// the same time) must not make it claim a leadership it is about
		// to abandon.
		return
	}
	acts := a.machine.Step(at, ev)
	if a.ownClaim() {
		// The claim goes out first, and the other hosts' votes are
		// written to their disks while this one's is: the loop handles
		// no answer before its own vote is kept (or it has stopped).
		for _, act := range acts {
			a.do(act)
		}
		if !a.saveVote() {
			return
		}
		a.afterStep()
		return
	}
	if !a.saveVote() {
		return
	}
	for _, act := range acts {
		a.do(act)
	}
	a.afterStep()
}

// onTimer: the loop's timer fired. The packets already received before
// the earliest deadline due are handled first, then the timers: the
// machine sees events in the order they happened, as the simulator gives
// them. select picks at random among ready cases, and a loop that fell
// behind (a host whose CPU others take) handled a claim's timeout, or a
// leader's step-down, before the acknowledgements waiting in its queue
// that would have confirmed or renewed it, and gave up a claim whose
// majority it had received.
func (a *Agent) onTimer() {
	l := &a.loop
	due := l.earliest()
	for n := len(a.pkts); n > 0 && due >= 0 && !l.leaving; n-- {
		p := <-a.pkts
		if p.at >= due {
			a.fire()
			if !l.leaving {
				a.onPacket(p)
			}
			return
		}
		a.onPacket(p)
	}
	if !l.leaving {
		a.fire()
	}
}

// fire steps every armed timer whose deadline has passed, earliest first.
func (a *Agent) fire() {
	l := &a.loop
	for {
		now := a.now()
		k := -1
		for i := range l.armed {
			if l.armed[i] && l.deadline[i] <= now && (k < 0 || l.deadline[i] < l.deadline[k]) {
				k = i
			}
		}
		if k < 0 {
			break
		}
		l.armed[k] = false
		a.step(now, election.Event{Kind: election.EvTimer, Timer: election.TimerKind(k)})
	}
	a.rearm()
}

// earliest is the earliest armed deadline, -1 when none is armed.
func (l *loopState) earliest() time.Duration {
	next := time.Duration(-1)
	for i := range l.armed {
		if l.armed[i] && (next < 0 || l.deadline[i] < next) {
			next = l.deadline[i]
		}
	}
	return next
}

// rearm sets the loop's timer to the earliest armed deadline.
func (a *Agent) rearm() {
	l := &a.loop
	next := l.earliest()
	if next < 0 {
		l.timer.Stop()
		return
	}
	l.timer.Reset(max(next-a.now(), 0))
}

// do carries out one action of the machine.
func (a *Agent) do(act election.Action) {
	l := &a.loop
	switch act.Kind {
	case election.ActSend:
		dst, ok := a.electionAddr(act.To)
		if !ok {
			a.log.Debug("no address for node", "node_id", act.To, "type", act.Msg.Type.String())
			return
		}
		if b := a.encode(act.Msg); b != nil {
			a.sendTo(b, dst, act.Msg.Type)
			a.met.MessagesSent.WithLabelValues(act.Msg.Type.String()).Inc()
		}
	case election.ActBroadcast:
		if act.Msg.Type == wire.TypeElection {
			l.electing = true
		}
		b := a.encode(act.Msg)
		if b == nil {
			return
		}
		if a.tr.Group.IsValid() {
			a.sent1(a.tr.Multicast(b), a.tr.Group, act.Msg.Type)
		} else {
			a.fanOut(b, act)
		}
		a.met.MessagesSent.WithLabelValues(act.Msg.Type.String()).Add(float64(act.Count))
	case election.ActSetTimer:
		l.armed[act.Timer], l.deadline[act.Timer] = true, act.At
		a.rearm()
	case election.ActCancelTimer:
		l.armed[act.Timer] = false
	case election.ActFollow:
		// The leader is lost; a new one may follow within the same step
		// (the node that suspects it may win at once), which afterStep
		// alone would not see.
		if act.Leader == 0 && l.prev.Leader != 0 && !l.lost {
			l.lost, l.lostAt = true, a.lastHeard(l.prev)
		}
		// In order: the policy reads a step's losses and step-downs as
		// they come.
		a.lead.Follow(act.Leader, l.prev.State == election.StateLeader)
	case election.ActBecomeLeader:
		// Reported through afterStep, from the machine's status.
	}
}

// onPacket handles one accepted packet.
func (a *Agent) onPacket(p packet) {
	l := &a.loop
	if p.conflict {
		a.onClonePacket(p)
		return
	}
	if p.msg.Type == wire.TypeDiscover {
		if !a.renewsName(p) {
			a.onBeacon(p)
		}
		return
	}
	if l.outsiders[p.msg.From] {
		// A member whose metadata keeps it out of elections (another
		// algorithm): its claims, probes and answers would mislead ours.
		a.met.PacketsDropped.WithLabelValues("outsider").Inc()
		return
	}
	a.syncUnlisted(p.msg.From)
	if p.src.IsValid() {
		if _, known := l.peers[p.msg.From]; known || len(l.peers) < 4*wire.MaxMembers {
			l.peers[p.msg.From] = peer{addr: p.src, key: election.Key{Priority: p.msg.Priority, ID: p.msg.From}, seen: p.at}
		}
	}
	if p.msg.Type == wire.TypeNotice {
		// A crashed leader's guard: its job is dead. The leadership this
		// node follows ends with it (election.NoticeActs); so does, in
		// quorum mode, this node's vote for it, even when this node
		// stopped following it first (another's claim heard before the
		// notice, election.NoticeReleases): kept, the vote would hold up
		// the new leader until the dead one's lease ran out.
		switch {
		case election.NoticeActs(l.prev, p.msg.From, p.msg.Term):
			a.log.Info("the leader's guard says it is gone, and its job with it: electing now", "leader", a.nameOf(p.msg.From),
				"leader_id", p.msg.From, "term", p.msg.Term)
			a.lead.HeardResign() // no takeover wait: its job is dead
		case election.NoticeReleases(l.prev, p.msg.From, p.msg.Term):
			a.log.Info("the leader's guard says it is gone, and its job with it: this node's vote for it is free", "leader", a.nameOf(p.msg.From),
				"leader_id", p.msg.From, "term", p.msg.Term)
		default:
			a.met.PacketsDropped.WithLabelValues("notice").Inc()
			a.log.Debug("dropped a notice of a leadership this node neither follows nor voted for", "from", p.msg.From, "term", p.msg.Term,
				"leader_id", l.prev.Leader, "term_followed", l.prev.Term)
			return
		}
		a.step(p.at, election.Event{Kind: election.EvMessage, Msg: p.msg})
		return
	}
	if p.msg.Type == wire.TypeResign && p.msg.From == l.prev.Leader && l.prev.Leader != a.cfg.NodeID {
		// Its job stopped before it resigned: no takeover wait.
		a.lead.HeardResign()
	}
	if p.msg.From == l.prev.Leader {
		l.heardFrom, l.heardAt = p.msg.From, p.at
	}
	// Another node that leads: an address found on another host at the
	// start was presumably its (agent/part/vips).
	a.vips.HeardLeader(&p.msg)
	// A stale leader's claim heard while this one holds the addresses:
	// announce them again once the machine has seen it (agent/part/vips).
	claim := a.vips.Held() && a.vips.IsStaleClaim(&p.msg)
	wanted := a.lead.JobWanted()
	a.step(p.at, election.Event{Kind: election.EvMessage, Msg: p.msg})
	if claim {
		a.vips.StaleClaim(&p.msg)
	}
	if (p.msg.Type == wire.TypeCoordinator || p.msg.Type == wire.TypeHeartbeat) && p.msg.From != a.cfg.NodeID {
		a.lead.HeardClaim(p.msg.From, wanted)
	}
}

// lastHeard is when this node last heard the leader of st: its last
// packet, or when it learnt of it; now when it was this node itself.
func (a *Agent) lastHeard(st election.Status) time.Duration {
	l := &a.loop
	if st.Leader == st.Self.ID || st.Leader != l.heardFrom {
		return a.now()
	}
	return l.heardAt
}

// afterStep logs and counts what changed in the machine's status.
func (a *Agent) afterStep() {
	l := &a.loop
	st := a.machine.Status()
	prev := l.prev
	// After the job's want: the lease is for its generation.
	defer a.lead.UpdateLease(st)
	defer a.updateNotice(false)
	stepped := a.lead.SteppedDown()
	defer a.lead.EndStep()
	if same := st; !stepped {
		// A renewed lease alone is not a change worth publishing.
		same.LeaseUntil = prev.LeaseUntil
		if same == prev {
			l.prev = st
			return
		}
	}
	l.prev = st
	l.dirty = true
	now := a.now()
	a.countElection(prev, st, stepped)
	failover := a.observeFailover(prev, st, now)
	if st.Leader != 0 && st.Leader != l.lastLeader {
		l.lastLeader = st.Leader
		l.since = time.Now()
		a.met.LeaderChanges.Inc()
	}
	if st.State == prev.State && st.Leader == prev.Leader && st.Self == prev.Self && !stepped {
		// A new term of the same leadership: not worth a line at info.
		a.log.Debug("term", "term", st.Term, "leader_id", st.Leader)
		a.leadershipChanged(prev, st, false)
		return
	}
	defer a.leadershipChanged(prev, st, st.State != prev.State || st.Leader != prev.Leader || stepped)
	a.logChange(st, failover, stepped && now >= prev.LeaseUntil)
}

// countElection counts this node's elections won and lost.
func (a *Agent) countElection(prev, st election.Status, stepped bool) {
	l := &a.loop
	if st.State == election.StateCandidate {
		// An election of this node's own (bully's ELECTION broadcast says
		// so too; the ring family's elections start with a unicast hop).
		l.electing = true
	}
	if st.State == election.StateLeader && (prev.State != election.StateLeader || stepped) {
		a.met.Elections.WithLabelValues("won").Inc()
		l.electing = false
	} else if l.electing && st.State == election.StateFollower && st.Leader != 0 && st.Leader != a.cfg.NodeID {
		a.met.Elections.WithLabelValues("lost").Inc()
		l.electing = false
	}
	if st.State == election.StateConflict {
		l.electing = false
	}
}

// observeFailover measures a failover and returns it (0: none ended).
// A failover runs from the last word of the old leader heard here (its
// last heartbeat, or its RESIGN) to a new leader known here: how long
// the cluster went without a leader, as this node saw it. A new leader
// may come after this node lost the old one, or at once, by a smaller
// node's claim heard before this node suspected anything. A larger
// node taking over (a preemption) is not a failover.
func (a *Agent) observeFailover(prev, st election.Status, now time.Duration) time.Duration {
	l := &a.loop
	var failover time.Duration
	switch {
	case st.Leader == 0 && prev.Leader != 0 && !l.lost:
		l.lost, l.lostAt = true, a.lastHeard(prev)
	case st.Leader != 0 && l.lost:
		failover = max(now-l.lostAt, 0)
		l.lost = false
		a.met.Failover.Observe(failover.Seconds())
	case st.Leader != 0 && prev.Leader != 0 && st.Leader != prev.Leader && st.LeaderKey.Less(prev.LeaderKey):
		failover = max(now-a.lastHeard(prev), 0)
		a.met.Failover.Observe(failover.Seconds())
	}
	if st.Leader != 0 && st.Leader != prev.Leader {
		l.heardFrom, l.heardAt = st.Leader, now
	}
	return failover
}

// logChange logs a change of state or leader at info. leaseLost: this
// leader stepped down because no majority acknowledged in time (or it
// was paused).
func (a *Agent) logChange(st election.Status, failover time.Duration, leaseLost bool) {
	attrs := []any{"state", st.State.String(), "term", st.Term, "leader", a.nameOf(st.Leader), "leader_id", st.Leader}
	if failover > 0 {
		attrs = append(attrs, "failover", failover.Round(time.Millisecond))
	}
	if leaseLost {
		attrs = append(attrs, "lease_lost", true)
	}
	msg := "state"
	switch {
	case st.State == election.StateLeader:
		msg = "became leader"
	case st.State == election.StateFollower && st.Leader != 0:
		msg = "following"
	case st.State == election.StateFollower:
		msg = "no leader"
	case st.State == election.StateCandidate:
		msg = "electing"
	case st.State == election.StateConflict:
		msg = "not leading: node_id conflict"
	}
	a.log.Log(nil, slog.LevelInfo, msg, attrs...)
}
