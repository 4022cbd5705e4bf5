"""Errors are part of the interface: `FILE:LINE:COL: PATH: message`, all of a run at once."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Union

PathPart = Union[str, int]
FieldPath = tuple[PathPart, ...]

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2
EXIT_DIFFERS = 3


def format_path(path: FieldPath) -> str:
    """Kubernetes field-path form: `spec.engines[0].name`, map keys in brackets.

    A key that is not a plain identifier (`app.kubernetes.io/name`) only occurs
    under a map, which the schema knows; callers mark such keys by passing them
    through `MapKey`, so the path reads `metadata.labels[app.kubernetes.io/name]`.
    The empty path, a fault of the whole document, is `.`.
    """
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, MapKey):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out or "."


class MapKey(str):
    """A key of a free-form map (labels, annotations, resources): printed in brackets."""

    __slots__ = ()


@dataclass(frozen=True, order=True)
class SourceError:
    """One fault in the input, at a place in a source file."""

    file: str
    line: int
    column: int
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.path}: {self.message}"


class InputError(Exception):
    """The input is invalid: every fault found, sorted by file, line and column."""

    def __init__(self, errors: Iterable[SourceError]):
        self.errors = sorted(set(errors))
        super().__init__("\n".join(str(e) for e in self.errors))


class UsageError(Exception):
    """The command line (or the environment standing in for it) is wrong: exit 2."""


class RenderFailure(Exception):
    """Anything else that stops a render (an internal check failed, output can't be written): exit 1.

    The message is one line, printed as `modelplane-render: message`.
    """
