#!/usr/bin/env bash
# Build every real peer the tests run against: etcd, kube-apiserver, kustomize, argocd-cmp-server (and the
# test client for it) and yaml-language-server. The one command the test run names when peers are missing,
# and the one .ci/run calls.
#
# Each script below builds into ${MODELPLANE_PEERS_DIR:-$HOME/.cache/modelplane-render/peers}, keyed by
# version, and only what is not built yet: a second run takes seconds. A cold build needs Go (modules from
# the Go module proxy) and npm, and takes about half an hour on 2 cores (kube-apiserver about 10 min,
# argocd about 15 to 20).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

bash "$HERE/build-etcd.sh"
bash "$HERE/build-kube-apiserver.sh"
bash "$HERE/build-kustomize.sh"
bash "$HERE/build-argocd.sh" # argocd-cmp-server and the test client; also fetches Argo CD's install.yaml
bash "$HERE/build-yaml-language-server.sh" # from npm: the editor's side of `modelplane-render schema`
