#!/usr/bin/env bash
# Over-the-wire load figures (make load, make bench-opa): starts the server as a process of its
# own on a temporary state directory, drives it with `shield load --matrix` (1, 16, 64 and 256
# calls in flight, repeated and unique calls) and reports the server's CPU per call from
# /proc/PID/stat, then stops it.
#
#   deploy/dev/load.sh shield BIN              bin/shield serve (audit fsynced per group commit)
#   deploy/dev/load.sh opa BIN OPA             opa run --server on the default bundle's Rego modules
#                                              and data (BIN policy data), driven with Shield's Rego
#                                              input of each call
#
# LOAD_DURATION (default 5s) is the time per row.
set -euo pipefail

mode=$1 bin=$2
dur=${LOAD_DURATION:-5s}
tmp=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

describe() {
  echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), load average $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r)"
}

case $mode in
shield)
  printf 'state_dir: %s\npolicy:\n  workspace: /home/user/project\n' "$tmp/state" >"$tmp/shield.yaml"
  "$bin" serve --config "$tmp/shield.yaml" 2>"$tmp/serve.log" &
  pid=$!
  for _ in $(seq 300); do [ -S "$tmp/state/shield.sock" ] && break; sleep 0.1; done
  [ -S "$tmp/state/shield.sock" ] || { cat "$tmp/serve.log" >&2; exit 1; }
  describe
  echo "shield serve (pid $pid): every decision durable in the audit trail before it is answered"
  "$bin" load --addr "unix://$tmp/state/shield.sock" --matrix --duration "$dur" --server-pid "$pid"
  ;;
opa)
  opa=$3
  port=$((20000 + RANDOM % 20000))
  # Every module of the bundle but its tests, on the data the engine evaluates against (the data
  # files merged, with the derived forms of data.shield_derived: shield policy data).
  "$bin" policy data policies/default >"$tmp/data.json"
  modules=$(ls policies/default/rego/*.rego | grep -v '_test\.rego$')
  # shellcheck disable=SC2086
  "$opa" run --server --addr "127.0.0.1:$port" --log-level error \
    $modules "$tmp/data.json" 2>"$tmp/opa.log" &
  pid=$!
  for _ in $(seq 300); do curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.1; done
  curl -fsS "http://127.0.0.1:$port/health" >/dev/null || { cat "$tmp/opa.log" >&2; exit 1; }
  describe
  echo "opa run --server (pid $pid, $("$opa" version | head -1)): the default bundle's Rego (every module) only, no audit"
  "$bin" load --opa "http://127.0.0.1:$port" --matrix --duration "$dur" --server-pid "$pid"
  ;;
*)
  echo "usage: $0 shield BIN | opa BIN OPA" >&2
  exit 2
  ;;
esac
