#!/usr/bin/env bash
# Build the real Argo CD config-management-plugin sidecar server
# (argocd-cmp-server) and the repo's test client for it (tests/peers/cmpclient)
# from the Go module proxy.
#
# Outputs, in ${MODELPLANE_PEERS_DIR:-$HOME/.cache/modelplane-render/peers}/bin/:
#   argocd-v3.2.11                  the multi-call `argocd` binary (./cmd)
#   argocd-cmp-server -> argocd-v3.2.11   (the binary picks its role by argv[0])
#   modelplane-cmpclient-v3.2.11    tests/peers/cmpclient built against argo-cd v3.2.11
#   modelplane-cmpclient -> modelplane-cmpclient-v3.2.11
#
# How: a wrapper module in $PEERS/src/argocd-v3.2.11/ requires
# github.com/argoproj/argo-cd/v3 at the pinned version and copies that
# release's replace directives from its own go.mod (argo-cd does not build
# without them, which is why `go install ...@v3.2.11` cannot be used). The
# client source is copied into the wrapper so it compiles against the same
# module graph. v3.2.12 does not compile; v3.4+ cannot be fetched here.
#
# Idempotent: when both binaries exist (and the client matches its source) it
# prints one line and exits 0. If only the client source changed, only the
# client is rebuilt. Cold build: >10 minutes on 2 cores; uses Go's default
# build and module caches, so later builds are fast.
set -euo pipefail

ARGOCD_VERSION="${ARGOCD_VERSION:-v3.2.11}"
ARGOCD_MODULE="github.com/argoproj/argo-cd/v3"

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CLIENT_SRC="$SCRIPT_DIR/cmpclient/main.go"

PEERS="${MODELPLANE_PEERS_DIR:-$HOME/.cache/modelplane-render/peers}"
BIN="$PEERS/bin"
SRC="$PEERS/src/argocd-$ARGOCD_VERSION"
ARGOCD_BIN="$BIN/argocd-$ARGOCD_VERSION"
CLIENT_BIN="$BIN/modelplane-cmpclient-$ARGOCD_VERSION"
CLIENT_STAMP="$SRC/cmpclient.sha256"

log() { echo "build-argocd.sh: $*" >&2; }
die() { log "$*"; exit 1; }

[[ -f "$CLIENT_SRC" ]] || die "client source not found: $CLIENT_SRC"

client_sum() { sha256sum "$CLIENT_SRC" | cut -d' ' -f1; }

# tests/test_argocd.py builds argocd/ against the release's manifests/install.yaml from Go's module
# cache; with go at hand, a cache without it (binaries restored, module cache not) is not up to date.
module_present() {
    command -v go >/dev/null 2>&1 || return 0
    [[ -f "$(go env GOMODCACHE)/github.com/argoproj/argo-cd/v3@$ARGOCD_VERSION/manifests/install.yaml" ]]
}

up_to_date() {
    [[ -x "$ARGOCD_BIN" && -x "$CLIENT_BIN" && -f "$CLIENT_STAMP" ]] &&
        [[ "$(cat "$CLIENT_STAMP")" == "$(client_sum)" ]] && module_present
}

link_all() {
    ln -sfn "argocd-$ARGOCD_VERSION" "$BIN/argocd-cmp-server"
    ln -sfn "modelplane-cmpclient-$ARGOCD_VERSION" "$BIN/modelplane-cmpclient"
}

mkdir -p "$BIN" "$SRC"

if up_to_date; then
    link_all
    echo "argocd $ARGOCD_VERSION (argocd-cmp-server) and modelplane-cmpclient already built in $BIN"
    exit 0
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH"
command -v python3 >/dev/null 2>&1 || die "python3 is not on PATH"

# Serialise concurrent builds into the same peers dir.
if command -v flock >/dev/null 2>&1; then
    exec 9>"$PEERS/.build-argocd.lock"
    flock 9
    if up_to_date; then
        link_all
        echo "argocd $ARGOCD_VERSION (argocd-cmp-server) and modelplane-cmpclient already built in $BIN"
        exit 0
    fi
fi

# A caller's GOFLAGS (e.g. -mod=vendor) must not leak into the wrapper build.
export GOFLAGS="-buildvcs=false"
export GO111MODULE=on
export GOWORK=off

