package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/lanleader/lanleader/election"
)

// FaultKind is one kind of fault a schedule injects.
type FaultKind uint8

// The faults.
const (
	FaultCrash     FaultKind = iota // Node crashes (loses its memory); with Notice its agent alone, its host lives
	FaultRestart                    // Node restarts (if down)
	FaultPause                      // Node pauses for Dur, then resumes with stale state
	FaultPartition                  // Side is cut from the rest, both ways, for Dur
	FaultOneWay                     // packets from Side to the rest are dropped for Dur
	FaultLoss                       // every packet copy is lost with probability P for Dur
	FaultDup                        // every packet copy is duplicated with probability P for Dur
	FaultDelay                      // one-way delays spread up to Delay for Dur (reordering)
	FaultResign                     // the leader (Node -1) or Node is asked to resign
	FaultPriority                   // Node's priority becomes Prio (a health check)
	FaultSuspect                    // Node is told its leader is dead (membership's false alarm)
	FaultLink                       // Node's link goes down for Dur (a pulled cable: standby)
)

var faultNames = [...]string{"crash", "restart", "pause", "partition", "one-way", "loss", "dup", "delay", "resign", "priority", "suspect", "link-down"}

func (k FaultKind) String() string { return faultNames[k] }

// Fault is one scheduled fault. Node -1 means "whichever node leads then"
// (the largest if several do, a random live node if none does).
type Fault struct {
	At    time.Duration
	Kind  FaultKind
	Node  int
	Side  []int
	Dur   time.Duration
	P     float64
	Delay time.Duration
	Prio  uint16
	// Notice (FaultCrash): only the agent dies, its host lives, and the
	// host's notice guard sends the NOTICE of a leader once its job is
	// dead; without it the host dies and sends nothing.
	Notice bool
}

func (f Fault) String() string {
	s := fmt.Sprintf("%v %v", f.At, f.Kind)
	switch f.Kind {
	case FaultCrash, FaultRestart, FaultResign, FaultSuspect:
		s += fmt.Sprintf(" node=%d", f.Node)
		if f.Notice {
			s += " with notice"
		}
	case FaultPause, FaultLink:
		s += fmt.Sprintf(" node=%d for %v", f.Node, f.Dur)
	case FaultPartition, FaultOneWay:
		s += fmt.Sprintf(" side=%v for %v", f.Side, f.Dur)
	case FaultLoss, FaultDup:
		s += fmt.Sprintf(" p=%.2f for %v", f.P, f.Dur)
	case FaultDelay:
		s += fmt.Sprintf(" max=%v for %v", f.Delay, f.Dur)
	case FaultPriority:
		s += fmt.Sprintf(" node=%d prio=%d", f.Node, f.Prio)
	}
	return s
}

// Schedule is a cluster and the faults it goes through: everything a run
// depends on. Generate makes one from a seed.
type Schedule struct {
	Seed   uint64
	Config Config
	Faults []Fault
	// FaultEnd is when every fault is over: cuts healed, loss and
	// duplication off, delays back to normal, paused nodes resumed, and the
	// nodes of RestartAtEnd restarted.
	FaultEnd     time.Duration
	RestartAtEnd []int
	// Reliable: the schedule keeps the textbook's assumptions (no loss, no
	// partition, no pause, delays within T/2), so no two nodes may ever
	// lead with the same term.
	Reliable bool
}

