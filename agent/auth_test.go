package agent

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/auth"
	"github.com/lanleader/lanleader/metrics"
	"github.com/lanleader/lanleader/wire"
)

var (
	secretA = []byte("cluster secret A, thirty-two bytes at least")
	secretB = []byte("cluster secret B, thirty-two bytes at least")
)

// sealWith encodes m with FlagAuth and seals it under the election key of
// secret: what an agent with that --key-file sends.
func sealWith(t *testing.T, secret []byte, m wire.Message) []byte {
	t.Helper()
	m.Flags |= wire.FlagAuth
	return auth.NewKeys(secret, nil).MACs()[0].Seal(encode(t, m))
}

// TestAuthHostilePackets: in a keyed cluster, forged, unsigned, wrongly
// signed and replayed packets — each a claim that would win if taken —
// are dropped and counted under auth or replay, and the leadership does
// not move; a packet signed with the key is taken, once.
func TestAuthHostilePackets(t *testing.T) {
	l := startLocal(t, LocalOptions{Nodes: 2, Base: func(c *Config) { c.Key = secretA }})
	ag := waitLeader(t, l, electBound, 1)
	victim := l.Agents[0]
	to := victim.ElectionAddr()
	cluster := wire.ClusterID(config.DefaultCluster)
	claim := wire.Message{Type: wire.TypeCoordinator, Cluster: cluster, From: 99, Priority: 65535, Term: ag.Term + 5,
		Incarnation: uint32(time.Now().Unix()), Seq: 10}
	forgedTag := encode(t, wire.Message{Type: wire.TypeCoordinator, Flags: wire.FlagAuth, Cluster: cluster, From: 99, Priority: 65535, Term: ag.Term + 5})
	forgedTag = append(forgedTag, make([]byte, wire.TagLen)...)
	rand.Read(forgedTag[len(forgedTag)-wire.TagLen:])
	genuine := sealWith(t, secretA, claim)
	tampered := bytes.Clone(genuine)
	tampered[7] ^= 1 // the priority

	s := newSender(t)
	cases := []struct {
		reason string
		b      []byte
	}{
		{"auth", encode(t, claim)},                    // no tag: a keyless sender
		{"auth", forgedTag},                           // a tag made up
		{"auth", sealWith(t, secretB, claim)},         // another key
		{"auth", tampered},                            // a genuine packet, changed
		{"short", genuine[:len(genuine)-1]},           // a genuine packet cut: the tag moves, the claim number is a byte short
		{"trailing", append(bytes.Clone(genuine), 0)}, // one byte more: the tag moves
		{"auth", encode(t, wire.Message{Type: wire.TypeHeartbeat, Cluster: cluster, From: 1, Priority: 65535, Term: 9})}, // our node_id, unsigned: no conflict
		{"auth", encode(t, wire.Message{Type: wire.TypeDiscover, Cluster: cluster, From: 99, Priority: 1, Addr: netip.MustParseAddrPort("127.0.0.1:1")})},
		{"short", genuine[:20]},
		{"cluster", sealWith(t, secretA, wire.Message{Type: wire.TypeCoordinator, Cluster: cluster + 1, From: 99, Priority: 65535, Term: 5})},
	}
	want := map[string]float64{}
	for _, c := range cases {
		s.send(c.b, 255, to)
		want[c.reason]++
	}
	waitDrops(t, victim, want)
	if now := l.Agreement(); now.Leader != ag.Leader || now.Term != ag.Term {
		t.Fatalf("leadership moved: %+v, was %+v", now, ag)
	}
	if st := victim.Status(); st.State == "conflict" {
		t.Fatalf("an unsigned packet with the victim's node_id put it in conflict: %+v", st)
	}

	// The genuine packet is taken (the key holder's claim wins, once it
	// has answered the victim's PROBE with a signed VOUCH: a claim that
	// would make a node leave a leader it hears waits for its claimant's
	// answer), once: sent again, and with an earlier incarnation, it is a
	// replay.
	s.send(genuine, 255, to)
	answer := claim
	answer.Type, answer.Leader, answer.Seq = wire.TypeVouch, 99, 12
	s.send(sealWith(t, secretA, answer), 255, to)
	waitFor(t, "the signed claim taken", failoverBound, func() (bool, string) {
		st := victim.Status()
		return st.LeaderID == 99, fmt.Sprintf("%+v", st)
	})
	s.send(genuine, 255, to)
	old := claim
	old.Incarnation--
	old.Seq = 11
	s.send(sealWith(t, secretA, old), 255, to)
	want["replay"] = 2
	waitDrops(t, victim, want)
}

