// Package wire is lanleader's binary election-message format: it turns a
// [Message] into the bytes of one datagram and back, and does nothing else
// but write a message's body as text for traces ([Message.AppendBody]).
//
// # Encoding
//
// [Message.Append] appends the encoding of a message to a caller-supplied
// buffer, in the style of strconv.AppendInt, and [Message.Size] reports the
// exact number of bytes it will append. Every message is a 36-byte
// big-endian header (see [HeaderLen] and the layout table in message.go)
// followed by a body whose shape depends on the [Type]. There is no length
// field: one message is one datagram, so the body ends where the datagram
// ends.
//
// # Authentication
//
// When [FlagAuth] is set, a [TagLen]-byte tag follows the body: HMAC-SHA256
// (crypto/hmac, crypto/sha256) over every byte before it, truncated.
// [MAC.Seal] appends it to an encoded message, [Split] separates a received
// datagram into the message and its tag, and [MAC.Verify] checks the tag
// in constant time; the slice given to [Decode] is Split's message. The
// caller owns the key and decides what a missing or bad tag means.
//
// # Decoding
//
// [Decode] fills a Message from a byte slice. It checks bounds before every
// read, never panics, and reports a malformed input with exactly one of the
// sentinel errors in errors.go ([ErrShort], [ErrBadMagic],
// [ErrUnknownVersion], [ErrUnknownType], [ErrBadLength], [ErrTrailing]),
// to be compared with errors.Is. The reserved header byte (offset 5) is
// ignored on receive and always encoded as zero.
//
// The encoding is canonical: every message Decode accepts re-encodes,
// through Append, to the same bytes except for the reserved byte. To keep
// it so, Decode rejects a 16-byte DISCOVER address that is an IPv4-mapped
// IPv6 address, since Append encodes such an address in its 4-byte form.
//
// # Allocation
//
// Append does not allocate when the buffer has room for the message, and
// Decode does not allocate for fixed-size messages. For ring messages,
// Decode appends the member list to m.List[:0], so decoding into a reused
// Message whose List already has enough capacity does not allocate either.
//
// # Non-goals
//
// wire performs no I/O: it opens no sockets and reads no files. It reads no
// clocks, keeps no state between calls, logs nothing and starts no
// goroutines (a MAC keeps only its key and scratch space). Validating what
// a well-formed message means (terms, priorities, whether the cluster ID
// matches, whether a tag was required, replays) belongs to the callers.
package wire
