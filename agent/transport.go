package agent

// The election transport as the agent uses it: the reader goroutines that
// receive, check and hand packets to the loop (read, accept), and the
// loop's sending (encode, unicast, fan-out).

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/auth"
	"github.com/lanleader/lanleader/agent/internal/udp"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/internal/ident"
	"github.com/lanleader/lanleader/wire"
)

// read is a socket's reader goroutine: it drops what is not for this
// cluster's election (counting why) and hands the rest to the loop.
func (a *Agent) read(c udp.Conn) {
	defer a.readers.Done()
	buf := make([]byte, udp.ReadBuffer)
	failures := 0
	var macs []*wire.MAC // this goroutine's own
	if a.auth.keys != nil {
		macs = a.auth.keys.MACs()
	}
	for {
		n, ttl, src, err := c.ReadFrom(buf)
		at := a.now()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Errors such as an ICMP error reported on the socket are
			// passing; a socket that only fails is fatal.
			if failures++; failures >= maxReadFailures {
				a.log.Error("election socket keeps failing", "err", err)
				a.fail(fmt.Errorf("election socket: %d reads failed in a row, the last: %w", failures, err))
				return
			}
			a.log.Debug("election socket read", "err", err)
			continue
		}
		failures = 0
		var p packet
		if ua, ok := src.(*net.UDPAddr); ok {
			ap := ua.AddrPort()
			p.src = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		}
		reason, why := a.accept(buf[:n], ttl, p.src, &p.msg, macs, at)
		if why != "" && a.auth.log.Due() {
			a.log.Warn("dropped an election packet that is not authenticated with this cluster's key (one line per 10s at most; lanleader_packets_dropped_total{reason=\"auth\"} counts them)",
				"from", p.src.String(), "node_id", p.msg.From, "why", why)
		}
		if reason == "" && p.msg.Type == wire.TypeDiscover && p.msg.Addr.Addr() != p.src.Addr() {
			// A beacon announces its sender's own gossip address, never
			// another host's: an agent must not be made to connect
			// anywhere else.
			reason = "addr"
		}
		if reason != "" {
			a.met.PacketsDropped.WithLabelValues(reason).Inc()
			// Another node with this node's node_id is evidence of a
			// conflict: the loop records it.
			if reason != ident.Conflict.Reason() {
				continue
			}
			p.conflict = true
		} else {
			a.met.MessagesReceived.WithLabelValues(p.msg.Type.String()).Inc()
		}
		p.at = at
		select {
		case a.pkts <- p:
		case <-a.quit:
			return
		}
	}
}

// ident is what identifies this node's own packets. The node_id (a
// reload cannot change it) and the election address do not change while
// the agent runs.
func (a *Agent) ident() ident.Self {
	s := ident.Self{NodeID: a.cfg.NodeID, Incarnation: a.inc.Load()}
	if a.tr != nil { // nil only in tests that call accept on an agent never started
		s.Addr = a.tr.Local
	}
	return s
}

// maxReadFailures is how many reads in a row may fail before the
// election socket is declared broken.
const maxReadFailures = 1000

// accept decodes b, which came from src, into m and returns why it must
// be dropped, or "". With "auth" it also says why in words, for the log.
// The order of the checks is the order of their cost: the TTL, the header
// and body (no allocation), the cluster, then the tag (an HMAC), then who
// sent it (ident.Classify: "self" for our own, "conflict" for another
// node with our node_id), then the replay window. A packet with this
// node's node_id is evidence of a conflict only once its tag verifies: a
// forged one must not take this node out of the election.
func (a *Agent) accept(b []byte, ttl int, src netip.AddrPort, m *wire.Message, macs []*wire.MAC, at time.Duration) (reason, why string) {
	if ttl >= 0 && ttl < udp.LinkLocalTTL {
		return "ttl", ""
	}
	msg, tag := wire.Split(b)
	if err := wire.Decode(msg, m); err != nil {
		return wire.Reason(err), ""
	}
	if m.Cluster != a.cluster {
		return "cluster", ""
	}
	switch {
	case a.auth.keys == nil && m.Flags&wire.FlagAuth != 0:
		return "auth", "the sender signs its packets (it has a --key-file) and this agent has no key: give every agent the same --key-file"
	case a.auth.keys == nil:
	case tag == nil:
		return "auth", "the packet has no tag: the sender runs without --key-file"
	case !auth.Verify(macs, msg, tag):
		return "auth", "the tag does not verify: the sender has another --key-file, or the packet is forged"
	}
	if v := ident.Classify(a.ident(), ident.Packet{From: m.From, Incarnation: m.Incarnation, Src: src}); v != ident.Other {
		if v == ident.Conflict && a.auth.keys != nil && m.Incarnation == a.inc.Load() && a.sent.MayHaveSent(m.Seq, b) {
			// One of our own packets, replayed from elsewhere: nobody else
			// can sign under our node_id and incarnation but a clone, and
			// a clone's packets are not ours byte for byte. Taken for a
			// conflict, a replay would take this node out of the
			// elections.
			return ident.Own.Reason(), ""
		}
		return v.Reason(), ""
	}
	if a.auth.replay != nil {
		fresh := false
		if m.Type == wire.TypeNotice {
			// Built and signed when the leadership began, sent by the
			// guard when the agent died: once per sender and term.
			fresh = a.auth.replay.CheckNotice(m.From, m.Incarnation, m.Term, at)
		} else {
			fresh = a.auth.replay.Check(m.From, m.Incarnation, m.Seq, at)
		}
		if !fresh {
			return "replay", ""
		}
	}
	return "", ""
}

