package auth

import "sync/atomic"

// sentLen is how many of its latest packets a node remembers (a hash of
// each) to tell a replay of its own from a clone's (Sent).
const sentLen = 4096

// Sent remembers a hash of each of the latest packets this node sent
// under its incarnation, by sequence number: the loop adds, the readers
// ask. A signed packet with this node's node_id and incarnation that
// comes from another address is a clone's, or a replay of one of ours; a
// replay is byte for byte one we sent. The zero Sent is ready.
type Sent struct {
	last atomic.Uint32
	hash [sentLen]atomic.Uint64
}

// Add records b, sent under sequence number seq.
func (r *Sent) Add(seq uint32, b []byte) {
	r.hash[seq%sentLen].Store(packetHash(b))
	r.last.Store(seq)
}

// MayHaveSent reports whether b, of sequence number seq, may be a packet
// this node sent: one it remembers byte for byte, or one older than it
// remembers (too old to tell: taken for a replay, so that nobody can
// take this node out of the elections with its own old packets; a clone
// that runs shows itself with its next packets). A sequence number not
// yet used is never ours.
func (r *Sent) MayHaveSent(seq uint32, b []byte) bool {
	last := r.last.Load()
	switch {
	case seq > last:
		return false
	case last-seq >= sentLen:
		return true
	}
	return r.hash[seq%sentLen].Load() == packetHash(b)
}

// packetHash is FNV-1a of b, written out so that the loop's every send
// allocates nothing.
func packetHash(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
}
