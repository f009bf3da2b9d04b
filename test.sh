#!/usr/bin/env bash
# The test suite: what CI runs, and what a developer runs before a commit.
#
#   ./test.sh                                   unit tests, golden bytes, fuzz seed
#                                               corpora, 5,000 simulated fault schedules
#   LANLEADER_SIM_SCHEDULES=200000 ./test.sh    the long simulator sweep
#
# It needs only Go. Later suites that need root or Debian packages install
# what they need here, idempotently, and skip with a message without root.
set -euo pipefail
cd "$(dirname "$0")"
go mod download
go test -count=1 ./...
