package wire

import "strconv"

// AppendBody appends a one-line text of m's type-specific body to dst, for
// traces and logs: each field is preceded by a space, so the text follows
// a header such as "CR_ELECTION term=3" directly.
//
//	RING_ELECTION, RING_COORDINATOR  " origin=1 list=[1 2 3]"
//	CR_ELECTION, CR_ELECTED          " cand=2"
//	HS_PROBE, HS_REPLY               " cand=2 phase=0 hops=1 right"
//	HEARTBEAT_ACK                    " ack=4"
//
// Other types append nothing. The ids of the nodes a body names (origin,
// cand) are written after node, which may be empty: "n" gives "cand=n2".
// The entries of a list are written as bare ids.
func (m *Message) AppendBody(dst []byte, node string) []byte {
	switch m.Type {
	case TypeRingElection, TypeRingCoordinator:
		dst = append(dst, " origin="...)
		dst = appendNode(dst, node, m.Origin)
		dst = append(dst, " list=["...)
		for i, e := range m.List {
			if i > 0 {
				dst = append(dst, ' ')
			}
			dst = strconv.AppendUint(dst, e.ID, 10)
		}
		dst = append(dst, ']')
	case TypeCRElection, TypeCRElected:
		dst = append(dst, " cand="...)
		dst = appendNode(dst, node, m.CandID)
	case TypeHSProbe, TypeHSReply:
		dst = append(dst, " cand="...)
		dst = appendNode(dst, node, m.CandID)
		dst = append(dst, " phase="...)
		dst = strconv.AppendUint(dst, uint64(m.Phase), 10)
		dst = append(dst, " hops="...)
		dst = strconv.AppendUint(dst, uint64(m.Hops), 10)
		if m.Dir == DirRight {
			dst = append(dst, " right"...)
		} else {
			dst = append(dst, " left"...)
		}
	case TypeHeartbeatAck:
		dst = append(dst, " ack="...)
		dst = strconv.AppendUint(dst, uint64(m.AckSeq), 10)
	}
	return dst
}

func appendNode(dst []byte, prefix string, id uint64) []byte {
	return strconv.AppendUint(append(dst, prefix...), id, 10)
}
