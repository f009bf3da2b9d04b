package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/election"
)

// Local is a cluster of real agents in one process, on loopback: real
// memberlist, real UDP (unicast transport, since loopback has no
// multicast), ephemeral ports. The demo, the failover benchmark and the
// integration tests use it. It is not safe for concurrent use.
type Local struct {
	Agents []*Agent // nil while a node is down
	cfgs   []Config
	addr   netip.Addr
	seams  seams
}

// LocalOptions shape a Local cluster.
type LocalOptions struct {
	Nodes int
	// Base changes DefaultConfig into the configuration of every node
	// (nil: DefaultConfig as it is); Name, NodeID, Priority, Bind,
	// ElectionPort, Transport, Join, HTTP, StateFile and Logger are then
	// set per node.
	Base func(*Config)
	// Priority of node i (0-based); nil: all DefaultPriority.
	Priority func(i int) uint16
	// NodeID of node i; nil: i+1. Node i is named node-<i+1> either way.
	NodeID func(i int) uint64
	// Role of node i (one of election.Roles); nil: Base's.
	Role func(i int) string
	// HTTP gives each node an HTTP listener on a free loopback port.
	HTTP bool
	// Logger of node i; nil: discard.
	Logger func(i int) *slog.Logger
	// StateDir, in quorum mode, holds each node's StateFile,
	// node-<i+1>.state; empty: none.
	StateDir string
	// seams replace parts of the host in every node (the package's
	// tests).
	seams seams
}

