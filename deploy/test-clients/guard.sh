#!/usr/bin/env bash
# Real runtimes behind Shield's model-API guard (`shield proxy model`), offline: installs the
# pinned npm packages (cached under $TEST_CLIENTS_CACHE, default .cache/test-clients in the repo,
# shared with hooks.sh), builds shield, and runs shield/proxy/modelguard's
# TestRealRuntimesBehindGuard: Codex (Responses API) and Claude Code (Messages API) against the
# scripted model server through the guard, with `shield serve` on a unix socket. Skips, saying
# so, only when npm or its registry is unreachable.
set -euo pipefail
cd "$(dirname "$0")/../.."

CLAUDE_CODE_VERSION=2.1.330
CODEX_VERSION=0.169.0
CACHE=${TEST_CLIENTS_CACHE:-$PWD/.cache/test-clients}
GO=${GO:-go}

# npm_install DIR PACKAGE@VERSION BIN [POSTINSTALL]: as in hooks.sh (same cache layout).
npm_install() {
  local dir=$1 pkg=$2 bin=$3 post=${4:-}
  if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$pkg" ]; then
    return 0
  fi
  command -v npm >/dev/null 2>&1 || return 1
  timeout 30 npm ping >/dev/null 2>&1 || return 1
  rm -rf "$dir" && mkdir -p "$dir"
  echo '{"name":"shield-test-clients","private":true}' >"$dir/package.json"
  (cd "$dir" && timeout 900 npm install --no-audit --no-fund --ignore-scripts --loglevel=error "$pkg") || return 1
  if [ -n "$post" ]; then (cd "$dir" && node "$post") || return 1; fi
  "$dir/node_modules/.bin/$bin" --version >/dev/null || return 1
  echo "$pkg" >"$dir/.installed"
}

codex="" claude=""
if npm_install "$CACHE/codex-$CODEX_VERSION" "@openai/codex@$CODEX_VERSION" codex; then
  codex="$CACHE/codex-$CODEX_VERSION/node_modules/.bin/codex"
fi
if npm_install "$CACHE/claude-code-$CLAUDE_CODE_VERSION" "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" claude \
  node_modules/@anthropic-ai/claude-code/install.cjs; then
  claude="$CACHE/claude-code-$CLAUDE_CODE_VERSION/node_modules/.bin/claude"
fi
if [ -z "$codex" ] && [ -z "$claude" ]; then
  echo "test-clients guard: SKIPPED: npm or its registry is unreachable and no runtime is cached"
  exit 0
fi
[ -n "$codex" ] || echo "test-clients guard: WARNING: Codex $CODEX_VERSION did not install; its cases skip"
[ -n "$claude" ] || echo "test-clients guard: WARNING: Claude Code $CLAUDE_CODE_VERSION did not install; its cases skip"

mkdir -p bin
$GO build -o bin/shield ./cmd/shield
echo "test-clients guard: ${codex:+$("$codex" --version 2>/dev/null)}; ${claude:+$("$claude" --version 2>/dev/null)}"
set -o pipefail
SHIELD_BIN=$PWD/bin/shield SHIELD_TEST_CODEX=$codex SHIELD_TEST_CLAUDE=$claude \
  $GO test -count=1 -v -timeout 15m -run '^TestRealRuntimesBehindGuard$' ./shield/proxy/modelguard/ 2>&1 | grep -v '^=== RUN'
