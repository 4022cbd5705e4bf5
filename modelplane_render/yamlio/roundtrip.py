"""YAML written back as it was read (ruamel's round-trip), for the KRM function's items; and our objects as its nodes.

Imported only by the KRM function: a render never loads ruamel (startup.COLD_NEVER).
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import LiteralScalarString, SingleQuotedScalarString

from .scalars import STR, written_tag_of

__all__ = ["CommentedSeq", "round_trip", "to_node"]


def round_trip() -> Any:
    # kustomize's own style: two spaces, sequences not indented under their key; never fold.
    handler = YAML(typ="rt")
    handler.preserve_quotes = True
    handler.indent(mapping=2, sequence=2, offset=0)
    handler.width = 1 << 30
    return handler


def to_node(value: Any) -> Any:
    """A rendered object as ruamel nodes, printed as the command line prints it.

    Multi-line strings become literal blocks (as `output.serialise` writes them), and a string
    that a YAML 1.1 reader (kubectl, PyYAML) would take for something else (`yes`, `0755`,
    `1:20`) is quoted, as PyYAML quotes it: ruamel judges by YAML 1.2 alone. (Building the
    nodes is much faster than having ruamel parse the command line's text.)
    """
    if isinstance(value, dict):
        return CommentedMap((_scalar(k), to_node(v)) for k, v in value.items())
    if isinstance(value, list):
        return CommentedSeq(to_node(v) for v in value)
    return _scalar(value)


def _scalar(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    if "\n" in value:
        return LiteralScalarString(value)
    if written_tag_of(value) != STR:
        return SingleQuotedScalarString(value)
    return value
