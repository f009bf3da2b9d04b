#!/bin/bash
# probe.sh: the systemd suite's checks, run inside the booted container by
# lanleader-probe.service (a oneshot that powers the container off when it
# ends). It installs the .deb from /probe, drives lanleader.service with
# systemctl, and appends to /probe/results one line of facts per check:
#   NAME key=value key=value ...
# (values without spaces; "_" stands for one). It judges nothing: the Go
# test (systemd_test.go) reads the facts and decides. Every wait is a
# bounded poll of a condition.
set -u
R=/probe/results
U=lanleader.service
CONF=/etc/lanleader/lanleader.yaml
DROPINS=/etc/systemd/system/lanleader.service.d

fact() { echo "$*" >>"$R"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
show() { systemctl show -p "$2" --value "$1"; }
# word: a value as one word for a fact line.
word() { local v="${*:-none}"; v="${v//[$'\n\t ']/_}"; echo "${v:-none}"; }

# until_ms SECONDS COMMAND...: polls COMMAND every 100ms until it succeeds
# (status 0) or SECONDS pass (status 1).
until_ms() {
	local end=$(($(now_ms) + $1 * 1000))
	shift
	until "$@"; do
		[ "$(now_ms)" -lt "$end" ] || return 1
		sleep 0.1
	done
}

# status: the agent's /status (JSON), by bash's /dev/tcp (no curl here).
status() {
	local body
	exec 3<>/dev/tcp/127.0.0.1/9947 || return 1
	printf 'GET /status HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
	body=$(cat <&3)
	exec 3<&-
	echo "${body#*$'\r\n\r\n'}"
}
# json KEY: a number or string field of /status.
json() { status 2>/dev/null | grep -o "\"$1\":\"\?[^,\"}]*" | head -1 | sed 's/.*:"\?//'; }

journal() { journalctl -q -o cat -u "$U" --no-pager "$@"; }
invocation() { journalctl -q -o cat --no-pager _SYSTEMD_INVOCATION_ID="$(show "${1:-$U}" InvocationID)"; }
# logged PATTERN [UNIT]: the unit's present run has logged PATTERN.
logged() { invocation "${2:-$U}" | grep -q "$1"; }
# in_state UNIT STATE: the unit's ActiveState is STATE.
in_state() { [ "$(show "$1" ActiveState)" = "$2" ]; }
# procs_named NAME: the pids of the processes whose command is NAME.
procs_named() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = "$1" ] && echo "${p#/proc/}"
	done
}

# config BIND BODY: /etc/lanleader/lanleader.yaml for one agent on
# loopback (the container's private network has only lo), with the
# caller's keys.
config() {
	cat >"$CONF" <<EOF
name: probe
node_id: 1
bind: $1
transport: unicast
http: 127.0.0.1:9947
$2
EOF
}

dropin() { # NAME: link /usr/share/lanleader/lanleader-NAME.conf
	mkdir -p "$DROPINS"
	ln -sf "/usr/share/lanleader/lanleader-$1.conf" "$DROPINS/$1.conf"
	systemctl daemon-reload
}

is_active() { in_state $U active; }
is_leading() { is_active && [[ "$(show $U StatusText)" == leader* ]]; }
# running: the agent runs, whatever an earlier check left (a check judges
# only its own part).
running() {
	is_active && return
	systemctl reset-failed $U 2>/dev/null
	systemctl start $U
}

install() {
	local out
	out=$(DEBIAN_FRONTEND=noninteractive dpkg -i /probe/lanleader.deb 2>&1)
	fact install status=$? unit=$(word "$(show $U LoadState)") version=$(word "$(lanleader version)")
	echo "$out"
	cp /probe/wxjob /usr/local/bin/wxjob
	chmod 0755 /usr/local/bin/wxjob
	default_config
}

# default_config: the agent with the forked job; what a check that does
# not set its own finds.
default_config() {
	config 127.0.0.1:7946 "job: [/usr/local/bin/wxjob]
job_max_failures: 100"
}

# ready: the unit starts (systemctl start returns after READY=1) and
# reports its state in STATUS=; the forked job, which maps W+X memory, is
# refused by the unit's own sandbox.
check_ready() {
	default_config
	local t0=$(now_ms)
	systemctl start $U
	local rc=$? t1=$(now_ms)
	fact ready start_status=$rc start_ms=$((t1 - t0)) active=$(show $U ActiveState) sub=$(show $U SubState) \
		status=$(word "$(show $U StatusText)") notify=$(show $U NotifyAccess) type=$(show $U Type) \
		oom_score_adj=$(word "$(cat /proc/"$(show $U MainPID)"/oom_score_adj)") oom_setting=$(show $U OOMScoreAdjust)
	until_ms 15 logged 'wxjob: '
	fact wx_sandboxed line=$(word "$(journal | grep -m1 -o 'wxjob: [^"]*')")
}

