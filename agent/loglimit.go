package agent

import (
	"sync"
	"time"
)

// lineLimit lets a log line that repeats through one cause (a name
// conflict that memberlist reports at every gossip exchange, every few
// hundred milliseconds while it lasts) through once per every for each
// key, and counts the repeats held back in between, which the next line
// let through reports. Safe for concurrent use.
type lineLimit struct {
	every time.Duration
	now   func() time.Time // time.Now; tests replace it

	mu   sync.Mutex
	keys map[string]*lineCount
}

type lineCount struct {
	last time.Time // when a line was let through
	held int       // repeats held back since
}

// lineLimitKeys bounds the keys remembered. When it is reached, the keys
// whose period has passed are forgotten (their next line is let through
// anyway; the count of its repeats held back is lost), and beyond it
// lines of new keys go through unlimited: a flood of distinct keys costs
// log lines, never unbounded memory.
const lineLimitKeys = 256

func newLineLimit(every time.Duration) *lineLimit {
	return &lineLimit{every: every, now: time.Now, keys: map[string]*lineCount{}}
}

// allow reports whether a line of key may be logged now, and how many
// were held back since the last one that was.
func (l *lineLimit) allow(key string) (ok bool, held int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	c := l.keys[key]
	if c != nil && now.Sub(c.last) < l.every {
		c.held++
		return false, 0
	}
	if c == nil {
		if len(l.keys) >= lineLimitKeys {
			for k, o := range l.keys {
				if now.Sub(o.last) >= l.every {
					delete(l.keys, k)
				}
			}
		}
		if len(l.keys) >= lineLimitKeys {
			return true, 0
		}
		c = &lineCount{}
		l.keys[key] = c
	}
	held = c.held
	c.last, c.held = now, 0
	return true, held
}
