#!/usr/bin/env bash
# The real Codex CLI behind Shield's model-API guard (`shield proxy model`), offline: installs the
# pinned npm package (cached under $TEST_CLIENTS_CACHE, default .cache/test-clients in the repo,
# shared with hooks.sh), builds shield, and runs shield/proxy/modelguard's
# TestRealCodexBehindGuard (scripted model server, guard and `shield serve` on 127.0.0.1 / a unix
# socket). Skips, saying so, only when npm or its registry is unreachable.
set -euo pipefail
cd "$(dirname "$0")/../.."

CODEX_VERSION=0.169.0
CACHE=${TEST_CLIENTS_CACHE:-$PWD/.cache/test-clients}
GO=${GO:-go}
dir="$CACHE/codex-$CODEX_VERSION"

if ! [ -f "$dir/.installed" ] || [ "$(cat "$dir/.installed")" != "@openai/codex@$CODEX_VERSION" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "test-clients guard: SKIPPED: npm is not installed (run deploy/test-clients/hooks.sh first, or apt-get install npm)"
    exit 0
  fi
  if ! timeout 30 npm ping >/dev/null 2>&1; then
    echo "test-clients guard: SKIPPED: the npm registry is unreachable, Codex cannot be installed"
    exit 0
  fi
  rm -rf "$dir" && mkdir -p "$dir"
  echo '{"name":"shield-test-clients","private":true}' >"$dir/package.json"
  (cd "$dir" && timeout 900 npm install --no-audit --no-fund --ignore-scripts --loglevel=error "@openai/codex@$CODEX_VERSION")
  "$dir/node_modules/.bin/codex" --version >/dev/null
  echo "@openai/codex@$CODEX_VERSION" >"$dir/.installed"
fi

mkdir -p bin
$GO build -o bin/shield ./cmd/shield
echo "test-clients guard: $("$dir/node_modules/.bin/codex" --version 2>/dev/null)"
set -o pipefail
SHIELD_BIN=$PWD/bin/shield SHIELD_TEST_CODEX=$dir/node_modules/.bin/codex \
  $GO test -count=1 -v -timeout 10m -run '^TestRealCodexBehindGuard$' ./shield/proxy/modelguard/ 2>&1 | grep -v '^=== RUN'
