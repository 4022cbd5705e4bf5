"""The YAML our templates render, read and written in a few passes of C (re, json, str) instead of one
Python object per libyaml event, which cost half of a large render.

The templates write block mappings and sequences of plain keys, whose values are literals of the
template or `tojson` (one line of JSON, which is YAML flow syntax). `read` takes exactly that and
returns None for anything else (a comment, a tab, a float, a literal block, a key that resolves to
a bool...), which then goes through libyaml: so what `read` returns is what libyaml would read.
`write` prints plain data as libyaml's emitter does, each key and string in the form libyaml gives
it: as it is where the emitter's rules surely write it plain, else asked of libyaml once per
distinct text (all of an object's new ones in one document). It returns None for what it can't be
sure of (a very long string, a `|+` block, a float), which goes through libyaml too.
tests/test_yamlio.py holds both to libyaml, byte for byte.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any, Optional

import yaml

from .libyaml import output_dumper
from .scalars import BOOL, INT, NULL, PLAIN, STR, scalar_out, string_out, tag_of, written_tag_of

# A line of the block structure: indentation, an optional `- `, then `key:`, `key: value` or a value.
_LINE = re.compile(r"( *)(- )?(?:([A-Za-z_][A-Za-z0-9_.-]*):(?: (.+))?|(.+))\Z")
# A template's plain literal (`LeaderCreated`, `apps/v1`, `0s`, `/`): no indicator, no `:` or space.
_PLAIN_LITERAL = re.compile(r"[A-Za-z0-9/][A-Za-z0-9._/-]*\Z")
# What libyaml reads differently from JSON, or not at all: a character YAML does not allow raw
# (libyaml would refuse it), a line break other than \n, a tab, a BOM; and escaped surrogates,
# which json pairs into one character and YAML keeps as two. Compiled when first needed (its
# character class takes milliseconds): printable ASCII without `\\u` is told without it.
_NOT_TAKEN = "[^\n\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]|\\\\u[dD][89a-fA-F]"
# libyaml reads a flow key only within 1024 characters of where it starts.
_FLOW_KEY_MAX = 160  # characters before JSON escapes (at most 6 each) and quotes: under 1024


class _NotTaken(Exception):
    pass


def _no_float(text: str) -> Any:
    raise _NotTaken  # YAML 1.1 reads `1e3` as a string and `1.0` as a float: libyaml decides


_DECODE = json.JSONDecoder(parse_float=_no_float, parse_constant=_no_float).raw_decode


def _long_keys(value: Any) -> bool:
    if type(value) is dict:
        return any(len(k) > _FLOW_KEY_MAX or _long_keys(v) for k, v in value.items())
    if type(value) is list:
        return any(_long_keys(v) for v in value)
    return False


def _value(text: str) -> Any:
    """A value written on a key's or an item's line: JSON, or a plain literal as YAML resolves it."""
    first = text[0]
    if first == '"' or first == "[" or first == "{" or first == "-":
        try:
            value, end = _DECODE(text)
        except ValueError:
            raise _NotTaken from None
        if end != len(text) and text[end:].strip(" "):
            raise _NotTaken
        if len(text) > _FLOW_KEY_MAX and first != '"' and _long_keys(value):
            raise _NotTaken
        return value
    if _PLAIN_LITERAL.match(text):
        tag = tag_of(text, PLAIN)
        if tag == STR:
            return text
        if tag == INT or tag == BOOL or tag == NULL:
            return scalar_out(tag, text)[0]
    raise _NotTaken  # a float or timestamp, or not the templates' YAML: libyaml decides


# A line as (its indentation, whether it starts with an item's `- `, key or None, value text or None).
_Line = tuple[int, bool, Optional[str], Optional[str]]
_BLANK: _Line = (-1, False, None, None)
# The lines the templates write as they are (a key and a literal), which repeat in every object.
_KNOWN_LINES: dict[str, _Line] = {}
_KNOWN_LINES_MAX = 4096


# The start of a `key: value` line (indentation, `- `, the key) as its column, dash and key.
_HEADS: dict[str, tuple[int, bool, str]] = {}


def _line(line: str) -> _Line:
    head, colon, value = line.partition(": ")
    if colon and value:
        known = _HEADS.get(head)
        if known is not None:
            return (*known, value)
    match = _LINE.match(line)
    if match is None:
        if line.strip(" "):
            raise _NotTaken
        return _BLANK
    indent, dash, key, after_key, value = match.groups()
    if key is not None:
        if tag_of(key, PLAIN) != STR:
            raise _NotTaken  # `on:`, `true:`, `1:` are not string keys in YAML 1.1
        value = after_key
    parsed = (len(indent), dash is not None, key, value)
    if key is not None and value is not None and len(_HEADS) < _KNOWN_LINES_MAX:
        _HEADS[line[: len(line) - len(value) - 2]] = parsed[:3]
    if (value is None or value[0] not in '"[{-') and len(_KNOWN_LINES) < _KNOWN_LINES_MAX:
        _KNOWN_LINES[line] = parsed
    return parsed


def _read(text: str) -> dict[str, Any]:
    """The block structure, line by line, with a stack of the open collections."""
    root: dict[str, Any] = {}
    stack: list[tuple[int, Any, bool]] = [(0, root, False)]  # per open collection: its column, itself, whether a sequence
    pending: Optional[tuple[dict[str, Any], str, int]] = None  # a `key:` whose value is on the lines below, and its column
    known, line_of, value_of = _KNOWN_LINES.get, _line, _value
    lines = 0
    for line in text.split("\n"):
        column, dash, key, value = known(line) or line_of(line)
        if column < 0:
            continue  # a blank line
        lines += 1
        if pending is not None:
            owner, owner_key, owner_column = pending
            pending = None
            child: Any
            if dash and column >= owner_column:  # a mapping's sequence may stay at its key's column
                child = owner[owner_key] = []
            elif not dash and key is not None and column > owner_column:
                child = owner[owner_key] = {}
            else:
                raise _NotTaken  # an empty value (null in YAML), or an indentation the templates never write
            stack.append((column, child, dash))
        else:
            while stack[-1][0] > column:
                stack.pop()
            top_column, _, is_sequence = stack[-1]
            if not dash and is_sequence and top_column == column:
                stack.pop()  # a key after a mapping's sequence at the key's column ends the sequence
                top_column, _, is_sequence = stack[-1]
            if top_column != column or is_sequence != dash:
                raise _NotTaken
        container = stack[-1][1]
        if dash:
            if key is None:
                if value is None:
                    raise _NotTaken
                container.append(value_of(value))
                continue
            item: dict[str, Any] = {}
            container.append(item)
            column += 2
            stack.append((column, item, False))
            container = item
        elif key is None:
            raise _NotTaken  # a value alone on a line of a mapping
        if key in container:
            raise _NotTaken  # a duplicate key: libyaml's reading keeps one, quietly
        if value is None:
            container[key] = None  # its place in the order; the value follows
            pending = (container, key, column)
        else:
            container[key] = value_of(value)
    if pending is not None or not lines:
        raise _NotTaken
    return root


def read(text: str) -> Optional[dict[str, Any]]:
    """The one mapping text holds, as libyaml and SafeConstructor read it; None if it isn't only what the templates write."""
    # The common case, all printable ASCII and no \\u escape, is told by str's own loops, before the regex.
    if not (text.isascii() and text.replace("\n", " ").isprintable() and "\\u" not in text) and re.search(_NOT_TAKEN, text):
        return None
    try:
        return _read(text)
    except (_NotTaken, RecursionError):
        return None


