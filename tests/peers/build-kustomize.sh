#!/usr/bin/env bash
# Build the real kustomize CLI (the peer that runs modelplane-render as an
# exec KRM function) from the Go module proxy.
#
# Output: ${MODELPLANE_PEERS_DIR:-$HOME/.cache/modelplane-render/peers}/bin/kustomize-v5.8.2
#         plus the symlink bin/kustomize -> kustomize-v5.8.2
#
# Pinned to v5.8.2: v5.8.3 requires a newer Go toolchain than the one here.
# Idempotent: if the pinned binary is already present it prints one line and
# exits 0. Uses Go's default build and module caches, so rebuilds are fast.
set -euo pipefail

KUSTOMIZE_VERSION="${KUSTOMIZE_VERSION:-v5.8.2}"
PEERS="${MODELPLANE_PEERS_DIR:-$HOME/.cache/modelplane-render/peers}"
BIN="$PEERS/bin"
TARGET="$BIN/kustomize-$KUSTOMIZE_VERSION"

mkdir -p "$BIN"

if [[ -x "$TARGET" ]]; then
    ln -sfn "kustomize-$KUSTOMIZE_VERSION" "$BIN/kustomize"
    echo "kustomize $KUSTOMIZE_VERSION already built: $TARGET"
    exit 0
fi

command -v go >/dev/null 2>&1 || { echo "build-kustomize.sh: go is not on PATH" >&2; exit 1; }

tmp="$(mktemp -d "$BIN/.kustomize-build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

echo "building kustomize $KUSTOMIZE_VERSION (go install; ~2 min cold incl. module downloads, ~5 s warm)..." >&2
start=$SECONDS
# GOFLAGS from the environment could carry -mod=vendor etc.; keep only what
# is safe for a module-mode install outside any module.
GOFLAGS= GOBIN="$tmp" GO111MODULE=on \
    go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"

# Atomic placement: rename within the same directory.
mv -f "$tmp/kustomize" "$TARGET.partial"
mv -f "$TARGET.partial" "$TARGET"
ln -sfn "kustomize-$KUSTOMIZE_VERSION" "$BIN/kustomize"

echo "built kustomize $KUSTOMIZE_VERSION in $((SECONDS - start))s: $TARGET" >&2
"$TARGET" version >&2 || true
