"""The DRA selector expressions of a replica (`deviceRequests[].selectors[].cel`), judged as CEL.

Each becomes a ResourceClaimTemplate's selector, which the API server compiles only when the
template is created: in the middle of an Argo CD sync, after the merge. Judged here, a typo is an
error at its own line and column like any other, before anything is rendered.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .. import crd
from ..errors import FieldPath, Finding
from ..yamlio.document import Document


def _max_characters() -> int:
    """The CRD's maxLength of a selector: a longer one is the structural check's to report."""
    schema = crd.openapi_schema()["properties"]["spec"]["properties"]["engines"]["items"]["properties"]["members"]["items"]
    request = schema["properties"]["deviceRequests"]["items"]
    limit: int = request["properties"]["selectors"]["items"]["properties"]["cel"]["maxLength"]
    return limit


def selector_expressions(data: Any) -> Iterator[tuple[FieldPath, str]]:
    """(path, expression) of every selector that is a non-empty string, however wrong the rest is."""
    spec = data.get("spec") if isinstance(data, dict) else None
    engines = spec.get("engines") if isinstance(spec, dict) else None
    longest = _max_characters()
    for e, engine in _items(engines):
        for m, member in _items(engine.get("members")):
            for r, request in _items(member.get("deviceRequests")):
                for s, selector in _items(request.get("selectors")):
                    expression = selector.get("cel")
                    if isinstance(expression, str) and 0 < len(expression) <= longest:
                        path = ("spec", "engines", e, "members", m, "deviceRequests", r, "selectors", s, "cel")
                        yield path, expression


def _items(value: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    if isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict):
                yield i, item


def check_selectors(document: Document, errors: list[Finding]) -> None:
    found = list(selector_expressions(document.data))
    if not found:
        return  # no CEL library loaded, no cache read
    from ..dra_cel.verdicts import judged

    for path, expression in found:
        for offset, message in judged(expression):
            errors.append(document.error_inside(path, offset, message))
