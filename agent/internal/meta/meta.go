// Package meta is the codec of the metadata every agent gossips about
// itself through memberlist: what a member needs to know of another to
// take part in its elections (its node_id, priority, role and election
// address) and what a takeover needs (whether its job runs, its job
// grace, whether it is leaving). The agent publishes its own and decodes
// the others'; this package only turns one into bytes and back.
package meta

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

// Node metadata, carried by memberlist for every member (at most 512
// bytes; this is at most 38). Big-endian:
//
//	offset size field
//	     0    1 meta version (1)
//	     1    1 election protocol version (wire.Version)
//	     2    1 algorithm (see algorithms)
//	     3    8 node_id
//	    11    2 priority
//	    13    1 election address length: 4 or 16
//	    14  4|16 election address
//	     -    2 election port
//	     -    1 flags (optional; bit 0: leaving, set just before a graceful leave;
//	                   bit 1: the job runs on this node)
//	     -    1 role (optional; election.Role: 0 candidate, 1 witness,
//	                  2 observer; absent: candidate)
//	     -    4 job grace in milliseconds, rounded up (optional; absent:
//	                  an older agent, taken to have the reader's own)
//
// Fields are only ever appended; a reader ignores bytes past those it
// knows, so a newer agent's metadata still reads.
const version = 1

// Algorithm numbers in the metadata. Append-only.
var algorithms = []string{0: "", 1: "bully", 2: "ring", 3: "chang-roberts", 4: "hirschberg-sinclair"}

// Meta is the decoded metadata of one member.
type Meta struct {
	Proto     uint8
	Algorithm string
	NodeID    uint64
	Priority  uint16
	Election  netip.AddrPort
	// Leaving is set by a node that is about to leave gracefully, so that
	// the others can tell its departure from a failure: memberlist's leave
	// event does not say which it was.
	Leaving bool
	// Job is set while this node's job runs (from its start until its
	// process group is gone), so that a node taking the leadership over
	// from a live leader starts its job only once the old one is stopped.
	Job bool
	// Role is what the member may do in the elections. An older agent
	// sends none: it is a candidate.
	Role election.Role
	// JobGrace is the member's --job-grace, when HasGrace (an older
	// agent sends none): how long its job may take to stop, which a node
	// taking the leadership over from it waits out (agent/part/lead's GraceOf).
	JobGrace time.Duration
	HasGrace bool
}

const (
	flagLeaving = 1 << 0
	flagJob     = 1 << 1
)

// ErrBad is in the chain of every error of Decode.
var ErrBad = errors.New("agent: bad node metadata")

// Append appends the encoding of m to b.
func (m Meta) Append(b []byte) []byte {
	alg := byte(0)
	for i, a := range algorithms {
		if a == m.Algorithm && a != "" {
			alg = byte(i)
		}
	}
	b = append(b, version, m.Proto, alg)
	b = binary.BigEndian.AppendUint64(b, m.NodeID)
	b = binary.BigEndian.AppendUint16(b, m.Priority)
	a := m.Election.Addr().Unmap()
	if a.Is4() {
		b = append(b, 4)
	} else {
		b = append(b, 16)
	}
	b = append(b, a.AsSlice()...)
	b = binary.BigEndian.AppendUint16(b, m.Election.Port())
	flags := byte(0)
	if m.Leaving {
		flags |= flagLeaving
	}
	if m.Job {
		flags |= flagJob
	}
	b = append(b, flags, byte(m.Role))
	if !m.HasGrace {
		return b
	}
	ms := min((m.JobGrace+time.Millisecond-1)/time.Millisecond, math.MaxUint32)
	return binary.BigEndian.AppendUint32(b, uint32(max(ms, 0)))
}

// Decode decodes the metadata b of a member, of this agent's version or
// a newer one (the bytes past the fields it knows are ignored).
func Decode(b []byte) (Meta, error) {
	var m Meta
	if len(b) < 14 {
		return m, fmt.Errorf("%w: %d bytes", ErrBad, len(b))
	}
	if b[0] != version {
		return m, fmt.Errorf("%w: version %d", ErrBad, b[0])
	}
	m.Proto = b[1]
	if int(b[2]) < len(algorithms) {
		m.Algorithm = algorithms[b[2]]
	} else {
		m.Algorithm = fmt.Sprintf("algorithm(%d)", b[2])
	}
	m.NodeID = binary.BigEndian.Uint64(b[3:])
	m.Priority = binary.BigEndian.Uint16(b[11:])
	n := int(b[13])
	if n != 4 && n != 16 {
		return m, fmt.Errorf("%w: address length %d", ErrBad, n)
	}
	if len(b) < 14+n+2 {
		return m, fmt.Errorf("%w: %d bytes", ErrBad, len(b))
	}
	a, _ := netip.AddrFromSlice(b[14 : 14+n])
	m.Election = netip.AddrPortFrom(a.Unmap(), binary.BigEndian.Uint16(b[14+n:]))
	if len(b) > 14+n+2 {
		m.Leaving = b[14+n+2]&flagLeaving != 0
		m.Job = b[14+n+2]&flagJob != 0
	}
	if len(b) > 14+n+3 {
		m.Role = election.Role(b[14+n+3])
	}
	if len(b) >= 14+n+4+4 {
		m.JobGrace, m.HasGrace = time.Duration(binary.BigEndian.Uint32(b[14+n+4:]))*time.Millisecond, true
	}
	if m.NodeID == 0 {
		return m, fmt.Errorf("%w: node_id 0", ErrBad)
	}
	if m.Proto != wire.Version {
		return m, fmt.Errorf("%w: election protocol version %d, this agent speaks %d", ErrBad, m.Proto, wire.Version)
	}
	return m, nil
}
