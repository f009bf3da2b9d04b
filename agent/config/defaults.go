package config

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/lanleader/lanleader/agent/internal/vip"
	"github.com/lanleader/lanleader/election"
)

// DefaultConfig is the configuration of an agent with every default, for
// this host: what lanleader run uses with no flags. Each field is set, and
// zero means zero: a caller changes what it needs and leaves the rest. The
// why of each value is on its constant; the others say it here.
//
// Three defaults follow from other fields; DefaultConfig derives them from
// its own values, and a caller that changes those recomputes them:
// SuspectAfter, Lease and LeaseMargin follow Heartbeat and Quorum
// (DeriveTimeouts). The multicast group follows Bind's IP family, and is
// chosen by Start while Group is the zero Addr.
func DefaultConfig() Config {
	// The name operators know the host by; unique on a LAN.
	name, _ := os.Hostname()
	c := Config{
		Name: name,
		// Stable across restarts and reinstalls of the agent, and unique per
		// host without anyone choosing it (see DefaultNodeID).
		NodeID:   DefaultNodeID(),
		Priority: DefaultPriority,
		Cluster:  DefaultCluster,
		// Every address, so that the agent starts before the network is
		// fully configured; it announces the default route's.
		Bind:         net.JoinHostPort("0.0.0.0", strconv.Itoa(DefaultGossipPort)),
		ElectionPort: DefaultElectionPort,
		HTTP:         DefaultHTTP,
		Heartbeat:    DefaultHeartbeat,
		// The fixed timeout is predictable and needs no history; phi-accrual
		// must first learn the heartbeats' jitter.
		Detector: DetectorFixed,
		// Bully elects in one round trip (one multicast each way on a LAN);
		// a ring election goes round every member.
		Algorithm: election.AlgorithmBully,
		// Every node may lead unless told otherwise.
		Role: election.RoleCandidate.String(),
		// One packet for a message to all; clouds that drop multicast set
		// unicast.
		Transport: TransportMulticast,
		// The textbook bully: the largest key leads, so that the hosts an
		// operator prefers lead whenever they are up.
		Preempt: true,
		// PreemptDelay 0: a returning node takes over at once.
		// Quorum 0: the textbook, for which a LAN needs no cluster size;
		// quorum mode is chosen with the size.
		DiscoverInterval: DefaultDiscoverInterval,
		JobGrace:         DefaultJobGrace,
		JobMaxFailures:   DefaultJobMaxFailures,
		JobFailureWindow: DefaultJobFailureWindow,
		JobMode:          JobModeAlways,
		HookTimeout:      DefaultHookTimeout,
		CheckInterval:    DefaultCheckInterval,
		CheckWeight:      DefaultCheckWeight,
		CheckRise:        1,
		CheckFall:        1,
		// The why of each is on its constant; a link that is down cannot
		// carry the addresses, so the node should not lead.
		VIPAnnounceRepeat:   DefaultVIPAnnounceRepeat,
		VIPAnnounceInterval: DefaultVIPAnnounceInterval,
		VIPAnnounceDelay:    DefaultVIPAnnounceDelay,
		VIPAnnounceRefresh:  DefaultVIPAnnounceRefresh,
		VIPTrackLink:        true,
		StartTimeout:        DefaultStartTimeout,
		// Standard error, at level info: what systemd's journal collects.
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}
	c.DeriveTimeouts()
	return c
}

// DefaultSuspectAfter is the default SuspectAfter for a heartbeat
// interval: one and a half heartbeats, so that the alarm rings after one
// lost heartbeat. The alarm is a question (the follower asks the leader
// and the members that heard it, up to 20 times within ConfirmTimeout),
// so a lost heartbeat costs a few packets, and a leader that is gone is
// replaced a confirmation later (155ms after its last heartbeat with the
// default heartbeat). The election's window for lost heartbeats (its
// LossWindow: the listen period, the lease) stays three heartbeats.
//
// In quorum mode (quorum > 0) it is three heartbeats: a failover there
// waits for the lease to run out (Lease + LeaseMargin after the last
// acknowledgement) whenever the alarm rings, and an earlier alarm only
// makes more followers confirm and pre-vote meanwhile.
func DefaultSuspectAfter(heartbeat time.Duration, quorum int) time.Duration {
	if quorum > 0 {
		return 3 * heartbeat
	}
	return 3 * heartbeat / 2
}

