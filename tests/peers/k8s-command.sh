#!/usr/bin/env bash
# Build a command of k8s.io/kubernetes (kube-apiserver, kubectl) from the Go module proxy (no git, no docker):
# `k8s-command.sh NAME VERSION`. Output: $PEERS/bin/NAME-vVERSION (+ symlink NAME). build-kube-apiserver.sh
# and build-kubectl.sh call it; both share one wrapper module's downloads, so the second takes seconds.
set -euo pipefail

NAME="$1"
VERSION="$2"
PEERS="${MODELPLANE_PEERS_DIR:-$HOME/.cache/modelplane-render/peers}"
BIN="$PEERS/bin"
OUT="$BIN/$NAME-v$VERSION"

if [[ -x "$OUT" ]]; then
  echo "$NAME v$VERSION already built: $OUT"
  exit 0
fi

mkdir -p "$BIN"
SRC="$PEERS/src/$NAME-v$VERSION"
rm -rf "$SRC"
mkdir -p "$SRC"
cd "$SRC"

# k8s.io/kubernetes's go.mod points every staging module at ./staging/..., which
# the module zip lacks, so `go install k8s.io/kubernetes/...@v` refuses. Build
# from a wrapper module that replaces each one with its published v0.X.Y tag.
STAGING_VERSION="v0.${VERSION#*.}"
K8S_GOMOD="$(go mod download -json "k8s.io/kubernetes@v$VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
[[ -f "$K8S_GOMOD" ]] || { echo "cannot find go.mod of k8s.io/kubernetes@v$VERSION" >&2; exit 1; }

go mod init "modelplane-render/peers/$NAME" >/dev/null 2>&1
replaces=()
while read -r mod; do
  case "$mod" in
    # not published in lockstep and needed by neither command
    k8s.io/sample-cli-plugin|k8s.io/sample-controller) continue ;;
  esac
  replaces+=("-replace=$mod=$mod@$STAGING_VERSION")
done < <(awk '$2 == "=>" && $1 ~ /^k8s\.io\// && $3 ~ /^\.\/staging\// {print $1}' "$K8S_GOMOD")
echo "replacing ${#replaces[@]} staging modules with $STAGING_VERSION"
go mod edit -require="k8s.io/kubernetes@v$VERSION" "${replaces[@]}"

go mod download k8s.io/kubernetes
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  if go list -mod=mod "$pkg" >/dev/null 2>&1; then
    ldflags+=" -X $pkg.gitVersion=v$VERSION -X $pkg.gitMajor=${VERSION%%.*}"
    minor="${VERSION#*.}"
    ldflags+=" -X $pkg.gitMinor=${minor%%.*} -X $pkg.gitTreeState=clean"
  fi
done

echo "building $NAME v$VERSION (kube-apiserver cold: ~10 min, ~3 GiB; kubectl after it: seconds) ..."
start=$SECONDS
CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags "$ldflags" -o "$OUT.tmp" "k8s.io/kubernetes/cmd/$NAME"
mv "$OUT.tmp" "$OUT"
ln -sfn "$(basename "$OUT")" "$BIN/$NAME"
echo "built $OUT in $((SECONDS - start))s"
if [[ "$NAME" == kubectl ]]; then "$OUT" version --client; else "$OUT" --version; fi
