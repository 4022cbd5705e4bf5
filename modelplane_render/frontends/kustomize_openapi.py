"""The OpenAPI schema kustomize's `openapi:` field reads, so a strategic-merge patch merges a ModelReplica's lists.

Without it kustomize knows nothing of a ModelReplica and a patch that names one engine replaces the
whole `engines` list (the other engines are gone, and the error then blames the base). Derived
from the CRD at run time: its list-map keys become merge keys, plus the lists the CRD leaves
atomic that a patch still means to merge (NOTES: which keys):

- `engines`, `containers`, `env`, `deviceRequests`, `imagePullSecrets`: by `name`;
- `members`: by `role`. Its default (Standalone) is filled in after the merge, so a patch must
  spell `role` out, and so must the base element it is meant to match;
- `ports`: by `containerPort`.

kustomize puts the patched elements of a list first: engine order changes nothing we render,
except a Unified replica's picker config, which takes the first engine's block size.
"""

from __future__ import annotations

import copy
from typing import Any

from .. import crd

DEFINITION = "ai.modelplane.v1alpha1.ModelReplica"
# Lists the CRD keeps atomic (or keys otherwise) that a patch merges, by their path below spec.
MERGE_KEYS = {
    ("spec", "engines", "members"): "role",
    ("spec", "engines", "members", "deviceRequests"): "name",
    ("spec", "engines", "members", "template", "spec", "containers", "env"): "name",
    ("spec", "engines", "members", "template", "spec", "containers", "ports"): "containerPort",
    ("spec", "engines", "members", "template", "spec", "imagePullSecrets"): "name",
}


def kustomize_openapi() -> dict[str, Any]:
    """`{"definitions": {...}}` with the ModelReplica's schema, its GVK and its merge keys."""
    definition = crd.crd()
    version = definition["spec"]["versions"][0]
    schema = copy.deepcopy(version["schema"]["openAPIV3Schema"])
    _add_merge_keys(schema, ())
    schema["x-kubernetes-group-version-kind"] = [{"group": crd.GROUP, "kind": crd.KIND, "version": version["name"]}]
    return {"definitions": {DEFINITION: schema}}


def _add_merge_keys(node: Any, path: tuple[str, ...]) -> None:
    if not isinstance(node, dict):
        return
    node.pop("x-kubernetes-validations", None)  # CEL is the API server's and ours, not kustomize's
    if node.get("type") == "array":
        keys = node.get("x-kubernetes-list-map-keys") or []
        key = MERGE_KEYS.get(path, keys[0] if node.get("x-kubernetes-list-type") == "map" and len(keys) == 1 else None)
        if key is not None:
            node["x-kubernetes-patch-merge-key"] = key
            node["x-kubernetes-patch-strategy"] = "merge"
        _add_merge_keys(node.get("items"), path)
    for name, child in (node.get("properties") or {}).items():
        _add_merge_keys(child, path + (name,))
