// Package auth is the agent's authentication of the election's packets
// and of its resign requests: the keys derived from the cluster's secret,
// the key file's checks, the tag's verification, the replay windows of the
// senders, and the record of this node's own packets that tells a replay
// of one from a clone's. It decides nothing: the agent's readers ask it
// whether a packet passes, and count and log what it refuses.
//
// One secret (Config.Key, from --key-file) gives three keys, each derived
// with HKDF-SHA256 (crypto/hkdf) under its own label so that none of them
// reveals another:
//
//   - the election key: the HMAC-SHA256 key of every election packet's tag
//     (wire.MAC), beacons included;
//   - the gossip key: memberlist's AES-256 key (its keyring), so that
//     membership can be neither read nor forged;
//   - the HTTP key: the token `lanleader resign` sends to POST /resign.
//
// Config.AcceptKeys are older secrets still accepted during a key
// rotation: their election and HTTP keys verify, their gossip keys
// decrypt; nothing is signed or encrypted with them.
package auth

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/lanleader/lanleader/wire"
)

// Key file limits.
const (
	// MinKeyLen is the shortest secret: 32 bytes, SHA-256's output size.
	MinKeyLen = wire.MinKeyLen
	// maxKeyFile bounds what LoadKeyFile reads.
	maxKeyFile = 4096
)

// Labels of the keys derived from the secret (HKDF's info).
const (
	labelElection = "lanleader v1 election hmac-sha256"
	labelGossip   = "lanleader v1 memberlist aes-256"
	labelHTTP     = "lanleader v1 http resign"
)

// deriveKey derives the 32-byte key of one purpose from a secret.
func deriveKey(secret []byte, label string) []byte {
	k, err := hkdf.Key(sha256.New, secret, nil, label, 32)
	if err != nil {
		panic(err) // only for a length above 255 × 32
	}
	return k
}

// LoadKeyFile reads a secret from path and checks the file: a regular
// file, readable by neither other users (mode o+r) nor writable by them
// (o+w), at most 4096 bytes; the secret is its content without trailing
// newlines (CR, LF) and must be at least MinKeyLen bytes. The error names
// the file and says how to fix it, but not the flag (the caller does).
func LoadKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	switch mode := fi.Mode(); {
	case !mode.IsRegular():
		return nil, fmt.Errorf("%s: not a regular file", path)
	case mode.Perm()&0o004 != 0:
		return nil, fmt.Errorf("%s is readable by every user (mode %04o): anyone on this host could forge election packets; chmod o-r %s (0600, or 0640 for a group)", path, mode.Perm(), path)
	case mode.Perm()&0o002 != 0:
		return nil, fmt.Errorf("%s is writable by every user (mode %04o); chmod o-w %s", path, mode.Perm(), path)
	case fi.Size() > maxKeyFile:
		return nil, fmt.Errorf("%s: %d bytes, more than %d: not a key file?", path, fi.Size(), maxKeyFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	if len(b) < MinKeyLen {
		return nil, fmt.Errorf("%s: the key is %d bytes, want at least %d (make one with: head -c 48 /dev/urandom | base64 > %s)", path, len(b), MinKeyLen, path)
	}
	return b, nil
}

// ResignToken is the token `lanleader resign` sends (header
// Authorization: Bearer TOKEN) to an agent that has a key: hex of the HTTP
// key derived from the secret. Only who can read the key file can make it.
func ResignToken(secret []byte) string { return hex.EncodeToString(deriveKey(secret, labelHTTP)) }

// Keys is what the agent keeps of its secrets.
type Keys struct {
	Election [][]byte // the signing key first, then the accepted ones
	Gossip   [][]byte // likewise: memberlist's primary key first
	http     [][]byte // the resign tokens' keys
}

// NewKeys derives the keys of the signing secret key and of the accepted
// ones; nil without a key.
func NewKeys(key []byte, accept [][]byte) *Keys {
	if len(key) == 0 {
		return nil
	}
	k := &Keys{}
	for _, s := range append([][]byte{key}, accept...) {
		k.Election = append(k.Election, deriveKey(s, labelElection))
		k.Gossip = append(k.Gossip, deriveKey(s, labelGossip))
		k.http = append(k.http, deriveKey(s, labelHTTP))
	}
	return k
}

// MACs returns a fresh MAC of each election key, for one goroutine.
func (k *Keys) MACs() []*wire.MAC {
	ms := make([]*wire.MAC, len(k.Election))
	for i, e := range k.Election {
		ms[i] = wire.NewMAC(e)
	}
	return ms
}

// ResignAllowed says whether token (hex) is the resign token of one of the
// secrets, compared in constant time.
func (k *Keys) ResignAllowed(token string) bool {
	got, err := hex.DecodeString(token)
	if err != nil {
		return false
	}
	ok := false
	for _, h := range k.http {
		if hmac.Equal(got, h) {
			ok = true
		}
	}
	return ok
}

// Verify checks the tag of a datagram with one of macs (the signing key's
// first); msg and tag come from wire.Split.
func Verify(macs []*wire.MAC, msg, tag []byte) bool {
	if tag == nil {
		return false
	}
	for _, m := range macs {
		if m.Verify(msg, tag) {
			return true
		}
	}
	return false
}
