"""The ModelReplica CRD that ships with the package: the one truth for what a replica may say."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

import yaml

GROUP = "modelplane.ai"
VERSION = "v1alpha1"
KIND = "ModelReplica"
API_VERSION = f"{GROUP}/{VERSION}"
CRD_FILE = "modelreplicas.modelplane.ai.yaml"


def crd_text() -> str:
    return resources.files(__package__).joinpath("crds", CRD_FILE).read_text(encoding="utf-8")


@functools.cache
def crd() -> dict[str, Any]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    document: dict[str, Any] = yaml.load(crd_text(), Loader=loader)
    return document


def openapi_schema() -> dict[str, Any]:
    """The openAPIV3Schema of the one served version."""
    (version,) = [v for v in crd()["spec"]["versions"] if v["name"] == VERSION]
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


def iter_rules(schema: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every x-kubernetes-validations rule in the schema, in document order (aliases seen once)."""
    found: list[dict[str, Any]] = []
    seen: set[int] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if id(node) in seen:
                return
            seen.add(id(node))
            found.extend(node.get("x-kubernetes-validations", []))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema if schema is not None else openapi_schema())
    return found
