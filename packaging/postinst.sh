#!/bin/sh
# The unit is installed, not enabled nor started: configure
# /etc/lanleader/lanleader.yaml, then `systemctl enable --now lanleader`.
set -e
# The static system user of the unit (systemd/lanleader.sysusers).
if command -v systemd-sysusers >/dev/null 2>&1; then
	systemd-sysusers lanleader.conf >/dev/null 2>&1 || true
fi

# The unit's StateDirectory (quorum mode's state_file:
# /var/lib/lanleader/state), made now as the unit would make it (owner
# lanleader, StateDirectoryMode's default 0755), so that `lanleader
# check-config` finds the state file's directory before the unit's first
# start. At that start systemd moves it to /var/lib/private/lanleader
# (DynamicUser=yes) and leaves a symbolic link here, which is kept as it is.
if [ ! -e /var/lib/lanleader ] && [ ! -L /var/lib/lanleader ] &&
	getent passwd lanleader >/dev/null 2>&1; then
	mkdir -m 0755 /var/lib/lanleader
	chown lanleader:lanleader /var/lib/lanleader
fi

# wire FILE prints the election protocol version FILE speaks: the last
# field of `FILE version` ("lanleader 1.2.3 go1.26.8 wire 2"), or nothing
# when FILE does not say (a lanleader older than that line).
wire() {
	w=$("$1" version 2>/dev/null) || w=
	case "$w" in
	*" wire "*) w=${w##* wire } ;;
	*) w= ;;
	esac
	case "$w" in
	'' | *[!0-9]*) ;;
	*) echo "$w" ;;
	esac
}

if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
	# An upgrade restarts a running agent (a leader hands over first),
	# but only when the new binary speaks the running agent's wire
	# version: agents of two wire versions do not hear each other, and
	# an upgrade host by host would give the cluster two leaders. The
	# running agent's binary is still /proc/PID/exe when the package has
	# replaced /usr/bin/lanleader.
	if [ "$1" = configure ] && [ -n "$2" ]; then
		pid=$(systemctl show --property MainPID lanleader.service 2>/dev/null) || pid=
		pid=${pid#MainPID=}
		case "$pid" in
		'' | 0 | *[!0-9]*)
			# Not running: nothing to restart (try-restart does nothing).
			systemctl try-restart lanleader.service >/dev/null 2>&1 || true
			;;
		*)
			old=$(wire "/proc/$pid/exe")
			new=$(wire /usr/bin/lanleader)
			if [ -n "$old" ] && [ "$old" = "$new" ]; then
				systemctl try-restart lanleader.service >/dev/null 2>&1 || true
			else
				if [ -n "$old" ]; then
					said="speaks wire version $old"
					known=
				else
					said="does not say which wire version it speaks (a lanleader older than 'lanleader version' ending in 'wire N')"
					known="
If every agent of the cluster already speaks wire version ${new:-unknown}, restart
this one: systemctl restart lanleader."
				fi
				cat >&2 <<EOF
lanleader: the running agent (pid $pid) was NOT restarted: it $said,
and the new /usr/bin/lanleader speaks wire version ${new:-unknown}. Agents of
different wire versions do not understand each other: restarting the hosts
one at a time would elect a leader on each version. The running agent goes
on as it is (until systemd restarts it: then it runs the new version).
Once every host of the cluster has this package, stop the agent on every
host (systemctl stop lanleader), then start it on every host (systemctl
start lanleader).$known
See /usr/share/doc/lanleader/docs/upgrading.md.
EOF
			fi
			;;
		esac
	fi
fi
