package config

// The settings table as man pages: the options of lanleader(8), by flag,
// and the whole of lanleader.yaml(5), by key. Both are written from
// Settings alone, as the manual and the reference are (manual.go), so
// that no page can say a default, a range or a reload that the command
// line and Validate do not have. The pages are kept under man/; tests
// fail while a page there is not what is written here
// (cmd/lanleader's go test -update rewrites both).

import (
	"fmt"
	"strings"

	"github.com/lanleader/lanleader/internal/roff"
)

// ManDate is the date in the man pages' title lines: the last change of
// substance to their text.
const ManDate = "2026-11-29"

// ManOptions is the options of group as the man page lanleader(8) gives
// them, in the table's order: each one's synopsis as a tag (.TP), its
// Doc, and a line of its range, its default, its key in the file and
// what a reload does with it.
func ManOptions(group string) string {
	var b strings.Builder
	for i := range Settings {
		s := &Settings[i]
		if s.Group != group {
			continue
		}
		fmt.Fprintf(&b, ".TP\n%s\n%s\n.br\n%s\n", roff.Term(s.Synopsis()), roff.Line(s.Doc),
			roff.Line(strings.Join(s.facts("Key: "+s.Key+"; "+s.ReloadText()+"."), " ")))
	}
	return b.String()
}

// facts are the sentences of the setting's range and default, then last.
func (s *Setting) facts(last string) []string {
	var f []string
	if s.Range != nil {
		f = append(f, fmt.Sprintf("Range %d to %d.", s.Range.Min, s.Range.Max))
	}
	return append(f, s.defaultText(), last)
}

// YAMLValue is the placeholder of the setting's value in the file:
// DURATION, true|false, a list's brackets ([PATH, ...]), the job's list
// or string.
func (s *Setting) YAMLValue() string {
	switch s.Kind {
	case KindBoolean:
		return "true|false"
	case KindAddrList:
		return "[HOST[:PORT], ...]"
	case KindCheckList:
		return "[CHECK, ...]"
	case KindFileList, KindVIPAddr:
		return "[" + s.Arg + ", ...]"
	case KindArgv:
		return "[PROGRAM, ARG, ...] | COMMAND"
	}
	return s.placeholder()
}

// Text is what a value of the kind is, in the file.
func (k Kind) Text() string {
	switch k {
	case KindText:
		return "a string"
	case KindTextOrDefault:
		return `a string; "" is the default`
	case KindName:
		return "a name of the list"
	case KindInteger:
		return "an integer"
	case KindDuration:
		return `a duration with a unit ("100ms", "2s", "1m"); 0 is the default`
	case KindDurationOrOff:
		return `a duration with a unit ("100ms", "2s", "1m"); 0 is none`
	case KindAnyDuration:
		return `a duration with a unit ("100ms", "2s", "1m"), negative too`
	case KindBoolean:
		return "true or false (yes, no, on and off too)"
	case KindIPPort:
		return "an IP address, with an optional port"
	case KindHostPortOrOff:
		return `HOST:PORT, or "off" (or "") for none`
	case KindMulticastIP:
		return "a multicast IP address"
	case KindKeyFile:
		return "the path of a key file, read when the file is"
	case KindStateFile:
		return "the path of the state file, read when the file is"
	case KindAddrList:
		return "a list of addresses"
	case KindCheckList:
		return "a list of checks, each a shell command or a mapping (see CHECKS)"
	case KindFileList:
		return "a list of paths"
	case KindVIPAddr:
		return "a list of virtual addresses"
	case KindArgv:
		return "a list (the command line) or a string (run by /bin/sh -c)"
	}
	panic(fmt.Sprintf("config: kind %d has no text", k))
}

// reloadSentence is what a reload does with the setting, as the page on
// the file says it.
func (s *Setting) reloadSentence() string {
	if s.Reload == Applied {
		return "A reload applies it."
	}
	return "It needs a restart: a reload keeps the running value."
}

// flagSentence is the flag that sets the setting too.
func (s *Setting) flagSentence() string {
	if !s.IsFlag() {
		return "No flag: the command line after -- replaces it."
	}
	return "Flag: --" + s.Flag + "."
}