// fanOut sends a one-to-all message by unicast to every live member in
// its scope, and to the nodes that spoke recently but that memberlist does
// not list yet.
func (a *Agent) fanOut(b []byte, act election.Action) {
	l := &a.loop
	self := a.machine.Status().Self
	inScope := func(k election.Key) bool {
		return k.ID != a.cfg.NodeID && (act.Scope != election.ScopeLarger || self.Less(k))
	}
	sent := l.fanned
	clear(sent)
	for _, m := range l.members {
		if !m.alive() || !m.metaOK || !inScope(election.Key{Priority: m.meta.Priority, ID: m.meta.NodeID}) {
			continue
		}
		sent[m.meta.NodeID] = true
		a.sendTo(b, m.meta.Election, act.Msg.Type)
	}
	now := a.now()
	for id, p := range l.peers {
		if sent[id] || now-p.seen > peerMemory || !inScope(p.key) {
			continue
		}
		a.sendTo(b, p.addr, act.Msg.Type)
	}
}

func (a *Agent) sendTo(b []byte, dst netip.AddrPort, t wire.Type) {
	a.sent1(a.tr.Send(b, dst), dst, t)
}

// sent1 handles the result of one send. A send the kernel could not
// take at once (udp.ErrWouldBlock: the socket's buffer is full of
// datagrams waiting for a neighbour that does not answer) is dropped and
// counted, as a lost packet would be, rather than waited for: the loop
// must not stall.
func (a *Agent) sent1(err error, dst netip.AddrPort, t wire.Type) {
	if err == nil {
		return
	}
	if errors.Is(err, udp.ErrWouldBlock) {
		a.met.PacketsDropped.WithLabelValues("sndbuf").Inc()
	}
	a.log.Debug("send", "to", dst.String(), "type", t.String(), "err", err)
}

// encode stamps a message with the cluster, incarnation and sequence and
// encodes it into the loop's buffer.
func (a *Agent) encode(m wire.Message) []byte {
	l := &a.loop
	l.seq++
	if l.seq == 0 {
		// The sequence has wrapped (after 4 billion packets): a new
		// incarnation keeps the receivers' windows moving forward.
		a.inc.Add(1)
		l.seq = 1
	}
	m.Cluster, m.Incarnation, m.Seq = a.cluster, a.inc.Load(), l.seq
	if l.mac != nil {
		m.Flags |= wire.FlagAuth
	}
	b, err := m.Append(l.buf[:0])
	if err != nil {
		a.log.Error("encode", "type", m.Type.String(), "err", err)
		return nil
	}
	if l.mac != nil {
		b = l.mac.Seal(b)
	}
	l.buf = b
	a.sent.Add(l.seq, b)
	return b
}

// electionAddr is where node id's election socket is: from its metadata,
// or else from the source of its last packet.
func (a *Agent) electionAddr(id uint64) (netip.AddrPort, bool) {
	for _, m := range a.loop.members {
		if m.metaOK && m.meta.NodeID == id && m.alive() {
			return m.meta.Election, true
		}
	}
	p, ok := a.loop.peers[id]
	return p.addr, ok
}

// packet is one decoded election message and where and when it arrived.
type packet struct {
	msg wire.Message
	src netip.AddrPort
	at  time.Duration // the agent's clock, read right after the read returned
	// conflict: the packet was dropped because another node sends with
	// this node's node_id; it reaches the loop only as that evidence.
	conflict bool
}

// openSockets opens the HTTP listener and the election sockets (joined to
// the multicast group with the multicast transport).
func (a *Agent) openSockets(ip netip.Addr, ifi *net.Interface) (err error) {
	cfg := &a.cfg
	if cfg.HTTP != "" {
		if a.web.ln, err = net.Listen("tcp", cfg.HTTP); err != nil {
			return udp.ListenError("http", cfg.HTTP, err)
		}
	}
	var group netip.Addr
	if cfg.Transport == config.TransportMulticast {
		group = cfg.Group
		if !group.IsValid() {
			group = config.DefaultGroup4
			if !ip.Is4() {
				group = config.DefaultGroup6
			}
		}
	}
	a.tr, err = udp.Open(netip.AddrPortFrom(ip, uint16(cfg.ElectionPort)), group, ifi)
	return err
}