# wx_job: with lanleader-job.conf the same job runs, in the unit's cgroup.
check_wx_job() {
	dropin job
	systemctl restart $U
	until_ms 15 logged 'wxjob: mapped'
	local cg pid
	cg=/sys/fs/cgroup$(show $U ControlGroup)
	pid=$(procs_named wxjob | head -1)
	fact wx_job line=$(word "$(invocation | grep -m1 -o 'wxjob: [^"]*')") pid=$(word "$pid") \
		in_cgroup=$(grep -qx "${pid:-x}" "$cg/cgroup.procs" 2>/dev/null && echo yes || echo no) \
		mdwe=$(show $U MemoryDenyWriteExecute)
}

priority_is() { [ "$(json base_priority)" = "$1" ]; }

# reload: a changed priority in the file, systemctl reload, and the time
# until /status has it; no restart, no change of leadership.
check_reload() {
	local pid0 n0 t0 ms=none
	running
	until_ms 10 is_leading
	pid0=$(show $U MainPID) n0=$(show $U NRestarts)
	local before=$(json base_priority)
	sed -i '/^priority:/d' "$CONF"
	echo "priority: 150" >>"$CONF"
	t0=$(now_ms)
	systemctl reload $U
	local rc=$?
	if until_ms 10 priority_is 150; then
		ms=$(($(now_ms) - t0))
	fi
	fact reload reload_status=$rc before=$(word "$before") after=$(word "$(json base_priority)") ms=$ms \
		pid_before=$pid0 pid_after=$(show $U MainPID) restarts_before=$n0 restarts_after=$(show $U NRestarts) \
		state=$(word "$(json state)") term=$(word "$(json term)")
	journal | grep -i -m3 'reload' | sed 's/^/journal: /'
}

# restarted RESTARTS PID: NRestarts has grown past RESTARTS, and another
# main process than PID runs.
restarted() { [ "$(show $U NRestarts)" -gt "$1" ] && [ "$(show $U MainPID)" != "$2" ] && is_active; }

# watchdog: an agent frozen with SIGSTOP misses its pings; systemd aborts
# it (SIGABRT, then SIGKILL after TimeoutAbortSec) and restarts it.
check_watchdog() {
	running
	until_ms 10 is_leading
	local pid0 n0 t0 ms=none
	pid0=$(show $U MainPID) n0=$(show $U NRestarts)
	t0=$(now_ms)
	[ "$pid0" -gt 1 ] && kill -STOP "$pid0"
	if until_ms 60 restarted "$n0" "$pid0"; then
		ms=$(($(now_ms) - t0))
	fi
	until_ms 15 is_leading
	fact watchdog restarts_before=$n0 restarts_after=$(show $U NRestarts) pid_before=$pid0 pid_after=$(show $U MainPID) \
		active=$(show $U ActiveState) status=$(word "$(show $U StatusText)") ms=$ms \
		timeout_logged=$(journal | grep -q 'Watchdog timeout' && echo yes || echo no) \
		exit=$(word "$(journal | grep -o 'Main process exited, code=[a-z]*, status=[^ ]*' | tail -1)")
	journal | grep -E 'Watchdog|Main process exited|Failed with result|Scheduled restart|SIGABRT|goroutine [0-9]+ \[' | head -8 | sed 's/^/journal: /'
}

job_runs() { [ -n "$(procs_named wxjob)" ]; }

# stop: systemctl stop leaves no process of the job (which runs: with
# lanleader-job.conf), and an empty cgroup.
check_stop() {
	if [ ! -e "$DROPINS/job.conf" ]; then
		dropin job
		systemctl stop $U
	fi
	running
	until_ms 15 job_runs
	local before cg
	before=$(procs_named wxjob | tr '\n' ,)
	cg=/sys/fs/cgroup$(show $U ControlGroup)
	systemctl stop $U
	fact stop stop_status=$? job_before=$(word "$before") job_after=$(word "$(procs_named wxjob | tr '\n' ,)") \
		cgroup_left=$([ -d "$cg" ] && [ -n "$(cat "$cg/cgroup.procs" 2>/dev/null)" ] && echo yes || echo no) \
		active=$(show $U ActiveState) result=$(show $U Result)
}

