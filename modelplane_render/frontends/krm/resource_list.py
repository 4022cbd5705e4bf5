"""The ResourceList (kyaml's framework.go): read from stdin twice, strictly for its data and round-trip for output, and written back.

The input is read as the command line reads a file (YAML 1.1, strict); the items are written back
as ruamel's round-trip nodes, so what passes through keeps its comments, key order and quoting.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any, Optional

from ...errors import Finding, InputError, InternalError
from ...yamlio.loader import decode, load_documents
from ...yamlio.roundtrip import CommentedSeq, round_trip
from .results import in_its_file, result

PROG = "modelplane-render"
STDIN = "<stdin>"
RESOURCE_LIST_API_VERSION = "config.kubernetes.io/v1"
RESOURCE_LIST_KIND = "ResourceList"


@dataclass
class Request:
    """The ResourceList twice: ruamel's round-trip nodes (written back) and our strict reading."""

    root: Any
    items: list[Any]
    data: list[Any]
    function_config: Any


def parse_input(raw: bytes) -> Request:
    """The ResourceList on stdin, read as the command line reads a file (YAML 1.1, strict)."""
    try:
        text = decode(STDIN, raw)
        documents = load_documents(STDIN, text)
    except InputError as exc:
        raise InputError(in_its_file(e, None, None) for e in exc.errors) from None
    if not documents:
        raise InputError([_stdin(1, 1, ".", f"no input: a KRM function reads a {RESOURCE_LIST_API_VERSION} {RESOURCE_LIST_KIND} on stdin")])
    if len(documents) > 1:
        line, col = documents[1].positions.of_value(())
        raise InputError([_stdin(line, col, ".", f"more than one YAML document: the input must be one {RESOURCE_LIST_KIND}")])
    document = documents[0]
    data = document.data
    problems = []
    if not isinstance(data, dict):
        raise InputError([in_its_file(document.error((), f"the input must be a {RESOURCE_LIST_KIND} (a mapping)"), None, None)])
    if (data.get("apiVersion"), data.get("kind")) != (RESOURCE_LIST_API_VERSION, RESOURCE_LIST_KIND):
        got = f"{data.get('apiVersion')} {data.get('kind')}"
        problems.append(document.error(("kind",), f"the input must be a {RESOURCE_LIST_API_VERSION} {RESOURCE_LIST_KIND}, not {got}"))
    items = data.get("items")
    if items is None:
        items = []
    elif not isinstance(items, list):
        problems.append(document.error(("items",), "must be a list of objects"))
    if problems:
        raise InputError(in_its_file(e, None, None) for e in problems)
    try:
        root = round_trip().load(text)
    except Exception as exc:  # ruamel reads what our loader read; this is the last line of defence
        raise InputError([_stdin(1, 1, ".", f"cannot read the input back for output: {str(exc).splitlines()[0]}")]) from None
    nodes = root.get("items") if root.get("items") is not None else []
    if len(nodes) != len(items):
        raise InternalError("the input's items were read differently by the two YAML readers")
    return Request(root, list(nodes), list(items), data.get("functionConfig"))


def _stdin(line: int, col: int, path: str, message: str) -> Finding:
    return Finding(STDIN, line, col, path, message)


def write_output(request: Optional[Request], items: Optional[list[Any]], problems: list[Finding]) -> str:
    """The ResourceList to print: the input's own nodes, the new items, and the results if any."""
    if request is None:
        root: Any = {"apiVersion": RESOURCE_LIST_API_VERSION, "kind": RESOURCE_LIST_KIND}
    else:
        root = request.root
        if items is not None and items is not request.items:
            sequence = root["items"] if root.get("items") is not None else None
            if sequence is None:
                sequence = root["items"] = CommentedSeq()
            _replace_in_place(sequence, items)
    if problems:
        root["results"] = [result(p) for p in problems]
    out = io.StringIO()
    round_trip().dump(root, out)
    return out.getvalue()


def _replace_in_place(sequence: Any, items: list[Any]) -> None:
    """Make `sequence` hold `items`, deleting and inserting so comments stay with their items."""
    keep = {id(node) for node in items}
    for i in reversed(range(len(sequence))):
        if id(sequence[i]) not in keep:
            del sequence[i]
    for i, node in enumerate(items):
        if i >= len(sequence) or sequence[i] is not node:
            sequence.insert(i, node)
