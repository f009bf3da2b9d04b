package election

import "time"

// The pre-vote (Hardening.PreVote, quorum mode): before it elects, a node
// makes sure that a majority would hear of it and keeps no live leader,
// with the PROBE and VOUCH of the confirmation (harden_confirm.go).

// --- pre-vote (quorum mode) ------------------------------------------------------

// prevote: before it elects, a node in quorum mode makes sure that a
// majority would hear of it and has no leader it must keep (outside
// quorum mode it elects at once). It sends
// rounds of prevoteRounds PROBEs over ConfirmTimeout, then waits (twice as
// long after each round, up to LossWindow) before the next round; a
// grant counts for LossWindow after it arrived, whichever round it
// answered, so that a round trip longer than a round still counts.
func (c *core) prevote() {
	s := &c.st
	if !c.q.on() || !c.cfg.PreVote || c.majority() <= 1 || c.now < s.grantedUntil {
		c.e.elect()
		return
	}
	if s.prevoting || c.hearsLarger() {
		return
	}
	s.prevoting, s.backoff = true, 0
	if s.grants == nil {
		s.grants = make(map[NodeID]time.Duration)
	}
	if c.countGrants() >= c.majority() {
		c.winPrevote()
		return
	}
	c.prevoteRound()
}

// prevoteRound starts a round of PROBEs; in a herd, only when this node
// knows of a majority of voters (tooFewVoters), and otherwise it waits as
// after a round that failed.
func (c *core) prevoteRound() {
	s := &c.st
	if c.tooFewVoters() {
		s.roundEnd, s.probes = c.now, 0
		c.prevoteBackoff()
		return
	}
	s.roundEnd, s.probes = c.now+c.confirmTimeout(), 0
	c.probe(c.leader, s.lastHeard, true)
	c.setTimer(TimerPrevote, min(c.now+c.prevoteEvery(), s.roundEnd))
}

// prevoteBackoff waits before the next pre-vote round, twice as long as
// the last time, from twice ConfirmTimeout up to LossWindow.
func (c *core) prevoteBackoff() {
	s := &c.st
	s.backoff = min(max(2*s.backoff, 2*c.confirmTimeout()), c.cfg.LossWindow())
	c.setTimer(TimerPrevote, c.now+s.backoff)
}

// tooFewVoters reports whether, in a herd with no leader, this node's
// members and itself hold fewer voters than a majority of Quorum: then
// no pre-vote can win, and its PROBE to all would only cost every member
// a packet to read and answer. A LAN of 128 hosts in quorum mode that
// starts one host after another had every started host pre-vote every
// SuspectAfter until 65 had started: a k-host LAN's k PROBEs and k²
// VOUCHes a round. A node that follows a leader (it would take over from
// it) probes at every suspicion, and so does a smaller cluster: the answers of
// voters its view does not list yet count too, and a node that has just
// restarted may wait seconds for its member list.
func (c *core) tooFewVoters() bool {
	if !c.inHerd() || c.leader != 0 {
		return false
	}
	n := 1 + len(c.members)
	for id, r := range c.roles {
		if _, ok := c.members[id]; ok && !r.Votes() {
			n--
		}
	}
	return n < c.majority()
}

// countGrants counts this node and the grants of the last LossWindow,
// forgetting older ones.
func (c *core) countGrants() int {
	n := 1
	for id, at := range c.st.grants {
		if c.now-at >= c.cfg.LossWindow() {
			delete(c.st.grants, id)
			continue
		}
		n++
	}
	return n
}

func (c *core) winPrevote() {
	s := &c.st
	s.prevoting = false
	s.grantedUntil = c.now + c.cfg.LossWindow()
	clear(s.grants)
	c.cancelTimer(TimerPrevote)
	c.startElection()
}

// stopPrevote drops a pre-vote that no longer matters (a leader is
// followed, or the node leads).
func (c *core) stopPrevote() {
	s := &c.st
	if s.prevoting {
		s.prevoting = false
		c.cancelTimer(TimerPrevote)
	}
}

func (c *core) onPrevoteTimer() {
	s := &c.st
	if !s.prevoting {
		return
	}
	if c.hearsLarger() {
		c.stopPrevote()
		return
	}
	switch {
	case s.probes < c.prevoteProbes() && c.now < s.roundEnd:
		c.probe(c.leader, s.lastHeard, true)
		c.setTimer(TimerPrevote, min(c.now+c.prevoteEvery(), s.roundEnd))
	case c.now < s.roundEnd:
		c.setTimer(TimerPrevote, s.roundEnd)
	case s.probes > 0:
		// The round is over and no majority has answered yet: this node
		// cannot be heard, or cannot hear, or the answers are slow. Wait,
		// less and less often, disturbing nobody; late grants still count.
		s.probes = 0
		c.prevoteBackoff()
	default:
		c.prevoteRound()
	}
}