// DefaultLease is the default Lease (quorum mode) for a heartbeat interval
// and SuspectAfter: a heartbeat more than the election's window for lost
// heartbeats (three heartbeats, or SuspectAfter when longer:
// election.Config.LossWindow), so that two heartbeats may be lost in a
// row without a change of leader, however early the alarm rings.
func DefaultLease(heartbeat, suspectAfter time.Duration) time.Duration {
	return max(suspectAfter, 3*heartbeat) + heartbeat
}

// DefaultLeaseMargin is the default LeaseMargin (quorum mode) for a lease:
// a tenth of it, which leaves a SIGKILLed job time to die, and never less
// than election.MinLeaseMargin, the clock drift over the lease.
func DefaultLeaseMargin(lease time.Duration) time.Duration {
	return max(lease/10, election.MinLeaseMargin(lease))
}

// DeriveTimeouts sets the timeouts whose defaults follow from Heartbeat and
// Quorum to those defaults: SuspectAfter (DefaultSuspectAfter), and with
// Quorum > 0 Lease and LeaseMargin (DefaultLease, DefaultLeaseMargin), 0
// without. DefaultConfig derives its own so; call it after changing
// Heartbeat or Quorum, then set any of the three that should differ.
func (c *Config) DeriveTimeouts() {
	c.SuspectAfter = DefaultSuspectAfter(c.Heartbeat, c.Quorum)
	c.Lease, c.LeaseMargin = 0, 0
	if c.Quorum > 0 {
		c.Lease = DefaultLease(c.Heartbeat, c.SuspectAfter)
		c.LeaseMargin = DefaultLeaseMargin(c.Lease)
	}
}

// DefaultNodeID derives a node_id from /etc/machine-id, or from the host
// name where there is none: the first bytes of a SHA-256, cut to
// 1 … MaxNodeID. It is stable across restarts of the same host.
func DefaultNodeID() uint64 {
	seed, err := os.ReadFile("/etc/machine-id")
	if err != nil || len(strings.TrimSpace(string(seed))) == 0 {
		h, _ := os.Hostname()
		seed = []byte(h)
	}
	sum := sha256.Sum256(append([]byte("lanleader node id\x00"), strings.TrimSpace(string(seed))...))
	id := binary.BigEndian.Uint64(sum[:8]) & MaxNodeID
	if id == 0 {
		id = 1
	}
	return id
}

// BindAddrPort returns Bind as an address and port (port 7946 when Bind
// has none).
func (c *Config) BindAddrPort() (netip.AddrPort, error) {
	s := c.Bind
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap, nil
	}
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return netip.AddrPortFrom(a, DefaultGossipPort), nil
	}
	return netip.AddrPort{}, fmt.Errorf("bind %q: want an IP address with an optional port, like 192.0.2.1:7946", s)
}

// ElectionConfig is the election machine's configuration for this agent;
// the agent adds the term it voted in last (InitialTerm, from StateFile).
func (c *Config) ElectionConfig() election.Config {
	ec := election.Config{
		ID:                c.NodeID,
		Priority:          c.Priority,
		HeartbeatInterval: c.Heartbeat,
		SuspectAfter:      c.SuspectAfter,
		Preempt:           c.Preempt,
		PreemptDelay:      c.PreemptDelay,
		Algorithm:         c.Algorithm,
		Role:              c.ElectionRole(),
		Quorum:            c.Quorum,
		Lease:             c.Lease,
		StopBefore:        c.Heartbeat,
		LeaseMargin:       c.LeaseMargin,
		Hardening:         election.Hardened(),
	}
	return ec.WithDefaults()
}

// VIP is one virtual address (Config.VIPs): an address with its prefix
// length, and its interface ("" until the agent's start sets the bind
// address's).
type VIP = vip.Addr

// ParseVIP parses --vip's form, ADDR/PREFIX[,dev=IFACE]; the error says
// what is wrong, not the flag.
func ParseVIP(s string) (VIP, error) { return vip.Parse(s) }
