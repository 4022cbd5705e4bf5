"""The pipeline across replicas: pinning to one InferenceCluster, and never a silently short render."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import ROOT, run_cli
from modelplane_render.constants import LABEL_REPLICA
from modelplane_render.frontends.krm import run_function

VALID = ROOT / "fixtures" / "valid"
# A repository of several clusters' replicas: eks-l4 (two files), gke-l4, eks-l40s (with objects passed through).
SOURCES = ("several-replicas-in-one-file", "objects-passed-through", "single-gpu-standalone")


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    for case in SOURCES:
        shutil.copytree(VALID / case, tmp_path / "replicas" / case)
    return tmp_path / "replicas"


def replicas_by_cluster(root: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "ModelReplica":
                found.setdefault(doc["spec"]["clusterName"], set()).add(doc["metadata"]["name"])
    return found


def objects(text: str) -> list[dict[str, Any]]:
    return [o for o in yaml.safe_load_all(text) if o is not None]


def test_the_repository_holds_several_clusters(repository: Path) -> None:
    clusters = replicas_by_cluster(repository)
    assert set(clusters) == {"eks-l4", "gke-l4", "eks-l40s"} and len(clusters["eks-l4"]) == 2


@pytest.mark.parametrize("cluster", ["eks-l4", "gke-l4", "eks-l40s"])
def test_a_cluster_gets_exactly_its_replicas_objects_and_every_object_passed_through(repository: Path, cluster: str) -> None:
    result = run_cli("render", "--cluster", cluster, str(repository))
    assert (result.code, result.stderr) == (0, "")
    rendered = objects(result.stdout)
    ours = [o for o in rendered if LABEL_REPLICA in (o["metadata"].get("labels") or {})]
    passed = [o for o in rendered if o not in ours]
    assert {o["metadata"]["labels"][LABEL_REPLICA] for o in ours} == replicas_by_cluster(repository)[cluster]
    everything = objects(run_cli("render", str(repository)).stdout)
    assert passed == [o for o in everything if LABEL_REPLICA not in (o["metadata"].get("labels") or {})] != []


def test_without_a_cluster_every_replica_renders_as_before(repository: Path) -> None:
    every = objects(run_cli("render", str(repository)).stdout)
    replicas = {o["metadata"]["labels"][LABEL_REPLICA] for o in every if LABEL_REPLICA in (o["metadata"].get("labels") or {})}
    assert replicas == set().union(*replicas_by_cluster(repository).values())


def test_a_bad_replica_of_another_cluster_fails_every_cluster_s_render(repository: Path) -> None:
    bad = repository / "single-gpu-standalone" / "replica.yaml"
    bad.write_text(bad.read_text().replace("role: Standalone", "role: Standalon"))
    for cluster in ("gke-l4", "eks-l40s"):  # single-gpu-standalone is eks-l4's
        result = run_cli("render", "--cluster", cluster, str(repository))
        assert result.code == 1 and result.stdout == ""
        assert "single-gpu-standalone/replica.yaml:" in result.stderr and "must be one of Standalone" in result.stderr


def test_a_cluster_with_no_replica_is_an_error_that_says_how_to_allow_it(repository: Path) -> None:
    result = run_cli("render", "--cluster", "aks-a100", str(repository))
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr == (
        "modelplane-render: nothing to render for cluster aks-a100: none of the 4 ModelReplicas is pinned to it "
        "(spec.clusterName: eks-l4, eks-l40s, gke-l4). Argo CD (with pruning) deletes every live object an app no longer "
        "renders; if that is meant, pass --allow-empty (Argo CD: the plugin parameter allow-empty; a RenderConfig: spec.allowEmpty)\n"
    )
    allowed = run_cli("render", "--cluster", "aks-a100", "--allow-empty", str(repository))
    assert allowed.code == 0 and allowed.stderr == ""
    assert all(LABEL_REPLICA not in (o["metadata"].get("labels") or {}) for o in objects(allowed.stdout))  # only what passes through


def test_no_replica_at_all_fails_render_but_not_validate(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ml}\n")
    rendered = run_cli("render", str(tmp_path))
    assert rendered.code == 1 and rendered.stderr.startswith("modelplane-render: nothing to render: the sources hold no ModelReplica.")
    assert (run_cli("validate", str(tmp_path)).code, run_cli("validate", "--cluster", "x", str(tmp_path)).code) == (0, 0)


def test_the_plugin_parameter_pins_the_argocd_render(repository: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith(("ARGOCD_", "MODELPLANE_", "KUBE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("ARGOCD_APP_PARAMETERS", '[{"name": "cluster", "string": "gke-l4"}]')
    monkeypatch.setenv("ARGOCD_APP_NAMESPACE", "ml-team")
    result = run_cli("argocd", "generate", cwd=repository)
    assert result.code == 0, result.stderr
    assert result.stdout == run_cli("render", "--cluster", "gke-l4", "-n", "ml-team", ".", cwd=repository).stdout
    monkeypatch.setenv("ARGOCD_APP_PARAMETERS", '[{"name": "cluster", "string": "aks-a100"}]')
    refused = run_cli("argocd", "generate", cwd=repository)
    assert refused.code == 1 and "nothing to render for cluster aks-a100" in refused.stderr


def _resource_list(items: list[Any], spec: dict[str, Any]) -> bytes:
    body = {
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "items": items,
        "functionConfig": {"apiVersion": "render.modelplane.ai/v1alpha1", "kind": "RenderConfig", "metadata": {"name": "r"}, "spec": spec},
    }
    return yaml.safe_dump(body, sort_keys=False).encode()


def test_krm_removes_the_replicas_of_other_clusters_and_renders_its_own(repository: Path) -> None:
    files = [p for p in sorted(repository.rglob("*.yaml")) if p.name != "kustomization.yaml"]
    items = [doc for path in files for doc in yaml.safe_load_all(path.read_text()) if doc]
    outcome = run_function(_resource_list(items, {"cluster": "gke-l4"}))
    assert (outcome.code, outcome.stderr) == (0, "")
    out = yaml.safe_load(outcome.text)["items"]
    assert not [o for o in out if o["kind"] == "ModelReplica"]
    labelled = {o["metadata"]["labels"][LABEL_REPLICA] for o in out if LABEL_REPLICA in (o["metadata"].get("labels") or {})}
    assert labelled == replicas_by_cluster(repository)["gke-l4"]
    nothing = run_function(_resource_list(items, {"cluster": "aks-a100"}))
    assert nothing.code == 1 and "nothing to render for cluster aks-a100" in nothing.stderr
    assert yaml.safe_load(nothing.text)["results"][0]["severity"] == "error"
    assert run_function(_resource_list(items, {"cluster": "aks-a100", "allowEmpty": True})).code == 0


def test_an_object_passed_through_with_labels_that_are_no_mapping_is_no_internal_error(tmp_path: Path) -> None:
    """Found by the long fuzz: head_of read a passed-through object's labels as a mapping whatever they were."""
    from hostile import check_outcome, run_source

    source = "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: thing\n  labels: '0'\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: x\n"
    result = run_source(tmp_path, source)
    check_outcome(result.code, result.stdout, result.stderr, source)