# realtime: with realtime: true and lanleader-realtime.conf every thread
# of the agent is SCHED_FIFO, or the agent says why not and runs on.
check_realtime() {
	dropin realtime
	config 127.0.0.1:7946 "realtime: true"
	systemctl start $U
	until_ms 10 logged 'realtime:'
	local pid fifo=0 all=0 t
	pid=$(show $U MainPID)
	for t in /proc/"$pid"/task/*; do
		all=$((all + 1))
		[ "$(awk '$1 == "policy" {print $3}' "$t/sched" 2>/dev/null)" = 1 ] && fifo=$((fifo + 1))
	done
	fact realtime active=$(show $U ActiveState) fifo_threads=$fifo threads=$all rtprio=$(word "$(grep 'Max realtime priority' /proc/"$pid"/limits | awk '{print $4 "/" $5}')") \
		filter_allows=$(show $U SystemCallFilter | grep -qw sched_setattr && echo yes || echo no) \
		line=$(word "$(invocation | grep -m1 -o 'realtime: [^"]*')")
	systemctl stop $U
	rm -f "$DROPINS/realtime.conf"
	systemctl daemon-reload
	default_config
}

# job_unit: job_unit: starts the job's own unit on the leader, which gets
# the agent's environment file, and it stops with the agent (BindsTo=).
check_job_unit() {
	cat >/etc/systemd/system/lanleader-job-test.service <<'EOF'
[Unit]
Description=lanleader's job, as a unit of its own (systemd suite)
BindsTo=lanleader.service
After=lanleader.service

[Service]
EnvironmentFile=-/run/lanleader/job.env
ExecStart=/usr/local/bin/wxjob
EOF
	systemctl daemon-reload
	config 127.0.0.1:7946 "job_unit: lanleader-job-test.service"
	systemctl start $U
	local start=$? up=no down=no
	until_ms 20 in_state lanleader-job-test.service active && up=yes
	local line env
	until_ms 5 logged 'wxjob: mapped' lanleader-job-test.service
	line=$(journalctl -q -o cat -u lanleader-job-test.service --no-pager | grep -m1 -o 'wxjob: mapped[^"]*')
	env=$(cat /run/lanleader/job.env 2>/dev/null | tr '\n' ' ')
	systemctl stop $U
	until_ms 20 in_state lanleader-job-test.service inactive && down=yes
	fact job_unit start_status=$start job_active=$up stopped_with_agent=$down line=$(word "$line") env=$(word "$env")
	invocation | grep -m5 -i 'job' | sed 's/^/journal: /'
	default_config
}

# logged_since MS PATTERN: the unit logged PATTERN since MS (any run).
logged_since() { journalctl -q -o cat -u $U --since=@$(($1 / 1000)) | grep -q "$2"; }

# late_bind: the bind address is not on the host when the agent starts
# (a boot that races the network); it comes a few seconds later, and the
# agent's start retry (or systemd's restart) brings the agent up.
check_late_bind() {
	config 198.18.5.5:7946 "job: [/usr/local/bin/wxjob]"
	local t0 seen=no ms=none n0
	n0=$(show $U NRestarts)
	t0=$(now_ms)
	systemctl start --no-block $U
	# The agent has tried, and failed, to bind: a line of this start names
	# the address (or the unit has left the start already).
	until_ms 20 logged_since "$t0" 198.18.5.5 && seen=yes
	# The network comes a few seconds after the agent: the scenario's
	# delay, not a wait for anything.
	sleep 3
	local state_before=$(show $U ActiveState)/$(show $U SubState)
	ip addr add 198.18.5.5/32 dev lo
	local t1=$(now_ms)
	if until_ms 60 is_leading; then
		ms=$(($(now_ms) - t1))
	fi
	fact late_bind failure_logged=$seen state_before=$(word "$state_before") added_after_ms=$((t1 - t0)) up_ms=$ms \
		active=$(show $U ActiveState) status=$(word "$(show $U StatusText)") restarts=$(($(show $U NRestarts) - n0)) \
		result=$(show $U Result)
	journalctl -q -o cat -u $U --since=@$((t0 / 1000)) --no-pager | grep -E '198.18.5.5|exit|retry|Scheduled' | head -6 | sed 's/^/journal: /'
	systemctl stop $U
}

# security: systemd-analyze security of the unit as loaded, with the
# drop-in for the JIT job linked.
check_security() {
	fact security exposure=$(word "$(systemd-analyze security $U 2>/dev/null | grep -o 'Overall exposure level for [^:]*: [0-9.]*' | awk '{print $NF}')") \
		dropins=$(word "$(ls $DROPINS 2>/dev/null | tr '\n' ,)")
}

rm -f "$R"
fact boot systemd=$(word "$(systemctl --version | head -1)") state=$(word "$(systemctl is-system-running)")
install
for c in ${PROBE_CHECKS:-ready wx_job reload watchdog stop realtime job_unit late_bind security}; do
	echo "== $c"
	"check_$c"
done
fact done
journalctl -b --no-pager -o short-monotonic >/probe/journal.txt 2>&1
echo "journal: $(wc -l </probe/journal.txt) lines"
systemctl status --no-pager -l $U | tail -20
