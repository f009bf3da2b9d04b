#!/bin/sh
# The unit is installed, not enabled nor started: configure
# /etc/lanleader/lanleader.yaml, then `systemctl enable --now lanleader`.
set -e
# The static system user of the unit (systemd/lanleader.sysusers).
if command -v systemd-sysusers >/dev/null 2>&1; then
	systemd-sysusers lanleader.conf >/dev/null 2>&1 || true
fi
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
	# An upgrade restarts a running agent (a leader hands over first).
	if [ "$1" = configure ] && [ -n "$2" ]; then
		systemctl try-restart lanleader.service >/dev/null 2>&1 || true
	fi
fi