// Describe prints the schedule, one fault a line.
func (sch Schedule) Describe() string {
	var b strings.Builder
	transport := "multicast"
	if sch.Config.Unicast {
		transport = "unicast"
	}
	fmt.Fprintf(&b, "seed %d: %s, %d nodes, phi=%v, preempt delay %v, %s, net %v..%v", sch.Seed, sch.algorithm(), len(sch.Config.Nodes), sch.Config.Phi, sch.Config.Timing.PreemptDelay, transport, sch.Config.Net.DelayMin, sch.Config.Net.DelayMax)
	if q := sch.Config.Timing.Quorum; q > 0 {
		fmt.Fprintf(&b, ", quorum %d, drift ±%d ppm", q, sch.Config.DriftPPM)
	}
	b.WriteString("\n")
	for _, n := range sch.Config.Nodes {
		role := ""
		if n.Role != election.RoleCandidate {
			role = " role=" + n.Role.String()
		}
		job := ""
		if sch.Config.Jobs {
			job = " job: " + n.Job.String()
		}
		fmt.Fprintf(&b, "  node %v preempt=%v%s%s\n", n.Key, n.Preempt, role, job)
	}
	for _, f := range sch.Faults {
		fmt.Fprintf(&b, "  %v\n", f)
	}
	fmt.Fprintf(&b, "  %v faults end; restart %v; reliable=%v\n", sch.FaultEnd, sch.RestartAtEnd, sch.Reliable)
	return b.String()
}

// algorithm is the algorithm the nodes run.
func (sch Schedule) algorithm() string {
	if sch.Config.Algorithm != "" {
		return sch.Config.Algorithm
	}
	return sch.Config.Timing.WithDefaults().Algorithm
}

// DefaultTiming is the election timing the schedules use: the agent's
// defaults.
func DefaultTiming() election.Config {
	c := election.DefaultConfig(1)
	// SuspectAfter follows the mode: each node's WithDefaults derives it
	// (1.5 heartbeats for the hardened machine outside quorum mode, 3
	// otherwise).
	c.ID, c.Priority, c.SuspectAfter = 0, 0, 0
	return c
}

// GenerateFor makes the random schedule of seed (the same cluster and
// faults as Generate) for the nodes running algorithm.
func GenerateFor(algorithm string, seed uint64) Schedule {
	sch := Generate(seed)
	sch.Config.Algorithm = algorithm
	return sch
}

// Generate makes the random schedule of seed: 3 to 16 nodes, mostly
// preempting, then 1 to 12 faults over a window of 1 to 10 s.
func Generate(seed uint64) Schedule {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	n := 3 + r.IntN(14)
	sch := Schedule{Seed: seed}
	cfg := Config{Seed: seed, Timing: DefaultTiming(), Phi: r.IntN(4) == 0}
	if r.IntN(4) == 0 {
		cfg.Timing.PreemptDelay = time.Duration(100+r.IntN(900)) * time.Millisecond
	}
	prios := []uint16{100}
	if r.IntN(2) == 0 {
		prios = []uint16{50, 100, 150}
	}
	allPreempt := r.IntN(5) != 0
	ids := map[uint64]bool{}
	for range n {
		id := uint64(1 + r.IntN(64))
		if r.IntN(3) == 0 {
			id = r.Uint64() | 1
		}
		for ids[id] {
			id++
		}
		ids[id] = true
		cfg.Nodes = append(cfg.Nodes, Node{
			Key:     election.Key{Priority: prios[r.IntN(len(prios))], ID: id},
			Preempt: allPreempt || r.IntN(2) == 0,
		})
	}
	T := cfg.Timing.AnswerTimeout
	cfg.Net = Net{DelayMin: 100 * time.Microsecond, DelayMax: time.Duration(1+r.IntN(int(T/time.Millisecond)/4)) * time.Millisecond}
	sch.Config = cfg

	// Reliable schedules keep to the textbook's world: processes crash
	// (and are never replaced) or resign, every member knows every other's
	// key, packets may be duplicated but arrive within T/2.
	sch.Reliable = r.IntN(4) == 0
	kinds := []FaultKind{FaultCrash, FaultRestart, FaultPause, FaultPartition, FaultOneWay, FaultLoss, FaultDup, FaultDelay, FaultResign, FaultPriority, FaultSuspect}
	if sch.Reliable {
		kinds = []FaultKind{FaultCrash, FaultResign, FaultDup}
	}
	start := time.Second
	window := time.Duration(1+r.IntN(10)) * time.Second
	sch.FaultEnd = start + window
	nf := 1 + r.IntN(12)
	for range nf {
		f := Fault{At: start + time.Duration(r.Int64N(int64(window))), Kind: kinds[r.IntN(len(kinds))], Node: r.IntN(n)}
		if r.IntN(2) == 0 {
			f.Node = -1 // the leader
		}
		f.Dur = time.Duration(50+r.IntN(2000)) * time.Millisecond
		switch f.Kind {
		case FaultRestart, FaultPriority:
			f.Node = r.IntN(n)
			f.Prio = prios[r.IntN(len(prios))] + uint16(r.IntN(3)) - 1
		case FaultPartition, FaultOneWay:
			side := r.Perm(n)[:1+r.IntN(n-1)]
			slices.Sort(side)
			f.Side = side
		case FaultLoss:
			f.P = []float64{0.05, 0.2, 0.5, 1}[r.IntN(4)]
		case FaultDup:
			f.P = []float64{0.05, 0.3}[r.IntN(2)]
		case FaultDelay:
			f.Delay = time.Duration(1+r.IntN(80)) * time.Millisecond
		}
		sch.Faults = append(sch.Faults, f)
	}
	slices.SortStableFunc(sch.Faults, func(a, b Fault) int { return int(a.At - b.At) })
	for i := range n {
		if !sch.Reliable && r.IntN(2) == 0 {
			sch.RestartAtEnd = append(sch.RestartAtEnd, i)
		}
	}
	sch.Config.Unicast = r.IntN(4) == 0
	addJobs(&sch)
	addNotices(&sch)
	return sch
}

