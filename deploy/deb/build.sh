#!/usr/bin/env bash
# Builds the .deb into DIR (default dist/): the shield binary, then nfpm (pinned to v2.44.0: its go.mod
# says go 1.25 and its dependencies are all on the module proxy) with deploy/deb/nfpm.yaml.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-dist}"
mkdir -p "$out"
export VERSION="${VERSION:-$(git describe --tags --always 2>/dev/null | sed 's/^v//; s/^\([^0-9]\)/0.0.0~\1/' || echo 0.0.0)}"
go build -trimpath -ldflags "-X main.version=$VERSION" -o bin/shield ./cmd/shield
go run github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.44.0 package -f deploy/deb/nfpm.yaml -p deb -t "$out"
