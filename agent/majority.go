package agent

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/lanleader/lanleader/agent/part/majority"
)

// votersHeard returns the voters this node hears, itself included when it
// votes: the candidates and witnesses that the membership (gossip) lists
// alive, by name, sorted.
func (a *Agent) votersHeard() []string {
	var names []string
	if a.cfg.ElectionRole().Votes() {
		names = append(names, a.cfg.Name)
	}
	for _, m := range a.loop.members {
		if m.alive() && m.metaOK && m.meta.Role.Votes() {
			names = append(names, m.name)
		}
	}
	slices.Sort(names)
	return names
}

// noteMajority tells the majority's watch (agent/part/majority) what this
// quorum node hears at now, once the first election's startup wait is
// over. An observer does not vote and waits for nobody.
func (a *Agent) noteMajority(now time.Duration) {
	if a.cfg.Quorum == 0 || !a.cfg.ElectionRole().Votes() || a.loop.leaving || now < a.machine.Config().StartupWait {
		return
	}
	if a.loop.majority == nil {
		a.loop.majority = majority.New(a.log)
	}
	leader := ""
	if id := a.machine.Status().Leader; id != 0 {
		leader = cmp.Or(a.nameOf(id), fmt.Sprintf("node_id %d", id))
	}
	a.loop.majority.Note(now, majority.View{Quorum: a.cfg.Quorum, Voters: a.votersHeard(), Leader: leader})
}
