package config

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// The health checks' settings: a check's own (Check) over the global
// defaults (Config.CheckInterval, CheckTimeout, CheckRise, CheckFall,
// CheckWeight), resolved and validated here.

// MaxCheckRiseFall bounds a check's rise and fall.
const MaxCheckRiseFall = 1000

// Check is one health check, keepalived's vrrp_script. A zero Interval,
// Timeout, Rise or Fall is Config's default (CheckInterval, CheckTimeout,
// CheckRise, CheckFall); a zero Weight is CheckWeight unless Fault.
type Check struct {
	// Name names it in the log, /status and the metrics' labels; default
	// "check-N", N its position from 1.
	Name    string
	Command string // sh -c
	// Interval is between the starts of two runs, at least 100ms;
	// Timeout bounds one run, at most Interval.
	Interval, Timeout time.Duration
	// Rise is the passes in a row that make a failed check OK, Fall the
	// failures in a row that make an OK check failed, 1 to
	// MaxCheckRiseFall.
	Rise, Fall int
	// Weight is what the failed check takes off the priority, 1 to
	// 65535.
	Weight int
	// Fault (keepalived's weight 0): the failed check takes the node out
	// of the elections, and a leader resigns, until it is OK again.
	Fault bool
}

// ResolvedChecks are the checks with every default filled in: a name,
// the durations, rise and fall, and Weight 0 with Fault, or the weight.
func (c *Config) ResolvedChecks() []Check {
	out := make([]Check, len(c.Checks))
	for i, ch := range c.Checks {
		ch.Name = cmp.Or(ch.Name, fmt.Sprintf("check-%d", i+1))
		ch.Interval = cmp.Or(ch.Interval, c.CheckInterval)
		ch.Timeout = cmp.Or(ch.Timeout, c.CheckTimeout, ch.Interval)
		ch.Rise = cmp.Or(ch.Rise, c.CheckRise)
		ch.Fall = cmp.Or(ch.Fall, c.CheckFall)
		if !ch.Fault && ch.Weight == 0 {
			ch.Weight = c.CheckWeight
		}
		if ch.Fault = ch.Fault || ch.Weight == 0; ch.Fault {
			ch.Weight = 0
		}
		out[i] = ch
	}
	return out
}

// NegativeWeight is the error of a negative check weight, which is
// keepalived's way: its weights are signed (a negative one lowers the
// priority of a failing check, a positive one raises a passing check's);
// here a failing check lowers it, so keepalived's -20 is 20.
func NegativeWeight(n int64) error {
	return fmt.Errorf("%d is negative: a failing check takes its weight off the priority, so keepalived's weight %d is %d here (0: fault)", n, n, -n)
}

// checkName is what a check's name may be: it is a label of the metrics
// and a word of the log.
var checkName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// checkSetting names a field of check i (from 0) as Validate's
// SettingErrors do: "checks[2].timeout".
func checkSetting(i int, field string) string { return fmt.Sprintf("checks[%d].%s", i+1, field) }

// checkChecks checks the health checks and the track files.
func (c *Config) checkChecks(p *problems) {
	p.notNegative(namedDuration{"check-timeout", c.CheckTimeout})
	if c.CheckTimeout > c.CheckInterval {
		p.setting("check-timeout", "%v is longer than check-interval %v", c.CheckTimeout, c.CheckInterval)
	}
	names := map[string]int{}
	for i, ch := range c.ResolvedChecks() {
		own := c.Checks[i]
		if strings.TrimSpace(ch.Command) == "" {
			p.setting(checkSetting(i, "command"), "empty command")
		}
		if !checkName.MatchString(ch.Name) {
			p.setting(checkSetting(i, "name"), "%q is not a name of 1 to 64 letters, digits, '_', '.' or '-'", ch.Name)
		} else if j, dup := names[ch.Name]; dup {
			p.setting(checkSetting(i, "name"), "%q is the name of checks %d and %d", ch.Name, j+1, i+1)
		}
		names[ch.Name] = i
		c.checkCheckNumbers(p, i, own, ch)
	}
	for i, f := range c.TrackFiles {
		if strings.TrimSpace(f) == "" {
			p.setting("track-file", "empty file name (item %d)", i+1)
		}
	}
}

// checkCheckNumbers checks check i's durations and counts: own as given,
// ch resolved. A fault of a default is the global setting's.
func (c *Config) checkCheckNumbers(p *problems, i int, own, ch Check) {
	p.notNegative(namedDuration{checkSetting(i, "interval"), own.Interval}, namedDuration{checkSetting(i, "timeout"), own.Timeout})
	if own.Interval > 0 && own.Interval < MinCheckInterval {
		p.setting(checkSetting(i, "interval"), "%v is shorter than %v", own.Interval, MinCheckInterval)
	}
	for _, d := range []namedDuration{{checkSetting(i, "interval"), own.Interval}, {checkSetting(i, "timeout"), own.Timeout}} {
		if d.d > MaxCheckInterval {
			p.setting(d.setting, "%s is above the ceiling of %s", DurationText(d.d), DurationText(MaxCheckInterval))
		}
	}
	if own.Timeout > ch.Interval {
		p.setting(checkSetting(i, "timeout"), "%v is longer than the check's interval %v", own.Timeout, ch.Interval)
	} else if own.Timeout == 0 && c.CheckTimeout > ch.Interval {
		p.setting("check-timeout", "%v is longer than the interval %v of check %q", c.CheckTimeout, ch.Interval, ch.Name)
	}
	r := *Lookup("check-rise").Range // a check's own rise and fall: the defaults' range
	for _, n := range []struct {
		field string
		v     int
	}{{"rise", own.Rise}, {"fall", own.Fall}} {
		if n.v != 0 && !r.contains(int64(n.v)) {
			p.setting(checkSetting(i, n.field), "%v", r.OutOfRange(fmt.Sprint(n.v)))
		}
	}
	if w := *Lookup("check-weight").Range; own.Weight < 0 {
		p.setting(checkSetting(i, "weight"), "%v", NegativeWeight(int64(own.Weight)))
	} else if !w.contains(int64(own.Weight)) {
		p.setting(checkSetting(i, "weight"), "%v", w.OutOfRange(fmt.Sprint(own.Weight)))
	}
}
