"""Finding a real peer for a test: skip with the reason when it isn't built, fail in CI (CI=true)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from apiserver import find_peer

BUILD_HINT = {
    "kube-apiserver": "bash tests/peers/build-kube-apiserver.sh",
    "etcd": "bash tests/peers/build-etcd.sh",
    "kustomize": "bash tests/peers/build-kustomize.sh",
    "argocd-cmp-server": "bash tests/peers/build-argocd.sh",
    "modelplane-cmpclient": "bash tests/peers/build-argocd.sh",
    "yaml-language-server": "bash tests/peers/build-yaml-language-server.sh",
}


def require_peer(name: str) -> Path:
    """The peer's binary; a skip naming the build command, or a failure under CI."""
    path = find_peer(name)
    if path is not None:
        return path
    reason = f"{name} is not built: run `{BUILD_HINT.get(name, 'tests/peers/build-*.sh')}`"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI builds every real peer; a skip in CI is a failure)")
    pytest.skip(reason)
