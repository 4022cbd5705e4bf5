"""Stage 5, output: parse every rendered object back, check it against its plan, order it, serialise.

Nothing is printed until all of it has been rendered and checked: a partial render that Argo
CD applies with pruning deletes live serving workloads, so output is all or nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml

from .errors import RenderFailure
from .plan import PlannedObject

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Multi-line strings (an EndpointPickerConfig, a CEL expression) as literal blocks, for review."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)

# Dependencies first: identities and config, then claims, then what serves, then what routes.
KIND_ORDER = (
    "Namespace",
    "CustomResourceDefinition",
    "ServiceAccount",
    "Secret",
    "ConfigMap",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "PersistentVolumeClaim",
    "ResourceClaimTemplate",
    "Service",
    "LeaderWorkerSet",
    "Deployment",
    "StatefulSet",
    "PodDisruptionBudget",
    "InferencePool",
    "HTTPRoute",
)
_RANK = {kind: i for i, kind in enumerate(KIND_ORDER)}


def parse_checked(planned: PlannedObject, text: str) -> dict[str, Any]:
    """The rendered text as an object, or an internal failure that names the template."""
    try:
        documents = list(yaml.load_all(text, Loader=_Loader))
    except yaml.YAMLError as exc:
        raise RenderFailure(
            f"template {planned.template} rendered invalid YAML for {planned.kind} {planned.name}: {str(exc).splitlines()[0]}"
        ) from None
    if len(documents) != 1 or not isinstance(documents[0], dict):
        raise RenderFailure(f"template {planned.template} must render exactly one object, rendered {len(documents)}")
    obj: dict[str, Any] = documents[0]
    meta = obj.get("metadata") or {}
    got = (obj.get("apiVersion"), obj.get("kind"), meta.get("name"), meta.get("namespace"))
    want = (planned.api_version, planned.kind, planned.name, planned.namespace)
    if got != want:
        raise RenderFailure(f"template {planned.template} rendered {got}, the plan says {want}")
    return obj


def sort_key(obj: dict[str, Any]) -> tuple[int, str, str, str]:
    meta = obj.get("metadata") or {}
    kind = str(obj.get("kind", ""))
    return (_RANK.get(kind, len(KIND_ORDER)), kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def serialise(objects: Iterable[dict[str, Any]]) -> str:
    """One YAML stream, `---` before every object, keys in the order the templates give them."""
    parts = []
    for obj in objects:
        parts.append("---\n" + yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=4096))
    return "".join(parts)
