package agent

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/udp"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/freeport"
	"github.com/lanleader/lanleader/internal/waitfor"
	"github.com/lanleader/lanleader/wire"
)

// sender sends raw datagrams to an agent's election socket with a chosen
// IP TTL.
type sender struct {
	t *testing.T
	p *ipv4.PacketConn
}

func newSender(t *testing.T) *sender {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &sender{t: t, p: ipv4.NewPacketConn(c)}
}

func (s *sender) send(b []byte, ttl int, to netip.AddrPort) {
	s.t.Helper()
	if err := s.p.SetTTL(ttl); err != nil {
		s.t.Fatal(err)
	}
	if _, err := s.p.WriteTo(b, nil, net.UDPAddrFromAddrPort(to)); err != nil {
		s.t.Fatal(err)
	}
}

func encode(t *testing.T, m wire.Message) []byte {
	t.Helper()
	b, err := m.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHostilePackets: packets that are not this cluster's, crossed a
// router (TTL below 255), are malformed, or claim this node's own node_id
// are dropped and counted by reason; the leadership does not move.
func TestHostilePackets(t *testing.T) {
	l := startLocal(t, LocalOptions{Nodes: 2})
	ag := waitLeader(t, l, electBound, 1)
	victim := l.Agents[0] // the follower
	to := victim.ElectionAddr()
	cluster := wire.ClusterID(config.DefaultCluster)
	// A claim that would win every election if it were accepted.
	claim := wire.Message{Type: wire.TypeCoordinator, Cluster: cluster, From: 99, Priority: 65535, Term: ag.Term + 5}
	s := newSender(t)

	cases := []struct {
		reason string
		b      []byte
		ttl    int
	}{
		{"ttl", encode(t, claim), 64},
		{"ttl", encode(t, claim), 1},
		{"cluster", encode(t, wire.Message{Type: wire.TypeCoordinator, Cluster: cluster + 1, From: 99, Priority: 65535, Term: 5}), 255},
		{"magic", []byte("GET / HTTP/1.0\r\n\r\n" + strings.Repeat("x", 40)), 255},
		{"short", encode(t, claim)[:20], 255},
		{"version", func() []byte { b := encode(t, claim); b[2] = 9; return b }(), 255},
		{"type", func() []byte { b := encode(t, claim); b[3] = 200; return b }(), 255},
		{"trailing", append(encode(t, claim), 0), 255},
		// A beacon must announce its sender's own address.
		{"addr", encode(t, wire.Message{Type: wire.TypeDiscover, Cluster: cluster, From: 99, Priority: 1, Addr: netip.MustParseAddrPort("198.18.0.77:7946")}), 255},
	}
	want := map[string]float64{}
	for _, c := range cases {
		s.send(c.b, c.ttl, to)
		want[c.reason]++
	}
	// A packet the victim sends to its own address (from its own socket):
	// its own, dropped as "self", no conflict.
	own := encode(t, wire.Message{Type: wire.TypeHeartbeat, Cluster: cluster, From: 1, Priority: 65535, Term: 9, Incarnation: victim.inc.Load()})
	if err := victim.tr.Send(own, to); err != nil {
		t.Fatal(err)
	}
	want["self"]++
	deadline := time.Now().Add(failoverBound)
	for reason, n := range want {
		waitfor.Until(t, "the drops counted", max(time.Until(deadline), 0), time.Millisecond, func() (bool, string) {
			got := testutil.ToFloat64(victim.met.PacketsDropped.WithLabelValues(reason))
			return got == n, fmt.Sprintf("dropped{reason=%q} = %v, want %v", reason, got, n)
		})
	}
	// Nothing got through: nothing moved.
	if now := l.Agreement(); now.Leader != ag.Leader || now.Term != ag.Term {
		t.Fatalf("leadership moved: %+v, was %+v", now, ag)
	}
	// The same claim with TTL 255 is genuine to the protocol and is taken
	// (once its claimant has vouched for itself, as a claimant that hears
	// answers the PROBE of a node it would take from a leader it hears):
	// that proves the drops above were the filters' doing. (Forged claims
	// are for authentication to stop.)
	s.send(encode(t, claim), 255, to)
	answer := claim
	answer.Type, answer.Leader = wire.TypeVouch, 99
	s.send(encode(t, answer), 255, to)
	waitfor.Until(t, "a well-formed claim with TTL 255 accepted", max(time.Until(deadline), 0), time.Millisecond, func() (bool, string) {
		st := victim.Status()
		return st.LeaderID == 99, fmt.Sprintf("%+v", st)
	})

	if st := victim.Status(); st.State == "conflict" {
		t.Fatalf("its own packet put the victim in conflict: %+v", st)
	}

	// A packet with the victim's own node_id and incarnation (a clone of
	// its host started in the same second) from another address: another
	// node has its node_id. It is dropped, counted, and puts the victim in
	// state conflict, naming where it came from, in /status and at error
	// level in the log.
	s.send(encode(t, wire.Message{Type: wire.TypeHeartbeat, Cluster: cluster, From: 1, Priority: 65535, Term: 9, Incarnation: victim.inc.Load()}), 255, to)
	evidence := "node_id 1 at " + s.p.LocalAddr().String()
	logged := "level=ERROR msg=\"another node sends election packets with this node's node_id (a cloned host?); node_ids must be unique\" agent=node-1 node=node-1 node_id=1 other_addr=" + s.p.LocalAddr().String()
	waitfor.Until(t, "a conflict from a packet with our node_id and incarnation from another address", max(time.Until(deadline), 0), time.Millisecond, func() (bool, string) {
		st := victim.Status()
		dropped := testutil.ToFloat64(victim.met.PacketsDropped.WithLabelValues("conflict"))
		return st.State == "conflict" && len(st.Conflict) == 1 && st.Conflict[0] == evidence && dropped == 1 && strings.Contains(l.logs.String(), logged),
			fmt.Sprintf("%+v, dropped %v; want the log line %s", st, dropped, logged)
	})
}

// freePort returns a port free for both TCP and UDP on 127.0.0.1, never
// one it returned before (two ports of one agent must differ).
func freePort(t *testing.T) int { return freeport.Get(t) }

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestStartErrors: what cannot be opened ends Start with a message naming
// it, and nothing stays open: the ports are free again afterwards.
func TestStartErrors(t *testing.T) {
	gp, ep, hp := freePort(t), freePort(t), freePort(t)
	cfg := func() Config {
		c := testConfig("x", 1)
		c.Bind, c.ElectionPort, c.HTTP = "127.0.0.1:"+itoa(gp), ep, "127.0.0.1:"+itoa(hp)
		return c
	}
	hold := func(network string, port int) func() {
		t.Helper()
		var c io.Closer
		var err error
		if network == "tcp" {
			c, err = net.Listen("tcp", "127.0.0.1:"+itoa(port))
		} else {
			c, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		}
		if err != nil {
			t.Fatal(err)
		}
		return func() { c.Close() }
	}
	cases := []struct {
		name  string
		setup func() func()
		cfg   func(*Config)
		want  string
	}{
		{"gossip port in use", func() func() { return hold("tcp", gp) }, nil,
			"bind 127.0.0.1:" + itoa(gp) + ": gossip port already in use"},
		{"election port in use", func() func() { return hold("udp", ep) }, nil,
			"election socket 127.0.0.1:" + itoa(ep) + ": port already in use"},
		{"http port in use", func() func() { return hold("tcp", hp) }, nil,
			"http 127.0.0.1:" + itoa(hp) + ": port already in use"},
		{"bind address not on this host", nil, func(c *Config) { c.Bind = "198.18.255.254:" + itoa(gp) },
			"bind 198.18.255.254: address not on this host"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			release := func() {}
			if c.setup != nil {
				release = c.setup()
			}
			cf := cfg()
			if c.cfg != nil {
				c.cfg(&cf)
			}
			a, err := New(cf)
			if err != nil {
				t.Fatal(err)
			}
			err = a.Start()
			release()
			if err == nil {
				a.Crash()
				t.Fatalf("Start succeeded, want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Start: %q, want one line containing %q", err, c.want)
			}
			// Nothing stays open: every port can be taken again.
			for _, p := range []struct {
				n    string
				port int
			}{{"tcp", gp}, {"udp", gp}, {"udp", ep}, {"tcp", hp}} {
				hold(p.n, p.port)()
			}
		})
	}
	c := testConfig("x", 1)
	c.Priority, c.Bind = 1, "nonsense"
	if _, err := New(c); err == nil || !strings.Contains(err.Error(), `bind "nonsense"`) {
		t.Errorf("New with a bad bind: %v", err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestOwnPacketOrClone: on an IPv4 and an IPv6 bind, a packet with the
// agent's node_id and incarnation is its own ("self") when it comes from
// its own election socket (sent to itself), and a clone's ("conflict")
// from any other socket, whatever the incarnation: the start second two
// cloned hosts share does not hide one from the other.
func TestOwnPacketOrClone(t *testing.T) {
	for _, c := range []struct{ name, ip, network string }{{"ipv4", "127.0.0.1", "udp4"}, {"ipv6", "::1", "udp6"}} {
		t.Run(c.name, func(t *testing.T) {
			other, err := net.ListenUDP(c.network, &net.UDPAddr{IP: net.ParseIP(c.ip)})
			if err != nil {
				t.Skipf("no %s loopback here: %v", c.name, err)
			}
			defer other.Close()
			// Link-local, as an agent's packets leave.
			if c.name == "ipv4" {
				err = ipv4.NewPacketConn(other).SetTTL(255)
			} else {
				err = ipv6.NewPacketConn(other).SetHopLimit(255)
			}
			if err != nil {
				t.Fatal(err)
			}
			set := newAgentSet(t)
			cfg := testConfig("node-1", 1)
			cfg.Bind = netip.AddrPortFrom(netip.MustParseAddr(c.ip), 0).String()
			a := set.start(0, cfg)
			if got := a.ElectionAddr().Addr(); got != netip.MustParseAddr(c.ip) {
				t.Fatalf("election socket on %v, want %s", got, c.ip)
			}
			dropped := func(reason string) float64 { return testutil.ToFloat64(a.met.PacketsDropped.WithLabelValues(reason)) }
			hb := encode(t, wire.Message{Type: wire.TypeHeartbeat, Cluster: a.cluster, From: 1, Priority: 100, Term: 1, Incarnation: a.inc.Load()})
			if err := a.tr.Send(hb, a.ElectionAddr()); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "its own packet counted as self", electBound, func() (bool, string) {
				return dropped("self") == 1, fmt.Sprintf("self %v, conflict %v", dropped("self"), dropped("conflict"))
			})
			if st := a.Status(); st.State == "conflict" || dropped("conflict") != 0 {
				t.Fatalf("its own packet made a conflict: %+v, conflict drops %v", st, dropped("conflict"))
			}
			if _, err := other.WriteToUDPAddrPort(hb, a.ElectionAddr()); err != nil {
				t.Fatal(err)
			}
			src := netip.MustParseAddrPort(other.LocalAddr().String())
			waitFor(t, "the clone's packet counted as conflict evidence", electBound, func() (bool, string) {
				st := a.Status()
				return st.State == "conflict" && dropped("conflict") == 1 && slices.Equal(st.Conflict, []string{"node_id 1 at " + src.String()}),
					fmt.Sprintf("%s %v, self %v, conflict %v", st.State, st.Conflict, dropped("self"), dropped("conflict"))
			})
			if dropped("self") != 1 {
				t.Errorf("self drops %v after the clone's packet, want 1", dropped("self"))
			}
		})
	}
}

// TestConflictNotices: a node in conflict tells every node it knows to
// share its node_id, by a beacon (DISCOVER) to its election address: at
// once when the conflict begins, then every housekeeping round while it
// lasts (so that the other's evidence does not age out while both are
// silent), and at once to one more such node heard of meanwhile (which
// may have started after this node's last packet, and lead until told).
func TestConflictNotices(t *testing.T) {
	set := newAgentSet(t)
	a := set.start(0, testConfig("node-1", 1))
	clone := func() *net.UDPConn {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if err := ipv4.NewPacketConn(c).SetTTL(255); err != nil {
			t.Fatal(err)
		}
		return c
	}
	// notice reads c until a beacon of node 1 announcing a's gossip
	// address arrives, at most within d; it returns when.
	notice := func(c *net.UDPConn, what string, d time.Duration) time.Time {
		t.Helper()
		deadline := time.Now().Add(d)
		c.SetReadDeadline(deadline)
		buf := make([]byte, udp.ReadBuffer)
		for {
			n, err := c.Read(buf)
			if err != nil {
				t.Fatalf("%s: no beacon within %v: %v", what, d, err)
			}
			var m wire.Message
			if wire.Decode(buf[:n], &m) == nil && m.Type == wire.TypeDiscover && m.From == 1 && m.Addr == a.GossipAddr() {
				return time.Now()
			}
		}
	}
	hb := func(c *net.UDPConn) {
		t.Helper()
		b := encode(t, wire.Message{Type: wire.TypeHeartbeat, Cluster: a.cluster, From: 1, Priority: 100, Term: 1, Incarnation: a.inc.Load()})
		if _, err := c.WriteToUDPAddrPort(b, a.ElectionAddr()); err != nil {
			t.Fatal(err)
		}
	}
	x, s := clone(), clone()
	t0 := time.Now()
	hb(x)
	if at := notice(x, "the conflict begins", time.Second); at.Sub(t0) > time.Second {
		t.Fatalf("the first beacon came %v after the clone's packet", at.Sub(t0))
	}
	// The housekeeping rounds' beacons: about a second apart, although x
	// sends nothing more.
	prev := time.Time{}
	for k := range 2 {
		at := notice(x, fmt.Sprintf("housekeeping round %d", k+1), 2*time.Second)
		if !prev.IsZero() && (at.Sub(prev) < 500*time.Millisecond || at.Sub(prev) > 1500*time.Millisecond) {
			t.Errorf("housekeeping beacons %v apart, want about %v", at.Sub(prev), housekeepEvery)
		}
		prev = at
	}
	// Right after a round, another clone speaks: it is told at once, not
	// at the next round (a second away).
	t1 := time.Now()
	hb(s)
	if at := notice(s, "a new clone heard of", 700*time.Millisecond); at.Sub(t1) > 700*time.Millisecond {
		t.Fatalf("the new clone was told %v after its packet", at.Sub(t1))
	}
	// The status is published after the step that sent the beacon.
	waitFor(t, "conflict with two pieces of evidence", time.Second, func() (bool, string) {
		st := a.Status()
		return st.State == "conflict" && len(st.Conflict) == 2, fmt.Sprintf("%s %v", st.State, st.Conflict)
	})
}

// fullConn is an election socket whose send buffer is full: every write
// is refused at once, as the kernel refuses one (udp.ErrWouldBlock).
type fullConn struct {
	udp.Conn
	writes int
}

func (c *fullConn) WriteTo([]byte, netip.AddrPort) error { c.writes++; return udp.ErrWouldBlock }

// A send the kernel cannot take at once (the socket's buffer is full of
// datagrams waiting for a neighbour that does not answer ARP) is dropped
// and counted as lanleader_packets_dropped_total{reason="sndbuf"}, on the
// unicast and the multicast paths alike; the agent goes on.
// (udp's TestSendNeverWaits shows that the kernel's refusal comes at
// once.)
func TestSendBufferFullCounted(t *testing.T) {
	a, err := New(testConfig("node-1", 1))
	if err != nil {
		t.Fatal(err)
	}
	c := &fullConn{}
	a.tr = &udp.Transport{Uni: c, Group: netip.MustParseAddrPort("239.255.0.1:7947")}
	dropped := func() float64 { return testutil.ToFloat64(a.met.PacketsDropped.WithLabelValues("sndbuf")) }
	b := encode(t, wire.Message{Type: wire.TypeHeartbeat, Cluster: a.cluster, From: 1, Priority: 100, Term: 1})
	a.sendTo(b, netip.MustParseAddrPort("198.18.0.2:7947"), wire.TypeHeartbeat)
	if c.writes != 1 || dropped() != 1 {
		t.Fatalf("unicast: %d writes, %v counted; want 1 and 1", c.writes, dropped())
	}
	a.do(election.Action{Kind: election.ActBroadcast, Msg: wire.Message{Type: wire.TypeCoordinator, From: 1, Priority: 100, Term: 1}, Scope: election.ScopeAll, Count: 2})
	if c.writes != 2 || dropped() != 2 {
		t.Fatalf("multicast: %d writes, %v counted; want 2 and 2", c.writes, dropped())
	}
	// Another failure is not the buffer's: not counted.
	a.sent1(errors.New("sendto: network unreachable"), netip.MustParseAddrPort("198.18.0.3:7947"), wire.TypeHeartbeat)
	if dropped() != 2 {
		t.Fatalf("another error counted as sndbuf: %v", dropped())
	}
}
