package main

// The man page lanleader(8), written from the program's own texts: the
// help of each command (its usage constant), run's manual (run.txt) and
// the settings table (config.ManOptions), so that the page says what
// `lanleader CMD -h` says. The page is kept in man/lanleader.8 beside
// lanleader.yaml(5) (config.YAMLPage); man_test.go fails while either is
// not what is written here, and rewrites both with -update:
//
//	go test ./cmd/lanleader -run TestManPagesAreCurrent -update

import (
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/internal/roff"
)

// manMarker begins a line of run's manual that stands for roff written
// elsewhere: the options of a group of the settings table.
const manMarker = "\x00options "

// manSections are run's manual's sections by heading ("EXIT STATUS"), and
// their headings in order. A section's text is its lines after the
// heading, the options of each group as a marker line.
func manSections() (map[string]string, []string) {
	t := template.Must(template.New("run.txt").Funcs(template.FuncMap{
		"options":  func(group string) string { return manMarker + group },
		"fileKeys": fileKeys,
	}).Parse(runManual))
	var b strings.Builder
	if err := t.Execute(&b, nil); err != nil {
		panic(err)
	}
	heading := regexp.MustCompile(`^[A-Z][A-Z ]*[A-Z]$`)
	sections := map[string]string{}
	var order []string
	cur := ""
	for line := range strings.Lines(b.String()) {
		if h := strings.TrimSuffix(line, "\n"); heading.MatchString(h) {
			cur = h
			order = append(order, h)
			continue
		}
		sections[cur] += line
	}
	return sections, order
}

// manText is help text as roff, the settings' options at their markers.
func manText(text string) string {
	return roff.Text(text, manMarker, func(line string) string {
		return config.ManOptions(strings.TrimPrefix(line, manMarker))
	})
}

// usageOf splits a command's help into its synopsis ("lanleader status
// [--http ADDR] ..." without "usage: ") and the rest.
func usageOf(help string) (synopsis, rest string) {
	first, rest, _ := strings.Cut(help, "\n")
	return strings.TrimPrefix(first, "usage: "), rest
}

// manCommands are the commands the page describes, in its order, with
// their help; run's is its manual, given in sections of its own.
var manCommands = []struct{ name, help string }{
	{"check-config", checkConfigUsage},
	{"status", statusUsage},
	{"resign", resignUsage},
	{"exec-if-leader", execIfLeaderUsage},
	{"demo", demoUsage},
	{"sim", simUsage + simFlags()},
}

// manPlaced are the sections of run's manual that the page puts in a
// place of its own; the others follow OPTIONS, in the manual's order.
var manPlaced = map[string]bool{"NAME": true, "USAGE": true, "DESCRIPTION": true, "FLAGS": true,
	"EXIT STATUS": true, "ENVIRONMENT": true, "SIGNALS": true}

// manPage is lanleader(8).
func manPage() string {
	sec, order := manSections()
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p(".TH LANLEADER 8 %s lanleader %s\n", config.ManDate, roff.Quote("System Administration"))
	p(".SH NAME\nlanleader \\- keeps one host of the LAN the leader and runs its job there\n")

	p(".SH SYNOPSIS\n")
	var synopses []string
	for line := range strings.Lines(sec["USAGE"]) {
		if line = strings.TrimSpace(line); line != "" {
			synopses = append(synopses, line)
		}
	}
	for _, c := range manCommands {
		s, _ := usageOf(c.help)
		synopses = append(synopses, s)
	}
	synopses = append(synopses, "lanleader version", "lanleader help")
	for i, s := range synopses {
		if i > 0 {
			p(".br\n")
		}
		p("%s\n", roff.Term(s))
	}

	p(".SH DESCRIPTION\n%s", manIntro)
	p("%s", tidy(manText(sec["DESCRIPTION"])))

	p(".SH COMMANDS\n")
	p(".SS %s\n", roff.Quote("lanleader run"))
	p("The agent, described above; its options are under OPTIONS, its\nexit statuses under EXIT STATUS, its signals under SIGNALS.\n")
	for _, c := range manCommands {
		s, rest := usageOf(c.help)
		p(".SS %s\n%s\n%s", roff.Quote("lanleader "+c.name), roff.Term(s), manText(rest))
	}
	p(".SS %s\nPrints the version of the program, its commit and the Go release it\nwas built with.\n", roff.Quote("lanleader version"))
	p(".SS %s\nPrints the list of commands. Each command's \\fB\\-h\\fR prints its help:\nthe text of its part of this page.\n", roff.Quote("lanleader help"))

	p(".SH OPTIONS\n")
	p("%s", manFlags(sec["FLAGS"]))
	for _, h := range order {
		if !manPlaced[h] {
			p(".SH %s\n%s", roff.Quote(h), tidy(manText(sec[h])))
		}
	}

	p(".SH %s\n%s", roff.Quote("EXIT STATUS"), tidy(manText(sec["EXIT STATUS"])))
	p(".PP\nThe exit statuses of the other commands are given with each under COMMANDS.\n")
	p(".SH SIGNALS\n%s", tidy(manText(sec["SIGNALS"])))
	p(".SH ENVIRONMENT\n%s%s", tidy(manText(sec["ENVIRONMENT"])), manEnvironment)
	p("%s", manTail)
	return b.String()
}

