package vip

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// LinkWatch reports the carrier of interfaces.
type LinkWatch struct {
	devs   []string
	report func(dev string, up bool)
	home   home

	quit chan struct{}
	done chan struct{}
	once sync.Once

	sub atomic.Pointer[subscription] // the current one, for tests
}

// subscription is one netlink subscription to link changes; end ends it,
// and the library then closes ch.
type subscription struct {
	ch      chan netlink.LinkUpdate
	stop    chan struct{}
	endOnce sync.Once
}

func (s *subscription) end() { s.endOnce.Do(func() { close(s.stop) }) }

// linkUp: the interface is up (IFF_UP) and has carrier (IFF_LOWER_UP).
func linkUp(flags uint32) bool {
	return flags&unix.IFF_UP != 0 && flags&unix.IFF_LOWER_UP != 0
}

// WatchLinks starts reporting changes of the carrier (up: the interface is
// up and has carrier) of the interfaces devs, each first with its state
// now (an interface that does not exist is down), before WatchLinks
// returns: a caller knows every state once it has the watch. Then report
// is called from the watch's own goroutine, never concurrently with
// itself, and must not block; it is called only when a state changes (a
// flap faster than the
// kernel's notifications may be seen as no change). The watch runs in the
// calling thread's network namespace; should the kernel drop its
// notifications (a burst of changes overflows the socket), it subscribes
// again and reports the states that changed meanwhile.
func WatchLinks(devs []string, report func(dev string, up bool)) (*LinkWatch, error) {
	w := &LinkWatch{
		devs:   slices.Clone(devs),
		report: report,
		home:   hereHome(),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	s, err := w.subscribe()
	if err != nil {
		w.home.close()
		return nil, fmt.Errorf("vip: watch the links of %s: %w", strings.Join(devs, ", "), err)
	}
	last := w.states()
	for _, d := range w.devs {
		report(d, last[d])
	}
	go w.run(s, last)
	return w, nil
}

// Close ends the watch: report is not called once it has returned.
func (w *LinkWatch) Close() {
	w.once.Do(func() {
		close(w.quit)
		<-w.done
		w.home.close()
	})
}

func (w *LinkWatch) subscribe() (*subscription, error) {
	s := &subscription{ch: make(chan netlink.LinkUpdate, 64), stop: make(chan struct{})}
	err := w.home.do(func() error {
		return netlink.LinkSubscribeWithOptions(s.ch, s.stop, netlink.LinkSubscribeOptions{})
	})
	if err != nil {
		s.end()
		return nil, err
	}
	w.sub.Store(s)
	return s, nil
}

// Up reads the carrier of dev (one of the watched interfaces) from the
// kernel now, without waiting for the watch's report: a report may still
// be on its way when the caller must act on the state (an agent resumed
// from a pause, its timers and the link's notice due at once).
func (w *LinkWatch) Up(dev string) bool {
	var up bool
	w.home.do(func() error {
		l, err := netlink.LinkByName(dev)
		up = err == nil && linkUp(l.Attrs().RawFlags)
		return nil
	})
	return up
}

// states reads the state of every dev now.
func (w *LinkWatch) states() map[string]bool {
	now := make(map[string]bool, len(w.devs))
	w.home.do(func() error {
		for _, d := range w.devs {
			l, err := netlink.LinkByName(d)
			now[d] = err == nil && linkUp(l.Attrs().RawFlags)
		}
		return nil
	})
	return now
}

// run reports the changes from last, the states reported so far.
func (w *LinkWatch) run(s *subscription, last map[string]bool) {
	defer close(w.done)
	emit := func(dev string, up bool) {
		if was, ok := last[dev]; ok && was == up {
			return
		}
		last[dev] = up
		w.report(dev, up)
	}
	for {
		select {
		case <-w.quit:
			s.end()
			for range s.ch { // the library's goroutine ends once it has closed ch
			}
			return
		case u, ok := <-s.ch:
			if ok {
				if name := u.Attrs().Name; slices.Contains(w.devs, name) {
					emit(name, u.Header.Type != unix.RTM_DELLINK && linkUp(u.IfInfomsg.Flags))
				}
				continue
			}
			s.end()
			var quit bool
			if s, quit = w.resubscribe(); quit {
				return
			}
			for d, up := range w.states() {
				emit(d, up)
			}
		}
	}
}

// resubscribe subscribes again, retrying with a growing pause until it
// can or the watch is closed (quit).
func (w *LinkWatch) resubscribe() (s *subscription, quit bool) {
	pause := 50 * time.Millisecond
	for {
		t := time.NewTimer(pause)
		select {
		case <-w.quit:
			t.Stop()
			return s, true
		case <-t.C:
		}
		var err error
		if s, err = w.subscribe(); err == nil {
			return s, false
		}
		pause = min(2*pause, 5*time.Second)
	}
}
