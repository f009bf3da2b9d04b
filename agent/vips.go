package agent

import (
	"net"
	"net/netip"
	"os"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/vip"
	"github.com/lanleader/lanleader/agent/part/vips"
	"github.com/lanleader/lanleader/election"
)

// The virtual addresses are a part (agent/part/vips: when they are taken,
// dropped and announced again, and in which order); here is how the
// driver tells it the leadership, under the names its steps use.

// VIP is one virtual address (Config.VIPs).
type VIP = config.VIP

// VIPStatus is one virtual address in /status.
type VIPStatus = vips.Status

// newVIPs is the addresses' part, with package vip or the tests' driver.
func (a *Agent) newVIPs(h loopHost, drv *vips.Driver) *vips.VIPs {
	d := vips.System
	if drv != nil {
		d = *drv
	}
	return vips.New(h, &a.cfg, d, a.met, vips.Node{
		Status: func() election.Status { return a.machine.Status() },
		SetVIPs: func(addrs []vip.Addr) {
			if a.procs.sup != nil {
				a.procs.sup.SetVIPs(addrs)
			}
		},
		Name: a.nameOf,
		Hold: func() *os.File {
			if a.notice == nil {
				return nil
			}
			return a.notice.Hold()
		},
	})
}

// startVIPs: ip and ifi are the election's address and interface.
func (a *Agent) startVIPs(ip netip.Addr, ifi *net.Interface) error {
	dev := ""
	if ifi != nil {
		dev = ifi.Name
	}
	return a.vips.Start(a.cfg.VIPs, ip, dev)
}

// updateVIPs: the addresses belong on this host while it leads, but for
// a graceful stop, which releases them itself between the job's stop and
// RESIGN. It runs before the policy asks for the job (agent/part/lead),
// which it does only once they are held.
func (a *Agent) updateVIPs() {
	a.vips.Update(a.machine.Status().State == election.StateLeader && !a.loop.leaving)
}

// judgeProbes: the first election has settled as st says.
func (a *Agent) judgeProbes(st election.Status) { a.vips.JudgeProbes(st, a.nameOf(st.Leader)) }
