package agent

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
	"sync"
	"sync/atomic"
	"time"

	"github.com/lanleader/lanleader/wire"
)

// Authentication: one secret (Config.Key, from --key-file) gives three
// keys, each derived with HKDF-SHA256 (crypto/hkdf) under its own label so
// that none of them reveals another:
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
		return nil, fmt.Errorf("%s: the key is %d bytes, want at least %d (make one with: head -c 32 /dev/urandom > %s)", path, len(b), MinKeyLen, path)
	}
	return b, nil
}

// ResignToken is the token `lanleader resign` sends (header
// Authorization: Bearer TOKEN) to an agent that has a key: hex of the HTTP
// key derived from the secret. Only who can read the key file can make it.
func ResignToken(secret []byte) string { return hex.EncodeToString(deriveKey(secret, labelHTTP)) }

// authKeys is what the agent keeps of its secrets.
type authKeys struct {
	election [][]byte // the signing key first, then the accepted ones
	gossip   [][]byte // likewise: memberlist's primary key first
	http     [][]byte // the resign tokens' keys
}

func newAuthKeys(key []byte, accept [][]byte) *authKeys {
	if len(key) == 0 {
		return nil
	}
	k := &authKeys{}
	for _, s := range append([][]byte{key}, accept...) {
		k.election = append(k.election, deriveKey(s, labelElection))
		k.gossip = append(k.gossip, deriveKey(s, labelGossip))
		k.http = append(k.http, deriveKey(s, labelHTTP))
	}
	return k
}

// macs returns a fresh MAC of each election key, for one goroutine.
func (k *authKeys) macs() []*wire.MAC {
	ms := make([]*wire.MAC, len(k.election))
	for i, e := range k.election {
		ms[i] = wire.NewMAC(e)
	}
	return ms
}

// resignAllowed says whether token (hex) is the resign token of one of the
// secrets, compared in constant time.
func (k *authKeys) resignAllowed(token string) bool {
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

// verify checks the tag of a datagram with one of macs (the signing key's
// first); msg and tag come from wire.Split.
func verify(macs []*wire.MAC, msg, tag []byte) bool {
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

// Replay protection. Every packet carries its sender's incarnation (the
// Unix time in seconds of the sender's start: it grows from one start to
// the next) and a sequence number that grows by one each packet (it
// starts at the microsecond of that second × 64, so that a restart within
// the same second still continues above what the previous run sent). A
// receiver keeps, per sender node_id, the incarnation it last accepted,
// the highest sequence and a 64-packet window below it (RFC 4303's
// anti-replay window): a packet of an older incarnation, a sequence seen
// before, or one more than 64 below the highest is a replay. A packet of
// a newer incarnation (a restart) starts a new window: a restarted agent
// is never locked out. Only authenticated packets reach the guard, so
// only key holders can make it hold state.
//
// A window that has taken no packet for replayForget is forgotten: the
// next packet of that sender starts a new one, whatever its incarnation.
// This bounds how long an agent restarted after its wall clock was set
// back (an older incarnation) is kept out; the price is that a packet of
// a sender silent for that long can be replayed once, and old packets
// carry old terms, which the election machine does not follow.

// replayWindow is the width of the per-sender window, in packets.
const replayWindow = 64

// replayForget is how long a sender's window outlives its last packet.
// Every agent sends a beacon at least every 256 s on a multicast LAN at
// the default --discover-interval (beaconEvery).
const replayForget = 10 * time.Minute

// maxSenders bounds the windows kept: more than any cluster has nodes.
const maxSenders = 4 * wire.MaxMembers

type window struct {
	inc  uint32
	top  uint32 // the highest sequence accepted
	bits uint64 // bit i: top-i was accepted
	seen time.Duration
}

// replayGuard holds the windows of every sender. Both election sockets'
// readers use it, so it has a lock.
type replayGuard struct {
	mu sync.Mutex
	w  map[uint64]*window
}

func newReplayGuard() *replayGuard { return &replayGuard{w: make(map[uint64]*window)} }

// check records (inc, seq) of sender from, seen at now, and reports
// whether the packet is fresh; a packet that is not changes nothing.
func (g *replayGuard) check(from uint64, inc, seq uint32, now time.Duration) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.w[from]
	if w == nil {
		if len(g.w) >= maxSenders {
			g.evict()
		}
		g.w[from] = &window{inc: inc, top: seq, bits: 1, seen: now}
		return true
	}
	switch {
	case now-w.seen > replayForget:
		*w = window{inc: inc, top: seq, bits: 1, seen: now}
		return true
	case inc < w.inc:
		return false // an older run of the sender
	case inc > w.inc:
		*w = window{inc: inc, top: seq, bits: 1, seen: now}
		return true
	case seq > w.top:
		if d := seq - w.top; d >= replayWindow {
			w.bits = 1
		} else {
			w.bits = w.bits<<d | 1
		}
		w.top, w.seen = seq, now
		return true
	}
	d := w.top - seq
	if d >= replayWindow || w.bits&(1<<d) != 0 {
		return false
	}
	w.bits |= 1 << d
	w.seen = now
	return true
}

// evict forgets the sender heard from least recently.
func (g *replayGuard) evict() {
	var oldest uint64
	first := true
	for id, w := range g.w {
		if first || w.seen < g.w[oldest].seen {
			oldest, first = id, false
		}
	}
	delete(g.w, oldest)
}

// startSeq is the first sequence number of a run started at t.
func startSeq(t time.Time) uint32 { return uint32(t.Nanosecond()/1000) * 64 }

// authLog says, at most once per authLogEvery, why packets are dropped for
// authentication: enough for an operator to see a host without the key
// (or with another), never a line per packet of a flood.
type authLog struct {
	last atomic.Int64 // unix nanoseconds of the last line
}

const authLogEvery = 10 * time.Second

func (l *authLog) due() bool {
	now := time.Now().UnixNano()
	last := l.last.Load()
	return now-last >= int64(authLogEvery) && l.last.CompareAndSwap(last, now)
}
