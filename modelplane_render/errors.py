"""Errors are part of the interface: `FILE:LINE:COL: PATH: message`, all of a run at once."""

from __future__ import annotations

# No dataclasses or typing here: a render-cache hit imports this module and little else
# (dataclasses alone, through inspect, costs more than the whole of such a run).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

PathPart = str | int
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


class SourceError:
    """One fault in the input, at a place in a source file.

    A frozen record ordered by file, line, column, path and message (as a frozen, ordered
    dataclass would be, written out to keep dataclasses out of this module).
    """

    __slots__ = ("file", "line", "column", "path", "message")
    __match_args__ = ("file", "line", "column", "path", "message")

    file: str
    line: int
    column: int
    path: str
    message: str

    def __init__(self, file: str, line: int, column: int, path: str, message: str) -> None:
        for name, value in zip(self.__slots__, (file, line, column, path, message), strict=True):
            object.__setattr__(self, name, value)

    def _fields(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line, self.column, self.path, self.message)

    def replace(self, **changes: str | int) -> SourceError:
        """A copy with some fields changed (dataclasses.replace)."""
        values = dict(zip(self.__slots__, self._fields(), strict=True)) | changes
        return SourceError(**values)  # type: ignore[arg-type]

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: a SourceError is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: a SourceError is frozen")

    def __eq__(self, other: object) -> bool:
        return self._fields() == other._fields() if type(other) is SourceError else NotImplemented

    def __lt__(self, other: SourceError) -> bool:
        return self._fields() < other._fields() if type(other) is SourceError else NotImplemented

    def __le__(self, other: SourceError) -> bool:
        return self._fields() <= other._fields() if type(other) is SourceError else NotImplemented

    def __gt__(self, other: SourceError) -> bool:
        return self._fields() > other._fields() if type(other) is SourceError else NotImplemented

    def __ge__(self, other: SourceError) -> bool:
        return self._fields() >= other._fields() if type(other) is SourceError else NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    def __reduce__(self) -> tuple[type[SourceError], tuple[str, int, int, str, str]]:
        return (SourceError, self._fields())  # pickle and copy: built again, never assigned to

    def __repr__(self) -> str:
        return f"SourceError(file={self.file!r}, line={self.line!r}, column={self.column!r}, path={self.path!r}, message={self.message!r})"

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
