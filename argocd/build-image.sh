#!/usr/bin/env bash
# Build the repo-server sidecar image from argocd/image.toml with Debian's own tools and no daemon or
# registry: mmdebstrap makes the root filesystem (Debian's python3 and the manifest's packages), a venv
# of modelplane-render from wheels of this checkout pinned by argocd/constraints.txt, a static
# kustomize built from its Go module; umoci packs it as an OCI image layout. What
# `podman build -f argocd/Containerfile .` builds (from the same manifest), for a machine that can reach the Debian mirror, PyPI and
# the Go module proxy but no container registry (CI: tests/test_sidecar_image.py runs it).
#
#   bash argocd/build-image.sh [-o OUT_DIR] [-t TAG]
#
# OUT_DIR (or $MODELPLANE_IMAGE_OUT): the OCI layout, default $MODELPLANE_IMAGE_CACHE/oci, where
# MODELPLANE_IMAGE_CACHE defaults to ~/.cache/modelplane-render/image (kustomize is kept there too,
# keyed by version, so a second build doesn't compile it). A tag already in OUT_DIR is replaced.
# TAG (or $MODELPLANE_IMAGE_TAG): default the package's version, as examples/argocd-install's newTag.
# Push it with skopeo (no daemon either): skopeo copy oci:OUT_DIR:TAG docker://REGISTRY/NAME:TAG
#
# Needs root (mmdebstrap --mode=root: a chroot whose files belong to root and to Debian's system
# users), python3 >= 3.11 with pip, go, and the tools tests/peers/install-image-tools.sh installs.
# Measured on 2 cores: about 50 s with kustomize cached (the mirror's speed varies it: up to 160 s seen),
# 36 s more to compile kustomize (Go's module cache warm).
#
# Reproducible where it is cheap: SOURCE_DATE_EPOCH is the commit's time (mmdebstrap drops its logs and
# caches, pip writes hash-checked .pyc, every file's mtime is clamped to it, and the image's created
# time is it), so the same commit and the same mirror content give the same layer.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MANIFEST="$ROOT/argocd/image.toml"
CACHE="${MODELPLANE_IMAGE_CACHE:-$HOME/.cache/modelplane-render/image}"
OUT="${MODELPLANE_IMAGE_OUT:-$CACHE/oci}"
TAG="${MODELPLANE_IMAGE_TAG:-}"
# Where the Debian packages come from: the slim image's three sources (the release, its updates, its security fixes).
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
DEBIAN_SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
# The python that builds the wheels: the checkout's venv when there is one (pip wheel needs pip).
PYTHON="${PYTHON:-$([[ -x "$ROOT/.venv/bin/python" ]] && echo "$ROOT/.venv/bin/python" || echo python3)}"

while getopts "o:t:h" opt; do
    case "$opt" in
        o) OUT="$OPTARG" ;;
        t) TAG="$OPTARG" ;;
        *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
    esac
done

[[ "$(id -u)" == 0 ]] || { echo "build-image.sh: needs root (mmdebstrap --mode=root); run it with sudo" >&2; exit 1; }
for tool in mmdebstrap umoci go; do
    command -v "$tool" >/dev/null || { echo "build-image.sh: $tool is not on PATH: run \`bash tests/peers/install-image-tools.sh\`" >&2; exit 1; }
done

# The manifest, as shell variables.
eval "$(python3 - "$MANIFEST" <<'EOF'
import shlex, sys, tomllib

m = tomllib.load(open(sys.argv[1], "rb"))
values = {
    "RELEASE": m["debian"]["release"],
    "PACKAGES": ",".join(m["debian"]["packages"]),
    "KUSTOMIZE_VERSION": m["kustomize"]["version"],
    "KUSTOMIZE_MODULE": m["kustomize"]["module"],
    "VENV": m["python"]["venv"],
    "CONSTRAINTS": m["python"]["constraints"],
    "USER_GROUP": m["image"]["user"],
}
for name, value in values.items():
    print(f"{name}={shlex.quote(value)}")
print("IMAGE_ENV=(" + " ".join(shlex.quote(f"{k}={v}") for k, v in m["image"]["env"].items()) + ")")
print("IMAGE_CMD=(" + " ".join(shlex.quote(a) for a in m["image"]["cmd"]) + ")")
EOF
)"

SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || date +%s)}"
export SOURCE_DATE_EPOCH
CREATED="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"
REVISION="$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"

mkdir -p "$CACHE"
WORK="$(mktemp -d "$CACHE/.build.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
start=$SECONDS

# kustomize, static (no libc of the image's to match), cached by version.
KUSTOMIZE="$CACHE/kustomize-$KUSTOMIZE_VERSION-static"
if [[ ! -x "$KUSTOMIZE" ]]; then
    echo "building kustomize $KUSTOMIZE_VERSION, static (about 40 s on 2 cores with Go's module cache warm)..." >&2
    CGO_ENABLED=0 GOFLAGS= GOBIN="$WORK/go-bin" GO111MODULE=on go install "$KUSTOMIZE_MODULE@$KUSTOMIZE_VERSION"
    mv -f "$WORK/go-bin/kustomize" "$KUSTOMIZE.partial"
    mv -f "$KUSTOMIZE.partial" "$KUSTOMIZE"
