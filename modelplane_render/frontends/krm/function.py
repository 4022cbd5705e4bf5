"""The function: replicas among the items (and the config's sources) rendered by the one pipeline, other items passed through."""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any, Optional

from ...errors import EXIT_INVALID, EXIT_OK, Finding, InputError, RenderFailure, error_line
from ...pipeline import classify, render_documents
from ...sources import iter_documents
from ...yamlio.document import Document, Positions
from ...yamlio.roundtrip import to_node
from .config import FunctionConfig, read_function_config
from .resource_list import Request, parse_input, write_output
from .results import ORIGIN_ANNOTATION, Place, general, in_its_file, in_result_order, locate, ref_tuple, resource_ref

# Annotations kustomize, kpt and kyaml put on items to track them through a pipeline. They say
# where the replica sits in the stream, not what it means: copied onto its objects (a replica's
# annotations reach every object it becomes) they would give several new objects the replica's
# id, and kustomize would take them for the replica. So they are dropped before rendering.
_ORCHESTRATION_PREFIXES = (
    "internal.config.kubernetes.io/",
    "config.k8s.io/",
    "kustomize.config.k8s.io/",
    "alpha.config.kubernetes.io/",
    "kyaml.kustomize.dev/",
)
_ORCHESTRATION_KEYS = frozenset({"config.kubernetes.io/path", "config.kubernetes.io/index", ORIGIN_ANNOTATION})


def is_orchestration_annotation(key: str) -> bool:
    return key in _ORCHESTRATION_KEYS or key.startswith(_ORCHESTRATION_PREFIXES)


@dataclass
class Outcome:
    """The text for stdout, the findings for stderr, and the exit code."""

    text: str
    problems: list[Finding]
    code: int

    @property
    def stderr_lines(self) -> list[str]:
        """What the krm command prints on stderr: each finding's one line, as every front end prints it."""
        return [error_line(p) for p in self.problems]

    @property
    def stderr(self) -> str:
        return "".join(f"{line}\n" for line in self.stderr_lines)


def strip_orchestration(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of a replica without the annotations that track the item itself (see above)."""
    clean = copy.deepcopy(data)
    meta = clean.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if isinstance(meta, dict) and isinstance(annotations, dict):
        kept = {k: v for k, v in annotations.items() if not is_orchestration_annotation(k)}
        if kept:
            meta["annotations"] = kept
        else:
            del meta["annotations"]
    return clean


def render(request: Request, config: FunctionConfig) -> list[Any]:
    """The output items: the input's, with each replica's objects in place of the replicas."""
    labelled: dict[str, Place] = {}  # Document.file of an item with no readable file -> its place
    in_files: dict[str, list[Document]] = {}  # real file -> its documents, to name the object of an error
    documents: list[Document | Finding] = []
    replicas: list[int] = []
    kept: set[int] = set()
    files: dict[str, Optional[list[Document]]] = {}
    for i, data in enumerate(request.data):
        place = locate(data, files)
        if place.document is not None:
            document = replace(place.document, data=data)
            in_files.setdefault(document.file, []).append(document)
        else:
            document = Document(place.label, i, data, Positions())
            labelled[document.file] = place
        role, _ = classify(document)
        if role == "replica":
            replicas.append(i)
            document = replace(document, data=strip_orchestration(data))
        elif role == "passthrough":
            kept.add(id(data))
        documents.append(document)
    for item in iter_documents(list(config.sources)):
        if isinstance(item, Document):
            in_files.setdefault(item.file, []).append(item)
        documents.append(item)
    try:
        rendered = render_documents(documents, config.options)
    except InputError as exc:
        raise InputError(_place_error(e, labelled, in_files) for e in exc.errors) from None
    except RenderFailure as exc:
        raise InputError([general(str(exc))]) from None
    new = [obj for obj in rendered.objects if id(obj) not in kept]
    if not new and not replicas:
        return request.items
    nodes = [to_node(obj) for obj in new]
    # The new objects take the place of the first replica (or come last, from sources only).
    at = replicas[0] if replicas else len(request.items)
    gone = set(replicas)
    return request.items[:at] + nodes + [node for i, node in enumerate(request.items[at:], start=at) if i not in gone]


def _place_error(error: Finding, labelled: dict[str, Place], in_files: dict[str, list[Document]]) -> Finding:
    place = labelled.get(error.file)
    if place is not None:  # an item with no file of its own: the error is at its object, not at a line
        return error.replace(line=0, column=0, resource=ref_tuple(place.ref), origin=place.file, index=place.index)
    # The document of the file that holds the error: the last one starting at or before its line.
    owner = None
    for document in in_files.get(error.file, []):
        if document.positions.of_value(())[0] <= error.line:
            owner = document
    return in_its_file(error, resource_ref(owner.data) if owner else None, owner.index if owner else None)


def run_function(raw: bytes) -> Outcome:
    """Run the function on the bytes of a ResourceList; paths are relative to the working directory."""
    request: Optional[Request] = None
    try:
        request = parse_input(raw)
        config = read_function_config(request.function_config)
        items = render(request, config)
    except InputError as exc:
        problems = in_result_order(exc.errors)
        return Outcome(write_output(request, None, problems), problems, EXIT_INVALID)
    except RenderFailure as exc:
        problems = [general(str(exc))]
        return Outcome(write_output(request, None, problems), problems, EXIT_INVALID)
    return Outcome(write_output(request, items, []), [], EXIT_OK)
