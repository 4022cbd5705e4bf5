"""Errors are part of the interface: `FILE:LINE:COL: PATH: message`, all of a run at once."""

from __future__ import annotations

# No dataclasses or typing here: a render-cache hit imports this module and little else
# (dataclasses alone, through inspect, costs more than the whole of such a run).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, Optional

PathPart = str | int
FieldPath = tuple[PathPart, ...]

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2
EXIT_DIFFERS = 3  # diff only: the rendered output differs
EXIT_INTERNAL = 4  # a bug of this tool, not of the input
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT (128 + 2)


def format_path(path: FieldPath) -> str:
    """Kubernetes field-path form: `spec.engines[0].name`, map keys in brackets.

    A key that is not a plain identifier (`app.kubernetes.io/name`) only occurs
    under a map, which the schema knows; callers mark such keys by passing them
    through `MapKey`, so the path reads `metadata.labels[app.kubernetes.io/name]`.
    A key that holds a space, a control character, a bracket, a quote or a backslash, or
    is empty, is quoted with those escaped (`metadata.labels["team\\x20a"]`): a path has no
    space, so an error line always splits as `FILE:LINE:COL: PATH: MESSAGE`.
    The empty path, a fault of the whole document, is `.`.
    """
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, MapKey) or _path_key(part) != part:  # an unknown field may be named anything
            out += f"[{_path_key(part)}]"
        else:
            out += f".{part}" if out else part
    return out or "."


def _path_key(key: str) -> str:
    if key and not any(ch.isspace() or not ch.isprintable() or ch in '[]"\\' for ch in key):
        return key
    return '"' + "".join(_escaped(ch) if ch.isspace() or not ch.isprintable() or ch in '"\\' else ch for ch in key) + '"'


def _escaped(ch: str) -> str:
    """One character as a backslash escape: \\n, \\t, \\x20, \\u2028, \\", \\\\."""
    if ch in '"\\':
        return "\\" + ch
    if ch == " ":
        return "\\x20"
    return ch.encode("unicode_escape").decode("ascii")


# --- one line on stderr -------------------------------------------------------------------------
# Every front end prints what went wrong through these: a finding as `FILE:LINE:COL: PATH: MESSAGE`
# (or `PLACE: PATH: MESSAGE` where no line is known), anything else as `modelplane-render: MESSAGE`.
# Each is one line whatever it quotes: control characters (line breaks, tabs, a terminal's ESC)
# are shown escaped, and input quoted in it is cut to its ends.

# An error line stays readable however long the key or value it quotes: ends kept, middle cut.
MAX_QUOTED = 400
# The tool's own words are never cut; this bounds only a message that quotes input in full by mistake.
MAX_MESSAGE = 4000
PROG = "modelplane-render"


def bounded(text: str, limit: int = MAX_QUOTED, *, gap: str = " ") -> str:
    """Input text to quote in a message: a huge key or value shown by its ends (`gap` between the words of the cut's note)."""
    if len(text) <= limit:
        return text
    note = gap.join((str(len(text) - limit), "characters", "left", "out"))
    return f"{text[: limit // 2]}...({note})...{text[-limit // 2 :]}"


