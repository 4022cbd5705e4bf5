#!/usr/bin/env bash
# Build a real kubectl from the Go module proxy (no git, no docker), as kube-apiserver is built: the day-two
# catalogue applies with it (client-side apply's three-way merge is kubectl's own). Seconds after kube-apiserver.
# Output: $PEERS/bin/kubectl-v$VERSION (+ symlink kubectl).
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/k8s-command.sh" kubectl "${KUBECTL_VERSION:-1.37.2}"