// YAMLPage is the man page lanleader.yaml(5): the file's format, every
// key of the settings table in the groups of the manual, and examples.
func YAMLPage() string {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH LANLEADER.YAML 5 %s lanleader %s\n", ManDate, roff.Quote("File Formats"))
	b.WriteString(yamlHead)
	for _, g := range Groups {
		fmt.Fprintf(&b, ".SS %s\n", roff.Quote(g))
		for i := range Settings {
			s := &Settings[i]
			if s.Group != g {
				continue
			}
			fmt.Fprintf(&b, ".TP\n\\fB%s:\\fR %s\n%s\n.br\n%s\n", roff.Escape(s.Key), yamlTerm(s.YAMLValue()), roff.Line(s.Doc),
				roff.Line(strings.Join(append([]string{"Type: " + s.Kind.Text() + "."}, s.facts(s.flagSentence()+" "+s.reloadSentence())...), " ")))
			if s.Kind == KindName {
				fmt.Fprintf(&b, "One of: %s.\n", roff.Escape(strings.Join(s.Names, ", ")))
			}
		}
	}
	b.WriteString(yamlTail)
	return b.String()
}

// yamlTerm is a value's placeholder in a key's tag: italic but for the
// punctuation of the lists and alternatives.
func yamlTerm(v string) string {
	var b strings.Builder
	word := ""
	flush := func() {
		if word != "" {
			b.WriteString(`\fI` + roff.Escape(word) + `\fR`)
			word = ""
		}
	}
	for _, r := range v {
		if strings.ContainsRune("[], |", r) {
			flush()
			b.WriteString(roff.Escape(string(r)))
			continue
		}
		word += string(r)
	}
	flush()
	return b.String()
}

// yamlHead is the page's text before its keys.
const yamlHead = `.SH NAME
lanleader.yaml \- the configuration file of lanleader run
.SH SYNOPSIS
.B /etc/lanleader/lanleader.yaml
.PP
.B lanleader run \-\-config
.I FILE
.SH DESCRIPTION
.B lanleader run
reads its settings from the flags of its command line and from the YAML
file given with
.BR \-\-config .
The packaged unit, lanleader.service, reads
.IR /etc/lanleader/lanleader.yaml .
A flag given on the command line wins over the file, and the file wins
over the default; a list given by flags replaces the file's list.
.PP
The file is one YAML mapping of the keys below: each is the name of a
flag of
.B lanleader run
with \(aq_\(aq for \(aq\-\(aq
.RB ( \-\-node\-id
is
.BR node_id ),
but for
.B checks
.RB ( \-\-check ,
read as
.B check
too) and
.B track_files
.RB ( \-\-track\-file ),
which are lists, and
.BR job ,
which has no flag.
.BR \-\-config ,
.B \-\-once
and
.B \-\-once\-timeout
are flags only.
An unknown key, a key given twice, a second YAML document and a value
of the wrong kind are errors that name the line: the agent does not
start (exit status 2), and a reload keeps the running settings.
A key left out, or a file of comments only, leaves the default.
.PP
A reload (SIGHUP, \fBsystemctl reload lanleader\fR) reads the file
again with the flags the agent started with and checks it as at the
start. The keys marked \(lqA reload applies it\(rq take their new value at
once; the others keep their running value until the agent restarts, and
the log names those that changed.
.B lanleader check\-config \-\-config
.I FILE
checks a file as the agent would, and starts nothing.
.SH VALUES
.TP
Durations
A number with a unit: \(dq100ms\(dq, \(dq1.5s\(dq, \(dq2m\(dq, \(dq1h\(dq.
A bare number other than 0 is refused (it has no unit). 0 is the
default, except where a key says 0 is none.
.TP
Integers, booleans, strings
As YAML writes them: priority: 150, preempt: false, cluster: jobs.
A boolean may also be yes, no, on or off. Quote a string that YAML
would read as something else (a command with a colon and a space, one
that begins with a special character such as [ or *).
.TP
Lists
.BR join ,
.BR checks ,
.B track_files
and
.B vip
are YAML lists, in either form:
.RS
.PP
.EX
join: [192.0.2.11, \(dq192.0.2.12:7946\(dq]
vip:
  \- 192.0.2.100/24
  \- 192.0.2.101/24,dev=eth1
.EE
.RE
.IP
An item of
.B join
may also be several addresses separated by commas, as on the command
line.
.TP
The job
.B job
is the command line run while this node leads: a list, run as it is, or
a string, run by /bin/sh \-c.
A command line after \-\- on the command line replaces it.
.RS
.PP
.EX
job: [/usr/local/bin/worker, \-\-queue, main]
job: exec /usr/local/bin/worker \-\-term \(dq$LANLEADER_TERM\(dq
.EE
.RE
.SH CHECKS
An item of
.B checks
is a shell command, run with the
.B check_*
settings, or a mapping of one check's own settings, keepalived's
vrrp_script line by line; a key left out of the mapping is the
.B check_*
setting's.
.TP
.B name
The check's name in the log, in /status and in the metrics' check
label: letters, digits, \(aq_\(aq, \(aq.\(aq and \(aq\-\(aq.
Default check\-N, N its place in the list from 1.
.TP
.B command
The shell command (/bin/sh \-c); it passes when it exits 0. Required.
.TP
.B interval
How often it runs; as
.BR check_interval .
.TP
.B timeout
A run still going after this has failed; as
.BR check_timeout .
.TP
.B rise
The passes in a row that make a failed check OK; as
.BR check_rise .
.TP
.B fall
The failures in a row that make an OK check failed; as
.BR check_fall .
.TP
.B weight
What the failed check takes off the priority; 0 takes the node out of
the elections (keepalived's FAULT). As
.BR check_weight .
keepalived's weight \-20 (a failing script lowers the priority by 20)
is 20 here.
.PP
.EX
checks:
  \- test \-e /run/myapp/healthy
  \- name: db
    command: pg_isready \-q
    interval: 2s
    timeout: 1s
    rise: 2
    fall: 3
    weight: 0
.EE
.SH KEYS
Each key with its value, what it does, its type, default and range, the
flag that sets it too, and whether a reload applies it; in the groups of
the options of
.BR lanleader (8).
`

