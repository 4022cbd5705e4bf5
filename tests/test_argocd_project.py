"""`argocd appproject`: the AppProject allows exactly the kinds the renderer outputs, and argocd/appproject.yaml is its output.

The loop (tests/test_argocd_sync.py) syncs every app under a project this command made, and shows a kind it
does not allow refused by the real Argo CD.
"""

from __future__ import annotations

import shlex

import pytest
import yaml

from conftest import ROOT, VALID, run_cli

PROJECT_FILE = ROOT / "argocd" / "appproject.yaml"


def command_in_header() -> list[str]:
    """The command argocd/appproject.yaml's comment says made it."""
    lines = PROJECT_FILE.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("#   modelplane-render argocd appproject"))
    text = ""
    for line in lines[start:]:
        text += line.lstrip("#").strip().removesuffix("\\") + " "
        if not line.endswith("\\"):
            break
    return shlex.split(text)[1:]


def test_the_example_project_is_the_commands_output() -> None:
    args = command_in_header()
    done = run_cli(*args)
    assert done.code == 0, done.stderr
    assert yaml.safe_load(done.stdout) == yaml.safe_load(PROJECT_FILE.read_text())


def kinds_rendered() -> set[tuple[str, str]]:
    """Every (group, kind) the valid fixtures render, the objects they pass through left out."""
    found = set()
    for fixture in VALID:
        passed_through = {
            (d["apiVersion"].rpartition("/")[0], d["kind"])
            for path in fixture.glob("*.yaml")
            for d in yaml.safe_load_all(path.read_text())
            if d and d.get("kind") not in ("ModelReplica", "Kustomization", "RenderConfig")
        }
        for obj in yaml.safe_load_all(run_cli("render", "--gateway", "gateway-system/inference", str(fixture)).stdout):
            kind = (obj["apiVersion"].rpartition("/")[0], obj["kind"])
            if kind not in passed_through:
                found.add(kind)
    return found


def test_the_project_allows_exactly_the_kinds_the_fixtures_render() -> None:
    done = run_cli("argocd", "appproject", "--src", "https://git.example.com/a.git", "--dest", "https://kubernetes.default.svc,ml-*")
    assert done.code == 0, done.stderr
    project = yaml.safe_load(done.stdout)
    allowed = {(k["group"], k["kind"]) for k in project["spec"]["namespaceResourceWhitelist"]}
    assert allowed == kinds_rendered()
    assert project["spec"]["clusterResourceWhitelist"] == []  # nothing outside a namespace, not even a Namespace
    assert project["spec"]["sourceRepos"] == ["https://git.example.com/a.git"]
    assert project["spec"]["destinations"] == [{"server": "https://kubernetes.default.svc", "namespace": "ml-*"}]


def test_kinds_passed_through_and_namespaces_are_added_when_asked() -> None:
    args = ["--src", "https://git.example.com/a.git", "--dest", "https://kubernetes.default.svc,*"]
    done = run_cli(
        "argocd",
        "appproject",
        *args,
        "--allow-kind=policy/PodDisruptionBudget",
        "--allow-kind=Secret",
        "--allow-cluster-kind=scheduling.k8s.io/PriorityClass",
        "--create-namespace",
    )
    project = yaml.safe_load(done.stdout)["spec"]
    allowed = project["namespaceResourceWhitelist"]
    assert {"group": "policy", "kind": "PodDisruptionBudget"} in allowed and {"group": "", "kind": "Secret"} in allowed
    assert project["clusterResourceWhitelist"] == [
        {"group": "", "kind": "Namespace"},
        {"group": "scheduling.k8s.io", "kind": "PriorityClass"},
    ]


@pytest.mark.parametrize(
    "args,message",
    [
        ([], "--src and --dest are needed, at least one of each"),
        (["--src", "*", "--dest", "s,n"], "--src must name repositories: '*' would let any repository's code run in the sidecar"),
        (["--src", "r", "--dest", "https://kubernetes.default.svc"], "--dest 'https://kubernetes.default.svc' must be SERVER,NAMESPACE"),
        (
            ["--src", "r", "--dest", "s,n", "--allow-kind", "policy/podDisruptionBudget"],
            "--allow-kind 'policy/podDisruptionBudget' must be",
        ),
        (["--src", "r", "--dest", "s,n", "--name", "Serving"], "--name 'Serving' is not an AppProject name"),
        (["--src", "r", "--dest", "s,n", "--allow-cluster-kind", "priorityclass"], "--allow-cluster-kind 'priorityclass' must be"),
    ],
)
def test_a_project_that_would_allow_too_much_or_nothing_is_refused(args: list[str], message: str) -> None:
    done = run_cli("argocd", "appproject", *args)
    assert (done.code, done.stdout) == (2, "")
    assert message in done.stderr, done.stderr
