package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"hash"
)

// TagLen is the length of the authentication tag that follows the body of
// a message with FlagAuth set: HMAC-SHA256 over every byte before it (the
// header, FlagAuth included, and the body), truncated to its first 16
// bytes (128 bits; RFC 2104 section 5 allows truncation to half the
// output and no less than 80 bits).
const TagLen = 16

// MinKeyLen is the shortest HMAC key NewMAC accepts: the output size of
// SHA-256 (RFC 2104 section 3: less than L bytes is discouraged).
const MinKeyLen = 32

// MAC computes and checks the tags of one key. It is HMAC-SHA256 from the
// standard library, kept with its scratch space so that Seal and Verify do
// not allocate. A MAC is not safe for concurrent use: give each goroutine
// its own (NewMAC is cheap).
type MAC struct {
	h   hash.Hash
	sum [sha256.Size]byte
}

// NewMAC returns the MAC of key, which must be at least MinKeyLen bytes
// (it panics otherwise: a short key is a configuration error the caller
// refuses before it gets here). The key is copied.
func NewMAC(key []byte) *MAC {
	if len(key) < MinKeyLen {
		panic("wire: HMAC key shorter than MinKeyLen")
	}
	return &MAC{h: hmac.New(sha256.New, key)}
}

// tag computes the full HMAC of b into m.sum.
func (m *MAC) tag(b []byte) []byte {
	m.h.Reset()
	m.h.Write(b)
	return m.h.Sum(m.sum[:0])
}

// Seal appends the tag of b, the whole encoded message with FlagAuth set in
// its flags byte, to b and returns the extended slice. It grows b at most
// once and does not allocate when cap(b)-len(b) >= TagLen. A b shorter
// than HeaderLen, or without FlagAuth, is returned unchanged: the caller
// sets the flag before it encodes, so that the tag covers it.
func (m *MAC) Seal(b []byte) []byte {
	if len(b) < HeaderLen || b[4]&FlagAuth == 0 {
		return b
	}
	t := m.tag(b)
	return append(b, t[:TagLen]...)
}

// Verify reports whether tag is the tag of msg under this key, comparing
// in constant time (hmac.Equal). A tag of any length other than TagLen is
// false.
func (m *MAC) Verify(msg, tag []byte) bool {
	if len(tag) != TagLen {
		return false
	}
	return hmac.Equal(m.tag(msg)[:TagLen], tag)
}

// Split separates a received datagram into the message and its tag. When
// the datagram holds a header with FlagAuth set and is long enough for a
// tag, the tag is its last TagLen bytes and msg is the rest, ready for
// Decode; otherwise tag is nil and msg is b. Split only slices b: it reads
// the flags byte and nothing else.
func Split(b []byte) (msg, tag []byte) {
	if len(b) < HeaderLen+TagLen || b[4]&FlagAuth == 0 {
		return b, nil
	}
	return b[:len(b)-TagLen], b[len(b)-TagLen:]
}
