package agent

import (
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/wire"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestNoticeHostile: in a keyed cluster a NOTICE is taken only with the
// cluster's tag, once per sender and term, and acted on only when its
// sender is the leader followed in exactly that term: a forged one is
// dropped as auth, one of another leadership as notice, a replay as
// replay; the genuine one makes the follower elect at once, and says so.
func TestNoticeHostile(t *testing.T) {
	l := startLocal(t, LocalOptions{Nodes: 2, Base: func(c *Config) { c.Key = secretA }})
	ag := waitLeader(t, l, electBound, 1)
	victim, leader := l.Agents[0], l.Agents[1]
	to := victim.ElectionAddr()
	notice := wire.Message{Type: wire.TypeNotice, Cluster: wire.ClusterID(config.DefaultCluster), From: ag.Leader,
		Priority: config.DefaultPriority, Term: ag.Term, Incarnation: leader.inc.Load()}
	forged := encode(t, wire.Message{Type: wire.TypeNotice, Flags: wire.FlagAuth, Cluster: notice.Cluster, From: ag.Leader,
		Priority: notice.Priority, Term: ag.Term, Incarnation: notice.Incarnation})
	forged = append(forged, make([]byte, wire.TagLen)...)
	rand.Read(forged[len(forged)-wire.TagLen:])
	other := notice
	other.From = 99
	earlier := notice
	earlier.Term = ag.Term - 1

	s := newSender(t)
	want := map[string]float64{"auth": 0, "notice": 0, "replay": 0}
	for _, c := range []struct {
		reason string
		b      []byte
	}{
		{"auth", forged},
		{"auth", encode(t, notice)}, // unsigned
		{"auth", sealWith(t, secretB, notice)},
		{"notice", sealWith(t, secretA, other)},
		{"notice", sealWith(t, secretA, earlier)},
	} {
		s.send(c.b, 255, to)
		want[c.reason]++
	}
	waitDrops(t, victim, want)
	if st := victim.Status(); st.LeaderID != ag.Leader || st.Term != ag.Term {
		t.Fatalf("the follower left its leader for notices it must drop: %+v", st)
	}
	if strings.Contains(l.logs.String(), "the leader's guard says it is gone") {
		t.Fatalf("a dropped notice was acted on:\n%s", l.logs)
	}

	genuine := sealWith(t, secretA, notice)
	s.send(genuine, 255, to)
	waitFor(t, "the follower acts on the genuine notice", failoverBound, func() (bool, string) {
		return strings.Contains(l.logs.String(), `level=INFO msg="the leader's guard says it is gone, and its job with it: electing now" agent=node-1`), ""
	})
	s.send(genuine, 255, to)
	want["replay"]++
	waitDrops(t, victim, want)
	if n := strings.Count(l.logs.String(), "the leader's guard says it is gone"); n != 1 {
		t.Fatalf("the notice was acted on %d times, want once:\n%s", n, l.logs)
	}
}

// TestNoticeFreesTheVoteOfALeaderNoLongerFollowed: quorum mode, node-3
// leads and crashes. Its notice reaches node-2 first, which elects at
// once and claims; node-1, whose vote for node-3 holds until node-3's
// lease ends, hears that claim and stops following node-3 before its
// own copy of the notice comes. That copy still frees its vote: node-2
// leads well before node-3's lease (2.1s) would have run out, and node-1
// says why. (A driver that dropped the notice, since node-1 no longer
// followed node-3, kept the vote to the lease's end.)
func TestNoticeFreesTheVoteOfALeaderNoLongerFollowed(t *testing.T) {
	l := startLocal(t, LocalOptions{Nodes: 3, StateDir: t.TempDir(),
		Priority: func(i int) uint16 { return uint16(100 + 10*i) },
		Base: func(c *Config) {
			c.Quorum, c.SuspectAfter = 3, 2*time.Second
			c.Lease = config.DefaultLease(c.Heartbeat, c.SuspectAfter)
			c.LeaseMargin = config.DefaultLeaseMargin(c.Lease)
		}})
	ag := waitLeader(t, l, electBound, 2)
	voter, claimant := l.Agents[0], l.Agents[1]
	notice := wire.Message{Type: wire.TypeNotice, Cluster: wire.ClusterID(config.DefaultCluster), From: ag.Leader,
		Priority: 120, Term: ag.Term, Incarnation: l.Agents[2].inc.Load()}
	if st := voter.Status(); st.VotedTerm != ag.Term {
		t.Fatalf("node-1 voted in term %d, want %d", st.VotedTerm, ag.Term)
	}
	l.Crash(2)
	s := newSender(t)
	s.send(encode(t, notice), 255, claimant.ElectionAddr())
	waitFor(t, "node-1 stops following node-3 on node-2's claim", failoverBound, func() (bool, string) {
		st := voter.Status()
		return st.LeaderID != ag.Leader || st.Term != ag.Term, fmt.Sprintf("%s leader %d term %d", st.State, st.LeaderID, st.Term)
	})
	t0 := time.Now()
	s.send(encode(t, notice), 255, voter.ElectionAddr())
	next, err := l.WaitAgreement(failoverBound, func(a Agreement) bool { return a.Index == 1 })
	if err != nil {
		t.Fatalf("node-2 to lead after the notices: %v", err)
	}
	if took := time.Since(t0); took > time.Second {
		t.Errorf("node-2 led %v after node-1's notice: node-1 kept its vote for node-3 (lease %v)", took, l.cfgs[0].Lease)
	}
	if next.Term <= ag.Term {
		t.Errorf("node-2 leads in term %d, want after %d", next.Term, ag.Term)
	}
	want := fmt.Sprintf(`msg="the leader's guard says it is gone, and its job with it: this node's vote for it is free" agent=node-1 node=node-1 leader=node-3 leader_id=3 term=%d`, ag.Term)
	if !strings.Contains(l.logs.String(), want) {
		t.Errorf("node-1's log lacks %q", want)
	}
	if d := testutil.ToFloat64(voter.met.PacketsDropped.WithLabelValues("notice")); d != 0 {
		t.Errorf("node-1 counted %v notices dropped, want 0", d)
	}
}
