package election

import (
	"fmt"
	"strings"
	"time"
)

// The algorithms, by the names the configuration uses.
const (
	AlgorithmBully              = "bully"               // the default: ELECTION to the larger keys, ANSWER, COORDINATOR
	AlgorithmRing               = "ring"                // the ELECTION collects the list of live members around the ring, then COORDINATOR goes round
	AlgorithmChangRoberts       = "chang-roberts"       // unidirectional ring: forward the largest key, ELECTED goes round once
	AlgorithmHirschbergSinclair = "hirschberg-sinclair" // bidirectional ring: probes to distance 2^k both ways, replies
)

// Algorithms lists the algorithm names New accepts, the default first.
var Algorithms = []string{AlgorithmBully, AlgorithmRing, AlgorithmChangRoberts, AlgorithmHirschbergSinclair}

// Machine is an election state machine: Bully, or one of the ring family.
// Every algorithm takes the same events and gives the same kinds of
// actions; they differ in the messages of an election. The driver (the
// agent, the simulator) feeds events to Step and carries out the actions
// it returns; it must encode and send every wire type the machine may
// emit (see the algorithm's doc) and pass every decoded message on.
//
// Concurrency: a Machine is not safe for concurrent use; one owner calls
// Step.
type Machine interface {
	// Step feeds one event that happened at now (on this node's
	// monotonic clock) and returns what the driver must do, in order.
	// The returned slice, and the lists of the messages in it, are reused
	// by the next Step.
	Step(now time.Duration, ev Event) []Action
	// Status returns the machine's current view.
	Status() Status
	// Members appends the keys of the live members the machine knows,
	// other than itself, to dst.
	Members(dst []Key) []Key
	// Config returns the configuration with its defaults filled in.
	Config() Config
	// Algorithm returns the algorithm's name, one of Algorithms.
	Algorithm() string
}

// New returns a machine of cfg.Algorithm (AlgorithmBully when empty) for
// cfg, after filling its defaults and validating it. The machine does
// nothing until it is given EvStart.
func New(cfg Config) (Machine, error) {
	switch cfg.Algorithm {
	case "", AlgorithmBully:
		return NewBully(cfg)
	case AlgorithmRing:
		return newRingList(cfg)
	case AlgorithmChangRoberts:
		return newChangRoberts(cfg)
	case AlgorithmHirschbergSinclair:
		return newHirschbergSinclair(cfg)
	}
	return nil, errUnknownAlgorithm(cfg.Algorithm)
}

func errUnknownAlgorithm(name string) error {
	return fmt.Errorf("algorithm: unknown %q, want one of %s", name, strings.Join(Algorithms, ", "))
}

func errNotAlgorithm(name, want string) error {
	return fmt.Errorf("algorithm: %q given to the %s constructor", name, want)
}

// Every algorithm is a Machine.
var (
	_ Machine = (*Bully)(nil)
	_ Machine = (*ringList)(nil)
	_ Machine = (*changRoberts)(nil)
	_ Machine = (*hirschbergSinclair)(nil)
)

// Each family has the optional elector parts it uses (core.go); the
// core has none, so that none is promoted to a family that lacks it.
var (
	_ candidacyLeaver = (*Bully)(nil)
	_ leaderLoser     = (*Bully)(nil)
	_ membersWatcher  = (*ringList)(nil)
	_ membersWatcher  = (*changRoberts)(nil)
	_ membersWatcher  = (*hirschbergSinclair)(nil)
)

// RoundWait is how long a node taking part in an election of
// cfg.Algorithm on a cluster of n nodes waits for its result before it
// starts another: for bully the wait for COORDINATOR after an ANSWER;
// for the ring family the time for the algorithm's messages to go round
// the ring one after the other (a lap of n hops of at most T/2 each, two
// laps for the ring, three for Chang–Roberts, nine for Hirschberg–Sinclair)
// plus that wait.
func RoundWait(cfg Config, n int) time.Duration {
	cfg.fill()
	f := 0
	switch cfg.Algorithm {
	case AlgorithmRing:
		f = (*ringList)(nil).lapFactor()
	case AlgorithmChangRoberts:
		f = (*changRoberts)(nil).lapFactor()
	case AlgorithmHirschbergSinclair:
		f = (*hirschbergSinclair)(nil).lapFactor()
	}
	return lapWait(cfg, f, n)
}
