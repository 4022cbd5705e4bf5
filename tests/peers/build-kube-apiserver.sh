#!/usr/bin/env bash
# Build a real kube-apiserver from the Go module proxy (no git, no docker): cold ~10 min, ~3 GiB.
# Output: $PEERS/bin/kube-apiserver-v$VERSION (+ symlink kube-apiserver).
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/k8s-command.sh" kube-apiserver "${KUBE_APISERVER_VERSION:-1.37.2}"