fi

# Wheels of this checkout and its pinned dependencies (binary wheels for the manifest's Debian python3:
# bookworm's is 3.11, as the python building them must be).
echo "building wheels with $PYTHON..." >&2
(cd "$ROOT" && "$PYTHON" -m pip wheel --quiet --disable-pip-version-check --wheel-dir "$WORK/wheels" -c "$CONSTRAINTS" .)
if [[ -z "$TAG" ]]; then
    wheel="$(cd "$WORK/wheels" && ls modelplane_render-*.whl)"
    TAG="$(echo "$wheel" | cut -d- -f2)"
fi

# The root filesystem. The hooks run on this machine with the chroot's path as $1, and see these;
# what runs in the chroot gets a clean environment (this machine's PIP_* and PYTHON* are not the image's).
export MPR_WHEELS="$WORK/wheels" MPR_KUSTOMIZE="$KUSTOMIZE" MPR_VENV="$VENV"
# The .deb files are kept between builds (apt still fetches the package lists, so updates come in);
# mmdebstrap's cleanup then empties the image's own apt cache. sync-in and sync-out are mmdebstrap's
# own hooks, which no shell expands: the path is spliced in here.
export MPR_DEBS="$CACHE/debs-$RELEASE"
mkdir -p "$MPR_DEBS"
export MPR_IN_CHROOT="env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH"
echo "mmdebstrap $RELEASE with $PACKAGES..." >&2
mmdebstrap --mode=root --variant=minbase --format=directory --quiet \
    --include="$PACKAGES" \
    --skip=essential/unlink \
    --setup-hook='mkdir -p "$1/var/cache/apt/archives"' \
    --setup-hook="sync-in $MPR_DEBS /var/cache/apt/archives/" \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook="sync-out /var/cache/apt/archives $MPR_DEBS" \
    --customize-hook='cp -r "$MPR_WHEELS" "$1/tmp/wheels"' \
    --customize-hook='chroot "$1" $MPR_IN_CHROOT python3 -m venv "$MPR_VENV"' \
    --customize-hook='chroot "$1" $MPR_IN_CHROOT "$MPR_VENV/bin/pip" install --quiet --no-cache-dir --disable-pip-version-check --no-index --find-links /tmp/wheels modelplane-render' \
    --customize-hook='rm -rf "$1/tmp/wheels"' \
    --customize-hook='ln -s "$MPR_VENV/bin/modelplane-render" "$1/usr/local/bin/modelplane-render"' \
    --customize-hook='install -m 0755 "$MPR_KUSTOMIZE" "$1/usr/local/bin/kustomize"' \
    --customize-hook='rm -f "$1/etc/resolv.conf" "$1/etc/hostname"' \
    "$RELEASE" "$WORK/rootfs" \
    "deb $DEBIAN_MIRROR $RELEASE main" \
    "deb $DEBIAN_MIRROR $RELEASE-updates main" \
    "deb $DEBIAN_SECURITY_MIRROR $RELEASE-security main"
# mmdebstrap's cleanup runs after the hooks, so the clamp comes last.
find "$WORK/rootfs" -newermt "@$SOURCE_DATE_EPOCH" -exec touch --no-dereference --date="@$SOURCE_DATE_EPOCH" {} +

# The OCI layout: one layer, the root filesystem; the config says the user, env and command.
echo "packing oci:$OUT:$TAG..." >&2
[[ -f "$OUT/index.json" ]] || umoci init --layout "$OUT"
umoci rm --image "$OUT:$TAG" 2>/dev/null || true
umoci new --image "$OUT:$TAG"
umoci unpack --image "$OUT:$TAG" "$WORK/bundle" >/dev/null
rmdir "$WORK/bundle/rootfs"
mv "$WORK/rootfs" "$WORK/bundle/rootfs"
umoci repack --image "$OUT:$TAG" --history.created "$CREATED" --history.created_by "argocd/build-image.sh: mmdebstrap $RELEASE" "$WORK/bundle"
config=(--config.user "$USER_GROUP" --config.env "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
for e in "${IMAGE_ENV[@]}"; do config+=(--config.env "$e"); done
for a in "${IMAGE_CMD[@]}"; do config+=(--config.cmd "$a"); done
umoci config --image "$OUT:$TAG" "${config[@]}" \
    --config.label "org.opencontainers.image.revision=$REVISION" \
    --config.label "org.opencontainers.image.version=$TAG" \
    --created "$CREATED" --history.created "$CREATED" --history.created_by "argocd/build-image.sh: config from argocd/image.toml"
umoci gc --layout "$OUT"

echo "built oci:$OUT:$TAG in $((SECONDS - start))s ($(du -sh "$OUT" | cut -f1) in the layout)" >&2
cat <<EOF
oci:$OUT:$TAG
Run it:  skopeo copy oci:$OUT:$TAG containers-storage:localhost/modelplane-render-argocd-cmp:$TAG  (then podman run it)
Push it: skopeo copy oci:$OUT:$TAG docker://registry.example.com/platform/modelplane-render-argocd-cmp:$TAG
         (then set images: in your kustomization to that name and tag, as examples/argocd-install does)
EOF
