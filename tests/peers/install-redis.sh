#!/usr/bin/env bash
# Debian's redis-server, for the Argo CD loop (tests/argocd_loop.py runs it on loopback, as Argo CD's own
# development setup runs a local redis). Does nothing when it is installed; needs root (or sudo) otherwise.
set -euo pipefail
if command -v redis-server >/dev/null; then
  echo "redis-server already installed: $(command -v redis-server)"
  exit 0
fi
as_root=()
[[ "$(id -u)" == 0 ]] || as_root=(sudo)
"${as_root[@]}" apt-get update -q
"${as_root[@]}" apt-get install -y -q --no-install-recommends redis-server
