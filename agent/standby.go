package agent

import (
	"strings"

	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/election"
)

// Standby (keepalived's FAULT state): the node takes no part in the
// elections while any reason holds: the election interface without
// carrier (agent/part/links), a link of the virtual addresses down (vip.go), a
// failed check of weight 0 (checks.go), a track file present
// (agent/part/trackfile), no member joined yet for `run --once` (jobonce.go).
// applyStandby is the one place that decides it; each source calls it
// when its part changes.

// standbyState is the part of loopState the standby owns.
type standbyState struct {
	standby bool // the machine was told EvStandby{On: true}
}

// standbyReasons says why the node must stay out of the elections now,
// one phrase per reason; none: it takes part.
func (a *Agent) standbyReasons() []string {
	l := &a.loop
	var why []string
	if r := a.links.Reason(); r != "" {
		why = append(why, r)
	}
	if d := a.links.VIPDown(); len(d) > 0 {
		why = append(why, "a link of the virtual addresses is down ("+strings.Join(d, ",")+")")
	}
	if f := a.checks.Faults(); len(f) > 0 {
		why = append(why, "a check of weight 0 fails ("+strings.Join(f, ",")+")")
	}
	if p := a.track.Present(); len(p) > 0 {
		why = append(why, "a track file is present ("+strings.Join(p, ",")+")")
	}
	if l.awaitJoin {
		why = append(why, "no member has joined yet (run --once)")
	}
	return why
}

// applyStandby keeps the node out of the elections while a reason holds,
// with or without preemption. A leader first hands over as a resign does
// (the job stops, the addresses go, RESIGN); finishResign then comes back
// here. A leader whose election interface lost its carrier steps down at
// once instead: no one can hear its RESIGN, the others elect when their
// detectors fire, and its job must be stopping by then; the machine's
// step down releases the addresses and stops the job (leadershipChanged).
// When the last reason goes, the node is a candidate again: it takes a
// leadership back only as preemption allows.
func (a *Agent) applyStandby() {
	l := &a.loop
	why := a.standbyReasons()
	want := len(why) > 0
	if want == l.standby || l.leaving {
		return
	}
	if want && a.machine.Status().State == election.StateLeader && !a.links.CarrierLost() {
		a.beginResign(strings.Join(why, "; "))
		return
	}
	l.standby, l.dirty = want, true
	if want {
		a.log.Warn("in fault: this node takes no part in elections", "why", strings.Join(why, "; "))
	} else {
		a.log.Info("out of fault: this node takes part in elections again")
	}
	a.step(a.now(), election.Event{Kind: election.EvStandby, On: want})
	a.faultHook(want, why)
}

// faultHook runs on_change for a change of fault (keepalived's
// notify_fault): LANLEADER_STATE is "fault" while the node is in it, and
// the machine's state again when it ends; LANLEADER_FAULT says why, empty
// when it ends.
func (a *Agent) faultHook(on bool, why []string) {
	if a.procs.hooks == nil || a.cfg.OnChange == "" {
		return
	}
	st := a.machine.Status()
	state := st.State.String()
	if on {
		state = "fault"
	}
	env := append(hookEnv(&a.cfg, state, st.Term, st.Leader), "LANLEADER_FAULT="+strings.Join(why, "; "))
	a.procs.hooks.Add(proc.Hook{Name: "on_change", Command: a.cfg.OnChange, Env: env})
}

// watchLinks (re)starts the links part's watch: the election interface
// electionDev, and with VIPTrackLink the virtual addresses' interfaces.
func (a *Agent) watchLinks(electionDev string) error {
	var vipDevs []string
	if a.cfg.VIPTrackLink {
		for _, ad := range a.vips.addrs {
			vipDevs = append(vipDevs, ad.Dev)
		}
	}
	return a.links.Watch(electionDev, vipDevs)
}

// onLinks reads the links part's news (its watch reported, or the loop
// starts) and arms the aux timer for the listen that follows a carrier
// back.
func (a *Agent) onLinks() {
	a.links.Update()
	a.rearmAux()
}
