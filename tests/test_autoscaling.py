"""The autoscaled setting: turning it on for a live LeaderWorkerSet keeps the autoscaler's group count.

With `autoscaled` the LeaderWorkerSet is rendered without spec.replicas. An apply that drops a field it
wrote before removes it: client-side apply by its three-way merge with last-applied-configuration,
server-side apply when its field manager still owns the field. The LWS v0.10.0 CRD then defaults it to 1,
the fleet scaled down to one group. Each test runs the real kubectl v1.37.2 against the real kube-apiserver
v1.37.2 and reads the live count after every step: the danger (no transition: 1 group) and the transitions
docs/autoscaling.md gives (client-side: `kubectl apply set-last-applied` of the new render first;
server-side: nothing once the autoscaler has scaled, whose update through /scale takes spec.replicas from
the applier, else a handover of the field to another manager first). No LWS controller runs here, so no
HPA can either: it would write /scale, which the tests write themselves with `kubectl scale`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_day_two import _fixture, _in_namespace, _kubectl, _render

from conftest import SHARED
from modelplane_render.options import Options

CASE = "several-copies"
COPIES, SCALED, CRD_DEFAULT = 3, 5, 1
LWS = "leaderworkerset.leaderworkerset.x-k8s.io"
CLIENT_SIDE = ("apply", "-f", "-")
# Argo CD's ServerSideApply: its field manager, and --force-conflicts as Argo CD passes it (no step here
# needs it: each was run without it too, and none conflicts).
SERVER_SIDE = ("apply", "--server-side", "--field-manager=argocd-controller", "--force-conflicts", "-f", "-")
Cluster = tuple[Any, Path]
Step = tuple[tuple[str, ...], str | None]  # kubectl's arguments, and its stdin


def _renders(tmp_path: Path, namespace: str) -> tuple[dict[str, Any], str, str]:
    """The LeaderWorkerSet of render A (setting off), and the texts of A and of B (setting on)."""
    replica = _in_namespace(_fixture(CASE), namespace)
    replica["spec"]["engines"][0]["copies"] = COPIES
    text_a, objects_a = _render(tmp_path, replica)
    text_b, objects_b = _render(tmp_path, replica, Options(autoscaled=True))
    (key,) = [k for k in objects_a if k[0] == "LeaderWorkerSet"]
    assert objects_a[key]["spec"]["replicas"] == COPIES
    assert "replicas" not in objects_b[key]["spec"]
    return objects_a[key], text_a, text_b


def test_the_setting_renders_every_leaderworkerset_without_replicas(tmp_path: Path) -> None:
    _renders(tmp_path, "default")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """test_day_two's server with the CRDs this render needs: LeaderWorkerSet v0.10.0 and InferencePool v1.6.0."""
    from peer import real_apiserver, require_peer

    kubectl = require_peer("kubectl")
    with real_apiserver() as server:
        server.wait_for_api("resource.k8s.io/v1", "ResourceClaimTemplate")
        for name in ("leaderworkerset.x-k8s.io_leaderworkersets.v0.10.0.yaml", "inference.networking.k8s.io_inferencepools.v1.6.0.yaml"):
            server.apply_crd(yaml.safe_load((SHARED / "upstream" / "crds" / name).read_text()))
        yield server, kubectl


def _run(cluster: Cluster, args: tuple[str, ...], stdin: str | None = None) -> str:
    done = _kubectl(cluster, *args, stdin=stdin)
    assert done.returncode == 0, f"kubectl {' '.join(args)}:\n{done.stderr}"
    return done.stdout


def _live(cluster: Cluster, lws: dict[str, Any]) -> dict[str, Any]:
    meta = lws["metadata"]
    found: dict[str, Any] = json.loads(
        _run(cluster, ("get", LWS, meta["name"], "-n", meta["namespace"], "-o", "json", "--show-managed-fields"))
    )
    return found


