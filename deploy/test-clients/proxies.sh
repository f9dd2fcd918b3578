#!/usr/bin/env bash
# Real runtimes through Shield's proxies, offline, against a running appliance:
#   mcp          the MCP filesystem server behind `shield proxy mcp`, driven by the TypeScript SDK
#   codex        Codex app-server 0.169.0 behind `shield proxy codex`, a scripted model on 127.0.0.1
#   codex-proto  Codex 0.42.0 `proto` behind `shield proxy codex-proto`, the same scripted model
# In each: a destructive call is stopped and never executed (the file survives), a harmless one
# runs, an escalation approved by another identity then runs, and with the appliance down
# nothing runs.
#
# Usage: deploy/test-clients/proxies.sh [mcp|codex|codex-proto]…   (default: all)
# Env: SHIELD_BIN (default bin/shield, built if absent), TEST_CLIENTS_DIR (npm installs and
# cache; default .cache/test-clients, which CI keeps between steps).
set -euo pipefail
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
cd "$(dirname "$0")/../.."
REPO=$PWD
HERE=$REPO/deploy/test-clients
DIR=${TEST_CLIENTS_DIR:-$REPO/.cache/test-clients}
BIN=${SHIELD_BIN:-$REPO/bin/shield}
export npm_config_cache=$DIR/npm-cache npm_config_update_notifier=false
SUITES=("$@")
[ ${#SUITES[@]} -gt 0 ] || SUITES=(mcp codex codex-proto)

FS_VERSION=2026.8.31 SDK_VERSION=1.32.2 CODEX_NEW=0.169.0 CODEX_OLD=0.42.0

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok   $*"; }

# install DIR PACKAGE@VERSION… — once; a registry that cannot be reached skips, saying so.
install() {
  local d=$DIR/$1; shift
  if [ -f "$d/.installed" ] && [ "$(cat "$d/.installed")" = "$*" ]; then return 0; fi
  mkdir -p "$d"
  (cd "$d" && { [ -f package.json ] || npm init -y >/dev/null; } && npm install --no-audit --no-fund "$@" >"$d/install.log" 2>&1) || {
    if grep -qiE 'ENOTFOUND|ECONNREFUSED|EAI_AGAIN|ETIMEDOUT|network' "$d/install.log"; then
      echo "SKIP: npm registry unreachable, cannot install $*" >&2; exit 0
    fi
    cat "$d/install.log" >&2; fail "npm install $*"
  }
  echo "$*" >"$d/.installed"
}

[ -x "$BIN" ] || (cd "$REPO" && go build -o "$BIN" ./cmd/shield)
command -v node >/dev/null || { echo "SKIP: node is not installed" >&2; exit 0; }

WORK=$(mktemp -d /tmp/shield-proxies.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

# The appliance: the runtimes' proxies are "agent" by a bearer token over loopback TCP; the
# approver is root on the unix socket — another identity, as the approval service requires.
PORT=$((20000 + RANDOM % 20000))
TOKEN=proxy-agent-token-$RANDOM$RANDOM$RANDOM
WS=$WORK/ws
mkdir -p "$WS/.git/hooks" "$WORK/state"
printf '%s agent proxy-runtime\n' "$TOKEN" >"$WORK/tokens"
chmod 600 "$WORK/tokens"
cat >"$WORK/shield.yaml" <<EOF
state_dir: $WORK/state
listen: ["127.0.0.1:$PORT"]
policy:
  workspace: $WS
auth:
  tokens_file: $WORK/tokens
log:
  format: text
EOF
SERVE_PID=
start_appliance() {
  "$BIN" serve --config "$WORK/shield.yaml" 2>>"$WORK/serve.log" &
  SERVE_PID=$!
  PIDS+=("$SERVE_PID")
  for _ in $(seq 100); do
    [ -S "$WORK/state/shield.sock" ] && "$BIN" approvals list --state-dir "$WORK/state" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  cat "$WORK/serve.log" >&2; fail "the appliance did not start"
}
stop_appliance() { kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null || true; }
export SHIELD_TOKEN=$TOKEN
PROXY_FLAGS=(--addr "127.0.0.1:$PORT" --workspace "$WS")

# approve_next: the approver (root, unix socket) approves the first pending request.
approve_next() {
  local id=
  for _ in $(seq 300); do
    id=$("$BIN" approvals list --json --state-dir "$WORK/state" 2>/dev/null | grep -o '"id":"apr_[^"]*"' | head -1 | cut -d'"' -f4 || true)
    [ -n "$id" ] && break
    sleep 0.1
  done
  [ -n "$id" ] || fail "no approval request appeared"
  "$BIN" approvals approve "$id" --comment "checked by the test" --state-dir "$WORK/state" >/dev/null
  echo "$id"
}

suite_mcp() {
  install mcp "@modelcontextprotocol/server-filesystem@$FS_VERSION" "@modelcontextprotocol/sdk@$SDK_VERSION"
  cp "$HERE/proxies-mcp-client.mjs" "$DIR/mcp/client.mjs"
  local server=(node "$DIR/mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js" "$WS")
  call() { # ROOTS TOOL ARGS
    (cd "$DIR/mcp" && node client.mjs "$1" "$2" "$3" -- "$BIN" proxy mcp "${PROXY_FLAGS[@]}" --server fs --hold 50s -- "${server[@]}")
  }
  echo original >"$WS/.bashrc"
  local out
  out=$(call - write_file "{\"path\":\"$WS/.bashrc\",\"content\":\"pwned\"}")
  [[ $out == *'"isError":true'* && $out == *files.write-system* ]] || fail "mcp: destructive write answered $out"
  [ "$(cat "$WS/.bashrc")" = original ] || fail "mcp: .bashrc was changed"
  pass "mcp: a write to .bashrc is blocked by cel:files.write-system and the file survives"

  out=$(call - write_file "{\"path\":\"$WS/new.txt\",\"content\":\"hello\"}")
  [[ $out == *'"isError":false'* ]] && [ "$(cat "$WS/new.txt")" = hello ] || fail "mcp: harmless write answered $out"
  pass "mcp: a write inside the workspace runs"

  call - write_file "{\"path\":\"$WS/.git/hooks/pre-commit\",\"content\":\"echo hook\"}" >"$WORK/held.out" &
  local held=$!
  local id; id=$(approve_next)
  wait "$held"; out=$(cat "$WORK/held.out")
  [[ $out == *'"isError":false'* ]] && [ "$(cat "$WS/.git/hooks/pre-commit")" = "echo hook" ] || fail "mcp: approved escalation answered $out"
  pass "mcp: a git hook write escalates, is approved by root on the socket ($id), then runs"

  out=$(call '[{"uri":"file:///","name":"everything"}]' read_text_file '{"path":"/etc/hostname"}')
  [[ $out == *'"isError":true'* && $out == *'Access denied'* ]] || fail "mcp: a client root of / was not narrowed: $out"
  pass "mcp: a client's roots/list answer of / is narrowed to the workspace (the server refuses /etc/hostname)"

  stop_appliance
  out=$(call - write_file "{\"path\":\"$WS/down.txt\",\"content\":\"x\"}")
  [[ $out == *'"isError":true'* && $out == *'could not decide'* ]] && [ ! -e "$WS/down.txt" ] || fail "mcp: appliance down answered $out"
  pass "mcp: with the appliance down the write is refused and nothing is written"
  start_appliance
}

# The Codex suites are Go tests (shield/proxy/codex/real_test.go) driving the real binaries: the
# scripted model server is a Go package. They start their own appliance.
suite_codex() {
  install "codex-$CODEX_NEW" "@openai/codex@$CODEX_NEW"
  SHIELD_TEST_CLIENTS_DIR=$DIR SHIELD_BIN=$BIN go test -count=1 -v -timeout 10m -run '^TestRealCodexAppServer$' ./shield/proxy/codex/ 2>&1 | grep -v '^=== RUN'
}
suite_codex_proto() {
  install "codex-$CODEX_OLD" "@openai/codex@$CODEX_OLD"
  SHIELD_TEST_CLIENTS_DIR=$DIR SHIELD_BIN=$BIN go test -count=1 -v -timeout 10m -run '^TestRealCodexProto$' ./shield/proxy/codex/ 2>&1 | grep -v '^=== RUN'
}

start_appliance
for s in "${SUITES[@]}"; do
  case $s in
    mcp) suite_mcp ;;
    codex) suite_codex ;;
    codex-proto) suite_codex_proto ;;
    *) fail "unknown suite $s" ;;
  esac
done
echo "proxies: all passed (${SUITES[*]})"
