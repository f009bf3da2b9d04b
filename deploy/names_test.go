package deploy

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lanleader/lanleader/metrics"
)

// exported maps every series name the agent exports (a histogram's
// _bucket, _sum and _count) and Prometheus's own up to the label names a
// query may use on it: its own, the target labels job and instance, and le
// on buckets.
func exported() map[string][]string {
	out := map[string][]string{"up": {"job", "instance"}}
	for _, m := range metrics.Describe() {
		labels := []string{"job", "instance"}
		if m.Labels != "" {
			labels = append(labels, strings.Split(m.Labels, ",")...)
		}
		if m.Type == "histogram" {
			out[m.Name+"_bucket"] = append(slices.Clone(labels), "le")
			out[m.Name+"_sum"] = labels
			out[m.Name+"_count"] = labels
			continue
		}
		out[m.Name] = labels
	}
	return out
}

// labelValues are the fixed value lists of the agent's labels.
var labelValues = map[string][]string{
	"state":  metrics.States,
	"status": metrics.MemberStatuses,
	"reason": metrics.DropReasons,
	"result": metrics.ElectionResults,
	"type":   metrics.MessageTypes,
	"role":   metrics.Roles,
}

// futureLabelValues are values that alert rules use before the agent
// exports them, each for a feature a later issue builds.
// (None now: reason="auth", the first, is exported since authentication
// was built.)
var futureLabelValues = map[string][]string{}

// checkNames reports, as errors, each metric of expr that the agent does
// not export, each label name that none of expr's metrics has, and each
// equality matcher on one of the agent's enumerated labels whose value is
// not in its list (or, with allowFuture, in futureLabelValues).
func checkNames(expr string, allowFuture bool) (promqlRefs, []error) {
	refs, err := scanPromQL(expr)
	if err != nil {
		return refs, []error{err}
	}
	var errs []error
	if len(refs.metrics) == 0 {
		errs = append(errs, fmt.Errorf("%q selects no metric", expr))
	}
	known := exported()
	var labels []string
	for _, m := range refs.metrics {
		l, ok := known[m]
		if !ok {
			errs = append(errs, fmt.Errorf("%q: the agent exports no %s", expr, m))
		}
		labels = append(labels, l...)
	}
	for _, l := range refs.labels {
		if !slices.Contains(labels, l) {
			errs = append(errs, fmt.Errorf("%q: label %s is not a label of %v", expr, l, refs.metrics))
		}
	}
	for _, m := range refs.matchers {
		values, enumerated := labelValues[m.label]
		if !enumerated || (m.op != "=" && m.op != "!=") {
			continue
		}
		if slices.Contains(values, m.value) {
			if slices.Contains(futureLabelValues[m.label], m.value) {
				errs = append(errs, fmt.Errorf("%s=%q is exported now: remove it from futureLabelValues", m.label, m.value))
			}
			continue
		}
		if !allowFuture || !slices.Contains(futureLabelValues[m.label], m.value) {
			errs = append(errs, fmt.Errorf("%q: %s=%q is not a value the agent exports (%q)", expr, m.label, m.value, values))
		}
	}
	return refs, errs
}

func TestScanPromQL(t *testing.T) {
	cases := []struct {
		expr             string
		metrics, labels  []string
		matchers         []matcher
		wantErrSubstring string
	}{
		{expr: `sum by (job) (lanleader_is_leader) == 0`,
			metrics: []string{"lanleader_is_leader"}, labels: []string{"job"}},
		{expr: `histogram_quantile(0.9, sum by (le) (increase(lanleader_failover_seconds_bucket{job=~"lanleader"}[10m])))`,
			metrics: []string{"lanleader_failover_seconds_bucket"}, labels: []string{"job", "le"},
			matchers: []matcher{{"job", "=~", "lanleader"}}},
		{expr: "(lanleader_is_leader == 1)\n  and on (job, instance) (lanleader_job_running == 0)\n  and on(job) (max by (job) (max_over_time(lanleader_job_running[1h])) == 1)",
			metrics: []string{"lanleader_is_leader", "lanleader_job_running"}, labels: []string{"instance", "job"}},
		{expr: `sum(rate(x_total{reason='auth', a!="b\"}"}[5m] offset 1h)) / 1e3 + count(y) by (le) * on() group_left z`,
			metrics: []string{"x_total", "y", "z"}, labels: []string{"a", "le", "reason"},
			matchers: []matcher{{"reason", "=", "auth"}, {"a", "!=", `b"}`}}},
		{expr: `count by (leader_name) (lanleader_leader_info{job=~"$job", leader_id!="0"})`,
			metrics: []string{"lanleader_leader_info"}, labels: []string{"job", "leader_id", "leader_name"},
			matchers: []matcher{{"job", "=~", "$job"}, {"leader_id", "!=", "0"}}},
		{expr: `rate(x[$__rate_interval]) > $threshold`, wantErrSubstring: "unsubstituted variable"},
		{expr: `x{a="b}`, wantErrSubstring: "unterminated string"},
		{expr: `x{a}`, wantErrSubstring: "matcher of a malformed"},
	}
	for _, c := range cases {
		r, err := scanPromQL(c.expr)
		if c.wantErrSubstring != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErrSubstring) {
				t.Errorf("%q: error %v, want one containing %q", c.expr, err, c.wantErrSubstring)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		if !slices.Equal(r.metrics, c.metrics) || !slices.Equal(r.labels, c.labels) || !slices.Equal(r.matchers, c.matchers) {
			t.Errorf("%q:\n got metrics %q labels %q matchers %q\nwant metrics %q labels %q matchers %q",
				c.expr, r.metrics, r.labels, r.matchers, c.metrics, c.labels, c.matchers)
		}
	}
}

func TestCheckNames(t *testing.T) {
	cases := []struct {
		expr        string
		allowFuture bool
		want        []string // substrings of the errors, in order
	}{
		{expr: `sum by (reason) (rate(lanleader_packets_dropped_total{reason="ttl"}[5m]))`},
		{expr: `lanleader_failover_seconds_bucket{le="0.3"} / ignoring(le) lanleader_failover_seconds_count`},
		{expr: `lanleader_packets_dropped_total{reason="auth"}`},
		{expr: `lanleader_packets_dropped_total{reason="replay"}`},
		{expr: `lanleader_packets_dropped_total{reason="forged"}`, want: []string{`reason="forged" is not a value the agent exports`}},
		{expr: `lanleader_is_leaders`, want: []string{"the agent exports no lanleader_is_leaders"}},
		{expr: `lanleader_failover_seconds`, want: []string{"the agent exports no lanleader_failover_seconds"}},
		{expr: `sum by (reason) (lanleader_messages_sent_total)`, want: []string{"label reason is not a label of [lanleader_messages_sent_total]"}},
		{expr: `lanleader_state{state="leading"}`, want: []string{`state="leading" is not a value`}},
		{expr: `vector(1)`, want: []string{"selects no metric"}},
	}
	for _, c := range cases {
		_, errs := checkNames(c.expr, c.allowFuture)
		if len(errs) != len(c.want) {
			t.Errorf("%q: errors %v, want %d", c.expr, errs, len(c.want))
			continue
		}
		for i, err := range errs {
			if !strings.Contains(err.Error(), c.want[i]) {
				t.Errorf("%q: error %q, want one containing %q", c.expr, err, c.want[i])
			}
		}
	}
}
