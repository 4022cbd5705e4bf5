"""A source document as plain data, with the line and column of every node: where its errors are.

`Document.error` places a finding at a value (or its key); `error_inside` at a character inside
a string, read back through the scalar's style in the file (plain, quoted with its escapes,
literal, folded), so a selector's error points inside the expression.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

from ..errors import FieldPath, Finding, format_path


@dataclass
class Positions:
    """Where each node of a document is: value positions and (for map entries) key positions."""

    values: dict[FieldPath, tuple[int, int]] = field(default_factory=dict)
    keys: dict[FieldPath, tuple[int, int]] = field(default_factory=dict)
    # Plain scalars that Kubernetes' YAML reader types as something other than text (`y`, `1e3`), by path:
    # their text, for an error that says why a value is not a string (yamlio.loader).
    typed_plain: dict[FieldPath, str] = field(default_factory=dict)

    def of_value(self, path: FieldPath) -> tuple[int, int]:
        """The value at path, or the nearest enclosing node that exists."""
        while path not in self.values and path:
            path = path[:-1]
        return self.values.get(path, (1, 1))

    def of_key(self, path: FieldPath) -> tuple[int, int]:
        return self.keys.get(path) or self.of_value(path)


@dataclass
class Document:
    """One YAML document of a source file, as plain data plus where each part of it is."""

    file: str
    index: int
    data: Any
    positions: Positions
    text: str = ""  # the whole file, where it was read from YAML text: for positions inside a scalar

    def error(self, path: FieldPath, message: str, *, at_key: bool = False) -> Finding:
        line, col = self.positions.of_key(path) if at_key else self.positions.of_value(path)
        return Finding(self.file, line, col, format_path(path), message)

    def reads_as(self, path: FieldPath) -> Optional[str]:
        """Why the value at path is not text though it may look like it: `y reads as the boolean true in
        Kubernetes YAML; quote it`, or None for a value that was not a plain scalar typed by that reader."""
        text = self.positions.typed_plain.get(path)
        if text is None:
            return None
        value = _value_at(self.data, path)
        what = (
            f"the boolean {'true' if value else 'false'}" if isinstance(value, bool) else "null" if value is None else f"the number {value}"
        )
        return f"{text} reads as {what} in Kubernetes YAML (kubectl, Argo CD, the API server); quote it"

    def error_inside(self, path: FieldPath, offset: int, message: str) -> Finding:
        """An error at the character `offset` of the string at path, at its line and column in the file."""
        line, col = self.positions.of_value(path)
        if self.text and path in self.positions.values:
            value = _value_at(self.data, path)
            if isinstance(value, str):
                line, col = line_col(self.text, _index_in_scalar(self.text, _index_of(self.text, line, col), value, offset))
        return Finding(self.file, line, col, format_path(path), message)


def _value_at(data: Any, path: FieldPath) -> Any:
    for step in path:
        data = data[step]
    return data


def _index_of(text: str, line: int, column: int) -> int:
    """The index of the character at a 1-based line and column, as line_col counts them."""
    start = 0
    if line > 1:
        for n, match in enumerate(LINE_BREAK.finditer(text), start=2):
            if n == line:
                start = match.end()
                break
    return start + column - 1


# What a scalar's source may have that its value does not: indentation and folded line breaks,
# the quotes, and the second quote of `''`.
_NOT_IN_VALUE = " \t\r\n\"'"
# Double-quoted escapes of one character (YAML 1.1 as libyaml reads them), and the hex ones' lengths.
_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


def _escape(text: str, i: int) -> tuple[int, Optional[str]]:
    """The length of the escape at text[i] (a backslash) and the character it stands for (None: an escaped line break)."""
    code = text[i + 1 : i + 2]
    if code in _HEX_ESCAPES:
        digits = text[i + 2 : i + 2 + _HEX_ESCAPES[code]]
        try:
            return 2 + len(digits), chr(int(digits, 16))
        except ValueError:
            return 2, None
    if code in _ESCAPES:
        return 2, _ESCAPES[code]
    return 1, None  # a line break (or what libyaml refused already): nothing of the value


def _index_in_scalar(text: str, start: int, value: str, offset: int) -> int:
    """Where in text the character `offset` of the scalar value that starts at `start` is.

    The value's characters are found in order in the source (plain, quoted, literal or folded),
    skipping only what a scalar's source has and its value lacks, and reading a double-quoted
    scalar's escapes; where that fails, the scalar's own start.
    """
    i = start
    while i < len(text) and text[i] in "!&":  # a tag or an anchor before the value
        while i < len(text) and not text[i].isspace():
            i += 1
        while i < len(text) and text[i].isspace():
            i += 1
    double_quoted = text.startswith('"', i)
    if text.startswith(("|", ">"), i):
        i = text.find("\n", i) + 1 or len(text)  # the content starts on the line after the header
    elif text.startswith(('"', "'"), i):
        i += 1
    offset = min(offset, len(value.rstrip()))
    found = start
    for ch in value[: offset + 1]:
        while True:
            if i >= len(text):
                return start
            if double_quoted and text[i] == "\\":
                length, stands_for = _escape(text, i)
                if stands_for == ch:
                    found, i = i, i + length
                    break
                if stands_for is not None:
                    return start
                i += length
                continue
            if text[i] == ch:
                found, i = i, i + 1
                break
            if text[i] not in _NOT_IN_VALUE:
                return start
            i += 1
    return found


# Line breaks as libyaml counts them for its marks (YAML 1.1): CR LF, CR, LF, NEL, LS, PS.
LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")


def line_col(text: str, index: int) -> tuple[int, int]:
    """1-based line and column (in characters) of text[index], counted as the YAML parser counts."""
    line, start = 1, 0
    for match in LINE_BREAK.finditer(text, 0, index):
        line, start = line + 1, match.end()
    return line, index - start + 1
