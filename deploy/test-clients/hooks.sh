#!/usr/bin/env bash
# Real agent runtimes behind Shield's PreToolUse hooks, offline: installs the pinned npm packages
# (cached under $TEST_CLIENTS_CACHE, default .cache/test-clients in the repo), builds shield, and
# runs shield/proxy/hook's TestRealRuntimesWithHooks against them (scripted model server and
# `shield serve` on 127.0.0.1). Skips, saying so, only when npm or its registry is unreachable.
set -euo pipefail
cd "$(dirname "$0")/../.."

CLAUDE_CODE_VERSION=2.1.330
CODEX_VERSION=0.169.0
CACHE=${TEST_CLIENTS_CACHE:-$PWD/.cache/test-clients}
GO=${GO:-go}

# npm_install DIR PACKAGE@VERSION BIN [POSTINSTALL]: install once into DIR (kept between runs)
# without running install scripts, then run the one postinstall needed (Claude Code's copies its
# platform binary into place, offline) and check that BIN answers --version.
npm_install() {
  local dir=$1 pkg=$2 bin=$3 post=${4:-}
  if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$pkg" ]; then
    return 0
  fi
  rm -rf "$dir" && mkdir -p "$dir"
  echo '{"name":"shield-test-clients","private":true}' >"$dir/package.json"
  (cd "$dir" && timeout 900 npm install --no-audit --no-fund --ignore-scripts --loglevel=error "$pkg") || return 1
  if [ -n "$post" ]; then (cd "$dir" && node "$post") || return 1; fi
  "$dir/node_modules/.bin/$bin" --version >/dev/null || return 1
  echo "$pkg" >"$dir/.installed"
}

if ! command -v npm >/dev/null 2>&1; then
  # Debian's npm only where no npm is there at all (a NodeSource nodejs carries its own).
  deploy/dev/ensure-deps.sh npm >/dev/null 2>&1 || true
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "test-clients: SKIPPED: npm is not installed and could not be (run as root, or apt-get install npm)"
  exit 0
fi

need_network=0
for d in "$CACHE/claude-code-$CLAUDE_CODE_VERSION" "$CACHE/codex-$CODEX_VERSION"; do
  [ -f "$d/.installed" ] || need_network=1
done
if [ "$need_network" = 1 ] && ! timeout 30 npm ping >/dev/null 2>&1; then
  echo "test-clients: SKIPPED: the npm registry is unreachable, the real runtimes cannot be installed"
  exit 0
fi
claude="" codex=""
if npm_install "$CACHE/claude-code-$CLAUDE_CODE_VERSION" "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" claude \
  node_modules/@anthropic-ai/claude-code/install.cjs; then
  claude="$CACHE/claude-code-$CLAUDE_CODE_VERSION/node_modules/.bin/claude"
fi
if npm_install "$CACHE/codex-$CODEX_VERSION" "@openai/codex@$CODEX_VERSION" codex; then
  codex="$CACHE/codex-$CODEX_VERSION/node_modules/.bin/codex"
fi
if [ -z "$claude" ] && [ -z "$codex" ]; then
  echo "test-clients: npm is reachable but neither runtime installed" >&2
  exit 1
fi
[ -n "$claude" ] || echo "test-clients: WARNING: Claude Code $CLAUDE_CODE_VERSION did not install; its cases skip"
[ -n "$codex" ] || echo "test-clients: WARNING: Codex $CODEX_VERSION did not install; its cases skip"

mkdir -p bin
$GO build -o bin/shield ./cmd/shield
echo "test-clients: Claude Code ${claude:+$("$claude" --version 2>/dev/null)}; ${codex:+$("$codex" --version 2>/dev/null)}"
set -o pipefail
SHIELD_TEST_BIN=$PWD/bin/shield SHIELD_TEST_CLAUDE=$claude SHIELD_TEST_CODEX=$codex \
  $GO test -count=1 -v -timeout 20m -run '^TestRealRuntimes' ./shield/proxy/hook/ 2>&1 | grep -v '^=== RUN'
