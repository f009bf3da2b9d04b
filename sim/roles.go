package sim

import (
	"math/rand/v2"

	"github.com/lanleader/lanleader/election"
)

// GenerateRoles makes the role-aware twin of a random schedule for
// algorithm: the cluster and faults of GenerateFor (quorum: of
// GenerateQuorum), with some nodes made witnesses (quorum mode only: a
// witness votes there alone) or observers, at least one node left a
// candidate, and in half the seeds the largest key given to a node that
// may not lead, so that a larger non-candidate meets every election. In
// quorum mode N is the number of voters, candidates and witnesses.
func GenerateRoles(algorithm string, seed uint64, quorum bool) Schedule {
	sch := GenerateFor(algorithm, seed)
	if quorum {
		sch = GenerateQuorum(algorithm, seed)
	}
	r := rand.New(rand.NewPCG(seed, 0x201e5))
	nodes := sch.Config.Nodes
	pick := func() election.Role {
		if quorum && r.IntN(2) == 0 {
			return election.RoleWitness
		}
		return election.RoleObserver
	}
	for i := range nodes {
		if r.IntN(3) == 0 {
			nodes[i].Role = pick()
		}
	}
	largest := 0
	for i := range nodes {
		if nodes[largest].Key.Less(nodes[i].Key) {
			largest = i
		}
	}
	if r.IntN(2) == 0 {
		nodes[largest].Role = pick()
	}
	candidate := false
	for _, n := range nodes {
		candidate = candidate || n.Role.MayLead()
	}
	if !candidate {
		nodes[r.IntN(len(nodes))].Role = election.RoleCandidate
	}
	if quorum {
		voters := 0
		for _, n := range nodes {
			if n.Role.Votes() {
				voters++
			}
		}
		sch.Config.Timing.Quorum = voters
	}
	return sch
}
