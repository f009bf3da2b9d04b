package agent

import (
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
