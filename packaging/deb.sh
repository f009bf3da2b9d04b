#!/usr/bin/env bash
# Builds the .deb, the one command:
#
#   ./packaging/deb.sh              dist/lanleader_<version>_<arch>.deb
#   LANLEADER_VERSION=1.2.3 ./packaging/deb.sh
#
# It needs Go only: nfpm comes from the Go module proxy (go run, pinned).
# The package holds /usr/bin/lanleader (static, -trimpath), the systemd
# unit and its drop-ins for virtual addresses, a forked JIT job and --realtime
# (none enabled), the example config /etc/lanleader/lanleader.yaml and
# /etc/default/lanleader (both conffiles), the man pages lanleader(8) and
# lanleader.yaml(5) from man/, and under /usr/share/doc/lanleader the
# README, ARCHITECTURE.md, docs/ (with design/) and examples/. It prints
# the path of the package.
set -euo pipefail
cd "$(dirname "$0")/.."
NFPM=github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.43.0

version=${LANLEADER_VERSION:-}
if [ -z "$version" ]; then
	version=$(git describe --tags --match 'v[0-9]*' 2>/dev/null || true)
	version=${version#v}
	[ -n "$version" ] || version="0.0.0~git$(git log -1 --format=%cd.%h --date=format:%Y%m%d 2>/dev/null || date +%Y%m%d)"
fi
case "$version" in
[0-9]*) ;;
*) echo "deb.sh: version $version must start with a digit" >&2; exit 2 ;;
esac

# nfpm.yaml names the built files under dist/.stage: one build at a time
# (the tests build packages in parallel: packaging/, packaging/systemdtest).
mkdir -p dist
exec 9>dist/.lock
flock 9
STAGE=dist/.stage
rm -rf "$STAGE"
mkdir -p "$STAGE"
trap 'rm -rf "$STAGE"' EXIT
export LANLEADER_VERSION="$version" GOARCH="${GOARCH:-$(go env GOARCH)}"

CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$STAGE/lanleader" ./cmd/lanleader

# The man pages lanleader(8) and lanleader.yaml(5), as committed under man/
# (written from the program's help and settings table; a test keeps them
# current).
gzip -9nc man/lanleader.8 >"$STAGE/lanleader.8.gz"
gzip -9nc man/lanleader.yaml.5 >"$STAGE/lanleader.yaml.5.gz"

out="dist/lanleader_${version}_${GOARCH}.deb"
rm -f "$out"
go run "$NFPM" package --config packaging/nfpm.yaml --packager deb --target "$out" >&2
echo "$out"
