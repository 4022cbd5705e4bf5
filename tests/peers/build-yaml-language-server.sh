#!/usr/bin/env bash
# Install the real yaml-language-server (the YAML extension of VS Code and of most LSP
# editors) from npm, for the test that opens ModelReplica files in it with our JSON Schema.
#
# Output: ${MODELPLANE_PEERS_DIR:-$HOME/.cache/modelplane-render/peers}/yaml-language-server-1.25.0/
#         plus the symlink bin/yaml-language-server -> its launcher (a node script)
#
# Pinned to 1.25.0: 2.0.0 needs Node >= 22.13 and the machine has Node 20.
# Idempotent: if the pinned version is already installed it prints one line and exits 0.
# npm keeps its own download cache (~/.npm), so a reinstall is fast.
set -euo pipefail

YLS_VERSION="${YLS_VERSION:-1.25.0}"
PEERS="${MODELPLANE_PEERS_DIR:-$HOME/.cache/modelplane-render/peers}"
BIN="$PEERS/bin"
TARGET="$PEERS/yaml-language-server-$YLS_VERSION"
LAUNCHER="$TARGET/node_modules/yaml-language-server/bin/yaml-language-server"

mkdir -p "$BIN"

if [[ -x "$LAUNCHER" ]]; then
    ln -sfn "$LAUNCHER" "$BIN/yaml-language-server"
    echo "yaml-language-server $YLS_VERSION already installed: $TARGET"
    exit 0
fi

command -v npm >/dev/null 2>&1 || { echo "build-yaml-language-server.sh: npm is not on PATH" >&2; exit 1; }

tmp="$(mktemp -d "$PEERS/.yaml-language-server-install.XXXXXX")"
chmod 755 "$tmp"  # mktemp makes it private; it becomes the install directory
trap 'rm -rf "$tmp"' EXIT

echo "installing yaml-language-server $YLS_VERSION from npm..." >&2
npm install --prefix "$tmp" --no-audit --no-fund --no-save "yaml-language-server@$YLS_VERSION" >&2

# Atomic placement: rename within the same directory.
rm -rf "$TARGET"
mv "$tmp" "$TARGET"
trap - EXIT
ln -sfn "$LAUNCHER" "$BIN/yaml-language-server"
echo "installed yaml-language-server $YLS_VERSION: $TARGET" >&2
