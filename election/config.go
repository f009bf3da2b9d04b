package election

import (
	"errors"
	"fmt"
	"time"

	"github.com/lanleader/lanleader/detector"
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

	// ID is this node's node_id. Required, non-zero.
	ID NodeID
	// Priority is this node's priority (the seeds' "estimate"), 1 to
	// 65535; with ID it forms the election key. 0 means the default, 100.
	Priority uint16

	// HeartbeatInterval is how often the leader sends HEARTBEAT.
	// Default 100ms: a tenth of keepalived's advert_int, cheap on any LAN
	// (one 40-byte multicast packet every 100ms).
	HeartbeatInterval time.Duration
	// SuspectAfter is the fixed detector's timeout: a follower suspects the
	// leader this long after its last heartbeat. Default 3×HeartbeatInterval
	// (300ms): two heartbeats may be lost without a false failover.
	// Ignored when Detector is set.
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
	// StartupWait is how long a node that has just started listens for an
	// existing leader before it runs an election of its own.
	// Default SuspectAfter (300ms): a live leader is heard within it.
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
	c := Config{ID: id, Priority: 100, Preempt: true}
	c.fill()
	return c
}

// WithDefaults returns c with the default of every zero field filled in,
// as NewBully uses it.
func (c Config) WithDefaults() Config {
	c.fill()
	return c
}

// fill sets the defaults of every zero field.
func (c *Config) fill() {
	if c.Algorithm == "" {
		c.Algorithm = AlgorithmBully
	}
	if c.Priority == 0 {
		c.Priority = 100
	}
	if c.HeartbeatInterval == 0 {
		c.HeartbeatInterval = 100 * time.Millisecond
	}
	if c.SuspectAfter == 0 {
		c.SuspectAfter = 3 * c.HeartbeatInterval
	}
	if c.AnswerTimeout == 0 {
		c.AnswerTimeout = 50 * time.Millisecond
	}
	if c.CoordinatorTimeout == 0 {
		c.CoordinatorTimeout = 4 * c.AnswerTimeout
	}
	if c.StartupWait == 0 {
		c.StartupWait = c.SuspectAfter
	}
	if c.ResignHoldoff == 0 {
		c.ResignHoldoff = 10 * c.HeartbeatInterval
	}
	// A resigned node never takes leadership back before PreemptDelay.
	c.ResignHoldoff = max(c.ResignHoldoff, c.PreemptDelay)
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
	return errors.Join(errs...)
}
