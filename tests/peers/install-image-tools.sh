#!/usr/bin/env bash
# Debian's tools that build and run the sidecar image without a daemon or a registry (argocd/build-image.sh,
# tests/test_sidecar_image.py): mmdebstrap and umoci build it, skopeo copies it (into podman's storage, or to a
# registry), podman runs it with runc (crun refuses hosts whose cgroups are in hybrid mode), uidmap for podman.
# Does nothing when they are all installed; needs root (or sudo) otherwise. About 15 s.
set -euo pipefail
tools=(mmdebstrap umoci podman runc newuidmap skopeo)
missing=()
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if [[ ${#missing[@]} == 0 ]]; then
  echo "image tools already installed: ${tools[*]}"
  exit 0
fi
echo "installing the image tools (missing: ${missing[*]})..." >&2
as_root=()
[[ "$(id -u)" == 0 ]] || as_root=(sudo)
"${as_root[@]}" apt-get update -q
"${as_root[@]}" apt-get install -y -q --no-install-recommends mmdebstrap umoci podman runc uidmap skopeo
