package gossip

import (
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/lanleader/lanleader/agent/config"
)

// Joiner joins the seeds in the background until the node has a peer, and
// again whenever it finds itself alone. It never ends the program: a seed
// that is down, or the node's own address among the seeds, only delays.
type Joiner struct {
	ml       *memberlist.Memberlist
	seeds    []string
	log      *slog.Logger
	kick     chan []string // addresses to join now (from discovery beacons)
	stop     chan struct{}
	done     chan struct{}
	attempts atomic.Int64 // joins begun, for tests
	before   func(addr string)
}

// The joiner's wait between two joins of the seeds while the node is
// alone: from joinRetryMin, doubled at each failure, up to JoinRetryMax.
const (
	joinRetryMin = 500 * time.Millisecond
	JoinRetryMax = 30 * time.Second
)

// NewJoiner returns the joiner of seeds (a seed without a port has
// memberlist's default) into ml; before, when not nil, runs before each
// join of an address. Run starts it.
func NewJoiner(ml *memberlist.Memberlist, seeds []string, log *slog.Logger, before func(addr string)) *Joiner {
	j := &Joiner{ml: ml, log: log, kick: make(chan []string, 1), stop: make(chan struct{}), done: make(chan struct{}), before: before}
	for _, s := range seeds {
		j.seeds = append(j.seeds, normalizeSeed(s, config.DefaultGossipPort))
	}
	return j
}

// Run joins until Stop; Done is closed when it returns.
func (j *Joiner) Run() {
	defer close(j.done)
	wait := time.Duration(0)
	warned := false
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		var addrs []string
		select {
		case <-j.stop:
			return
		case addrs = <-j.kick:
		case <-t.C:
			addrs = nil
			if len(j.seeds) > 0 && j.ml.NumMembers() <= 1 {
				addrs = j.seeds
			}
		}
		if len(addrs) > 0 {
			n, err := j.join(addrs)
			select {
			case <-j.stop:
				if err != nil {
					return // the agent stops: not a failure to report
				}
			default:
			}
			if err == nil && j.ml.NumMembers() <= 1 {
				err = errors.New("only this node answered")
			}
			switch {
			case err == nil:
				j.log.Info("joined", "contacted", n, "members", j.ml.NumMembers(), "via", strings.Join(addrs, ","))
				wait, warned = 0, false
			case !warned:
				attrs := []any{"seeds", strings.Join(addrs, ","), "err", oneLine(err)}
				if es := strings.ToLower(err.Error()); strings.Contains(es, "eof") || strings.Contains(es, "reset by peer") ||
					strings.Contains(es, "crypt") || strings.Contains(es, "label") {
					// The peer closed the stream: what it does with a
					// stream of another key or cluster.
					attrs = append(attrs, "hint", keyHint)
				}
				j.log.Warn("join failed, retrying in the background", attrs...)
				warned = true
			default:
				j.log.Debug("join failed", "seeds", strings.Join(addrs, ","), "err", oneLine(err))
			}
		}
		switch {
		case len(j.seeds) == 0:
			wait = time.Hour // only beacons kick it
		case j.ml.NumMembers() > 1:
			wait = joinRetryMin * 10 // check now and then that it is not alone
		default:
			wait = min(max(2*wait, joinRetryMin), JoinRetryMax)
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(wait)
	}
}

// join joins the seeds one at a time (a seed that drops SYNs holds a join
// for memberlist's TCP timeout) and stops early when the agent stops.
func (j *Joiner) join(addrs []string) (int, error) {
	var errs []error
	n := 0
	for _, addr := range addrs {
		select {
		case <-j.stop:
			return n, errors.New("stopping")
		default:
		}
		j.attempts.Add(1)
		if j.before != nil {
			j.before(addr)
		}
		k, err := j.ml.Join([]string{addr})
		n += k
		if err != nil {
			errs = append(errs, err)
		}
	}
	if n > 0 {
		return n, nil
	}
	return 0, errors.Join(errs...)
}

// normalizeSeed adds memberlist's default port to a seed without one.
func normalizeSeed(s string, port int) string {
	if _, _, err := net.SplitHostPort(s); err == nil {
		return s
	}
	return net.JoinHostPort(strings.Trim(s, "[]"), strconv.Itoa(port))
}

// Kick has the joiner join addrs now, unless a join is under way (then it
// drops them and reports false).
func (j *Joiner) Kick(addrs []string) bool {
	select {
	case j.kick <- addrs:
		return true
	default:
		return false
	}
}

// Stop tells the joiner to start no other join; a join under way goes on
// until it ends (Done).
func (j *Joiner) Stop() {
	select {
	case <-j.stop:
	default:
		close(j.stop)
	}
}

// Done is closed when Run has returned.
func (j *Joiner) Done() <-chan struct{} { return j.done }

// Attempts is how many joins of an address have begun.
func (j *Joiner) Attempts() int64 { return j.attempts.Load() }

// oneLine is err's message on one line, for a log attribute.
func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
