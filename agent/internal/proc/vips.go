package proc

import (
	"fmt"
	"os"
	"strings"

	"github.com/lanleader/lanleader/agent/internal/vip"
)

// The virtual addresses in the job's guard. The agent adds and removes
// them (agent/part/vips); the guard removes them when the agent cannot: when
// the lease ends (quorum mode: a paused agent neither steps down nor
// removes them, while the next leader adds them) and when the agent dies
// (a SIGKILLed agent leaves them; the next leader must not find them here
// too). Either way the guard removes them just before its last SIGKILL to
// the group, which it does not survive. The list comes in guardVIPsEnv,
// like the grace and the lease.

// guardVIPsEnv carries the addresses, each in vip.Addr's form
// (ADDR/PREFIX,dev=IFACE), separated by spaces.
const guardVIPsEnv = "LANLEADER_JOB_GUARD_VIPS"

// SetVIPs gives the supervisor the virtual addresses (their Dev set) that
// the guards of the jobs it starts remove at the end of the lease and at
// the agent's death. Call it before Run.
func (s *Supervisor) SetVIPs(addrs []vip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vips = append([]vip.Addr(nil), addrs...)
}

// SetHold gives the supervisor a copy of the notice guard's hold pipe
// (Notifier.Hold), which it owns and closes when Run ends. Every job
// guard it starts keeps the pipe until its job's process group is gone.
// Call it before Run.
func (s *Supervisor) SetHold(f *os.File) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold != nil {
		s.hold.Close()
	}
	s.hold = f
}

// closeHold closes the supervisor's copy of the hold pipe, when Run ends:
// no job guard is started after.
func (s *Supervisor) closeHold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold != nil {
		s.hold.Close()
		s.hold = nil
	}
}

// vipsEnv is the guard's variable of the addresses, "" without any.
func (s *Supervisor) vipsEnv() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return addrsEnv(s.vips)
}

// addrsEnv is the variable that gives a guard or the keeper addrs, ""
// without any.
func addrsEnv(addrs []vip.Addr) string {
	if len(addrs) == 0 {
		return ""
	}
	f := make([]string, len(addrs))
	for i, a := range addrs {
		f[i] = a.String()
	}
	return guardVIPsEnv + "=" + strings.Join(f, " ")
}

// guardVIPs reads the addresses the agent gave the guard, and takes the
// variable out of the job's environment.
func guardVIPs() ([]vip.Addr, error) {
	v := os.Getenv(guardVIPsEnv)
	os.Unsetenv(guardVIPsEnv)
	var addrs []vip.Addr
	for _, f := range strings.Fields(v) {
		a, err := vip.Parse(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", guardVIPsEnv, f, err)
		}
		addrs = append(addrs, a)
	}
	return addrs, nil
}

// removeVIPs removes the addresses, saying so on the guard's stderr (the
// agent's log, while it lives).
func removeVIPs(addrs []vip.Addr, why string) {
	if len(addrs) == 0 {
		return
	}
	removed, err := vipRemove(addrs)
	for _, a := range removed {
		fmt.Fprintf(os.Stderr, "lanleader: %s: removed the virtual address %s\n", why, a)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "lanleader: %s: cannot remove the virtual addresses: %v\n", why, err)
	}
}

// vipRemove is vip.Remove; the tests replace it.
var vipRemove = vip.Remove