// manFlags is run's manual's FLAGS as roff: its text before the first
// group, then each group (a line indented by two) as a subsection.
func manFlags(text string) string {
	var b strings.Builder
	var chunk []string
	flush := func() {
		if len(chunk) > 0 {
			b.WriteString(tidy(manText(strings.Join(chunk, "\n"))))
		}
		chunk = nil
	}
	for line := range strings.Lines(text) {
		line = strings.TrimSuffix(line, "\n")
		if indent := len(line) - len(strings.TrimLeft(line, " ")); indent == 2 && !strings.HasPrefix(line, manMarker) {
			flush()
			fmt.Fprintf(&b, ".SS %s\n", roff.Quote(strings.TrimSpace(line)))
			continue
		}
		chunk = append(chunk, line)
	}
	flush()
	return b.String()
}

// tidy drops a paragraph macro that begins a section's text: after .SH
// or .SS, mandoc warns of it.
func tidy(s string) string { return strings.TrimPrefix(s, ".PP\n") }

// simFlags are the flags of `lanleader sim`, as its -h prints them
// after its usage text.
func simFlags() string {
	var b strings.Builder
	fs, _ := newSimFlags(&b)
	fs.PrintDefaults()
	return b.String()
}

// manIntro begins DESCRIPTION, before run's own.
const manIntro = `.B lanleader
keeps exactly one host of a LAN the leader, and runs a job there.
Each host runs the agent,
.BR "lanleader run" ,
usually as the systemd service lanleader.service, configured by
.BR lanleader.yaml (5);
the other commands check a configuration, or ask the agent of their
host what it sees, to hand its leadership over, or whether it leads.
.PP
`

// manEnvironment are the variables that the program reads beside
// GOMAXPROCS (run's manual), and those it sets for the job.
const manEnvironment = `.TP
.B NOTIFY_SOCKET
Set by systemd for a unit of Type=notify: the agent reports READY=1 once
the first election has settled (or a few seconds after its start),
its state in STATUS= (what
.B systemctl status
shows), RELOADING=1 and STOPPING=1. Unset, it reports nothing. The
job, the hooks and the checks do not get it.
.TP
.BR WATCHDOG_USEC ", " WATCHDOG_PID
Set by systemd for a unit with WatchdogSec=: the event loop sends
WATCHDOG=1 every half of it, and a loop that hangs stops the pings, so
that systemd restarts the agent (SIGABRT, exit status 134).
.TP
.B RUNTIME_DIRECTORY
Set by systemd for a unit with RuntimeDirectory=: with
.BR \-\-job\-unit ,
the agent writes the job's variables to job.env there (default
/run/lanleader).
.TP
.BR LANLEADER_TERM ", " LANLEADER_NODE_ID ", " LANLEADER_LEADER_ID ", " LANLEADER_NAME
Set by the agent for the job, the hooks and the checks, and by
.B lanleader exec\-if\-leader
for its command: the term (the fencing token), this node's id, the
leader's id and this node's name. The hooks also get LANLEADER_STATE
and LANLEADER_FAULT (see JOB).
`

