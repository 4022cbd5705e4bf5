#!/usr/bin/env bash
# Build our Go reader (tests/peers/goyaml: kubectl's YAML reader, and kyaml's with -v3) from the
# Go module proxy, for tests/test_go_reader.py.
#
# Output: ${MODELPLANE_PEERS_DIR:-$HOME/.cache/modelplane-render/peers}/bin/modelplane-goyaml-<source>
#         plus the symlink bin/modelplane-goyaml -> it
#
# <source> is the first 16 hex digits of the sha256 of `sha256sum go.mod go.sum main.go` (run in
# tests/peers/goyaml): the test looks for the binary of the sources it sits beside, so a checkout
# whose reader changed never runs an older build. The versions are pinned by go.mod and go.sum
# (committed; -mod=readonly refuses to change them).
# Idempotent: if the binary for these sources exists it prints one line and exits 0.
# Uses Go's default module and build caches. Cold (both empty, modules downloaded): 17 s on 2
# cores; with the caches the other peers fill: about 1 s.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$SCRIPT_DIR/goyaml"
PEERS="${MODELPLANE_PEERS_DIR:-$HOME/.cache/modelplane-render/peers}"
BIN="$PEERS/bin"

source_digest() { (cd "$SRC" && sha256sum go.mod go.sum main.go) | sha256sum | cut -c1-16; }

DIGEST="$(source_digest)"
TARGET="$BIN/modelplane-goyaml-$DIGEST"

mkdir -p "$BIN"

if [[ -x "$TARGET" ]]; then
    ln -sfn "modelplane-goyaml-$DIGEST" "$BIN/modelplane-goyaml"
    echo "modelplane-goyaml already built for these sources: $TARGET"
    exit 0
fi

command -v go >/dev/null 2>&1 || { echo "build-goyaml.sh: go is not on PATH" >&2; exit 1; }

echo "building modelplane-goyaml ($(go version | cut -d' ' -f3)) ..." >&2
start=$SECONDS
# A caller's GOFLAGS (e.g. -mod=vendor) must not leak in; the module stays out of any go.work.
# -trimpath and CGO_ENABLED=0 as the other peers build, so Go's build cache is shared with them.
(cd "$SRC" && GOFLAGS="-mod=readonly -buildvcs=false" GOWORK=off GO111MODULE=on CGO_ENABLED=0 \
    go build -trimpath -ldflags "-s -w" -o "$TARGET.partial" .)

# Atomic placement: rename within the same directory.
mv -f "$TARGET.partial" "$TARGET"
ln -sfn "modelplane-goyaml-$DIGEST" "$BIN/modelplane-goyaml"
echo "built modelplane-goyaml in $((SECONDS - start))s: $TARGET" >&2
