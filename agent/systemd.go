package agent

import (
	"fmt"
	"os"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// notifier speaks sd_notify to systemd (Type=notify): READY=1 once the
// first election has settled, STATUS= with the role, term, leader and job
// (what `systemctl status` shows), WATCHDOG=1 from the event loop (a loop
// that hangs stops the pings, and systemd restarts the agent), STOPPING=1
// at a graceful stop. Without NOTIFY_SOCKET (outside systemd) it is off.
type notifier struct {
	on       bool
	watchdog time.Duration // WatchdogSec, 0 when off
	log      func(msg string, args ...any)
}

func newNotifier(warn func(msg string, args ...any)) notifier {
	n := notifier{on: os.Getenv("NOTIFY_SOCKET") != "", log: warn}
	if n.on {
		n.watchdog, _ = daemon.SdWatchdogEnabled(false)
	}
	return n
}

// send sends one notification; it may be called from any goroutine.
func (n notifier) send(state string) {
	if !n.on {
		return
	}
	if _, err := daemon.SdNotify(false, state); err != nil && n.log != nil {
		n.log("sd_notify", "state", state, "err", err)
	}
}

func (a *Agent) sendReady(why string) {
	l := &a.loop
	if l.ready {
		return
	}
	l.ready = true
	a.notify.send("READY=1")
	if why != "" {
		a.log.Info("ready", "why", why)
	}
}

// notifyStatus tells systemd the state, for `systemctl status`.
func (a *Agent) notifyStatus(s *Status) {
	l := &a.loop
	if !a.notify.on {
		return
	}
	if !l.ready && (s.State == "leader" || s.State == "follower" && s.LeaderID != 0) {
		a.sendReady("")
	}
	var line string
	switch {
	case s.State == "leader":
		line = fmt.Sprintf("leader, term %d", s.Term)
	case s.State == "follower" && s.LeaderID != 0:
		line = fmt.Sprintf("following %s (node %d), term %d", s.LeaderName, s.LeaderID, s.Term)
	case s.State == "conflict":
		line = fmt.Sprintf("not leading: node_id %d conflict", s.NodeID)
	default:
		line = s.State + ", no leader"
	}
	if s.Priority != s.BasePriority {
		line += fmt.Sprintf("; priority %d of %d", s.Priority, s.BasePriority)
	}
	if s.Job != nil {
		line += "; job " + s.Job.State
		if s.Job.Pid != 0 {
			line += fmt.Sprintf(" (pid %d)", s.Job.Pid)
		}
	}
	if line != l.lastNotify {
		l.lastNotify = line
		a.notify.send("STATUS=" + line)
	}
}
