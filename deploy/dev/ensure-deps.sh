#!/usr/bin/env bash
# Installs what building and testing Shield needs on Debian: a C compiler for cgo and the
# libseccomp headers (the sandbox links libseccomp). As root it installs the missing packages; as
# another user it prints the exact apt-get line and fails. Extra package names may be passed as
# arguments (make proto passes protobuf-compiler).
set -euo pipefail

need=(gcc libc6-dev libseccomp-dev pkg-config "$@")
missing=()
for p in "${need[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  echo "ensure-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "ensure-deps: missing Debian packages. Run:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
