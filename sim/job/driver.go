package job

import (
	"time"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/wire"
)

// Driver is the agent's job policy on one node (agent/part/lead's
// updateJob and LeadershipChanged, agent/health.go): whether the job
// should run, from what the election machine reported.
type Driver struct {
	// Quorum: quorum mode, where a leader runs the job only while it
	// holds a lease and never waits for a previous leader's job (the
	// leases keep the jobs apart).
	Quorum bool
	// WaitMax bounds a takeover's wait for the previous leader's job to
	// stop (the agent's JobGrace + jobWaitMargin).
	WaitMax time.Duration

	leads bool // the machine reports this node leads (quorum mode: with a lease)
	// lost: the machine reported no leader (a suspicion, a RESIGN, a
	// step-down) since its status last named one: a leadership that
	// follows is no takeover from a live leader. A status names a
	// leader this node follows or is, and also one a candidate has
	// heard claim while its own election goes on (bully notes a smaller
	// leader's claim that its election overrides, with no ActFollow):
	// that leader is alive, and its job may run.
	lost bool
	// Wait is the leader whose job must stop before ours starts (a
	// takeover from it while it lived), until WaitUntil; 0: none.
	Wait      election.NodeID
	WaitSince time.Duration
	WaitUntil time.Duration
	// Standby: the node's link is down; it takes no part and runs no job.
	Standby bool
	// Resigning: a resign waits for the job to stop; the driver gives
	// the machine EvResign once it has (agent/part/lead's Resign), so
	// that the next leader's job never runs beside ours.
	Resigning bool
	// From is the leader this node's current leadership took over from
	// while it lived (0: none, or a leader lost to a crash, a suspicion
	// or a RESIGN); the checker's classification of the leadership.
	From election.NodeID

	ran bool // Run() before the step being handled: the job was wanted
}

// AfterStep updates the policy after one step of the machine, from its
// status before and after the step and the actions of the step.
func (d *Driver) AfterStep(now time.Duration, before, after election.Status, acts []election.Action) {
	d.ran = d.Run()
	for i := range acts {
		if acts[i].Kind == election.ActFollow {
			// In order: a step may follow a leader and at once begin to
			// take it over (a node that listened after a standby hears
			// it): that is a takeover from a live leader.
			d.lost = acts[i].Leader == 0
		}
	}
	leads := after.State == election.StateLeader
	if leads && (!d.leads || before.State != election.StateLeader) {
		d.Wait, d.From = 0, 0
		if before.Leader != 0 && before.Leader != after.Self.ID && !d.lost {
			d.From = before.Leader
			if !d.Quorum {
				d.Wait, d.WaitSince, d.WaitUntil = before.Leader, now, now+d.WaitMax
			}
		}
	}
	if !leads {
		// A resign under way has nothing left to resign.
		d.Wait, d.From, d.Resigning = 0, 0, false
	}
	if after.Leader != 0 {
		d.lost = false
	}
	d.leads = leads
}

// Claimant is the node whose claim to lead (COORDINATOR or HEARTBEAT) ev
// delivers to node self, 0 for any other event.
func Claimant(ev election.Event, self election.NodeID) election.NodeID {
	if ev.Kind != election.EvMessage || ev.Msg.From == self ||
		ev.Msg.Type != wire.TypeCoordinator && ev.Msg.Type != wire.TypeHeartbeat {
		return 0
	}
	return ev.Msg.From
}

// HeardClaim runs after AfterStep for a step that handled a claim
// (COORDINATOR or HEARTBEAT) of another node, x, and reports whether it
// made the takeover wait for x's job or wait longer. x led a moment ago
// and learns only now, from this leader's answer, that it no longer
// does: it had not heard this node's claim (a one-way link, a
// partition), or claimed a new term meanwhile. Its job stops within its
// grace from now, not from when this node took over, so a leader whose
// job has not started yet waits for it as for a displaced leader's,
// from now. A wait for a third leader is kept as it is. A job that runs
// already ran beside x's: that was two leaders, not a takeover.
func (d *Driver) HeardClaim(now time.Duration, x election.NodeID) bool {
	if !d.leads || d.Quorum || d.ran || x == 0 || d.Wait != 0 && d.Wait != x {
		return false
	}
	if d.Wait == 0 {
		d.Wait, d.WaitSince = x, now
		if d.From == 0 {
			d.From = x
		}
	}
	d.WaitUntil = max(d.WaitUntil, now+d.WaitMax)
	return true
}

// Resolve ends a takeover's wait when the previous leader's job is known
// to have stopped, or when the wait has lasted WaitMax.
func (d *Driver) Resolve(now time.Duration, stopped bool) {
	if d.Wait != 0 && (stopped || now >= d.WaitUntil) {
		d.Wait = 0
	}
}

// Run reports whether the job should run now.
func (d *Driver) Run() bool { return d.leads && !d.Standby && !d.Resigning && d.Wait == 0 }

// Resign begins a hand-over, if this node leads: the job stops first.
func (d *Driver) Resign() bool {
	if d.leads {
		d.Resigning = true
	}
	return d.Resigning
}

// Crashed forgets everything but the link: the agent is gone.
func (d *Driver) Crashed() { *d = Driver{Quorum: d.Quorum, WaitMax: d.WaitMax, Standby: d.Standby} }
