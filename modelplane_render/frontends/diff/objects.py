"""How the two sides' objects are matched and shown: by API group, kind, namespace and name, as `render` prints them."""

from __future__ import annotations

from typing import Any

from ...output import serialise

# (API group, kind, namespace, name): how the API server tells two objects apart.
Key = tuple[str, str, str, str]


def object_key(obj: dict[str, Any]) -> Key:
    api_version = str(obj.get("apiVersion", ""))
    meta = obj.get("metadata") or {}
    group = api_version.split("/")[0] if "/" in api_version else ""
    return (group, str(obj.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name", "")))


def object_title(key: Key) -> str:
    """`Kind namespace/name` (`Kind name` for a cluster-scoped object)."""
    _, kind, namespace, name = key
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def object_text(obj: dict[str, Any]) -> str:
    """The object exactly as `render` prints it, without the `---` that starts it."""
    return serialise([obj])[len("---\n") :]
