package election

import "time"

// Round trips as this node lives them. ConfirmTimeout (5ms by default)
// and AnswerTimeout (50ms) are a LAN's round trip with room to spare, on
// a host that runs the agent at once. A host that is short of CPU (a
// hundred agents on two cores, a machine swapping, a noisy neighbour)
// runs it tens or hundreds of milliseconds late: a VOUCH or an ANSWER
// then arrives after its wait has run out, and the node elects though
// the leader is alive. One such false election is a new leader that
// everyone hears, whose claims the others must check: more load, later
// answers, more false elections (without the adaptive waits, a 128-host
// LAN on a 2-core test bed collapsed so).
//
// So, like TCP's retransmission timeout (RFC 6298) and memberlist's
// Lifeguard awareness, the waits stretch with what this node measures:
// the time from a PROBE to the first VOUCH that answers it (the
// confirmations of a suspicion; not a claimant's check, which the herd
// makes at once: askClaimant), from an ELECTION to the first ANSWER. A
// late answer still counts: it is the evidence of a wait that was too
// short. The estimate is srtt + 4·rttvar, never below the
// configured wait; a wait that starts on a timer that fired late adds
// that lateness (this node's own scheduling delay now, the part of a
// round trip that it causes); the whole never exceeds SuspectAfter (a
// real crash is then confirmed at most one SuspectAfter later on a
// starved host), and the estimate fades back to the configured waits once
// no round trip has been measured for rttFade.
type rtt struct {
	srtt, rttvar time.Duration
	valid        bool
	at           time.Duration // when the last sample came

	// probeAt, electAt: when the request being timed went out (the
	// first PROBE of a confirmation or a claimant check; an ELECTION);
	// 0: none pending.
	probeAt, electAt time.Duration
}

// rttFade is how long the estimate lasts without a new sample, in
// SuspectAfter: after it, every further rttFade halves what it adds.
const rttFade = 10

// sample records one round trip of d.
func (r *rtt) sample(now, d, limit time.Duration) {
	d = min(max(d, 0), limit)
	if !r.valid {
		r.srtt, r.rttvar, r.valid = d, d/2, true
	} else {
		dev := r.srtt - d
		if dev < 0 {
			dev = -dev
		}
		r.rttvar = (3*r.rttvar + dev) / 4
		r.srtt = (7*r.srtt + d) / 8
	}
	r.at = now
}

// wait is base stretched to the round trips measured, at most limit.
func (r *rtt) wait(now, base, limit time.Duration) time.Duration {
	if !r.valid || base >= limit {
		return base
	}
	rto := r.srtt + 4*r.rttvar
	if fade := rttFade * limit; now-r.at > fade {
		rto >>= min(uint((now-r.at)/fade), 16)
	}
	return min(max(rto, base), limit)
}

// sent notes in *at that a request to be timed goes out now, unless one
// is already pending (its first send times the round trip; resends only
// make the answer come sooner).
func sent(at *time.Duration, now time.Duration) {
	if *at == 0 {
		*at = max(now, 1)
	}
}

// answered: an answer to the request pending in *at came now; the round
// trip is sampled once. An answer later than limit is left out: no wait
// stretches that far, and it may answer nothing this node asked.
func (r *rtt) answered(at *time.Duration, now, limit time.Duration) {
	if *at != 0 && now-*at <= limit {
		r.sample(now, now-*at, limit)
	}
	*at = 0
}

// stretches reports whether this node's waits follow its round trips:
// bully with AdaptiveWaits (the seeds' T is fixed). The ring family keeps
// its fixed waits: its hops already wait T each and are tried again on
// the way home (textbook_ring_hop.go), and stretched waits for it have not been
// measured over the random schedules. (The schedules of ring that failed
// to converge with stretched waits, 2562 among them, had another cause:
// a COORDINATOR held back for its winner, textbook_ring_list.go's claimOfList.)
func (c *core) stretches() bool {
	return c.cfg.AdaptiveWaits && c.cfg.Algorithm == AlgorithmBully
}

// confirmTimeout is ConfirmTimeout stretched to this node's round trips.
func (c *core) confirmTimeout() time.Duration {
	if !c.stretches() {
		return c.cfg.ConfirmTimeout
	}
	return min(c.rtt.wait(c.now, c.cfg.ConfirmTimeout, c.cfg.LossWindow())+c.late, c.cfg.LossWindow())
}

// answerTimeout is AnswerTimeout stretched to this node's round trips.
func (c *core) answerTimeout() time.Duration {
	if !c.stretches() {
		return c.cfg.AnswerTimeout
	}
	return min(c.rtt.wait(c.now, c.cfg.AnswerTimeout, c.cfg.LossWindow())+c.late, c.cfg.LossWindow())
}

// lateBy notes how late the timer handled now fired (due at deadline):
// this node's own scheduling delay at this moment, which the waits that
// start now add to the round trips measured. It is not a round trip, and
// not remembered: a herd of agents woken at once by a crash makes timers
// late by tens of milliseconds, and kept in the estimate that lateness
// slowed the next crash's confirmation at 128 hosts (p99 1.7 s).
func (c *core) lateBy(deadline time.Duration) {
	c.late = max(c.now-deadline, 0)
}

// lateYield: a decisive timer (one whose end elects, claims or accuses)
// that fires more than lateYield late is put off once by backlogYield, so
// that the packets that arrived while this node was starved (a claim, an
// ANSWER, a VOUCH, waiting in its socket) are handled before it decides.
// A crash at 128 hosts on two cores wakes 127 agents at once: their rank
// deferrals fired tens of milliseconds late with the new leader's claim
// already queued, and each multicast an ELECTION that all had to read.
const (
	lateYield    = 5 * time.Millisecond
	backlogYield = 2 * time.Millisecond
)

// yieldToBacklog re-arms timer t backlogYield from now, once, when it
// fired more than lateYield late and decides something; it reports
// whether it did (the timer is then not handled now).
func (c *core) yieldToBacklog(t TimerKind) bool {
	if c.late <= lateYield || c.yielded[t] || !c.stretches() {
		return false
	}
	switch t {
	case TimerStartup, TimerAnswer, TimerCoordinator, TimerSuspect, TimerConfirm:
	default:
		return false
	}
	c.setTimer(t, c.now+backlogYield)
	c.yielded[t] = true
	return true
}