# How libyaml writes each key and each string (as SafeRepresenter styles it), asked once: a line, or
# for a multi-line string a literal block's header and its lines (without their indentation).
_KEY_FORM: dict[str, str] = {}
_STRING_FORM: dict[str, Any] = {}
_SIMPLE_KEY_MAX = 128  # a longer key is written `? key` by libyaml
_STRING_MAX = 1000  # a one-line string far from the width (4096) at which libyaml folds it
_DEPTH_MAX = 200  # columns of indentation, for the same reason
_OTHER_BREAKS = ("\r", "\x85", "\u2028", "\u2029")
# A literal block's header, as `- |`, `- |-` or `- |2-` in the document that asks for it. Keep
# (`|+`) is left to libyaml: it can make libyaml end the document with `...`.
_LITERAL_HEADER = re.compile(r"- (\|[1-9]?-?)\Z")


def _unseen(value: Any, keys: set[str], strings: set[str]) -> None:
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                raise _NotTaken
            if key not in _KEY_FORM:
                keys.add(key)
            _unseen(item, keys, strings)
    elif kind is list:
        for item in value:
            _unseen(item, keys, strings)
    elif kind is str:
        if value not in _STRING_FORM:
            strings.add(value)
    elif not (kind is int or kind is bool or value is None):
        raise _NotTaken  # a float, a date: SafeRepresenter's own rules


