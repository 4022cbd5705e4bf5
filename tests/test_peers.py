"""The real peers' build scripts and the run's one line when they are missing (tests/peers/peer.py)."""

from __future__ import annotations

import re

from conftest import ROOT
from peer import BUILD_ALL, BUILD_HINT, peer_skip_summary

PEERS = ROOT / "tests" / "peers"


def test_build_all_builds_every_peer_and_ci_calls_it() -> None:
    scripts = {p.name for p in [*PEERS.glob("build-*.sh"), *PEERS.glob("fetch-*.sh")]} - {"build-all.sh"}
    called = set(re.findall(r'^bash "\$HERE/((?:build|fetch)-[\w-]+\.sh)"', (PEERS / "build-all.sh").read_text(), re.M))
    assert called == scripts
    # The installs of Python peers (vLLM's CPU build: gigabytes) are their own step, each called by CI.
    installs = {p.name for p in PEERS.glob("install-*.sh")}
    assert {hint.removeprefix("bash tests/peers/") for hint in BUILD_HINT.values()} <= scripts | installs
    assert BUILD_ALL == "bash tests/peers/build-all.sh"
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert BUILD_ALL in ci
    assert all(f"bash tests/peers/{name}" in ci for name in installs)


def test_the_skips_for_missing_peers_are_one_line() -> None:
    reasons = [
        "kustomize is not built: run `bash tests/peers/build-kustomize.sh`",
        "kube-apiserver is not built: run `bash tests/peers/build-kube-apiserver.sh`",
        "kustomize is not built: run `bash tests/peers/build-kustomize.sh`",
        "argocd-cmp-server is not built (/go/pkg/mod/.../install.yaml is missing): run `bash tests/peers/build-argocd.sh`",
        "no tr_TR locale here",
    ]
    assert peer_skip_summary(reasons) == (
        "4 tests skipped: the real peers are not built (kube-apiserver, kustomize, argocd-cmp-server); "
        "build them with: bash tests/peers/build-all.sh"
    )
    assert peer_skip_summary(reasons[:1]) == (
        "1 test skipped: the real peers are not built (kustomize); build them with: bash tests/peers/build-all.sh"
    )
    assert peer_skip_summary(["no tr_TR locale here", "x is not built: not a peer"]) is None
