package agent

import (
	"strings"

	"github.com/lanleader/lanleader/agent/internal/proc"
	"github.com/lanleader/lanleader/agent/part/checks"
	"github.com/lanleader/lanleader/election"
)

// Standby (keepalived's FAULT state): the node takes no part in the
// elections while any reason holds: the election interface without
// carrier or a link of the virtual addresses down (agent/part/links), a
// failed check of weight 0 (agent/part/checks), a track file present
// (agent/part/trackfile), no member joined yet for `run --once`
// (agent/part/lead).
// applyStandby is the one place that decides it; each source calls it
// when its part changes.

// standbyState is the part of loopState the standby owns.
type standbyState struct {
	standby bool // the machine was told EvStandby{On: true}
}

// standbyReasons says why the node must stay out of the elections now,
// one phrase per reason; none: it takes part.
func (a *Agent) standbyReasons() []string {
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
	if a.lead.AwaitingJoin() {
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
// step down releases the addresses and stops the job (the policy's
// LeadershipChanged).
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
	if a.cfg.OnChange == "" {
		return
	}
	st := a.machine.Status()
	state := st.State.String()
	if on {
		state = "fault"
	}
	env := append(proc.HookEnv(a.cfg.NodeID, a.cfg.Name, state, st.Term, st.Leader), "LANLEADER_FAULT="+strings.Join(why, "; "))
	a.lead.Hook(proc.Hook{Name: "on_change", Command: a.cfg.OnChange, Env: env})
}

// watchLinks (re)starts the links part's watch: the election interface
// electionDev, and with VIPTrackLink the virtual addresses' interfaces.
func (a *Agent) watchLinks(electionDev string) error {
	var vipDevs []string
	if a.cfg.VIPTrackLink {
		vipDevs = a.vips.Devs()
	}
	return a.links.Watch(electionDev, vipDevs)
}

// onLinks reads the links part's news (its watch reported, or the loop
// starts); the part arms the aux timer for the listen that follows a
// carrier back.
func (a *Agent) onLinks() { a.links.Update() }

// The health checks are a part (agent/part/checks); here is what the
// driver does with them: the first results before anything opens (the
// machine starts with the priority they give), and the priority and the
// standby after each result and after a reload replaced them
// (reloadParts).

// CheckStatus is one check's part of /status.
type CheckStatus = checks.Status

// firstChecks runs the health checks once before anything opens (and
// stats the track files): the node starts with the priority and the
// standby they give it.
func (a *Agent) firstChecks() error {
	cfg := &a.cfg
	a.track.First()
	if len(cfg.Checks) == 0 {
		return nil
	}
	a.checks.First(cfg.ResolvedChecks())
	if p := a.effectivePriority(); p != cfg.Priority {
		m, err := newMachine(cfg, p, a.initialTerm)
		if err != nil {
			return err
		}
		a.machine = m
	}
	return nil
}

// onChecks: a check's result came; the priority and the standby follow.
func (a *Agent) onChecks() {
	a.applyPriority()
	a.applyStandby()
}

// closeChecks stops the checks for good, and any later swap of a runner
// (shutdown), while the loop still runs: a result under way reaches it.
func (a *Agent) closeChecks() {
	a.lead.CloseHooks()
	a.checks.Stop()
}

// effectivePriority is the configured priority less the weights of the
// failed checks, 1 while penalised, never below 1.
func (a *Agent) effectivePriority() uint16 {
	p := int(a.cfg.Priority) - a.checks.Weights()
	if a.lead.Penalised() {
		p = 1
	}
	return uint16(max(p, 1))
}

// applyPriority gives the machine and the other members the effective
// priority when it changed.
func (a *Agent) applyPriority() {
	l := &a.loop
	p := a.effectivePriority()
	if p == a.machine.Status().Self.Priority {
		return
	}
	a.log.Info("priority changed", "priority", p, "base_priority", a.cfg.Priority,
		"failing_checks", a.checks.Failing(), "penalised", a.lead.Penalised())
	a.step(a.now(), election.Event{Kind: election.EvSetPriority, Priority: p})
	a.setMeta()
	a.pushMeta()
	l.dirty = true
}
