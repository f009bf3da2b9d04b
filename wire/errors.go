package wire

import "errors"

// Sentinel errors returned by Decode and Append. Compare with errors.Is.
//
// Decode reports the first problem it finds, checking in this order: input
// length against the header, magic, version, type, then the body from left
// to right. For the body the rule is:
//
//   - ErrShort: the input ends before a field the message requires. This
//     includes the list entries promised by a ring count and the address
//     bytes promised by a DISCOVER address length.
//   - ErrBadLength: a length or count field inside the body holds a value
//     the format forbids (a ring count above MaxMembers, a DISCOVER address
//     length other than 4 or 16, or a 16-byte DISCOVER address that is an
//     IPv4-mapped IPv6 address, whose only encoding is the 4-byte one). A
//     count or length is judged as soon as it is read, before checking
//     that the bytes it announces are present: a ring count of
//     MaxMembers+1 is ErrBadLength however many bytes follow.
//   - ErrTrailing: a complete body is followed by more bytes.
//
// So a fixed-size body that is too short yields ErrShort and one that is
// too long yields ErrTrailing.
var (
	// ErrShort means the input ends before the end of the header or of a
	// body field.
	ErrShort = errors.New("wire: short buffer")

	// ErrBadMagic means the first two bytes are not Magic.
	ErrBadMagic = errors.New("wire: bad magic")

	// ErrUnknownVersion means the version byte is not Version.
	ErrUnknownVersion = errors.New("wire: unknown version")

	// ErrUnknownType means the type byte is TypeInvalid or a value past the
	// last type this package knows. Append returns it for such a
	// Message.Type too.
	ErrUnknownType = errors.New("wire: unknown message type")

	// ErrBadLength means a length or count inside the body is not allowed
	// for the type: see the rule above. Append returns it for a ring
	// message whose List is longer than MaxMembers.
	ErrBadLength = errors.New("wire: bad body length")

	// ErrTrailing means bytes remain after a complete body.
	ErrTrailing = errors.New("wire: trailing bytes after body")

	// ErrBadAddr is returned by Append, never by Decode, for a DISCOVER
	// message whose Addr cannot be encoded: an invalid (zero) address or
	// an IPv6 address with a zone.
	ErrBadAddr = errors.New("wire: address cannot be encoded")
)

// Reason names err, an error of Decode, in one word: the reason label of
// lanleader_packets_dropped_total (short, magic, version, type, trailing,
// length).
func Reason(err error) string {
	switch {
	case errors.Is(err, ErrShort):
		return "short"
	case errors.Is(err, ErrBadMagic):
		return "magic"
	case errors.Is(err, ErrUnknownVersion):
		return "version"
	case errors.Is(err, ErrUnknownType):
		return "type"
	case errors.Is(err, ErrTrailing):
		return "trailing"
	}
	return "length"
}