// yamlTail is the page's text after its keys.
const yamlTail = `.SH EXAMPLES
Two hosts that share a virtual address, the preferred one with the
larger priority, which takes the address back when it returns; a
failing check takes its weight off the priority, so the weight is
larger than the gap between the priorities (50), or the address would
stay:
.PP
.EX
# /etc/lanleader/lanleader.yaml on host\-a (host\-b: priority 100)
priority: 150
vip: [192.0.2.100/24]
checks:
  \- name: web
    command: curl \-fsS \-o /dev/null http://127.0.0.1/health
    fall: 3
    rise: 2
    weight: 100
preempt: true
.EE
.PP
Quorum mode with two candidates and a witness; the witness's file is
the same with
.B role: witness
and no job. The key is the same file on the three hosts, root's and
readable by the unit's group (install \-m 0640 \-o root \-g lanleader):
.PP
.EX
quorum: 3
state_file: /var/lib/lanleader/state
key_file: /etc/lanleader/key
join: [192.0.2.11, 192.0.2.12, 192.0.2.13]
job: [/usr/local/bin/worker, \-\-queue, main]
job_grace: 10s
.EE
.PP
A job that runs once per leadership, with a hook that logs the change:
.PP
.EX
job_mode: once
job: /usr/local/bin/nightly\-report
on_change: logger \-t lanleader \(dq$LANLEADER_STATE, term $LANLEADER_TERM\(dq
.EE
.SH FILES
.TP
.I /etc/lanleader/lanleader.yaml
The packaged unit's file, a configuration file of the package: an
upgrade keeps the local changes.
.TP
.I /etc/default/lanleader
Extra flags of the unit, in LANLEADER_OPTS: they win over the file.
.SH SEE ALSO
.BR lanleader (8),
.BR keepalived.conf (5),
.BR systemd.service (5)
`
