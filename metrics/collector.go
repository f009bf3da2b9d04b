package metrics

import (
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// The collector of the node's state, read from the agent's view at each
// scrape.

// stateCollector exports the agent's View as const metrics at scrape time
// (client_golang's example_clustermanager_test.go).
type stateCollector struct {
	view                                       func() View
	isLeader, term, leaderInfo, state, members *prometheus.Desc
	priority, checksFailing, vipUp             *prometheus.Desc
	checkUp, fault                             *prometheus.Desc
	roles                                      roleDescs
}

func newStateCollector(view func() View) *stateCollector {
	return &stateCollector{
		view:          view,
		isLeader:      specIsLeader.desc(),
		term:          specTerm.desc(),
		leaderInfo:    specLeaderInfo.desc(),
		state:         specState.desc(),
		members:       specMembers.desc(),
		priority:      specPriority.desc(),
		checksFailing: specChecksFailing.desc(),
		vipUp:         specVIPUp.desc(),
		checkUp:       specCheckUp.desc(),
		fault:         specFault.desc(),
		roles:         newRoleDescs(),
	}
}

// Describe sends the descriptors without calling view (DescribeByCollect
// would call it at registration, before the agent has a snapshot).
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.isLeader
	ch <- c.term
	ch <- c.leaderInfo
	ch <- c.state
	ch <- c.members
	ch <- c.priority
	ch <- c.checksFailing
	ch <- c.vipUp
	ch <- c.checkUp
	ch <- c.fault
	c.roles.describe(ch)
}

// Collect calls view once and emits one series per metric and label value.
// A State outside States sets every lanleader_state series to 0; statuses
// outside MemberStatuses are not exported.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	v := c.view()
	ch <- gauge(c.isLeader, boolValue(v.State == "leader"))
	ch <- gauge(c.term, float64(v.Term))
	name := v.LeaderName
	if v.LeaderID == 0 {
		name = ""
	}
	ch <- gauge(c.leaderInfo, 1, strconv.FormatUint(v.LeaderID, 10), strings.ToValidUTF8(name, "\uFFFD"))
	for _, s := range States {
		ch <- gauge(c.state, boolValue(v.State == s), s)
	}
	for _, s := range MemberStatuses {
		ch <- gauge(c.members, float64(v.Members[s]), s)
	}
	ch <- gauge(c.priority, float64(v.Priority))
	ch <- gauge(c.checksFailing, float64(v.ChecksFailing))
	for _, a := range v.VIPs {
		ch <- gauge(c.vipUp, boolValue(a.Up), a.Address)
	}
	for _, k := range v.Checks {
		ch <- gauge(c.checkUp, boolValue(k.Up), k.Name)
	}
	ch <- gauge(c.fault, boolValue(v.Fault))
	c.roles.collect(ch, &v)
}

// gauge never panics: a scrape must not crash the agent. An error (none is
// expected: the label counts are fixed and values valid UTF-8) is reported
// to the scraper through an invalid metric.
func gauge(d *prometheus.Desc, value float64, labels ...string) prometheus.Metric {
	m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, value, labels...)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return m
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
