#!/usr/bin/env bash
# The Gateway API CRDs (HTTPRoute, for the routes `--gateway` renders), from the Go module proxy: the
# sigs.k8s.io/gateway-api module ships them under config/crd/standard. No build, only a download.
# Output: $PEERS/crds/gateway-api-v$VERSION/*.yaml
set -euo pipefail

VERSION="${GATEWAY_API_VERSION:-1.6.3}"  # v1.7 needs Go 1.27
PEERS="${MODELPLANE_PEERS_DIR:-$HOME/.cache/modelplane-render/peers}"
OUT="$PEERS/crds/gateway-api-v$VERSION"

if [[ -f "$OUT/gateway.networking.k8s.io_httproutes.yaml" ]]; then
  echo "Gateway API v$VERSION CRDs already there: $OUT"
  exit 0
fi
DIR="$(cd "$(mktemp -d)" && go mod download -json "sigs.k8s.io/gateway-api@v$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
[[ -n "$DIR" && -d "$DIR/config/crd/standard" ]] || { echo "cannot download sigs.k8s.io/gateway-api@v$VERSION (go mod download -json says why)" >&2; exit 1; }
mkdir -p "$OUT.tmp"
cp "$DIR"/config/crd/standard/*.yaml "$OUT.tmp/"
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
echo "Gateway API v$VERSION CRDs: $OUT"