// waitDrops waits until the victim's drop counters are exactly want.
func waitDrops(t *testing.T, a *Agent, want map[string]float64) {
	t.Helper()
	waitFor(t, "drop counters", failoverBound, func() (bool, string) {
		got := map[string]float64{}
		ok := true
		for reason, n := range want {
			got[reason] = testutil.ToFloat64(a.met.PacketsDropped.WithLabelValues(reason))
			ok = ok && got[reason] == n
		}
		return ok, fmt.Sprintf("dropped %v, want %v", got, want)
	})
}

// TestAuthKeylessCannotJoin: an agent without the key (or with another)
// does not join keyed agents; both sides log why; each leads alone.
func TestAuthKeylessCannotJoin(t *testing.T) {
	for _, other := range []struct {
		name string
		key  []byte
	}{{"no key", nil}, {"another key", secretB}} {
		t.Run(other.name, func(t *testing.T) {
			s := newAgentSet(t)
			base := testConfig("keyed", 1)
			base.Key = secretA
			keyed := s.start(0, base)
			cfg := base
			cfg.Name, cfg.NodeID, cfg.Key = "other", 2, other.key
			cfg.Join = []string{keyed.GossipAddr().String()}
			stranger := s.start(1, cfg)
			// Both sides say why: memberlist's refusal with the hint on the
			// keyed side, the failed join with the hint on the other.
			waitFor(t, "both sides log why", electBound, func() (bool, string) {
				logs := s.logs.String()
				var keyedWhy, otherWhy bool
				for _, line := range strings.Split(logs, "\n") {
					keyedWhy = keyedWhy || strings.Contains(line, "agent=node-1") && strings.Contains(line, "another --key-file")
					otherWhy = otherWhy || strings.Contains(line, "agent=node-2") && strings.Contains(line, "another --key-file")
				}
				return keyedWhy && otherWhy, "keyed logged why: " + fmt.Sprint(keyedWhy) + ", other: " + fmt.Sprint(otherWhy)
			})
			waitFor(t, "each leads alone", electBound, func() (bool, string) {
				a, b := keyed.Status(), stranger.Status()
				return a.State == "leader" && b.State == "leader", a.State + " " + b.State
			})
			if n := len(keyed.Status().Members) + len(stranger.Status().Members); n != 0 {
				t.Fatalf("members: %+v and %+v; want none on either side", keyed.Status().Members, stranger.Status().Members)
			}
		})
	}
}

// TestAuthKeyRotation: step 2 of the documented rotation — one agent
// signs with the new key and accepts the old, the other signs with the
// old and accepts the new — is one cluster: they gossip, agree on the
// leader, and drop nothing for auth.
func TestAuthKeyRotation(t *testing.T) {
	s := newAgentSet(t)
	base := testConfig("", 0) // named below
	c1 := base
	c1.Name, c1.NodeID, c1.Key, c1.AcceptKeys = "node-1", 1, secretB, [][]byte{secretA} // rotated
	a1 := s.start(0, c1)
	c2 := base
	c2.Name, c2.NodeID, c2.Key, c2.AcceptKeys = "node-2", 2, secretA, [][]byte{secretB} // not yet
	c2.Join = []string{a1.GossipAddr().String()}
	a2 := s.start(1, c2)
	waitFor(t, "one cluster across the rotation", electBound, func() (bool, string) {
		x, y := a1.Status(), a2.Status()
		return x.LeaderID == 2 && y.State == "leader" && len(x.Members) == 1 && x.Members[0].Alive && len(y.Members) == 1,
			fmt.Sprintf("node-1 %s leader %d members %d; node-2 %s", x.State, x.LeaderID, len(x.Members), y.State)
	})
	for _, a := range []*Agent{a1, a2} {
		if n := testutil.ToFloat64(a.met.PacketsDropped.WithLabelValues("auth")); n != 0 {
			t.Errorf("%s dropped %v packets for auth during a rotation", a.cfg.Name, n)
		}
	}
}

