"""The results a run returns (kyaml's result.go): each finding as a `framework.Result`, in order, and where an item came from.

Items reach a function without line numbers: an item's place is its path annotation (kpt,
`kustomize fn`), read again for line and column, or kustomize's origin annotation, or only the
object itself; a result names the object and, where known, its file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Optional

from ...errors import FieldPath, Finding, InputError, format_path
from ...facts.flags import small_decimal
from ...walk import read_file
from ...yamlio.document import Document
from ...yamlio.libyaml import load_all
from ...yamlio.loader import decode, load_documents

PROG = "modelplane-render"
# Where an orchestrator says an item was read from: kyaml's current keys first, then the legacy ones.
PATH_ANNOTATIONS = ("internal.config.kubernetes.io/path", "config.kubernetes.io/path")
INDEX_ANNOTATIONS = ("internal.config.kubernetes.io/index", "config.kubernetes.io/index")
# kustomize's `buildMetadata: [originAnnotations]`: a YAML string with `path:` (and `repo:`/`ref:`
# for a remote base, or `configuredIn:` for an object a generator made).
ORIGIN_ANNOTATION = "config.kubernetes.io/origin"


def result(finding: Finding) -> dict[str, Any]:
    """A kyaml `framework.Result` of a finding: message, severity, resourceRef, field, file."""
    written: dict[str, Any] = {"message": finding.message, "severity": finding.severity}
    if finding.resource:
        written["resourceRef"] = dict(finding.resource)
    if finding.path is not None and finding.path != ".":
        written["field"] = {"path": finding.path}
    if finding.origin is not None:
        written["file"] = {"path": finding.origin} if finding.index is None else {"path": finding.origin, "index": finding.index}
    return written


def in_result_order(findings: Iterable[Finding]) -> list[Finding]:
    """Each finding once: those at a line of a file (stdin's too) by file, line and column, then those
    placed by their object, then those with no place."""

    def order(finding: Finding) -> tuple[Any, ...]:
        rank = 0 if finding.line else 1 if finding.path is not None else 2
        return (rank, finding.file, finding.line, finding.column, str(finding))

    unique = {order(f): f for f in findings}
    return [unique[key] for key in sorted(unique)]


def general(message: str) -> Finding:
    return Finding(PROG, 0, 0, None, message)


def ref_tuple(ref: Optional[dict[str, str]]) -> Optional[tuple[tuple[str, str], ...]]:
    return tuple(ref.items()) if ref else None


@dataclass
class Place:
    """An item's identity and, as far as it can be known here, its file and document."""

    ref: dict[str, str]
    file: Optional[str] = None
    index: Optional[int] = None
    # The object's own document in `file`, when that file can be read from here: gives line:col.
    document: Optional[Document] = None

    @property
    def label(self) -> str:
        kind = self.ref.get("kind", "object")
        name = self.ref.get("name", "?")
        shown = f"{self.ref['namespace']}/{name}" if self.ref.get("namespace") else name
        return f"{kind} {shown}" + (f" ({self.file})" if self.file else "")

    def problem(self, path: FieldPath, message: str, *, at_key: bool = False) -> Finding:
        if self.document is not None:
            return in_its_file(self.document.error(path, message, at_key=at_key), self.ref, self.document.index)
        return Finding(self.label, 0, 0, format_path(path), message, resource=ref_tuple(self.ref), origin=self.file, index=self.index)


def in_its_file(finding: Finding, ref: Optional[dict[str, str]], index: Optional[int]) -> Finding:
    """A finding at a line of a file, with the object it is about."""
    return finding.replace(resource=ref_tuple(ref), origin=finding.file, index=index)


def resource_ref(data: Any) -> dict[str, str]:
    """apiVersion, kind, name and namespace of an object, those that are strings."""
    if not isinstance(data, dict):
        return {}
    meta = data.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    found = {"apiVersion": data.get("apiVersion"), "kind": data.get("kind"), "name": meta.get("name"), "namespace": meta.get("namespace")}
    return {key: value for key, value in found.items() if isinstance(value, str) and value}


def _annotations(data: Any) -> dict[str, Any]:
    meta = data.get("metadata") if isinstance(data, dict) else None
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    return annotations if isinstance(annotations, dict) else {}


def locate(data: Any, files: Optional[dict[str, Optional[list[Document]]]] = None) -> Place:
    """Where an item came from: its path annotation (kpt, `kustomize fn`), else kustomize's origin.

    Items reach a kustomize function without `config.kubernetes.io/path`: then only the object
    and, with `buildMetadata: [originAnnotations]`, the file it was read from are known (no line
    or column: kustomize re-serialises every object). An item that does carry a path (and
    index) is looked up in that file, relative to the working directory, for line and column
    (`files` keeps each file's documents for the run, read once).
    """
    place = Place(resource_ref(data))
    annotations = _annotations(data)
    path = next((v for k in PATH_ANNOTATIONS if isinstance(v := annotations.get(k), str) and v), None)
    if path:
        place.file = path
        indexes = (small_decimal(v) for k in INDEX_ANNOTATIONS if isinstance(v := annotations.get(k), str))
        place.index = next((i for i in indexes if i is not None), None)
        if files is None:
            files = {}
        if path not in files:
            files[path] = _documents_of(path)
        place.document = _own_document(files[path] or [], place.index, place.ref)
        if place.document is not None:
            place.index = place.document.index
        return place
    place.file = _origin_file(annotations.get(ORIGIN_ANNOTATION))
    return place


def _origin_file(origin: Any) -> Optional[str]:
    if not isinstance(origin, str):
        return None
    try:
        documents = load_all(origin)
    except Exception:  # any YAML fault: the annotation is kustomize's, and only says where an item came from
        return None
    data = documents[0] if len(documents) == 1 else None
    if not isinstance(data, dict):
        return None
    path = data.get("path") or data.get("configuredIn")
    if not isinstance(path, str) or not path:
        return None
    repo, ref = data.get("repo"), data.get("ref")
    if isinstance(repo, str) and repo:
        # kustomize's own spelling of a file in a remote base.
        return f"{repo}//{path}" + (f"?ref={ref}" if isinstance(ref, str) and ref else "")
    return path


def _documents_of(path: str) -> Optional[list[Document]]:
    """The documents of a regular file, or None when it can't be read or isn't valid YAML."""
    if not os.path.isfile(path):
        return None
    try:
        return load_documents(path, decode(path, read_file(path, path)))
    except (InputError, OSError):
        return None


def _own_document(documents: list[Document], index: Optional[int], ref: dict[str, str]) -> Optional[Document]:
    """The document that holds this object (same apiVersion, kind and name), the one at `index` first."""
    same = [d for d in documents if all(resource_ref(d.data).get(k) == ref.get(k) for k in ("apiVersion", "kind", "name"))]
    return next((d for d in same if d.index == index), same[0] if same else None)
