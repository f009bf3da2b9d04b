package agent

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lanleader/lanleader/agent/internal/statefile"
)

// TestOwnClaimGoesOutBeforeItsVoteIsKept: in quorum mode a node's claim
// (COORDINATOR) goes out before the vote it gives itself is written to its
// state file, so that the others' votes are written while its own is; a
// vote for another node is written before it goes out (no
// HEARTBEAT_ACK before the first vote is kept). Checked at the first
// election of three fresh nodes, in the state file's writer.
func TestOwnClaimGoesOutBeforeItsVoteIsKept(t *testing.T) {
	dir := t.TempDir()
	type save struct {
		name                string
		term                uint64
		claimsOut, votesOut float64
	}
	var (
		mu    sync.Mutex
		saves []save
	)
	record := func(a *Agent, path string, term uint64) error {
		mu.Lock()
		saves = append(saves, save{strings.TrimSuffix(filepath.Base(path), ".state"), term,
			testutil.ToFloat64(a.met.MessagesSent.WithLabelValues("COORDINATOR")),
			testutil.ToFloat64(a.met.MessagesSent.WithLabelValues("HEARTBEAT_ACK"))})
		mu.Unlock()
		return statefile.Save(path, term)
	}
	l := startLocal(t, LocalOptions{Nodes: 3, StateDir: dir, Base: func(c *Config) {
		c.Quorum = 3
		c.DeriveTimeouts()
	}, seams: seams{saveVote: record}})
	first := waitLeader(t, l, electBound, 2)
	leader := "node-3"
	mu.Lock()
	defer mu.Unlock()
	seen, claimed := map[string]bool{}, false
	for _, s := range saves {
		if s.name == leader && s.term == first.Term {
			claimed = true
			if s.claimsOut < 1 {
				t.Errorf("%s kept its own vote for term %d before its claim went out (%v COORDINATORs sent)", s.name, s.term, s.claimsOut)
			}
		}
		if seen[s.name] {
			continue
		}
		seen[s.name] = true
		if (s.name != leader || s.term != first.Term) && s.votesOut != 0 {
			t.Errorf("%s's first vote (term %d) went out (%v HEARTBEAT_ACKs) before it was kept", s.name, s.term, s.votesOut)
		}
	}
	if !claimed || len(seen) != 3 {
		t.Errorf("state file writes %+v: want each node's first vote and %s's own for term %d", saves, leader, first.Term)
	}
}
