#!/usr/bin/env bash
# Build every real peer the tests run against: etcd, kube-apiserver, kubectl, kustomize, argocd-cmp-server
# (and the test client for it), yaml-language-server, our Go YAML reader, and the Gateway API CRDs. The one command the test run names when peers are missing,
# and the one .ci/run calls.
#
# Each script below builds into ${MODELPLANE_PEERS_DIR:-$HOME/.cache/modelplane-render/peers}, keyed by
# version, and only what is not built yet: a second run takes seconds. A first build needs Go (modules from
# the Go module proxy) and npm; on 2 cores it took 13 min (kube-apiserver 5, argocd 6, the rest under a
# minute each), and up to about 30 with Go's module cache empty (the scripts say 10 and 15 to 20 min for
# those two, cold). kube-controller-manager adds about 3 min after kube-apiserver (seen at stop 38: 164 s,
# with kube-apiserver 725 s and argocd 671 s from nothing).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

bash "$HERE/build-etcd.sh"
bash "$HERE/build-kube-apiserver.sh"
bash "$HERE/build-kubectl.sh" # the same wrapper module as kube-apiserver: seconds once its modules are cached
bash "$HERE/build-kube-controller-manager.sh" # the Argo CD loop's garbage collector and workload controllers
bash "$HERE/build-kustomize.sh"
bash "$HERE/build-goyaml.sh" # our Go reader of YAML, as kubectl and kyaml read it (tests/test_go_reader.py)
bash "$HERE/build-argocd.sh" # argocd-cmp-server and the test client; also fetches Argo CD's install.yaml
bash "$HERE/build-yaml-language-server.sh" # from npm: the editor's side of `modelplane-render schema`
bash "$HERE/fetch-gateway-api-crds.sh" # HTTPRoute's CRD, from the Go module proxy, for the day-two catalogue