def _count(cluster: Cluster, lws: dict[str, Any]) -> int:
    meta = lws["metadata"]
    return int(_run(cluster, ("get", LWS, meta["name"], "-n", meta["namespace"], "-o", "jsonpath={.spec.replicas}")))


def _owners_of_replicas(cluster: Cluster, lws: dict[str, Any]) -> set[str]:
    fields = _live(cluster, lws)["metadata"]["managedFields"]
    return {f["manager"] for f in fields if "f:replicas" in f.get("fieldsV1", {}).get("f:spec", {})}


def _scale(lws: dict[str, Any], count: int) -> Step:
    """What an HPA does: an update of the scale subresource (`kubectl scale` writes /scale)."""
    meta = lws["metadata"]
    return ("scale", f"{LWS}/{meta['name']}", f"--replicas={count}", "-n", meta["namespace"]), None


def _counts(cluster: Cluster, lws: dict[str, Any], steps: list[Step]) -> list[int]:
    """The live spec.replicas after each step."""
    seen = []
    for args, stdin in steps:
        _run(cluster, args, stdin)
        seen.append(_count(cluster, lws))
    return seen


def _setup(cluster: Cluster, tmp_path: Path, namespace: str) -> tuple[dict[str, Any], str, str]:
    cluster[0].create_namespace(namespace)
    return _renders(tmp_path, namespace)


@pytest.mark.real_peers
def test_the_leaderworkerset_crd_serves_the_scale_subresource_an_autoscaler_writes(cluster: Cluster, tmp_path: Path) -> None:
    crd = json.loads(_run(cluster, ("get", "crd", "leaderworkersets.leaderworkerset.x-k8s.io", "-o", "json")))
    (version,) = [v for v in crd["spec"]["versions"] if v["storage"]]
    assert version["subresources"] == {
        "scale": {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.hpaPodSelector",
        },
        "status": {},
    }
    lws, text_a, _ = _setup(cluster, tmp_path, "as-crd")
    _run(cluster, CLIENT_SIDE, text_a)
    _run(cluster, *_scale(lws, SCALED))
    meta = lws["metadata"]
    path = f"/apis/{lws['apiVersion']}/namespaces/{meta['namespace']}/leaderworkersets/{meta['name']}/scale"
    scale = json.loads(_run(cluster, ("get", "--raw", path)))
    assert (scale["kind"], scale["spec"]["replicas"]) == ("Scale", SCALED)
    # No controller writes status.hpaPodSelector here; an HPA needs it from the LWS controller.
    assert scale["status"].get("selector", "") == ""


@pytest.mark.real_peers
def test_client_side_apply_without_the_transition_scales_the_fleet_to_one_group(cluster: Cluster, tmp_path: Path) -> None:
    lws, text_a, text_b = _setup(cluster, tmp_path, "as-cs-danger")
    steps = [(CLIENT_SIDE, text_a), _scale(lws, SCALED), (CLIENT_SIDE, text_b)]
    assert _counts(cluster, lws, steps) == [COPIES, SCALED, CRD_DEFAULT]


@pytest.mark.real_peers
def test_client_side_apply_after_set_last_applied_keeps_the_autoscalers_count(cluster: Cluster, tmp_path: Path) -> None:
    lws, text_a, text_b = _setup(cluster, tmp_path, "as-cs-transition")
    # set-last-applied rewrites only the annotation: the next three-way merge no longer sees replicas as its own.
    set_last_applied = ("apply", "set-last-applied", "-f", "-")
    steps = [(CLIENT_SIDE, text_a), _scale(lws, SCALED), (set_last_applied, text_b), (CLIENT_SIDE, text_b), (CLIENT_SIDE, text_b)]
    assert _counts(cluster, lws, steps) == [COPIES, SCALED, SCALED, SCALED, SCALED]