// TestResignNeedsKey: with a key, POST /resign needs the token derived
// from it (or from an accepted key); the status endpoints stay GET only.
func TestResignNeedsKey(t *testing.T) {
	l := startLocal(t, LocalOptions{Nodes: 2, HTTP: true, Base: func(c *Config) {
		c.Key, c.AcceptKeys = secretA, [][]byte{secretB}
	}})
	waitLeader(t, l, electBound, 1)
	leader := l.Agents[1]
	url := "http://" + leader.HTTPAddr() + "/resign"
	post := func(token string) int {
		req, _ := http.NewRequest(http.MethodPost, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tok := range []string{"", "00", ResignToken([]byte("not this cluster's secret, 32 bytes"))} {
		if code := post(tok); code != http.StatusUnauthorized {
			t.Fatalf("resign with token %q: %d, want 401", tok, code)
		}
	}
	if st := leader.Status(); st.State != "leader" {
		t.Fatalf("a refused resign moved the leader: %s", st.State)
	}
	for _, path := range []string{"/status", "/metrics", "/healthz"} {
		resp, err := http.Post("http://"+leader.HTTPAddr()+path, "text/plain", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST %s: %d, want 405", path, resp.StatusCode)
		}
	}
	if code := post(ResignToken(secretB)); code != http.StatusOK { // the accepted key's token
		t.Fatalf("resign with the token: %d, want 200", code)
	}
	waitLeader(t, l, failoverBound, 0)
}

// keyedAgent is an agent with secretA that has opened nothing: enough to
// run accept, the reader's checks.
func keyedAgent(tb testing.TB) *Agent {
	tb.Helper()
	c := testConfig("bench", 1)
	c.Priority, c.Key = 1, secretA
	a, err := New(c)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// The reader's cost per junk packet, after the read: what a flood of each
// kind costs an agent beyond the system call (go test ./agent -run '^$'
// -bench Accept). The figure × 50,000 packets/s is the CPU a 50,000
// packets/s flood adds.
func BenchmarkAccept(b *testing.B) {
	a := keyedAgent(b)
	macs := a.auth.keys.MACs()
	junk := make([]byte, 1024)
	rand.Read(junk)
	coord := wire.Message{Type: wire.TypeCoordinator, Cluster: a.cluster, From: 99, Priority: 65535, Term: 1 << 40}
	unsigned, _ := coord.Append(nil)
	coord.Flags = wire.FlagAuth
	forged, _ := coord.Append(nil)
	forged = append(forged, make([]byte, wire.TagLen)...)
	for _, c := range []struct {
		name, reason string
		p            []byte
	}{
		{"RandomBytes", "magic", junk},
		{"UnsignedCoordinator", "auth", unsigned},
		{"ForgedTagCoordinator", "auth", forged},
	} {
		b.Run(c.name, func(b *testing.B) {
			var m wire.Message
			for b.Loop() {
				if r, _ := a.accept(c.p, 255, netip.AddrPort{}, &m, macs, 0); r != c.reason {
					b.Fatal(r)
				}
			}
		})
	}
}

// FuzzAccept drives the reader's checks of a keyed agent with any
// datagram: nothing panics, every drop has a reason of the metric's list,
// and what is accepted carries a tag that verifies under the key (the
// seeds are signed packets; the fuzzer cannot forge one).
func FuzzAccept(f *testing.F) {
	a := keyedAgent(f)
	macs := a.auth.keys.MACs()
	for _, typ := range []wire.Type{wire.TypeCoordinator, wire.TypeHeartbeat, wire.TypeElection} {
		m := wire.Message{Type: typ, Cluster: a.cluster, From: 2, Priority: 100, Term: 3, Incarnation: 5, Seq: 1, Claim: 1}
		plain, _ := m.Append(nil)
		f.Add(plain, uint8(255))
		m.Flags = wire.FlagAuth
		b, _ := m.Append(nil)
		f.Add(macs[0].Seal(b), uint8(255))
	}
	reasons := map[string]bool{"": true}
	for _, r := range metrics.DropReasons {
		reasons[r] = true
	}
	f.Fuzz(func(t *testing.T, b []byte, ttl uint8) {
		var m wire.Message
		r, _ := a.accept(b, int(ttl), netip.AddrPort{}, &m, macs, 0)
		if !reasons[r] {
			t.Fatalf("reason %q is not in metrics.DropReasons", r)
		}
		if r == "" {
			msg, tag := wire.Split(b)
			if !macs[0].Verify(msg, tag) {
				t.Fatalf("accepted a datagram whose tag does not verify: %x", b)
			}
		}
	})
}
