#!/usr/bin/env bash
# The test suite: what CI runs, and what a developer runs before a commit.
#
#   ./test.sh                                   unit tests, golden bytes, fuzz seed
#                                               corpora, 5,000 simulated fault schedules,
#                                               the e2e/ tests (real agents on network
#                                               namespaces: root only), the .deb built by
#                                               ./packaging/deb.sh and inspected (dpkg-deb,
#                                               systemd-analyze); then agent/ and cmd/
#                                               again under the race detector
#   LANLEADER_SIM_SCHEDULES=200000 ./test.sh    the long simulator sweep
#   LANLEADER_NO_RACE=1 ./test.sh               without the race detector pass
#
# It needs only Go. Suites that need root or Debian packages install what
# they need here, idempotently, and skip with a message without root: e2e/
# needs root, iproute2 and nftables; the Prometheus tests need promtool and
# the prometheus server (all installed below with apt-get); packaging/ needs
# dpkg-deb (Debian's own) and nfpm, which deb.sh runs from the Go module proxy
# (go run, pinned), and verifies the unit with systemd-analyze when there is one.
set -euo pipefail
cd "$(dirname "$0")"
go mod download

# Debian packages the tests use: iproute2 (ip) and nftables (nft) for e2e/'s
# network namespaces and faults, prometheus (the server and promtool) for the
# metric lint, the alert rule tests and the scrape test. Installed once, as
# root; a suite whose tool is missing skips and says so.
need=()
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v nft >/dev/null 2>&1 || need+=(nftables)
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
if [ "$(id -u)" -ne 0 ]; then
	echo "test.sh: not root: the e2e/ tests skip (they create network namespaces)"
	[ ${#need[@]} -eq 0 ] || echo "test.sh: not root, so not installing ${need[*]}: the tests that need them skip"
elif [ ${#need[@]} -gt 0 ]; then
	if command -v apt-get >/dev/null 2>&1; then
		echo "test.sh: installing ${need[*]}: apt-get update; apt-get install ${need[*]}"
		if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"; }; then
			echo "test.sh: could not install ${need[*]}: the tests that need them skip"
		fi
	else
		echo "test.sh: no apt-get: install ${need[*]} yourself, or the tests that need them skip"
	fi
fi

go test -count=1 ./...
if [ "${LANLEADER_NO_RACE:-}" != 1 ]; then
	go test -race -count=1 ./agent/... ./cmd/...
fi
