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
#   LANLEADER_E2E_LONG=1 ./test.sh              the e2e scenarios' long versions (more pulls,
#                                               rounds and trials; the measuring runs)
#   LANLEADER_EXPLORE_DEPTH=1 ./test.sh         the explorer deeper (give go test a -timeout)
#   LANLEADER_NO_RACE=1 ./test.sh               without the race detector pass
#   LANLEADER_FUZZTIME=0 ./test.sh              without the bounded fuzzing (a count of runs a target)
#   LANLEADER_SYSTEMD=0 ./test.sh               without the unit under a real systemd (packaging/systemdtest:
#                                               a Debian root booted with systemd-nspawn, root only: 15 s
#                                               with its root cached, 1-5 minutes more to build the root)
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
# network namespaces and faults, keepalived for the VIP harness's reference
# (e2e/vip_test.go), prometheus (the server and promtool) for the metric
# lint, the alert rule tests and the scrape test, mandoc for the man pages'
# lint (cmd/lanleader, agent/config). Installed once, as root;
# a suite whose tool is missing skips and says so.
need=()
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v nft >/dev/null 2>&1 || need+=(nftables)
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
command -v keepalived >/dev/null 2>&1 || [ -x /usr/sbin/keepalived ] || need+=(keepalived)
command -v mandoc >/dev/null 2>&1 || need+=(mandoc)
# packaging/systemdtest (unless LANLEADER_SYSTEMD=0): debootstrap makes
# its Debian root, systemd-nspawn (systemd-container) boots it.
if [ "${LANLEADER_SYSTEMD:-}" != 0 ]; then
	command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
	command -v systemd-nspawn >/dev/null 2>&1 || need+=(systemd-container)
fi
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

# The network-namespace scenarios run after the rest, alone: they time
# real agents, and a machine busy with the simulator and builds delays
# heartbeats enough to make a follower suspect a live leader.
go test -count=1 $(go list ./... | grep -v '/e2e$')
go test -count=1 -timeout 30m ./e2e/

# Fuzzing, bounded: every fuzz target of the packet decoder and of the
# agent's receive checks (one per message body, the tag, the whole accept
# path) runs on top of its committed corpus (testdata/fuzz/<target>,
# already run above as seeds) for a count of executions: 300,000 for each
# decoder target, 40,000 for the accept path (about 5 s each here, 1½
# minutes in all). A count, not a duration: Go 1.26's fuzzing coordinator
# can report "context deadline exceeded" as a failure when a -fuzztime
# duration ends (go.dev/issue/75804, fixed in Go 1.27), with nothing
# found. LANLEADER_FUZZTIME sets either (a count like 1000000x or a
# duration like 10m) for every target; 0 skips the step. A finding fails
# the run and is written to testdata/fuzz/<target>: commit it as a named
# regression case.
fuzztime=${LANLEADER_FUZZTIME:-}
if [ "$fuzztime" != 0 ]; then
	for target in $(go test ./wire -list '^Fuzz' | grep '^Fuzz'); do
		go test ./wire -run '^$' -fuzz "^${target}\$" -fuzztime "${fuzztime:-300000x}"
	done
	go test ./agent -run '^$' -fuzz '^FuzzAccept$' -fuzztime "${fuzztime:-40000x}"
fi
if [ "${LANLEADER_NO_RACE:-}" != 1 ]; then
	go test -race -count=1 ./agent/... ./cmd/...
fi
