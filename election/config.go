package election

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/lanleader/lanleader/detector"
	"github.com/lanleader/lanleader/internal/planted"
)

// Config is the configuration of one election machine (bully or one of
// the ring family). The zero value is not usable: start from
// DefaultConfig and set ID (and Priority).
type Config struct {
	// Algorithm names the election algorithm, one of Algorithms: "bully"
	// (the default; also when empty), "ring", "chang-roberts" or
	// "hirschberg-sinclair". Everything but the election itself —
	// heartbeats, terms, the detector, preemption, resign, conflicts — is
	// the same for all. Every node of a cluster must run the same one.
	Algorithm string

	// Role is what this node may do in the elections (role.go): a
	// candidate (the default, the zero value) elects and may lead; a
	// witness only votes in quorum mode; an observer only follows.
	Role Role

	// ID is this node's node_id. Required, non-zero.
	ID NodeID
	// Priority is this node's priority (the seeds' "estimate"), 1 to
	// 65535; with ID it forms the election key. 0 means the default, 100.
	Priority uint16

	// HeartbeatInterval is how often the leader sends HEARTBEAT.
	// Default 100ms: a tenth of keepalived's advert_int, cheap on any LAN
	// (one 40-byte multicast packet every 100ms).
	HeartbeatInterval time.Duration
	// SuspectAfter is the fixed detector's timeout: a follower's alarm
	// rings this long after the leader's last heartbeat. Default
	// 1.5×HeartbeatInterval (150ms) with ConfirmSuspicion, where the alarm
	// is a question that the leader or a member that heard it answers
	// (harden_confirm.go): a lost heartbeat costs a few PROBEs, not a
	// failover. The textbook (no ConfirmSuspicion), whose alarm is a
	// verdict, defaults to 3×HeartbeatInterval (300ms): two heartbeats may
	// be lost without a false failover; so does quorum mode, whose
	// failover waits for the lease (Lease+LeaseMargin after the last
	// acknowledgement) whenever the alarm rings, and where an earlier
	// alarm only made more of a herd's followers confirm and pre-vote
	// before the largest survivor's claim (a 128-node failover's packets
	// tripled). Ignored when Detector is set.
	// What must outlast lost heartbeats (the listen period, the lease, a
	// pre-vote's grant) counts LossWindow, not this.
	SuspectAfter time.Duration
	// Detector, when set, replaces the fixed detector (for example a
	// detector.Phi). The machine owns it from then on.
	Detector detector.Detector

	// AnswerTimeout is T, the wait for an ANSWER after sending ELECTION:
	// 2·t_max + t_process. Default 50ms, generous for a LAN where a
	// round trip is well under a millisecond, small next to SuspectAfter.
	AnswerTimeout time.Duration
	// CoordinatorTimeout is the wait for COORDINATOR after an ANSWER
	// arrived; when it runs out the node starts a new election.
	// Default 4×AnswerTimeout (200ms): the answering node needs its own T
	// before it can announce itself.
	CoordinatorTimeout time.Duration
	// ConfirmTimeout turns the detector's alarm into a question. A
	// follower whose detector suspects the leader does not elect at once:
	// it sends PROBE to every member, up to 20 times over the first half
	// of ConfirmTimeout. The leader, and every member that heard it more
	// recently than the follower did, answer with VOUCH; one answer that
	// shows the leader alive is enough to keep following it. Only when
	// none comes within ConfirmTimeout is the leader suspected. Default
	// HeartbeatInterval/20 between MinConfirmTimeout (3ms) and 5ms (5ms
	// at the default heartbeat): a few round trips of a LAN, and all that
	// confirming costs in a real failover. Used with ConfirmSuspicion.
	ConfirmTimeout time.Duration
	// Hardening: the mechanisms the agent adds to the seeds' algorithms,
	// one switch each (harden.go). The zero value is the textbook;
	// DefaultConfig turns every one on (Hardened).
	Hardening
	// StartupWait is how long a node that has just started listens for an
	// existing leader before it runs an election of its own.
	// Default LossWindow (300ms): a live leader is heard within it, two
	// lost heartbeats notwithstanding.
	StartupWait time.Duration

	// Preempt: a node whose key is larger than the leader's takes over
	// (the textbook bully). false is keepalived's nopreempt: a returning
	// node follows a healthy leader. DefaultConfig sets it true (the zero
	// Config has it false).
	Preempt bool
	// PreemptDelay: after a start, a node waits this long before it takes
	// over from a smaller leader. Default 0.
	PreemptDelay time.Duration
	// ResignHoldoff: after a resign, the node neither answers nor starts
	// elections for this long, so that leadership really moves.
	// Default 10×HeartbeatInterval (1s); never less than PreemptDelay.
	ResignHoldoff time.Duration

	// RingOrder places the members on the ring family's logical ring. The
	// zero value is the design's ring: the live members sorted by key,
	// each one's successor the next larger key. The other orders exist to
	// measure the textbook's best, average and worst placements
	// (bench/complexity); every node of a cluster must use the same.
	// Bully ignores it.
	RingOrder RingOrder

	// Quorum is the expected cluster size N for split-brain safety
	// (quorum.go). 0, the default, is the textbook: a leader on each side
	// of a partition, and a paused leader that wakes up believing it
	// leads. With N > 0 a node leads only while a majority of N (itself
	// included) acknowledges its heartbeats within Lease; followers put
	// off elections until the lease they last supported has surely run
	// out; every algorithm. Every node of a cluster must use the same N.
	// A node that restarts waits Lease+LeaseMargin before it supports
	// anyone, which keeps leases apart; its votes survive only through
	// InitialTerm.
	Quorum int
	// Lease (quorum mode) is how long after sending a heartbeat the
	// leader may lead on the acknowledgements of it. Default LossWindow
	// (300ms): two heartbeats may be lost without losing the lease (the
	// agent adds StopBefore). A crashed leader is replaced about
	// Lease+LeaseMargin after the last acknowledgement, instead of
	// SuspectAfter after the last heartbeat.
	Lease time.Duration
	// StopBefore (quorum mode): a leader that has not renewed its lease
	// steps down this long before the lease ends, so that its driver can
	// stop the job gently (SIGTERM) before the end of the lease, when the
	// agent's job guard kills it. Lease − StopBefore must be longer than
	// HeartbeatInterval. Default 0: at the end of the lease (the agent
	// sets one heartbeat interval).
	StopBefore time.Duration
	// LeaseMargin (quorum mode) is added to Lease on the followers' side
	// (the guard: no support for another leader, no election, until
	// Lease+LeaseMargin after the last acknowledgement). It covers the
	// clock-rate drift between hosts, at least MinLeaseMargin(Lease)
	// (500 ppm, MaxClockDrift), and the time the driver takes to stop the
	// job after the leader steps down. Default Lease/10 (30ms).
	LeaseMargin time.Duration
	// ClaimWait (quorum mode) is how long a claimant waits for a majority
	// before it gives up and elects again under a fresh term. Default
	// Lease+LeaseMargin+2×HeartbeatInterval: the guards of the others
	// run out, then a heartbeat and its acknowledgements.
	ClaimWait time.Duration
	// InitialTerm (quorum mode) is the highest term this node may have
	// voted in before it started: the last Status().VotedTerm of its
	// previous run, which the driver keeps on stable storage (written
	// before it carries out the actions of the Step that raised it). The
	// node votes only in later terms and claims only later ones, so a
	// restart cannot give one term to two leaders. 0 (nothing kept) is
	// safe for the leases but not for the terms: a node that restarts may
	// then vote again in a term it voted in before.
	InitialTerm uint64
	// Planted breaks the machine on purpose, for the checkers' proof that
	// they catch what follows (internal/planted); nil everywhere else. Its
	// type is internal to this module: no user of the package can plant.
	Planted *planted.Election
}

