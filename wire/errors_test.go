package wire

import (
	"fmt"
	"testing"
)

// TestReason: each error of Decode has its one-word reason, wrapped or
// not, and what Decode itself returns for a bad packet is named by it.
func TestReason(t *testing.T) {
	for err, want := range map[error]string{
		ErrShort: "short", ErrBadMagic: "magic", ErrUnknownVersion: "version", ErrUnknownType: "type",
		ErrTrailing: "trailing", ErrBadLength: "length", fmt.Errorf("at byte 3: %w", ErrBadMagic): "magic",
	} {
		if got := Reason(err); got != want {
			t.Errorf("Reason(%v) = %q, want %q", err, got, want)
		}
	}
	var m Message
	if err := Decode([]byte{1, 2}, &m); Reason(err) != "short" {
		t.Errorf("a 2-byte packet: %v, reason %q; want short", err, Reason(err))
	}
}
