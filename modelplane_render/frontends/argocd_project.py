"""`argocd appproject`: an Argo CD AppProject that lets its Applications sync exactly the kinds we render.

The sidecar runs `kustomize build --enable-exec` on a repository's kustomizations, so code from a source
repository runs in it: the project is where a team says which repositories may be sources and which
clusters and namespaces destinations, and which kinds an app may create. Its kinds come from kinds.py,
the list of every kind the output holds, so a release that renders a new kind changes the project it
generates. Anything more (the objects a replica's directory passes through) is named by whoever runs it.
"""

from __future__ import annotations

from typing import Any

from .. import kinds
from ..errors import UsageError
from ..names import is_dns_label, is_dns_subdomain

ARGOCD_API = "argoproj.io/v1alpha1"
# The kinds a sync creates outside any namespace, when asked to: the Namespace of syncOptions CreateNamespace=true.
NAMESPACE_KIND = {"group": "", "kind": "Namespace"}


def rendered_kinds() -> list[dict[str, str]]:
    """Every kind the renderer outputs, as an AppProject lists a group and kind (the core group is "")."""
    return [{"group": k.api_version.rpartition("/")[0], "kind": k.kind} for k in kinds.OUTPUT_KINDS]


def parse_kind(text: str, flag: str = "--allow-kind") -> dict[str, str]:
    """`KIND` (the core group) or `GROUP/KIND`, as --allow-kind and --allow-cluster-kind take it."""
    group, _, kind = text.rpartition("/")
    if not kind or not kind[0].isupper() or not kind.isalnum() or (group and not is_dns_subdomain(group)):
        raise UsageError(f"{flag} {text!r} must be KIND (the core group, e.g. Secret) or GROUP/KIND (e.g. policy/PodDisruptionBudget)")
    return {"group": group, "kind": kind}


def parse_destination(text: str) -> dict[str, str]:
    """`SERVER,NAMESPACE`, as `argocd proj create --dest` takes it (NAMESPACE may be a glob, e.g. ml-*)."""
    server, comma, namespace = text.partition(",")
    if not comma or not server or not namespace or "," in namespace:
        raise UsageError(f"--dest {text!r} must be SERVER,NAMESPACE (e.g. https://kubernetes.default.svc,ml-*)")
    return {"server": server, "namespace": namespace}


def _listed(kinds: list[dict[str, str]]) -> list[dict[str, str]]:
    """Each group and kind once, sorted: the order an AppProject's whitelist is printed in."""
    return [{"group": group, "kind": kind} for group, kind in sorted({(k["group"], k["kind"]) for k in kinds})]


def app_project(
    name: str,
    namespace: str,
    sources: list[str],
    destinations: list[str],
    allow_kinds: list[str],
    allow_cluster_kinds: list[str],
    create_namespace: bool,
) -> dict[str, Any]:
    """The AppProject, or a UsageError naming what is wrong."""
    if not is_dns_subdomain(name):
        raise UsageError(f"--name {name!r} is not an AppProject name (a DNS subdomain: lowercase letters, digits, '-', '.')")
    if not is_dns_label(namespace):
        raise UsageError(f"--argocd-namespace {namespace!r} is not a namespace name")
    if not sources or not destinations:
        raise UsageError("--src and --dest are needed, at least one of each: a project that names none lets its apps sync nothing")
    if any(source.strip() in ("", "*") for source in sources):
        raise UsageError("--src must name repositories: '*' would let any repository's code run in the sidecar")
    namespaced = rendered_kinds() + [parse_kind(k) for k in allow_kinds]
    cluster = [NAMESPACE_KIND] if create_namespace else []
    cluster += [parse_kind(k, "--allow-cluster-kind") for k in allow_cluster_kinds]
    return {
        "apiVersion": ARGOCD_API,
        "kind": "AppProject",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "description": "Applications rendered by the modelplane-render plugin (modelplane-render argocd appproject)",
            "sourceRepos": sorted(set(sources)),
            "destinations": [parse_destination(d) for d in destinations],
            # Listed, so nothing else: an empty list would allow nothing, and no list at all everything.
            "namespaceResourceWhitelist": _listed(namespaced),
            "clusterResourceWhitelist": _listed(cluster),
        },
    }