// RingOrder is an order of the logical ring.
type RingOrder struct {
	// Descending: each member's successor is the next smaller key (the
	// ring runs the other way round).
	Descending bool
	// Shuffle, when not 0, orders the ring by a hash of each member's
	// node_id keyed with Shuffle instead of by key: a random placement of
	// the keys on the ring that every node computes alike.
	Shuffle uint64
}

// DefaultConfig returns a Config with every default filled in for node id.
func DefaultConfig(id NodeID) Config {
	c := Config{ID: id, Priority: 100, Preempt: true, Hardening: Hardened()}
	c.fill()
	return c
}

// WithDefaults returns c with the default of every zero field filled in,
// as NewBully uses it.
func (c Config) WithDefaults() Config {
	c.fill()
	return c
}

// MinConfirmTimeout is the shortest default ConfirmTimeout, that of a
// heartbeat of 60ms or less: the time a leader whose host paused has to
// answer. At 1ms (a twentieth of the heartbeat, 0.5ms at 10ms, raised to
// a round trip of a loaded host) a leader whose virtual machine lost its
// CPU for 9ms just as a heartbeat was due was replaced: its followers'
// alarm rang 15ms after its last heartbeat, the confirmation ended 1ms
// later, and the leader's CPU came back 0.3ms after that (five agents on two
// vCPUs, --heartbeat 10ms; a SCHED_FIFO 99 probe on each vCPU saw 28
// stalls of 6 to 20ms in 10 minutes). 3ms tolerates 2ms more such a
// pause and adds 2ms to the failover of a leader whose host froze.
const MinConfirmTimeout = 3 * time.Millisecond

