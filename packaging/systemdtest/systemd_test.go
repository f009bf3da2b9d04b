package systemdtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/internal/cmdtest"
	"github.com/lanleader/lanleader/internal/syncbuf"
)

// facts are probe.sh's lines: check name → key → value.
type facts map[string]map[string]string

func parseFacts(b []byte) facts {
	f := facts{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		kv := map[string]string{}
		for _, field := range fields[1:] {
			k, v, _ := strings.Cut(field, "=")
			kv[k] = v
		}
		f[fields[0]] = kv
	}
	return f
}

func (f facts) int(check, key string) int {
	n, err := strconv.Atoi(f[check][key])
	if err != nil {
		return -1
	}
	return n
}

// A judge returns what is wrong with a check's facts.
type judge func(f facts) []string

// want is one fact's expected value, by a test of it.
func want(f facts, check, key, what string, ok func(string) bool) []string {
	v, there := f[check][key]
	if !there || !ok(v) {
		return []string{fmt.Sprintf("%s: %s=%q, want %s", check, key, v, what)}
	}
	return nil
}

func is(s string) func(string) bool { return func(v string) bool { return v == s } }
func prefix(s string) func(string) bool {
	return func(v string) bool { return strings.HasPrefix(v, s) }
}
func contains(s string) func(string) bool {
	return func(v string) bool { return strings.Contains(v, s) }
}
func number(v string) bool { _, err := strconv.Atoi(v); return err == nil }

// judges are the claims the suite makes, one a check of probe.sh.
var judges = map[string]judge{
	"install": func(f facts) []string {
		return slices.Concat(want(f, "install", "status", "0", is("0")), want(f, "install", "unit", "loaded", is("loaded")))
	},
	"ready": func(f facts) []string {
		return slices.Concat(
			want(f, "ready", "start_status", "0 (systemctl start returns after READY=1)", is("0")),
			want(f, "ready", "type", "notify", is("notify")),
			want(f, "ready", "active", "active", is("active")),
			want(f, "ready", "sub", "running", is("running")),
			want(f, "ready", "status", "STATUS= leader, term N", prefix("leader,_term_")),
			want(f, "ready", "oom_setting", "-500 (OOMScoreAdjust=)", is("-500")),
			want(f, "wx_sandboxed", "line", "the W+X mapping refused by MemoryDenyWriteExecute=yes", contains("mmap_W+X_refused")))
	},
	"wx_job": func(f facts) []string {
		return slices.Concat(
			want(f, "wx_job", "mdwe", "no (lanleader-job.conf)", is("no")),
			want(f, "wx_job", "line", "the job's W+X mapping, with its term", regexp.MustCompile(`^wxjob:_mapped_W\+X,_pid_[0-9]+,_LANLEADER_TERM=[1-9]`).MatchString),
			want(f, "wx_job", "pid", "the job's pid", number),
			want(f, "wx_job", "in_cgroup", "yes, in the unit's cgroup", is("yes")))
	},
	"reload": func(f facts) []string {
		p := slices.Concat(
			want(f, "reload", "reload_status", "0", is("0")),
			want(f, "reload", "before", "100", is("100")),
			want(f, "reload", "after", "150", is("150")),
			want(f, "reload", "ms", "the time to the new priority in /status", number),
			want(f, "reload", "state", "leader", is("leader")),
			want(f, "reload", "pid_after", "the same process", is(f["reload"]["pid_before"])),
			want(f, "reload", "restarts_after", "no restart", is(f["reload"]["restarts_before"])))
		return p
	},
	"watchdog": func(f facts) []string {
		p := slices.Concat(
			want(f, "watchdog", "timeout_logged", "yes (Watchdog timeout)", is("yes")),
			want(f, "watchdog", "ms", "the time to the restarted agent", number),
			want(f, "watchdog", "active", "active", is("active")),
			want(f, "watchdog", "status", "leader again", prefix("leader,_term_")))
		if f.int("watchdog", "restarts_after") <= f.int("watchdog", "restarts_before") {
			p = append(p, fmt.Sprintf("watchdog: NRestarts %s then %s: not restarted", f["watchdog"]["restarts_before"], f["watchdog"]["restarts_after"]))
		}
		if f["watchdog"]["pid_after"] == f["watchdog"]["pid_before"] {
			p = append(p, "watchdog: the same main pid after the watchdog: not restarted")
		}
		return p
	},
	"stop": func(f facts) []string {
		return slices.Concat(
			want(f, "stop", "stop_status", "0", is("0")),
			want(f, "stop", "job_before", "the job's pid", func(v string) bool { return v != "none" }),
			want(f, "stop", "job_after", "none: no process of the job", is("none")),
			want(f, "stop", "cgroup_left", "no", is("no")),
			want(f, "stop", "active", "inactive", is("inactive")))
	},
	"realtime": func(f facts) []string {
		p := slices.Concat(
			want(f, "realtime", "active", "active", is("active")),
			want(f, "realtime", "filter_allows", "yes (lanleader-realtime.conf: SystemCallFilter=sched_setattr)", is("yes")))
		switch line := f["realtime"]["line"]; {
		case strings.Contains(line, "run_with_SCHED_FIFO"):
			all := f["realtime"]["threads"]
			p = append(p, want(f, "realtime", "fifo_threads", "every thread ("+all+")", func(v string) bool { return v == all && v != "0" })...)
		case strings.Contains(line, "running_without"):
			p = append(p, want(f, "realtime", "fifo_threads", "0", is("0"))...)
		default:
			p = append(p, fmt.Sprintf("realtime: no log line of the outcome: %q", line))
		}
		return p
	},
	"job_unit": func(f facts) []string {
		return slices.Concat(
			want(f, "job_unit", "start_status", "0", is("0")),
			want(f, "job_unit", "job_active", "yes: the job's unit started on the leader", is("yes")),
			want(f, "job_unit", "line", "the job ran", prefix("wxjob:_mapped")),
			want(f, "job_unit", "stopped_with_agent", "yes (BindsTo=)", is("yes")))
	},
	"late_bind": func(f facts) []string {
		return slices.Concat(
			want(f, "late_bind", "failure_logged", "yes: the agent said it could not bind yet", is("yes")),
			want(f, "late_bind", "up_ms", "the time to a leading agent after the address came", number),
			want(f, "late_bind", "active", "active", is("active")),
			want(f, "late_bind", "status", "leader", prefix("leader,_term_")))
	},
	"security": func(f facts) []string {
		return want(f, "security", "exposure", "an exposure of 2.0 or less", func(v string) bool {
			x, err := strconv.ParseFloat(v, 64)
			return err == nil && x <= 2.0
		})
	},
}