// StartLocal starts opt.Nodes agents on 127.0.0.1, each joining the first.
func StartLocal(opt LocalOptions) (*Local, error) {
	if opt.Nodes < 1 {
		return nil, fmt.Errorf("local cluster: %d nodes", opt.Nodes)
	}
	l := &Local{Agents: make([]*Agent, opt.Nodes), cfgs: make([]Config, opt.Nodes), addr: netip.MustParseAddr("127.0.0.1"), seams: opt.seams}
	base := config.DefaultConfig()
	if opt.Base != nil {
		opt.Base(&base)
	}
	for i := range opt.Nodes {
		c := base
		c.Name = "node-" + strconv.Itoa(i+1)
		c.NodeID = uint64(i + 1)
		if opt.NodeID != nil {
			c.NodeID = opt.NodeID(i)
		}
		c.Priority = config.DefaultPriority
		if opt.Priority != nil {
			c.Priority = opt.Priority(i)
		}
		if opt.Role != nil {
			c.Role = opt.Role(i)
		}
		c.Bind = netip.AddrPortFrom(l.addr, 0).String()
		c.ElectionPort = 0
		c.Transport = config.TransportUnicast
		c.HTTP = ""
		if opt.HTTP {
			c.HTTP = netip.AddrPortFrom(l.addr, 0).String()
		}
		if opt.StateDir != "" && c.Quorum > 0 {
			c.StateFile = filepath.Join(opt.StateDir, c.Name+".state")
		}
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		if opt.Logger != nil {
			c.Logger = opt.Logger(i)
		}
		if i > 0 {
			c.Join = []string{l.Agents[0].GossipAddr().String()}
		}
		l.cfgs[i] = c
		if err := l.Start(i); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// Start (re)starts node i on the ports it had before.
func (l *Local) Start(i int) error {
	if l.Agents[i] != nil {
		return fmt.Errorf("node %d is running", i+1)
	}
	a, err := newAgent(l.cfgs[i], l.seams)
	if err != nil {
		return err
	}
	if err := a.Start(); err != nil {
		return err
	}
	l.Agents[i] = a
	// Restart on the same ports: memberlist refuses a known name at a new
	// address until the old one is reclaimed.
	l.cfgs[i].Bind = a.GossipAddr().String()
	l.cfgs[i].ElectionPort = int(a.ElectionAddr().Port())
	if l.cfgs[i].HTTP != "" {
		l.cfgs[i].HTTP = a.HTTPAddr()
	}
	if i > 0 {
		return nil
	}
	// Others join the first node, or any live node when it is down.
	for j := range l.cfgs {
		if j != i {
			l.cfgs[j].Join = []string{a.GossipAddr().String()}
		}
	}
	return nil
}

// SetJoin makes node i join the given nodes' gossip addresses when it
// next starts.
func (l *Local) SetJoin(i int, nodes ...int) {
	l.cfgs[i].Join = l.cfgs[i].Join[:0:0]
	for _, j := range nodes {
		l.cfgs[i].Join = append(l.cfgs[i].Join, l.cfgs[j].Bind)
	}
}

// Crash stops node i as a crash would: no RESIGN, no leave.
func (l *Local) Crash(i int) {
	if a := l.Agents[i]; a != nil {
		a.Crash()
		l.Agents[i] = nil
	}
}

// Stop stops node i gracefully (RESIGN if it leads, then leave).
func (l *Local) Stop(i int) error { return <-l.StopAsync(i) }

// StopAsync removes node i from the cluster's live nodes at once and
// stops it gracefully in the background; the channel yields Stop's
// result. A graceful stop takes as long as memberlist's leave, while the
// others elect at once on RESIGN: this lets a caller time the handover.
func (l *Local) StopAsync(i int) <-chan error {
	done := make(chan error, 1)
	a := l.Agents[i]
	if a == nil {
		done <- nil
		return done
	}
	l.Agents[i] = nil
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		done <- a.Stop(ctx)
	}()
	return done
}

// Close stops every node gracefully.
func (l *Local) Close() {
	for i := range l.Agents {
		l.Stop(i)
	}
}

// Agreement is the state of the live nodes: the one leader they all
// follow with one term, or why there is none.
type Agreement struct {
	Leader uint64 // node_id, 0 unless all agree
	Index  int    // index of the leader in Agents, -1 unless all agree
	Term   uint64
	Why    string // why there is no agreement
}

// Agreement reports whether every live node sees one leader, with one
// term, and that leader is live and leading.
func (l *Local) Agreement() Agreement {
	var leader, term uint64
	idx := -1
	live := 0
	var states []string
	for i, a := range l.Agents {
		if a == nil {
			continue
		}
		live++
		s := a.Status()
		states = append(states, fmt.Sprintf("%s:%s/%d/t%d", s.Name, s.State, s.LeaderID, s.Term))
		if s.LeaderID == 0 {
			return Agreement{Index: -1, Why: "no leader at " + s.Name + " " + fmt.Sprint(states)}
		}
		if leader == 0 {
			leader, term = s.LeaderID, s.Term
		}
		if s.LeaderID != leader || s.Term != term {
			return Agreement{Index: -1, Why: fmt.Sprintf("disagree: %v", states)}
		}
		if s.State == "leader" {
			idx = i
		}
	}
	if live == 0 {
		return Agreement{Index: -1, Why: "no live node"}
	}
	if idx < 0 || l.Agents[idx].cfg.NodeID != leader {
		return Agreement{Index: -1, Why: fmt.Sprintf("leader %d not live or not leading: %v", leader, states)}
	}
	return Agreement{Leader: leader, Index: idx, Term: term}
}

// ErrNoAgreement is returned by WaitAgreement when time runs out.
var ErrNoAgreement = errors.New("no agreement on a leader")

// WaitAgreement polls every millisecond until the live nodes agree on a
// leader for which accept returns true (nil: any), or timeout passes.
func (l *Local) WaitAgreement(timeout time.Duration, accept func(Agreement) bool) (Agreement, error) {
	deadline := time.Now().Add(timeout)
	for {
		ag := l.Agreement()
		if ag.Leader != 0 && (accept == nil || accept(ag)) {
			return ag, nil
		}
		if time.Now().After(deadline) {
			why := ag.Why
			if ag.Leader != 0 {
				why = fmt.Sprintf("agree on %d term %d, not the one wanted", ag.Leader, ag.Term)
			}
			return ag, fmt.Errorf("%w within %v: %s", ErrNoAgreement, timeout, why)
		}
		time.Sleep(time.Millisecond)
	}
}

// Live returns the indexes of the running nodes.
func (l *Local) Live() []int {
	var out []int
	for i, a := range l.Agents {
		if a != nil {
			out = append(out, i)
		}
	}
	return slices.Clip(out)
}

// Largest returns the index of the live node with the largest key
// (priority, node_id), -1 when none is live: the leader once a cluster
// with preemption has settled.
func (l *Local) Largest() int {
	best := -1
	key := func(i int) election.Key { return election.Key{Priority: l.cfgs[i].Priority, ID: l.cfgs[i].NodeID} }
	for _, i := range l.Live() {
		if best < 0 || key(best).Less(key(i)) {
			best = i
		}
	}
	return best
}