// fill sets the defaults of every zero field.
func (c *Config) fill() {
	c.Algorithm = cmp.Or(c.Algorithm, AlgorithmBully)
	c.Priority = cmp.Or(c.Priority, 100)
	c.HeartbeatInterval = cmp.Or(c.HeartbeatInterval, 100*time.Millisecond)
	if c.SuspectAfter == 0 {
		c.SuspectAfter = 3 * c.HeartbeatInterval
		if c.ConfirmSuspicion && c.Quorum == 0 {
			c.SuspectAfter = 3 * c.HeartbeatInterval / 2
		}
	}
	c.AnswerTimeout = cmp.Or(c.AnswerTimeout, 50*time.Millisecond)
	c.CoordinatorTimeout = cmp.Or(c.CoordinatorTimeout, 4*c.AnswerTimeout)
	c.ConfirmTimeout = cmp.Or(c.ConfirmTimeout, min(max(c.HeartbeatInterval/20, MinConfirmTimeout), 5*time.Millisecond))
	c.StartupWait = cmp.Or(c.StartupWait, c.LossWindow())
	c.ResignHoldoff = cmp.Or(c.ResignHoldoff, 10*c.HeartbeatInterval)
	// A resigned node never takes leadership back before PreemptDelay.
	c.ResignHoldoff = max(c.ResignHoldoff, c.PreemptDelay)
	if c.Quorum > 0 {
		c.Lease = cmp.Or(c.Lease, c.LossWindow())
		c.LeaseMargin = cmp.Or(c.LeaseMargin, max(c.Lease/10, MinLeaseMargin(c.Lease)))
		c.ClaimWait = cmp.Or(c.ClaimWait, c.Lease+c.LeaseMargin+2*c.HeartbeatInterval)
	}
}

// LossWindow is how long a live leader may go unheard under loss: three
// heartbeat intervals (two heartbeats lost in a row), or SuspectAfter when
// that is longer. The alarm rings at SuspectAfter, earlier with
// ConfirmSuspicion, because a confirmation answers it; what has no
// confirmation to lean on counts this window: a starting node's listen
// period, the lease, how long a pre-vote's grant or a claimant's answer
// is believed, how far the waits stretch, how long a suspicion is
// remembered, the herd's ranks. With the defaults it is 300ms, what
// SuspectAfter was before the alarm came earlier, so that none of these
// moved with it.
func (c Config) LossWindow() time.Duration {
	return max(c.SuspectAfter, 3*c.HeartbeatInterval)
}

