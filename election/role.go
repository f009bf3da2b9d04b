package election

import (
	"fmt"
	"strings"

	"github.com/lanleader/lanleader/wire"
)

// Role is what a node may do in the elections (Config.Role). The zero
// value is RoleCandidate. The numbers travel in the member metadata:
// append only.
type Role uint8

// The roles.
const (
	// RoleCandidate elects and may lead: the default.
	RoleCandidate Role = iota
	// RoleWitness votes in quorum mode — it acknowledges claims and
	// heartbeats, grants pre-votes and keeps its voted term — but never
	// claims, answers an ELECTION, puts itself forward on a ring or
	// preempts: it never leads. Two candidates and a witness make a safe
	// two-node cluster. It needs quorum mode (Config.Quorum > 0).
	RoleWitness
	// RoleObserver follows and reports the leader, and takes no part in
	// the elections: no vote, no pre-vote, no claim. Quorum mode's N does
	// not count it.
	RoleObserver
	numRoles
)

var roleNames = [...]string{"candidate", "witness", "observer"}

// Roles lists the role names ParseRole accepts, the default first.
var Roles = roleNames[:]

func (r Role) String() string { return enumName(roleNames[:], r, "role") }

// ParseRole returns the role named s ("" is the default, candidate).
func ParseRole(s string) (Role, error) {
	if s == "" {
		return RoleCandidate, nil
	}
	for i, n := range roleNames {
		if s == n {
			return Role(i), nil
		}
	}
	return 0, fmt.Errorf("role: unknown %q, want one of %s", s, strings.Join(Roles, ", "))
}

// MayLead reports whether a node of role r may ever lead.
func (r Role) MayLead() bool { return r == RoleCandidate }

// Votes reports whether a node of role r counts in quorum mode's
// majority.
func (r Role) Votes() bool { return r == RoleCandidate || r == RoleWitness }

// validate checks the role against the rest of the configuration.
func (r Role) validate(quorum int) error {
	switch {
	case r >= numRoles:
		return fmt.Errorf("role: unknown %v", r)
	case r == RoleWitness && quorum <= 0:
		return fmt.Errorf("role witness: a witness only votes in quorum mode, and quorum is off: set quorum (the number of candidates and witnesses), or make this node an observer")
	}
	return nil
}

// --- the core's view of roles -------------------------------------------------

// setRole records the role of member id, as membership reports it.
func (c *core) setRole(id NodeID, r Role) {
	if r == RoleCandidate {
		delete(c.roles, id)
		return
	}
	c.roles[id] = r
}

// roleOf is the role of member id (candidate unless membership said
// otherwise).
func (c *core) roleOf(id NodeID) Role { return c.roles[id] }

// benched reports whether this node's role keeps it out of the elections
// for good: it never claims, answers an ELECTION, or preempts. Unlike a
// standby, a benched node still takes part in a ring: it passes messages
// on without putting itself forward.
func (c *core) benched() bool { return !c.cfg.Role.MayLead() }

// nudgeStale: a witness or observer with no leader heard a claim of
// from at a term older than its own (the later term's leader died before
// the claimant heard of it). A candidate would elect and so move the
// cluster to a later term; a node that may not elect tells the claimant
// instead, with an ANSWER of its term: a leader that hears of a later
// term leads on under a fresh one (core_claims.go), which everyone accepts.
// Bully's candidates take no ANSWER from a node that may not lead.
//
// In the ring family the claim may also be of its own term, by a key
// smaller than the one it recognised for that term: two nodes led it, one
// on each side of a cut, and the larger has died since. The node may not
// follow the smaller (a term names one leader), nor elect, and no
// candidate that follows the claimant has reason to: the witnesses and
// observers that recognised the larger stayed leaderless for good (the
// simulator's role schedules, ring and Chang–Roberts 7267 and 17226,
// Hirschberg–Sinclair 12534). Its ANSWER names the term after its own,
// so that the leader leads on under a fresh one. Bully keeps its rule.
func (c *core) nudgeStale(from Key, term uint64) {
	if !c.benched() || c.absent() || c.leader != 0 {
		return
	}
	switch {
	case term < c.term:
		c.send(from.ID, wire.TypeAnswer)
	case term == c.term && c.cfg.Algorithm != AlgorithmBully:
		m := c.header(wire.TypeAnswer)
		m.Term = c.term + 1
		c.emit(Action{Kind: ActSend, To: from.ID, Msg: m, Count: 1})
	}
}

// passive reports whether this node passes a ring's election on without
// putting itself forward: its role, or a resign hold-off.
func (c *core) passive() bool { return c.benched() || c.holding() }