# Texts libyaml surely writes plain, if they resolve to strings: printable ASCII, not starting with
# an indicator its emitter looks for (`#,[]{}&*!|>'"%@` or a backquote; `-`, `?` or `:` before a
# space; `---`, `...`), without `: `, ` #`, a trailing space or colon; in a key (a simple key,
# where the flow rules apply) also without `,?[]{}` or `:` at all.
_PLAIN_STRING = re.compile(r"(?!---|\.\.\.)(?:[A-Za-z0-9_/$().+;<=\\^~]|-(?=[^ ]))(?:[!-9;-~]|:(?=[^ ])| (?=[^ #]))*\Z")
_PLAIN_KEY = re.compile(r"(?!---|\.\.\.)(?:[A-Za-z0-9_/$().+;<=\\^~]|-(?=[^ ]))(?:[!-+\--9;->@-Z\\^-z|~]| (?=[^ #]))*\Z")


def _is_plain_key(key: str) -> bool:
    return len(key) <= _SIMPLE_KEY_MAX and _PLAIN_KEY.match(key) is not None and written_tag_of(key) == STR


def _is_plain_string(text: str) -> bool:
    return len(text) <= _STRING_MAX and _PLAIN_STRING.match(text) is not None and written_tag_of(text) == STR


def _learn_forms(keys: set[str], strings: set[str]) -> None:
    """The written form of each key and string: as it is where plainly written, else libyaml's, all asked at once."""
    for texts, is_plain, forms in ((keys, _is_plain_key, _KEY_FORM), (strings, _is_plain_string, _STRING_FORM)):
        for text in [t for t in texts if is_plain(t)]:
            forms[text] = text
            texts.discard(text)
    if not keys and not strings:
        return
    for key in keys:
        if len(key) > _SIMPLE_KEY_MAX or "\n" in key or any(b in key for b in _OTHER_BREAKS):
            raise _NotTaken
    for text in strings:
        if ("\n" not in text and len(text) > _STRING_MAX) or any(b in text for b in _OTHER_BREAKS):
            raise _NotTaken
    ordered_keys, ordered_strings = sorted(keys), sorted(strings)
    lines = _written_items(ordered_keys, ordered_strings).split("\n")
    if lines.pop() != "" or len(lines) < len(ordered_keys) + len(ordered_strings):
        raise _NotTaken
    for key, line in zip(ordered_keys, lines[: len(ordered_keys)], strict=True):
        if not (line.startswith("- ") and line.endswith(": null")):
            raise _NotTaken
        _KEY_FORM[key] = line[2:-6]
    items: list[list[str]] = []  # each string's lines: `- ` and its form, then a literal block's lines
    for line in lines[len(ordered_keys) :]:
        if line.startswith("- "):
            items.append([line])
        elif items and (not line or line.startswith("  ")):
            items[-1].append(line)
        else:
            raise _NotTaken
    if len(items) != len(ordered_strings):
        raise _NotTaken
    for text, (first, *block) in zip(ordered_strings, items, strict=True):
        if "\n" not in text:
            if block:
                raise _NotTaken
            _STRING_FORM[text] = first[2:]
            continue
        header = _LITERAL_HEADER.match(first)
        if header is None:
            raise _NotTaken  # not a literal block (a trailing space, a control character): libyaml writes it
        _STRING_FORM[text] = (header.group(1), [line[2:] for line in block])