// allChecks is probe.sh's order.
var allChecks = []string{"ready", "wx_job", "reload", "watchdog", "stop", "realtime", "job_unit", "late_bind", "security"}

// TestSystemd boots the Debian root with the .deb installed and judges
// what probe.sh found. LANLEADER_SYSTEMD_CHECKS="reload watchdog" runs
// some checks only (install always).
func TestSystemd(t *testing.T) {
	if os.Getenv("LANLEADER_SYSTEMD") == "0" {
		t.Skip("LANLEADER_SYSTEMD=0: the systemd suite is off")
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: systemd-nspawn and debootstrap need root")
	}
	for _, tool := range []string{"systemd-nspawn", "debootstrap", "dpkg-deb"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s (apt-get install systemd-container debootstrap)", tool)
		}
	}
	began := time.Now()
	var log syncbuf.Buffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("debootstrap and systemd-nspawn:\n%s", log.String())
		}
	})
	root, err := Root(&log)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("root %s ready after %v", root, time.Since(began).Round(time.Second))
	probe := prepareProbe(t)
	checks := strings.Fields(os.Getenv("LANLEADER_SYSTEMD_CHECKS"))
	booted := time.Now()
	err = Boot(root, probe, checks, 6*time.Minute, &log)
	t.Logf("booted, checked and powered off in %v (%v in all)", time.Since(booted).Round(time.Second), time.Since(began).Round(time.Second))
	out, _ := os.ReadFile(filepath.Join(probe, "probe.log"))
	t.Logf("probe.sh's output:\n%s", out)
	res, _ := os.ReadFile(filepath.Join(probe, "results"))
	t.Logf("facts:\n%s", res)
	if err != nil {
		t.Error(err)
	}
	judgeAll(t, parseFacts(res), checks)
	if t.Failed() {
		journal, err := os.ReadFile(filepath.Join(probe, "journal.txt"))
		t.Logf("the container's journal (%v):\n%s", err, journal)
	}
}

func judgeAll(t *testing.T, f facts, checks []string) {
	t.Helper()
	if len(checks) == 0 {
		checks = allChecks
	}
	for _, c := range append([]string{"install"}, checks...) {
		j, ok := judges[c]
		if !ok {
			t.Errorf("no check %q (LANLEADER_SYSTEMD_CHECKS: %q)", c, allChecks)
			continue
		}
		if _, ran := f[c]; !ran {
			t.Errorf("%s: no facts: the check did not run or did not end", c)
			continue
		}
		for _, p := range j(f) {
			t.Error(p)
		}
	}
	if _, ok := f["done"]; !ok {
		t.Error("probe.sh did not finish")
	}
}

// prepareProbe makes the directory bound at /probe: probe.sh, the .deb
// built by packaging/deb.sh, and wxjob (static).
func prepareProbe(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "probe.sh"), ProbeScript, 0o755); err != nil {
		t.Fatal(err)
	}
	deb := strings.TrimSpace(cmdtest.Run(t, "../..", []string{"LANLEADER_VERSION=0.0.0~systemdtest"}, "./packaging/deb.sh"))
	t.Cleanup(func() { os.Remove(filepath.Join("../..", deb)) })
	b, err := os.ReadFile(filepath.Join("../..", deb))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lanleader.deb"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmdtest.Run(t, "", []string{"CGO_ENABLED=0"}, "go", "build", "-o", filepath.Join(dir, "wxjob"), "./wxjob")
	return dir
}