@pytest.mark.real_peers
def test_server_side_apply_keeps_a_count_the_autoscaler_has_scaled(cluster: Cluster, tmp_path: Path) -> None:
    lws, text_a, text_b = _setup(cluster, tmp_path, "as-ss-scaled")
    assert _counts(cluster, lws, [(SERVER_SIDE, text_a)]) == [COPIES]
    assert _owners_of_replicas(cluster, lws) == {"argocd-controller"}
    assert _counts(cluster, lws, [_scale(lws, SCALED)]) == [SCALED]
    # The update through /scale changed the value, so it took the field from the applier ("kubectl" is
    # `kubectl scale`'s field manager; an HPA's update is recorded under its own).
    assert _owners_of_replicas(cluster, lws) == {"kubectl"}
    assert _counts(cluster, lws, [(SERVER_SIDE, text_b), (SERVER_SIDE, text_b)]) == [SCALED, SCALED]


@pytest.mark.real_peers
def test_server_side_apply_before_any_scale_drops_the_count_to_the_crd_default(cluster: Cluster, tmp_path: Path) -> None:
    lws, text_a, text_b = _setup(cluster, tmp_path, "as-ss-danger")
    assert _counts(cluster, lws, [(SERVER_SIDE, text_a), (SERVER_SIDE, text_b)]) == [COPIES, CRD_DEFAULT]
    assert _owners_of_replicas(cluster, lws) == set()  # removed with its only owner's claim, then defaulted


@pytest.mark.real_peers
def test_server_side_apply_after_a_handover_of_replicas_keeps_the_count(cluster: Cluster, tmp_path: Path) -> None:
    lws, text_a, text_b = _setup(cluster, tmp_path, "as-ss-handover")
    assert _counts(cluster, lws, [(SERVER_SIDE, text_a)]) == [COPIES]
    # The Kubernetes docs' "transferring ownership": another manager applies the field at its current value,
    # so both own it (same value: no conflict; needs neither --force-conflicts nor --validate=false, though the
    # object has no leaderWorkerTemplate: the server validates the merged object), then the applier's next apply
    # drops only its own claim.
    meta = {k: lws["metadata"][k] for k in ("name", "namespace")}
    handover = yaml.safe_dump({"apiVersion": lws["apiVersion"], "kind": lws["kind"], "metadata": meta, "spec": {"replicas": COPIES}})
    to_handover = ("apply", "--server-side", "--field-manager=autoscaler-handover", "-f", "-")
    assert _counts(cluster, lws, [(to_handover, handover)]) == [COPIES]
    assert _owners_of_replicas(cluster, lws) == {"argocd-controller", "autoscaler-handover"}
    assert _counts(cluster, lws, [(SERVER_SIDE, text_b), (SERVER_SIDE, text_b)]) == [COPIES, COPIES]
    assert _owners_of_replicas(cluster, lws) == {"autoscaler-handover"}


@pytest.mark.real_peers
def test_the_guides_hpa_targets_the_rendered_leaderworkerset_and_the_api_server_takes_it(cluster: Cluster) -> None:
    """docs/autoscaling.md's HPA names the LeaderWorkerSet the example really renders, and passes a strict dry run."""
    from conftest import ROOT
    from modelplane_render.pipeline import render_paths

    page = (ROOT / "docs" / "autoscaling.md").read_text()
    (block,) = [b.split("```")[0] for b in page.split("```yaml\n")[1:] if "kind: HorizontalPodAutoscaler" in b.split("```")[0]]
    hpa = yaml.safe_load(block)
    (lws,) = [
        o for o in render_paths([str(ROOT / "kustomize" / "base" / "qwen3-8b.yaml")], Options()).objects if o["kind"] == "LeaderWorkerSet"
    ]
    target = {"apiVersion": lws["apiVersion"], "kind": lws["kind"], "name": lws["metadata"]["name"]}
    assert hpa["spec"]["scaleTargetRef"] == target
    cluster[0].create_namespace(hpa["metadata"]["namespace"])
    _run(cluster, ("create", "--dry-run=server", "--validate=strict", "-f", "-"), yaml.safe_dump(hpa))