// addNotices makes half the crashes of sch, drawn from a stream of their
// own (so that each seed's cluster and faults stay what they were), an
// agent's crash on a live host, which a leader's NOTICE follows.
func addNotices(sch *Schedule) {
	r := rand.New(rand.NewPCG(sch.Seed, 0x0071ce))
	for k := range sch.Faults {
		if f := &sch.Faults[k]; f.Kind == FaultCrash {
			f.Notice = r.IntN(2) == 0
		}
	}
}

// addJobs gives every node of sch a job, and half the schedules that are
// not Reliable one or two pulled cables. The draws come from a stream of
// their own, so that the cluster and the faults above stay what they
// were for each seed.
func addJobs(sch *Schedule) {
	r := rand.New(rand.NewPCG(sch.Seed, 0x10b5))
	cfg := &sch.Config
	cfg.Jobs = true
	lease := cfg.Timing.WithDefaults().LossWindow()
	// One job grace for the cluster, as one configuration gives it: a
	// takeover waits at most its own grace (plus a margin) for the
	// previous leader's job.
	grace := []time.Duration{lease, 3 * lease, 10 * lease}[r.IntN(3)]
	for i := range cfg.Nodes {
		p := &cfg.Nodes[i].Job
		// From 0 to several leases; a quarter ignore SIGTERM and die
		// only at the SIGKILL after the grace.
		if r.IntN(2) == 0 {
			p.Start = time.Duration(r.Int64N(int64(2 * lease)))
		}
		switch r.IntN(3) {
		case 1:
			p.Stop = time.Duration(r.Int64N(int64(lease)))
		case 2:
			p.Stop = time.Duration(r.Int64N(int64(10 * lease)))
		}
		p.IgnoreTerm = r.IntN(4) == 0
		p.Grace = grace
	}
	if sch.Reliable || r.IntN(2) == 0 {
		return
	}
	n := len(cfg.Nodes)
	for range 1 + r.IntN(2) {
		f := Fault{At: time.Second + time.Duration(r.Int64N(int64(sch.FaultEnd-time.Second))), Kind: FaultLink, Node: r.IntN(n),
			Dur: time.Duration(50+r.IntN(2000)) * time.Millisecond}
		if r.IntN(2) == 0 {
			f.Node = -1
		}
		sch.Faults = append(sch.Faults, f)
	}
	slices.SortStableFunc(sch.Faults, func(a, b Fault) int { return int(a.At - b.At) })
}

