// Package loglimit keeps a log line that repeats through one cause from
// flooding the log: one line per key and period, with the count of the
// repeats held back in between.
package loglimit

import (
	"sync"
	"time"
)

// Limit lets a log line that repeats through one cause (a name
// conflict that memberlist reports at every gossip exchange, every few
// hundred milliseconds while it lasts) through once per every for each
// key, and counts the repeats held back in between, which the next line
// let through reports. Safe for concurrent use.
type Limit struct {
	every time.Duration
	// Now is the clock: time.Now, which a test may replace before the
	// first Allow.
	Now func() time.Time

	mu   sync.Mutex
	keys map[string]*lineCount
}

type lineCount struct {
	last time.Time // when a line was let through
	held int       // repeats held back since
}

// maxKeys bounds the keys remembered. When it is reached, the keys
// whose period has passed are forgotten (their next line is let through
// anyway; the count of its repeats held back is lost), and beyond it
// lines of new keys go through unlimited: a flood of distinct keys costs
// log lines, never unbounded memory.
const maxKeys = 256

// New returns a Limit that lets a line of each key through once per
// every.
func New(every time.Duration) *Limit {
	return &Limit{every: every, Now: time.Now, keys: map[string]*lineCount{}}
}

// Allow reports whether a line of key may be logged now, and how many
// were held back since the last one that was.
func (l *Limit) Allow(key string) (ok bool, held int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.Now()
	c := l.keys[key]
	if c != nil && now.Sub(c.last) < l.every {
		c.held++
		return false, 0
	}
	if c == nil {
		if len(l.keys) >= maxKeys {
			for k, o := range l.keys {
				if now.Sub(o.last) >= l.every {
					delete(l.keys, k)
				}
			}
		}
		if len(l.keys) >= maxKeys {
			return true, 0
		}
		c = &lineCount{}
		l.keys[key] = c
	}
	held = c.held
	c.last, c.held = now, 0
	return true, held
}
