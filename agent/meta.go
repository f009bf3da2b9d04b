package agent

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/lanleader/lanleader/wire"
)

// Node metadata, carried by memberlist for every member (at most 512
// bytes; this is at most 34). Big-endian:
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
//
// Fields are only ever appended; a reader ignores bytes past those it
// knows, so a newer agent's metadata still reads.
const metaVersion = 1

// Algorithm numbers in the metadata. Append-only.
var algorithms = []string{0: "", 1: "bully", 2: "ring", 3: "chang-roberts", 4: "hirschberg-sinclair"}

// meta is the decoded metadata of one member.
type meta struct {
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
}

const (
	metaLeaving = 1 << 0
	metaJob     = 1 << 1
)

var errMeta = errors.New("agent: bad node metadata")

func (m meta) append(b []byte) []byte {
	alg := byte(0)
	for i, a := range algorithms {
		if a == m.Algorithm && a != "" {
			alg = byte(i)
		}
	}
	b = append(b, metaVersion, m.Proto, alg)
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
		flags |= metaLeaving
	}
	if m.Job {
		flags |= metaJob
	}
	return append(b, flags)
}

func decodeMeta(b []byte) (meta, error) {
	var m meta
	if len(b) < 14 {
		return m, fmt.Errorf("%w: %d bytes", errMeta, len(b))
	}
	if b[0] != metaVersion {
		return m, fmt.Errorf("%w: version %d", errMeta, b[0])
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
		return m, fmt.Errorf("%w: address length %d", errMeta, n)
	}
	if len(b) < 14+n+2 {
		return m, fmt.Errorf("%w: %d bytes", errMeta, len(b))
	}
	a, _ := netip.AddrFromSlice(b[14 : 14+n])
	m.Election = netip.AddrPortFrom(a.Unmap(), binary.BigEndian.Uint16(b[14+n:]))
	if len(b) > 14+n+2 {
		m.Leaving = b[14+n+2]&metaLeaving != 0
		m.Job = b[14+n+2]&metaJob != 0
	}
	if m.NodeID == 0 {
		return m, fmt.Errorf("%w: node_id 0", errMeta)
	}
	if m.Proto != wire.Version {
		return m, fmt.Errorf("%w: election protocol version %d, this agent speaks %d", errMeta, m.Proto, wire.Version)
	}
	return m, nil
}