// GenerateQuorum makes the quorum-mode twin of the schedule of seed for
// algorithm: the same cluster and faults, every node with Quorum = N (the
// cluster's size) and a clock rate off by up to election.MaxClockDrift,
// the agent's early step-down (StopBefore, a longer lease) in the even
// seeds, and in half of them one more fault: the leader paused for one to
// four leases.
func GenerateQuorum(algorithm string, seed uint64) Schedule {
	sch := GenerateFor(algorithm, seed)
	sch.Config.Jobs = true
	sch.Config.Timing.Quorum = len(sch.Config.Nodes)
	sch.Config.DriftPPM = int(election.MaxClockDrift * 1e6)
	if seed%2 == 0 {
		// The agent's timing: the leader steps down a heartbeat before
		// the end of its lease, one heartbeat longer.
		t := sch.Config.Timing.WithDefaults()
		sch.Config.Timing.StopBefore = t.HeartbeatInterval
		sch.Config.Timing.Lease = t.LossWindow() + t.HeartbeatInterval
	}
	r := rand.New(rand.NewPCG(seed, 0x1ea5e))
	if r.IntN(2) == 0 {
		lease := sch.Config.Timing.WithDefaults().Lease
		start := time.Second
		f := Fault{At: start + time.Duration(r.Int64N(int64(sch.FaultEnd-start))), Kind: FaultPause, Node: -1,
			Dur: lease + time.Duration(r.Int64N(int64(3*lease)))}
		sch.Faults = append(sch.Faults, f)
		slices.SortStableFunc(sch.Faults, func(a, b Fault) int { return int(a.At - b.At) })
	}
	return sch
}

// Bound is the time after FaultEnd by which the cluster must have
// converged: the slowest way a node can still learn that its leader is
// gone or stale (its detector, the end of a resign hold-off or preempt
// delay, a restarted node's listen period, and over unicast the
// membership report of a restarted node), plus a heartbeat to hear the
// others, plus two full election rounds (T, then the wait for
// COORDINATOR) and the packet delays of each exchange.
func (sch Schedule) Bound() time.Duration {
	c := sch.Config.Timing
	if sch.Config.Algorithm != "" {
		c.Algorithm = sch.Config.Algorithm
	}
	c = c.WithDefaults()
	detect := c.SuspectAfter
	if sch.Config.Phi {
		// Phi detects later after a loss burst widened its history.
		detect = phiWorstDetection(c)
	}
	slowest := max(detect+c.HeartbeatInterval, c.StartupWait, c.ResignHoldoff, c.PreemptDelay)
	if sch.Config.Jobs && slices.ContainsFunc(sch.Faults, func(f Fault) bool { return f.Kind == FaultResign }) {
		// A resign waits for the job to stop (at most its grace).
		var stop time.Duration
		for _, n := range sch.Config.Nodes {
			stop = max(stop, n.Job.StopTime())
		}
		slowest = max(slowest, stop+c.ResignHoldoff)
	}
	var quorum time.Duration
	if c.Quorum > 0 {
		// Quorum mode: then the guards of the lease last supported run
		// out (a restarted node's too), then a claim that may fail for
		// want of a majority and be made again.
		quorum = c.Lease + c.LeaseMargin + 2*c.ClaimWait
	}
	if sch.Config.Unicast {
		// Over unicast a node reaches only the members it knows of: a
		// node restarted at the end is heard of only once membership
		// reports it back.
		slowest = max(slowest, sch.Config.membershipDelay())
	}
	if c.Algorithm != election.AlgorithmBully {
		// The ring family: the ring is membership's view, so a node
		// restarted at the end is on the others' rings once membership
		// reports it (or once they hear of it on the ring). An election
		// goes round the ring one hop after another: a round lost to the
		// faults is given up after RoundWait, and the next one takes as
		// long again at most.
		slowest = max(slowest, sch.Config.membershipDelay())
		return slowest + quorum + 2*c.HeartbeatInterval + 3*election.RoundWait(c, len(sch.Config.Nodes)) + 8*sch.Config.Net.DelayMax
	}
	return slowest + quorum + 2*c.HeartbeatInterval + 2*(c.AnswerTimeout+c.CoordinatorTimeout) + 8*sch.Config.Net.DelayMax
}
