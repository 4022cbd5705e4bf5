#!/usr/bin/env bash
# Build a real etcd server from the Go module proxy (no git, no docker).
# Output: $PEERS/bin/etcd-v$VERSION (+ symlink etcd).
set -euo pipefail

VERSION="${ETCD_VERSION:-3.7.3}"
PEERS="${MODELPLANE_PEERS_DIR:-$HOME/.cache/modelplane-render/peers}"
BIN="$PEERS/bin"
OUT="$BIN/etcd-v$VERSION"

if [[ -x "$OUT" ]]; then
  echo "etcd v$VERSION already built: $OUT"
  exit 0
fi

mkdir -p "$BIN"
SRC="$PEERS/src/etcd-v$VERSION"
rm -rf "$SRC"
mkdir -p "$SRC"
cd "$SRC"

# server/v3's go.mod replaces its sibling modules with ../<dir> paths; those
# replaces only apply inside the etcd repo, so a wrapper module pins the
# published siblings at the same tag instead.
MOD=go.etcd.io/etcd/server/v3
SERVER_GOMOD="$(go mod download -json "$MOD@v$VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
[[ -f "$SERVER_GOMOD" ]] || { echo "cannot find go.mod of $MOD@v$VERSION" >&2; exit 1; }

go mod init modelplane-render/peers/etcd >/dev/null 2>&1
replaces=()
while read -r mod; do
  replaces+=("-replace=$mod=$mod@v$VERSION")
done < <(awk '$2 == "=>" && $1 ~ /^go\.etcd\.io\/etcd\// && $3 ~ /^\.\.?\// {print $1}' "$SERVER_GOMOD")
go mod edit -require="$MOD@v$VERSION" "${replaces[@]}"

echo "building etcd v$VERSION ..."
start=$SECONDS
CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags "-s -w" -o "$OUT.tmp" "$MOD"
mv "$OUT.tmp" "$OUT"
ln -sfn "$(basename "$OUT")" "$BIN/etcd"
echo "built $OUT in $((SECONDS - start))s"
"$OUT" --version