def _written_items(keys: list[str], strings: list[str]) -> str:
    """A document of one sequence: a `key: null` mapping for each key, then each string."""
    stream = io.StringIO()
    dumper = output_dumper(stream)
    emit = dumper.emit

    def scalar(text: str) -> None:
        style, implicit = string_out(text)
        emit(yaml.ScalarEvent(None, STR, implicit, text, style=style))

    try:
        emit(yaml.StreamStartEvent())
        emit(yaml.DocumentStartEvent(explicit=False))
        emit(yaml.SequenceStartEvent(None, None, True, flow_style=False))
        for key in keys:
            emit(yaml.MappingStartEvent(None, None, True, flow_style=False))
            scalar(key)
            emit(yaml.ScalarEvent(None, NULL, (True, False), "null"))
            emit(yaml.MappingEndEvent())
        for text in strings:
            scalar(text)
        emit(yaml.SequenceEndEvent())
        emit(yaml.DocumentEndEvent(explicit=False))
        emit(yaml.StreamEndEvent())
    finally:
        dumper.dispose()
    return stream.getvalue()


class _Unknown(Exception):
    """A key or string whose written form libyaml must be asked for."""


def _key_form(key: Any) -> str:
    if type(key) is not str:
        raise _NotTaken
    if _is_plain_key(key):
        _KEY_FORM[key] = key
        return key
    raise _Unknown


def _string_form(text: str) -> Any:
    if _is_plain_string(text):
        _STRING_FORM[text] = text
        return text
    raise _Unknown


def _scalar(value: Any, start: str, pad: str, out: list[str]) -> None:
    """The line that start begins, ended by value; a literal block's lines below it, indented under pad."""
    kind = type(value)
    if kind is str:
        form = _STRING_FORM.get(value) or _string_form(value)
        if type(form) is str:
            out.append(f"{start}{form}\n")
            return
        header, block = form
        out.append(f"{start}{header}\n")
        inner = pad + "  "
        out.extend(f"{inner}{line}\n" if line else "\n" for line in block)
    elif kind is bool:
        out.append(f"{start}true\n" if value else f"{start}false\n")
    elif value is None:
        out.append(f"{start}null\n")
    elif kind is int:
        out.append(f"{start}{value}\n")
    else:
        raise _NotTaken  # a float, a date: SafeRepresenter's own rules


def _write_mapping(mapping: dict[str, Any], pad: str, first: str, out: list[str]) -> None:
    if len(pad) > _DEPTH_MAX:
        raise _NotTaken
    start = first
    inner = pad + "  "
    key_forms, string_forms = _KEY_FORM, _STRING_FORM
    for key, value in mapping.items():
        key_text = key_forms.get(key) or _key_form(key)
        kind = type(value)
        if kind is str:
            form = string_forms.get(value)
            if type(form) is str:
                out.append(f"{start}{key_text}: {form}\n")
            else:
                _scalar(value, f"{start}{key_text}: ", pad, out)
        elif kind is dict:
            if value:
                out.append(f"{start}{key_text}:\n")
                _write_mapping(value, inner, inner, out)
            else:
                out.append(f"{start}{key_text}: {{}}\n")
        elif kind is list:
            if value:
                out.append(f"{start}{key_text}:\n")
                _write_sequence(value, pad, pad, out)  # libyaml doesn't indent a mapping's sequence
            else:
                out.append(f"{start}{key_text}: []\n")
        else:
            _scalar(value, f"{start}{key_text}: ", pad, out)
        start = pad


def _write_sequence(items: list[Any], pad: str, first: str, out: list[str]) -> None:
    if len(pad) > _DEPTH_MAX:
        raise _NotTaken
    start = first + "- "
    inner = pad + "  "
    for item in items:
        kind = type(item)
        if kind is dict and item:
            _write_mapping(item, inner, start, out)
        elif kind is list and item:
            _write_sequence(item, inner, start, out)
        elif kind is dict:
            out.append(f"{start}{{}}\n")
        elif kind is list:
            out.append(f"{start}[]\n")
        else:
            _scalar(item, start, pad, out)
        start = pad + "- "


def _written(obj: dict[str, Any]) -> str:
    out = ["---\n"]
    if obj:
        _write_mapping(obj, "", "", out)
    else:
        out.append("{}\n")
    return "".join(out)


def write(obj: dict[str, Any]) -> Optional[str]:
    """`---` and obj in block YAML, as serialise writes it; None if obj holds what libyaml must write itself."""
    try:
        try:
            return _written(obj)
        except _Unknown:
            # The object's new keys and strings that aren't plain: libyaml is asked for all of them at once.
            keys: set[str] = set()
            strings: set[str] = set()
            _unseen(obj, keys, strings)
            _learn_forms(keys, strings)
            return _written(obj)
    except (_NotTaken, _Unknown, RecursionError):
        return None
