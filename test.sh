#!/usr/bin/env bash
# The test suite: what CI runs, and what a developer runs before a commit.
#
#   ./test.sh                                   unit tests, golden bytes, fuzz seed
#                                               corpora, 5,000 simulated fault schedules,
#                                               the e2e/ tests (real agents on network
#                                               namespaces: root only); then agent/ and
#                                               cmd/ again under the race detector
#   LANLEADER_SIM_SCHEDULES=200000 ./test.sh    the long simulator sweep
#   LANLEADER_NO_RACE=1 ./test.sh               without the race detector pass
#
# It needs only Go. Suites that need root or Debian packages install what
# they need here, idempotently, and skip with a message without root: e2e/
# needs root and the ip command (iproute2, installed below with apt-get).
set -euo pipefail
cd "$(dirname "$0")"
go mod download

# e2e/: network namespaces need root and iproute2's ip.
if [ "$(id -u)" -ne 0 ]; then
	echo "test.sh: not root: the e2e/ tests skip (they create network namespaces)"
elif ! command -v ip >/dev/null 2>&1; then
	if command -v apt-get >/dev/null 2>&1; then
		echo "test.sh: installing iproute2 for e2e/: apt-get update; apt-get install iproute2"
		if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2; }; then
			echo "test.sh: could not install iproute2: the e2e/ tests skip"
		fi
	else
		echo "test.sh: no ip command and no apt-get: install iproute2, or the e2e/ tests skip"
	fi
fi

go test -count=1 ./...
if [ "${LANLEADER_NO_RACE:-}" != 1 ]; then
	go test -race -count=1 ./agent/... ./cmd/...
fi
