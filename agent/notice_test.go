package agent

import (
	"crypto/rand"
	"strings"
	"testing"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/wire"
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
