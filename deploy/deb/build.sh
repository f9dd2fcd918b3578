#!/usr/bin/env bash
# Builds bin/shield and the shield .deb into DIR (default dist/), with nfpm and deploy/deb/nfpm.yaml.
#
# nfpm is run with `go run` at a pinned version, not added to go.mod: v2.45.2 is the newest whose
# go.mod says go <= 1.26 and whose dependencies the Go module proxy serves (v2.46+ need modules
# from a host the proxy does not mirror). Check a newer one with:
#   go list -m -json github.com/goreleaser/nfpm/v2@vX   (then the go line of its GoMod file)
#
# Environment: GOARCH (default: the Go toolchain's), SHIELD_DEB_VERSION (default: derived from
# git describe; a Debian version must start with a digit).
set -euo pipefail
cd "$(dirname "$0")/../.."

NFPM=github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2
out="${1:-dist}"
mkdir -p "$out"

desc="$(git describe --tags --always --dirty 2>/dev/null || echo unknown)"
if [ -z "${SHIELD_DEB_VERSION:-}" ]; then
	case "$desc" in
	v[0-9]*) SHIELD_DEB_VERSION="${desc#v}" ;;
	*) SHIELD_DEB_VERSION="0.0~git$(git log -1 --format=%cd --date=format:%Y%m%d 2>/dev/null || date -u +%Y%m%d).${desc}" ;;
	esac
fi
# Debian versions allow [A-Za-z0-9.+~]; a "-" would start a Debian revision, so it becomes "+".
SHIELD_DEB_VERSION="$(printf '%s' "$SHIELD_DEB_VERSION" | tr -- - + | tr -c "A-Za-z0-9.+~" "~")"
SHIELD_DEB_ARCH="$(go env GOARCH)"
export SHIELD_DEB_VERSION SHIELD_DEB_ARCH

# The sandbox links libseccomp through cgo: the build needs gcc and libseccomp-dev.
deploy/dev/ensure-deps.sh
go build -trimpath -ldflags "-X main.version=$desc" -o bin/shield ./cmd/shield

go run "$NFPM" package --config deploy/deb/nfpm.yaml --packager deb --target "$out"
ls -1 "$out"/shield_"${SHIELD_DEB_VERSION}"_"${SHIELD_DEB_ARCH}".deb