def quoted(text: str) -> str:
    """Input text in double quotes for a message (backslash and quote escaped), bounded."""
    return '"' + bounded(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def printable(text: str) -> str:
    """Text with every character that would break the line or hide text on a terminal escaped."""
    import re  # only an error is printed: a cache hit needs no regular expression

    return re.sub(_UNPRINTABLE, lambda m: _escaped(m.group()), text)


# Line breaks of every kind, tabs, C0 and C1 controls, lone surrogates.
_UNPRINTABLE = "[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]"


def file_shown(file: str) -> str:
    """A file name for the start of an error line: `: ` inside it is written `:\\x20`, so the
    first `: ` of a line always ends FILE:LINE:COL (editors' file:line links work for every
    other name, which is shown as it is)."""
    return printable(bounded(file)).replace(": ", ":\\x20")


def error_line(finding: Finding) -> str:
    """A finding as its one line on stderr."""
    path = None if finding.path is None else printable(bounded(finding.path, gap="-"))  # a path has no space
    message = printable(bounded(finding.message, MAX_MESSAGE))
    return str(finding.replace(file=file_shown(finding.file), path=path, message=message))


def tool_line(message: str) -> str:
    """A fault that is not at a place of the input (a usage error, a failed render), as its one line."""
    return f"{PROG}: {printable(bounded(message, MAX_MESSAGE))}"


class MapKey(str):
    """A key of a free-form map (labels, annotations, resources): printed in brackets."""

    __slots__ = ()


class Finding:
    """One thing a run found in its input: where, which field, what, and how serious.

    The command line, Argo CD and the KRM function all report these: a line on stderr
    (`file:line:col: path: message`) and, for KRM, a `results` entry written from the same
    record. `line` and `column` are 0 where the place in a file is not known; `file` is then
    what stands for the place (`ModelReplica ns/name (base/qwen.yaml)`, or `modelplane-render`
    for a fault with no place, which has no `path` either). KRM adds the object (`resource`,
    `index`) and the file it came from (`origin`). A frozen record ordered by file, line,
    column, path and message (as a frozen, ordered dataclass would be, written out to keep
    dataclasses out of this module).
    """

    __slots__ = ("file", "line", "column", "path", "message", "severity", "resource", "origin", "index")
    __match_args__ = ("file", "line", "column", "path", "message")

    file: str
    line: int
    column: int
    path: Optional[str]
    message: str
    severity: str  # ERROR or WARNING
    resource: Optional[tuple[tuple[str, str], ...]]  # apiVersion, kind, name, namespace of the object
    origin: Optional[str]  # the file the object came from, as a KRM result names it
    index: Optional[int]  # the object's document in that file

    def __init__(
        self,
        file: str,
        line: int,
        column: int,
        path: Optional[str],
        message: str,
        *,
        severity: str = "error",
        resource: Optional[tuple[tuple[str, str], ...]] = None,
        origin: Optional[str] = None,
        index: Optional[int] = None,
    ) -> None:
        values = (file, line, column, path, message, severity, resource, origin, index)
        for name, value in zip(self.__slots__, values, strict=True):
            object.__setattr__(self, name, value)

    def _all(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def _order(self) -> tuple[Any, ...]:
        return (self.file, self.line, self.column, self.path or "", self.message, repr(self._all()))

    def replace(self, **changes: Any) -> Finding:
        """A copy with some fields changed (dataclasses.replace)."""
        values = dict(zip(self.__slots__, self._all(), strict=True)) | changes
        positional = [values.pop(name) for name in self.__match_args__]
        return Finding(*positional, **values)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: a Finding is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: a Finding is frozen")

    def __eq__(self, other: object) -> bool:
        return self._all() == other._all() if type(other) is Finding else NotImplemented

    def __lt__(self, other: Finding) -> bool:
        return self._order() < other._order() if type(other) is Finding else NotImplemented

    def __le__(self, other: Finding) -> bool:
        return self._order() <= other._order() if type(other) is Finding else NotImplemented

    def __gt__(self, other: Finding) -> bool:
        return self._order() > other._order() if type(other) is Finding else NotImplemented

    def __ge__(self, other: Finding) -> bool:
        return self._order() >= other._order() if type(other) is Finding else NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    def __reduce__(self) -> Any:
        return (_rebuild, (self._all(),))  # pickle and copy: built again, never assigned to

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(self.__slots__, self._all(), strict=True))
        return f"Finding({shown})"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}" if self.line else self.file
        field = "" if self.path is None else f"{self.path}: "
        return f"{where}: {field}{self.message}"


def _rebuild(values: tuple[Any, ...]) -> Finding:
    file, line, column, path, message, severity, resource, origin, index = values
    return Finding(file, line, column, path, message, severity=severity, resource=resource, origin=origin, index=index)


ERROR = "error"
WARNING = "warning"


class InputError(Exception):
    """The input is invalid: every fault found, sorted by file, line and column."""

    def __init__(self, errors: Iterable[Finding]):
        self.errors = sorted(set(errors))
        super().__init__("\n".join(str(e) for e in self.errors))


class UsageError(Exception):
    """The command line (or the environment standing in for it) is wrong: exit 2."""


class InternalError(Exception):
    """A bug of this tool, not of the input: a template that fails, a check of our own output that fails. Exit 4.

    The message is one line, printed after `modelplane-render: internal error `, then the version
    and how to report it.
    """


class RenderFailure(Exception):
    """Anything else that stops a render (an internal check failed, output can't be written): exit 1.

    The message is one line, printed as `modelplane-render: message`.
    """


# --- how a message names a value, and the field or value a misspelt one was meant to be ---------------

_TYPE_NAMES = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "a mapping",
    type(None): "null",
}


def describe(value: Any) -> str:
    name = _TYPE_NAMES.get(type(value), type(value).__name__)
    if isinstance(value, (str, bool)) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        shown = repr(value) if not isinstance(value, str) else quoted(value)
        if isinstance(value, bool):
            shown = "true" if value else "false"
        if isinstance(value, str) and len(shown) > 40:
            return name
        return f"{name} ({shown})"
    return name


def unknown_field(key: str, known: Any) -> str:
    import difflib  # only for an error: a valid run doesn't pay for its import

    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.75)
    hint = f' (did you mean "{close[0]}"?)' if close else ""
    return f"unknown field {quoted(key)}{hint}"


def did_you_mean(value: Any, choices: list[str]) -> str:
    """The enum value a misspelt one was meant to be: the same letters in another case, else the closest."""
    if not isinstance(value, str):
        return ""
    import difflib  # only for an error

    same = [c for c in choices if c.casefold() == value.casefold()]
    close = same or difflib.get_close_matches(value.casefold(), [c.casefold() for c in choices], n=1, cutoff=0.6)
    if not close:
        return ""
    meant = same[0] if same else next(c for c in choices if c.casefold() == close[0])
    return f' (did you mean "{meant}"?)'