// manTail is the page's end: FILES, EXAMPLES, SEE ALSO.
const manTail = `.SH FILES
.TP
.I /etc/lanleader/lanleader.yaml
The configuration of the packaged unit
.RB ( \-\-config ),
see
.BR lanleader.yaml (5).
A configuration file of the package: an upgrade keeps local changes.
.TP
.I /etc/default/lanleader
Extra flags of
.B lanleader run
for the unit, in LANLEADER_OPTS; they win over the file.
.TP
.I /lib/systemd/system/lanleader.service
The unit: Type=notify, the sandbox (DynamicUser=yes, run as the system
user lanleader), Restart=on\-failure
but for exit status 2, SIGHUP for
.BR "systemctl reload" .
.TP
.I /usr/share/lanleader/lanleader\-vip.conf
A drop\-in for
.BR \-\-vip ,
not enabled: it grants CAP_NET_ADMIN and CAP_NET_RAW. Link it into
/etc/systemd/system/lanleader.service.d/ to enable it.
.TP
.I /usr/share/lanleader/lanleader\-job.conf
A drop\-in, not enabled, for a job with a JIT (a JVM, Node.js), which
the unit's sandbox refuses W+X memory and some system calls.
.TP
.I /usr/share/lanleader/lanleader\-realtime.conf
A drop\-in, not enabled, for
.BR \-\-realtime .
.TP
.I /var/lib/lanleader/state
The voted term of quorum mode
.RB ( \-\-state\-file ),
in the unit's StateDirectory.
.TP
.I /run/lanleader/job.env
The job's variables for a job unit
.RB ( \-\-job\-unit ),
in the unit's RuntimeDirectory.
.TP
.I /usr/share/polkit\-1/rules.d/50\-lanleader\-job.rules
Lets the agent's user start and stop the units named
lanleader\-job*.service, and no other.
.TP
.I /usr/lib/sysusers.d/lanleader.conf
The system user lanleader, for
.BR \-\-job\-unit .
.SH EXAMPLES
Three hosts on a LAN that passes multicast, host\-a preferred: the same
command (or file) on each, but the priority.
.PP
.EX
host\-a# lanleader run \-\-priority 150 \-\- /usr/local/bin/worker
host\-b# lanleader run \-\- /usr/local/bin/worker
host\-c# lanleader run \-\- /usr/local/bin/worker
host\-a# lanleader status
.EE
.PP
Where multicast does not pass, the same with the peers named:
.PP
.EX
lanleader run \-\-transport unicast \-\-bind 192.0.2.11 \e
    \-\-join 192.0.2.12,192.0.2.13 \-\- /usr/local/bin/worker
.EE
.PP
Two candidates and a witness in quorum mode: one leader through the
loss of any one host, and never two. On the witness,
.B \-\-role witness
and no job:
.PP
.EX
lanleader run \-\-quorum 3 \-\-state\-file /var/lib/lanleader/state \e
    \-\-key\-file /etc/lanleader/key \-\- /usr/local/bin/worker
lanleader run \-\-quorum 3 \-\-state\-file /var/lib/lanleader/state \e
    \-\-key\-file /etc/lanleader/key \-\-role witness
.EE
.PP
A virtual address held by the leader, on eth0 (the unit needs the
drop\-in lanleader\-vip.conf):
.PP
.EX
lanleader run \-\-vip 192.0.2.100/24,dev=eth0 \e
    \-\-check \(aqcurl \-fsS http://127.0.0.1/\(aq
.EE
.PP
A job run by the leader only, from cron on every host of a running
cluster: on each tick one host, the leader, runs the report.
.PP
.EX
*/5 * * * * lanleader exec\-if\-leader \-\- /usr/local/bin/report
.EE
.PP
Or a lock, as consul lock: on hosts without the regular agent, each
such line joins the others, waits to lead, runs the command and leaves.
Every host runs it, one at a time, never two at once; for one run per
tick, use exec\-if\-leader above.
.PP
.EX
0 3 * * * lanleader run \-\-once \-\-once\-timeout 1h \-\- /usr/local/bin/report
.EE
.PP
Check a changed file, then reload:
.PP
.EX
lanleader check\-config \-\-config /etc/lanleader/lanleader.yaml &&
    systemctl reload lanleader
.EE
.SH SEE ALSO
.BR lanleader.yaml (5),
.BR systemd.service (5),
.BR keepalived (8),
.BR keepalived.conf (5)
`