// Validate checks each field and how they relate. It names the field at
// fault.
func (c Config) Validate() error {
	var errs []error
	switch c.Algorithm {
	case "", AlgorithmBully, AlgorithmRing, AlgorithmChangRoberts, AlgorithmHirschbergSinclair:
	default:
		errs = append(errs, errUnknownAlgorithm(c.Algorithm))
	}
	if err := c.Role.validate(c.Quorum); err != nil {
		errs = append(errs, err)
	}
	if c.ID == 0 {
		errs = append(errs, errors.New("node id: must not be 0"))
	}
	pos := func(name string, d time.Duration) {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s: must be positive, got %v", name, d))
		}
	}
	pos("heartbeat interval", c.HeartbeatInterval)
	pos("answer timeout", c.AnswerTimeout)
	pos("coordinator timeout", c.CoordinatorTimeout)
	pos("startup wait", c.StartupWait)
	pos("confirm timeout", c.ConfirmTimeout)
	if c.ConfirmTimeout > 0 && c.SuspectAfter > 0 && c.Detector == nil && c.ConfirmTimeout >= c.SuspectAfter {
		errs = append(errs, fmt.Errorf("confirm timeout (%v): must be shorter than suspect after (%v)", c.ConfirmTimeout, c.SuspectAfter))
	}
	pos("resign hold-off", c.ResignHoldoff)
	if c.PreemptDelay < 0 {
		errs = append(errs, fmt.Errorf("preempt delay: must not be negative, got %v", c.PreemptDelay))
	}
	if c.Detector == nil {
		pos("suspect after", c.SuspectAfter)
		if c.SuspectAfter > 0 && c.HeartbeatInterval > 0 && c.SuspectAfter <= c.HeartbeatInterval {
			errs = append(errs, fmt.Errorf("suspect after (%v): must be longer than the heartbeat interval (%v), or every heartbeat gap is a failure", c.SuspectAfter, c.HeartbeatInterval))
		}
	}
	if c.ResignHoldoff > 0 && c.ResignHoldoff <= c.AnswerTimeout {
		errs = append(errs, fmt.Errorf("resign hold-off (%v): must be longer than the answer timeout (%v)", c.ResignHoldoff, c.AnswerTimeout))
	}
	if c.CoordinatorTimeout > 0 && c.CoordinatorTimeout < c.AnswerTimeout {
		errs = append(errs, fmt.Errorf("coordinator timeout (%v): must be at least the answer timeout (%v), the answering node needs that long to win", c.CoordinatorTimeout, c.AnswerTimeout))
	}
	if c.Quorum < 0 {
		errs = append(errs, fmt.Errorf("quorum: must not be negative, got %d", c.Quorum))
	}
	if c.Quorum > 0 {
		pos("lease", c.Lease)
		if c.Lease > 0 && c.HeartbeatInterval > 0 && c.Lease <= c.HeartbeatInterval {
			errs = append(errs, fmt.Errorf("lease (%v): must be longer than the heartbeat interval (%v), or no heartbeat renews it in time", c.Lease, c.HeartbeatInterval))
		}
		if c.StopBefore < 0 || c.StopBefore > 0 && c.Lease-c.StopBefore <= c.HeartbeatInterval {
			errs = append(errs, fmt.Errorf("stop before (%v): must not be negative, and must leave more than a heartbeat interval (%v) of the lease (%v)", c.StopBefore, c.HeartbeatInterval, c.Lease))
		}
		if m := MinLeaseMargin(c.Lease); c.LeaseMargin < m {
			errs = append(errs, fmt.Errorf("lease margin (%v): must be at least %v for a lease of %v (clock drift up to %v ppm)", c.LeaseMargin, m, c.Lease, MaxClockDrift*1e6))
		}
		if c.ClaimWait <= c.Lease+c.LeaseMargin {
			errs = append(errs, fmt.Errorf("claim wait (%v): must be longer than lease plus lease margin (%v), the others' guards", c.ClaimWait, c.Lease+c.LeaseMargin))
		}
	}
	return errors.Join(errs...)
}
