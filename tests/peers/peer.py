"""Finding a real peer for a test: skip with the reason when it isn't built, fail in CI (CI=true)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from apiserver import ApiServer, find_peer, running_apiserver

BUILD_HINT = {
    "kube-apiserver": "bash tests/peers/build-kube-apiserver.sh",
    "etcd": "bash tests/peers/build-etcd.sh",
    "kustomize": "bash tests/peers/build-kustomize.sh",
    "argocd-cmp-server": "bash tests/peers/build-argocd.sh",
    "modelplane-cmpclient": "bash tests/peers/build-argocd.sh",
    "yaml-language-server": "bash tests/peers/build-yaml-language-server.sh",
    "modelplane-goyaml": "bash tests/peers/build-goyaml.sh",
}


def require_peer(name: str) -> Path:
    """The peer's binary; a skip naming the build command, or a failure under CI."""
    path = find_peer(name)
    if path is not None:
        return path
    # A versioned name ("modelplane-goyaml-<source>") takes the hint of its unversioned one.
    hint = BUILD_HINT.get(name) or BUILD_HINT.get(name.rsplit("-", 1)[0], "tests/peers/build-*.sh")
    reason = f"{name} is not built: run `{hint}`"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI builds every real peer; a skip in CI is a failure)")
    pytest.skip(reason)


@contextlib.contextmanager
def real_apiserver(**options: Any) -> Iterator[ApiServer]:
    """A running etcd and kube-apiserver (running_apiserver's options); a skip, or under CI a failure, when either isn't built."""
    require_peer("kube-apiserver")
    require_peer("etcd")
    with running_apiserver(**options) as server:
        yield server
