"""Stage 5, output: parse every rendered object back, check it against its plan, order it, serialise.

Nothing is printed until all of it has been rendered and checked: a partial render that Argo
CD applies with pruning deletes live serving workloads, so output is all or nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .errors import InternalError
from .kinds import ORDER
from .plan import PlannedObject
from .yamlio import fast
from .yamlio.libyaml import YAMLError, load_all, write_document

_RANK = {kind: i for i, kind in enumerate(ORDER)}


def parse_checked(planned: PlannedObject, text: str) -> dict[str, Any]:
    """The rendered text as an object, or an internal failure that names the template."""
    try:
        documents = load_all(text)
    except YAMLError as exc:
        raise InternalError(
            f"in template {planned.template}: it rendered invalid YAML for {planned.kind} {planned.name}: {str(exc).splitlines()[0]}"
        ) from None
    if len(documents) != 1 or not isinstance(documents[0], dict):
        raise InternalError(f"in template {planned.template}: it must render exactly one object, it rendered {len(documents)}")
    obj: dict[str, Any] = documents[0]
    _check_plan(planned, obj)
    return obj


def _check_plan(planned: PlannedObject, obj: dict[str, Any]) -> None:
    meta = obj.get("metadata") or {}
    got = (obj.get("apiVersion"), obj.get("kind"), meta.get("name"), meta.get("namespace"))
    want = (planned.api_version, planned.kind, planned.name, planned.namespace)
    if got != want:
        raise InternalError(f"in template {planned.template}: it rendered {got}, the plan says {want}")


def parse_checked_and_serialised(planned: PlannedObject, text: str) -> tuple[dict[str, Any], str]:
    """parse_checked(planned, text), and the object's part of the output (serialise([object])).

    The templates' own YAML is read and written by yamlio.fast, as libyaml would; whatever it
    does not take (a float, a comment, a `|+` block) is read and written by PyYAML itself.
    """
    obj = fast.read(text)
    if obj is not None:
        written = fast.write(obj)
        if written is not None:
            _check_plan(planned, obj)
            return obj, written
    obj = parse_checked(planned, text)
    return obj, write_document(obj)


def sort_key(obj: dict[str, Any]) -> tuple[int, str, str, str]:
    meta = obj.get("metadata") or {}
    kind = str(obj.get("kind", ""))
    return (_RANK.get(kind, len(ORDER)), kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def serialise(objects: Iterable[dict[str, Any]]) -> str:
    """One YAML stream, `---` before every object, keys in the order the templates give them."""
    return "".join(write_document(obj) for obj in objects)
