// Package sdnotify is the part of the agent that speaks sd_notify to
// systemd (Type=notify): READY=1 once the first election has settled,
// STATUS= with the role, term, leader and job (what `systemctl status`
// shows), WATCHDOG=1 from the event loop (a loop that hangs stops the
// pings, and systemd restarts the agent), and the driver's RELOADING=1,
// STOPPING=1 and start retries through Send. Without NOTIFY_SOCKET
// (outside systemd) it sends nothing and waits for no deadline.
package sdnotify

import (
	"fmt"
	"os"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/part"
)

// ReadyAfter: READY=1 goes when the first election has settled (this
// node leads or follows a leader), or this long after the listen period
// at the latest, so that a node that cannot settle (a lone quorum-mode
// node) does not keep `systemctl start` waiting for good.
const ReadyAfter = 2 * time.Second

// Sender sends one notification to systemd.
type Sender func(state string) error

// Notifier is the part. Its methods but Send run on the event loop.
type Notifier struct {
	host     part.Host
	send     Sender // nil: outside systemd
	watchdog time.Duration
	begun    bool // the event loop runs (Begin)
	readyBy  time.Duration
	ready    bool
	line     string // the last STATUS= sent
	nextPing time.Duration
}

// New is the part for this process: on under systemd (NOTIFY_SOCKET),
// with the watchdog systemd asks for (WatchdogSec=). Send works at once
// (a start's retries use it); the deadlines begin with Begin.
func New(h part.Host) *Notifier {
	if os.Getenv("NOTIFY_SOCKET") == "" {
		return NewWith(h, nil, 0)
	}
	wd, _ := daemon.SdWatchdogEnabled(false)
	return NewWith(h, func(state string) error {
		_, err := daemon.SdNotify(false, state)
		return err
	}, wd)
}

// NewWith is the part with its sender (nil: off) and watchdog interval
// (0: none) given.
func NewWith(h part.Host, send Sender, watchdog time.Duration) *Notifier {
	n := &Notifier{host: h, send: send}
	if send != nil {
		n.watchdog = watchdog
	}
	return n
}

// Begin: the event loop has started; READY=1 goes by readyBy at the
// latest, and the first watchdog ping at once.
func (n *Notifier) Begin(readyBy time.Duration) {
	n.begun, n.readyBy, n.nextPing = true, readyBy, n.host.Now()
}

// On reports whether systemd listens.
func (n *Notifier) On() bool { return n.send != nil }

// Ready reports whether READY=1 has been sent.
func (n *Notifier) Ready() bool { return n.ready }

// Send sends one notification; any goroutine may call it.
func (n *Notifier) Send(state string) {
	if n.send == nil {
		return
	}
	if err := n.send(state); err != nil {
		n.host.Log().Warn("sd_notify", "state", state, "err", err)
	}
}

// markReady sends READY=1 once, and says why when it is not that the
// election settled.
func (n *Notifier) markReady(why string) {
	if n.ready {
		return
	}
	n.ready = true
	n.Send("READY=1")
	if why != "" {
		n.host.Log().Info("ready", "why", why)
	}
}

// Changed sends READY=1 once the node leads or follows a leader, and the
// state as STATUS= when its line changed.
func (n *Notifier) Changed(v *part.View) {
	if n.send == nil {
		return
	}
	if v.State == "leader" || v.State == "follower" && v.LeaderID != 0 {
		n.markReady("")
	}
	if line := statusLine(v); line != n.line {
		n.line = line
		n.Send("STATUS=" + line)
	}
}

// statusLine is the STATUS= text of v.
func statusLine(v *part.View) string {
	var line string
	switch {
	case v.State == "leader":
		line = fmt.Sprintf("leader, term %d", v.Term)
	case v.State == "follower" && v.LeaderID != 0:
		line = fmt.Sprintf("following %s (node %d), term %d", v.LeaderName, v.LeaderID, v.Term)
	case v.State == "conflict":
		line = fmt.Sprintf("not leading: node_id %d conflict", v.NodeID)
	default:
		line = v.State + ", no leader"
	}
	if v.Priority != v.BasePriority {
		line += fmt.Sprintf("; priority %d of %d", v.Priority, v.BasePriority)
	}
	if v.JobState != "" {
		line += "; job " + v.JobState
		if v.JobPid != 0 {
			line += fmt.Sprintf(" (pid %d)", v.JobPid)
		}
	}
	return line
}

// Next is READY=1's latest time until it is sent, and the next watchdog
// ping.
func (n *Notifier) Next() (time.Duration, bool) {
	if n.send == nil || !n.begun {
		return 0, false
	}
	at, ok := time.Duration(0), false
	if !n.ready {
		at, ok = n.readyBy, true
	}
	if n.watchdog > 0 && (!ok || n.nextPing < at) {
		at, ok = n.nextPing, true
	}
	return at, ok
}

// Due sends READY=1 when the election has not settled by readyBy, and
// pings the watchdog twice an interval.
func (n *Notifier) Due(now time.Duration) {
	if n.send == nil || !n.begun {
		return
	}
	if !n.ready && now >= n.readyBy {
		n.markReady("the first election has not settled")
	}
	if n.watchdog > 0 && now >= n.nextPing {
		n.Send("WATCHDOG=1")
		n.nextPing = now + n.watchdog/2
	}
}

// Reload does nothing: no setting is the notifications' (systemd's
// environment says whether and how often to notify).
func (n *Notifier) Reload(_, _ *config.Config) []string { return nil }

// Close does nothing: STOPPING=1 goes through Send at the start of a
// stop, before the job stops.
func (n *Notifier) Close() {}

var _ part.Part = (*Notifier)(nil)