start=$SECONDS
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# --- 1. the release's go.mod (and its replace block) -------------------------
log "resolving $ARGOCD_MODULE@$ARGOCD_VERSION ..."
(cd "$tmp" && go mod download -json "$ARGOCD_MODULE@$ARGOCD_VERSION") >"$tmp/download.json"
upstream_gomod="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["GoMod"])' "$tmp/download.json")"
[[ -f "$upstream_gomod" ]] || die "go.mod of $ARGOCD_MODULE@$ARGOCD_VERSION not found at $upstream_gomod"

go mod edit -json "$upstream_gomod" >"$tmp/upstream.json"
# One "-replace=old[@v]=new[@v]" argument per line, taken from the release's
# own go.mod, so the wrapper resolves exactly the module graph upstream builds.
python3 - "$tmp/upstream.json" >"$tmp/replace-args" <<'PY'
import json, sys
mod = json.load(open(sys.argv[1]))
reps = mod.get("Replace") or []
for r in reps:
    old, new = r["Old"], r["New"]
    if not new.get("Version"):
        sys.exit("replace of %s points at a local directory (%s); cannot reproduce outside the argo-cd tree"
                 % (old["Path"], new["Path"]))
    o = old["Path"] + ("@" + old["Version"] if old.get("Version") else "")
    n = new["Path"] + "@" + new["Version"]
    print("-replace=%s=%s" % (o, n))
PY
go_directive="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Go"])' "$tmp/upstream.json")"
log "copied $(wc -l <"$tmp/replace-args") replace directives from upstream go.mod (go $go_directive)"

# --- 2. the wrapper module ----------------------------------------------------
cat >"$tmp/go.mod" <<EOF
// Generated by tests/peers/build-argocd.sh; do not edit.
module modelplane.test/peers/argocd

go $go_directive

require $ARGOCD_MODULE $ARGOCD_VERSION

tool $ARGOCD_MODULE/cmd
EOF
mapfile -t replace_args <"$tmp/replace-args"
if ((${#replace_args[@]})); then
    go mod edit "${replace_args[@]}" "$tmp/go.mod"
fi
if ! cmp -s "$tmp/go.mod" "$SRC/go.mod.in" 2>/dev/null; then
    # New or changed recipe: start from a clean go.mod/go.sum.
    cp "$tmp/go.mod" "$SRC/go.mod"
    cp "$tmp/go.mod" "$SRC/go.mod.in"
    rm -f "$SRC/go.sum"
fi
mkdir -p "$SRC/cmpclient"
cp "$CLIENT_SRC" "$SRC/cmpclient/main.go"

log "go mod tidy in $SRC ..."
(cd "$SRC" && go mod tidy)

ldflags="-s -w"
ldflags+=" -X $ARGOCD_MODULE/common.version=${ARGOCD_VERSION#v}"
ldflags+=" -X $ARGOCD_MODULE/common.gitTag=$ARGOCD_VERSION"

# --- 3. argocd (multi-call binary) --------------------------------------------
if [[ ! -x "$ARGOCD_BIN" ]]; then
    log "building argocd $ARGOCD_VERSION (cold: ~15-20 min on 2 cores, ~15 s warm) ..."
    t=$SECONDS
    (cd "$SRC" && CGO_ENABLED=0 go build -ldflags "$ldflags" -o "$ARGOCD_BIN.partial" "$ARGOCD_MODULE/cmd")
    mv -f "$ARGOCD_BIN.partial" "$ARGOCD_BIN"
    log "built $ARGOCD_BIN in $((SECONDS - t))s"
fi

# --- 4. the test client -------------------------------------------------------
log "building modelplane-cmpclient against argo-cd $ARGOCD_VERSION ..."
t=$SECONDS
sum="$(client_sum)"
(cd "$SRC" && CGO_ENABLED=0 go build -ldflags "-s -w" -o "$CLIENT_BIN.partial" ./cmpclient)
mv -f "$CLIENT_BIN.partial" "$CLIENT_BIN"
echo "$sum" >"$CLIENT_STAMP"
log "built $CLIENT_BIN in $((SECONDS - t))s"

link_all
log "done in $((SECONDS - start))s"
"$ARGOCD_BIN" version --client --short 2>/dev/null | head -n 3 >&2 || true
