"""The field reference of a ModelReplica, as Markdown, derived from the CRD (docs/reference.md holds it).

One entry per field, in the CRD's order, headed by its path (`spec.engines[].members[].role`): its
type, whether it is required, its default, bounds, pattern and enum, its description, and the CEL
rules (`x-kubernetes-validations`) that sit on it, with their messages. A rule that spans fields sits
on the object that holds them, so it is listed there, where the API server evaluates it.

Generated rather than written so that it can't drift: `tests/test_reference.py` compares the
generated part of docs/reference.md with this, and walks the CRD to see every field in it. No
command prints it: `modelplane-render schema` stays the one machine-readable copy, for editors; this
is for reading.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .. import crd

# The fields every Kubernetes object has, which the CRD leaves to the API server: required all the same.
_CONSTANT = {"apiVersion": crd.API_VERSION, "kind": crd.KIND}
_ROOT_REQUIRED = {*_CONSTANT, "metadata"}
# The API server refuses a CRD that says anything of the root metadata but its name's rules, a
# description included, so metadata's is written here.
_METADATA = (
    "The replica's name (required), namespace, labels and annotations. Its name is the first part of every rendered "
    "object's name; its labels and annotations reach every rendered object's metadata, never a selector."
)


def fields(schema: dict[str, Any] | None = None, path: str = "") -> Iterator[tuple[str, dict[str, Any], bool]]:
    """(path, schema node, required) of every field below SCHEMA (the CRD's root by default), parents first."""
    if schema is None:
        schema = crd.openapi_schema()
    required = set(schema.get("required", ()))
    for name, child in (schema.get("properties") or {}).items():
        child_path = f"{path}.{name}" if path else name
        yield child_path, child, name in required or (not path and name in _ROOT_REQUIRED)
        yield from _below(child, child_path)


def _below(node: dict[str, Any], path: str) -> Iterator[tuple[str, dict[str, Any], bool]]:
    if "items" in node:
        yield from _below(node["items"], f"{path}[]")
    if "properties" in node:
        yield from fields(node, path)


def field_reference() -> str:
    """Every field's entry, as Markdown; headings of level 3, one per field."""
    return "\n".join(_entry(path, node, required) for path, node, required in fields())


def _entry(path: str, node: dict[str, Any], required: bool) -> str:
    facts = [_type(node), "required" if required else "optional"]
    if path in _CONSTANT:
        facts.append(f"always `{_CONSTANT[path]}`")
    facts += _constraints(node)
    item = node.get("items")
    if isinstance(item, dict):
        facts += [f"each item: {fact}" for fact in _constraints(item)]
    value = node.get("additionalProperties")
    if isinstance(value, dict):
        facts += [f"each value: {fact}" for fact in _constraints(value)]
    lines = [f"### `{path}`", "", ", ".join(facts) + "."]
    description = node.get("description", _METADATA if path == "metadata" else None)
    if description:
        lines += ["", _text(description)]
    for heading, rules in (
        ("Rules", node.get("x-kubernetes-validations")),
        ("Rules on each item", (item or {}).get("x-kubernetes-validations")),
    ):
        if rules:
            lines += ["", f"{heading} (CEL):", ""]
            lines += [_rule(rule, path if heading == "Rules" else f"{path}[]") for rule in rules]
    return "\n".join(lines) + "\n"


def _rule(rule: dict[str, Any], path: str) -> str:
    """A rule's message, where its error is reported when that is not the node it sits on, and its text."""
    at = f" (reported at `{path}{rule['fieldPath']}`)" if "fieldPath" in rule else ""
    return f"- {_text(rule['message'])}{at}: `{' '.join(rule['rule'].split())}`"


def _text(text: str) -> str:
    """Prose as Markdown shows it: an angle bracket would open an HTML tag."""
    return " ".join(text.split()).replace("<", "&lt;")


def _type(node: dict[str, Any]) -> str:
    if node.get("x-kubernetes-int-or-string"):
        return "integer or string"
    kind = node.get("type", "any")
    if kind == "array":
        item = node.get("items", {})
        listed = f"list of {_type(item)}s" if item.get("type") != "object" else "list of objects"
        if node.get("x-kubernetes-list-type") == "map":
            keys = ", ".join(f"`{k}`" for k in node.get("x-kubernetes-list-map-keys", ()))
            listed += f" keyed by {keys} (each unique)"
        return listed
    value = node.get("additionalProperties")
    if kind == "object" and isinstance(value, dict):
        return f"map of {_type(value)}s" if not value.get("x-kubernetes-int-or-string") else "map of integers or strings"
    if kind == "object" and node.get("x-kubernetes-preserve-unknown-fields"):
        return "object, any fields (kept as given)"
    return str(kind)


def _constraints(node: dict[str, Any]) -> list[str]:
    """Default, enum, bounds and pattern of one node, in words."""
    said = []
    if "default" in node:
        said.append(f"default `{_literal(node['default'])}`")
    if "enum" in node:
        said.append("one of " + ", ".join(f"`{_literal(v)}`" for v in node["enum"]))
    for low, high, unit in (
        ("minimum", "maximum", ""),
        ("minLength", "maxLength", " characters"),
        ("minItems", "maxItems", " items"),
        ("minProperties", "maxProperties", " entries"),
    ):
        said += _bounds(node.get(low), node.get(high), unit)
    if "pattern" in node:
        said.append(f"pattern `{node['pattern']}`")
    return said


def _bounds(low: int | None, high: int | None, unit: str) -> list[str]:
    if low is not None and high is not None:
        return [f"exactly {low}{_unit(unit, low)}" if low == high else f"{low} to {high}{unit}"]
    if low is not None:
        return [f"at least {low}{_unit(unit, low)}"]
    if high is not None:
        return [f"at most {high}{_unit(unit, high)}"]
    return []


def _unit(unit: str, count: int) -> str:
    """' characters', but ' character' for one."""
    return {" characters": " character", " items": " item", " entries": " entry"}.get(unit, unit) if count == 1 else unit


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
