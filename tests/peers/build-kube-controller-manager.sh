#!/usr/bin/env bash
# Build a real kube-controller-manager from the Go module proxy, as kube-apiserver is built (the same recipe,
# sharing Go's module and build caches): the Argo CD loop (tests/test_argocd_sync.py) needs its garbage
# collector (Argo CD prunes with foreground deletion) and its Deployment and ReplicaSet controllers.
# Output: $PEERS/bin/kube-controller-manager-v$VERSION (+ symlink kube-controller-manager).
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/k8s-command.sh" kube-controller-manager "${KUBE_CONTROLLER_MANAGER_VERSION:-1.37.2}"
