"""Source YAML read as kubectl reads it, with the line and column of every node, within limits.

YAML is read as kubectl reads it (go-yaml v2 under sigs.k8s.io/yaml): YAML 1.1 scalars
(`yes`/`on` are booleans, `0755` is octal), timestamps kept as strings, non-string map
keys turned into their string form. Beyond kubectl, for a renderer that must not guess:
duplicate keys, tags other than the core ones, and merge keys (`<<`) are errors.
"""

from __future__ import annotations

import math
import re
from typing import Any, Optional

import yaml

from ..errors import FieldPath, Finding, InputError, MapKey, format_path
from ..walk import MAX_FILE_BYTES
from . import kubectl_text
from .document import Document, Positions, line_col
from .kubernetes import json_key, plain_scalar
from .libyaml import SAFE_LOADER
from .syntax import syntax_message

# The tag every plain, untagged scalar of a source gets while composing: _scalar types it as Kubernetes'
# YAML reader does (yamlio.kubernetes), not as PyYAML's YAML 1.1 resolver would.
PLAIN_TAG = "tag:modelplane.ai,2026:plain"


def source_loader(base: Any) -> Any:
    """A loader class on `base` (libyaml's, or PyYAML's own) that leaves plain scalars for _scalar to type."""

    class SourceLoader(base):  # type: ignore[misc]
        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            if kind is yaml.ScalarNode and implicit[0]:
                return PLAIN_TAG
            return super().resolve(kind, value, implicit)

    return SourceLoader


_Loader = source_loader(SAFE_LOADER)

# Limits that keep hostile or broken input from taking the process down (stated in docs/validation.md).
# Each is far above what real manifests need (the LeaderWorkerSet CRD, 1.3 MB of YAML, is about
# 11,000 nodes) and low enough that hitting it costs seconds and a few hundred MB, not the machine:
# PyYAML's composer keeps ~600 bytes per node of a document before we see any of it.
MAX_NODES_PER_FILE = 500_000  # keys and values, after expanding aliases
MAX_NODES_PER_RUN = 4_000_000  # the same, all files of one run together (10,000 of the largest fixture: 1.9 million)
# The text of one document once its aliases are expanded (keys and scalars, in characters): the API
# server takes at most 3 MiB in one request (apiserver's MaxRequestBodyBytes), so no more can be applied.
MAX_DOCUMENT_BYTES = 3 * 1024 * 1024
MAX_DEPTH = 100
MAX_DOCUMENTS_PER_FILE = 10_000

_T = "tag:yaml.org,2002:"


class _Fault(Exception):
    def __init__(self, mark: Any, path: FieldPath, message: str):
        self.line = mark.line + 1
        self.column = mark.column + 1
        self.path = path
        self.message = message

    @classmethod
    def at(cls, line: int, column: int, message: str) -> _Fault:
        """A fault of the whole document at a 1-based line and column."""
        fault = cls.__new__(cls)
        fault.line, fault.column, fault.path, fault.message = line, column, (), message
        return fault


# What YAML (and so kubectl's go-yaml) accepts as text: its printable set. libyaml reports the
# others at 1:1; finding them ourselves gives the line and column of the bad character.
_NOT_YAML_TEXT = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def decode(shown: str, raw: bytes) -> str:
    """Bytes to text as kubectl takes them: UTF-8 (an initial BOM dropped), or UTF-16 with a BOM.

    Anything else fails at the line and column of the first bad byte or character.
    """
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        codec = "utf-16-le" if raw.startswith(b"\xff\xfe") else "utf-16-be"
        try:
            text = raw[2:].decode(codec)
        except UnicodeDecodeError as exc:
            start = exc.start - exc.start % 2
            line, col = line_col(raw[2 : 2 + start].decode(codec), start // 2)
            reason = "an odd number of bytes" if exc.reason == "truncated data" else "a lone surrogate"
            raise InputError([Finding(shown, line, col, ".", f"invalid UTF-16 text ({reason})")]) from None
    else:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            before = raw[: exc.start].decode("utf-8")
            line, col = line_col(before, len(before))
            raise InputError(
                [Finding(shown, line, col, ".", f"invalid UTF-8 (byte 0x{raw[exc.start]:02x}): files must be UTF-8 text")]
            ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if text.startswith("\ufeff"):
        # `kubectl create -f` drops two (its file reader one, go-yaml the next); the API server given the text drops one
        # and reads the second as text before the first key ("mapping values are not allowed in this context").
        message = "a second byte-order mark at the start: the API server, given this text, reads it as text before the first key; remove it"
        raise InputError([Finding(shown, 1, 1, ".", message)])
    problem = _not_yaml_text(shown, text, utf16=raw.startswith((b"\xff\xfe", b"\xfe\xff")))
    if problem:
        raise InputError([problem])
    return text


def _not_yaml_text(shown: str, text: str, *, utf16: bool = False) -> Optional[Finding]:
    """The first character YAML does not allow in its text, at its line and column."""
    bad = _NOT_YAML_TEXT.search(text)
    if not bad:
        return None
    line, col = line_col(text, bad.start())
    char = bad.group()
    if char == "\x00":
        message = "NUL byte in text: this looks like a binary file" + ("" if utf16 else ", or UTF-16 without a byte order mark")
    else:
        message = f"control character U+{ord(char):04X} is not allowed in YAML text"
    return Finding(shown, line, col, ".", message)


class _Budget:
    """YAML nodes still allowed: in this file, and in this run (the files of one `iter_documents`)."""

    def __init__(self) -> None:
        self.run_left = MAX_NODES_PER_RUN
        self.file_left = MAX_NODES_PER_FILE
        self.document_bytes_left = MAX_DOCUMENT_BYTES

    def new_file(self) -> None:
        self.file_left = MAX_NODES_PER_FILE

    def new_document(self) -> None:
        self.document_bytes_left = MAX_DOCUMENT_BYTES

    def spend_text(self, mark: Any, path: FieldPath, text: str) -> None:
        """A scalar's text, counted again at every alias that repeats it: what the document expands to."""
        self.document_bytes_left -= len(text)
        if self.document_bytes_left < 0:
            raise _Fault(
                mark,
                path,
                f"the document holds more than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB of text once its aliases are expanded: "
                "more than the API server takes in one request",
            )

    def allows(self, count: int) -> bool:
        return count <= self.file_left and count <= self.run_left

    def spend(self, mark: Any, path: FieldPath) -> None:
        self.file_left -= 1
        self.run_left -= 1
        if self.file_left < 0 or self.run_left < 0:
            raise _Fault(mark, path, self.exceeded(0))

    def exceeded(self, count: int) -> str:
        """Which limit `count` more nodes go over."""
        if count > self.file_left:
            return f"more than {MAX_NODES_PER_FILE} YAML nodes in one file (keys and values, after expanding aliases): that is the limit"
        return (
            f"more than {MAX_NODES_PER_RUN} YAML nodes in all the files read (keys and values, after expanding aliases): that is the limit"
        )


_TOO_DEEP = f"YAML nested deeper than {MAX_DEPTH} levels"
_NODE_EVENTS = frozenset({yaml.ScalarEvent, yaml.AliasEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent})
_END_EVENTS = frozenset({yaml.SequenceEndEvent, yaml.MappingEndEvent})


def _scan(text: str, budget: _Budget) -> None:
    """Enforce the limits on the parser's events, before PyYAML composes a document.

    The composer builds a whole document as nodes (about 600 bytes each) before it hands it
    over, so a 16 MiB flow list would cost gigabytes and a minute before `_construct` could
    count anything. Events stream, so counting them stops a hostile file early; an alias
    counts as the size of what it repeats, so an alias bomb stops at its first big alias
    instead of after half a million constructed nodes. A syntax error ends the scan
    quietly: composing meets it at the same place and reports it.
    """
    nodes = documents = 0
    starts: list[tuple[int, Optional[str]]] = []  # per open collection: nodes before it, its anchor
    sizes: dict[str, int] = {}  # expanded size of each anchored node of the document
    try:
        for event in yaml.parse(text, Loader=_Loader):
            kind = type(event)
            if kind in _NODE_EVENTS:
                if len(starts) > MAX_DEPTH:
                    raise _Fault(event.start_mark, (), _TOO_DEEP)
                anchor: Optional[str] = getattr(event, "anchor", None)
                nodes += sizes.get(anchor or "", 1) if kind is yaml.AliasEvent else 1
                if not budget.allows(nodes):
                    raise _Fault(event.start_mark, (), budget.exceeded(nodes))
                if kind is yaml.ScalarEvent:
                    if anchor is not None:
                        sizes[anchor] = 1
                elif kind is not yaml.AliasEvent:
                    starts.append((nodes - 1, anchor))
            elif kind in _END_EVENTS:
                before, anchor = starts.pop()
                if anchor is not None:
                    sizes[anchor] = nodes - before
            elif kind is yaml.DocumentStartEvent:
                sizes.clear()
                documents += 1
                if documents > MAX_DOCUMENTS_PER_FILE:
                    fault = _Fault(event.start_mark, (), f"more than {MAX_DOCUMENTS_PER_FILE} documents in one file")
                    fault.column = 1
                    raise fault
    except yaml.YAMLError:
        return


# What lets a few characters make many nodes or deep nesting, beyond what _may_pass_a_limit
# counts: anchors and aliases (an alias repeats what it names), complex keys, line breaks other
# than \n (which the line count would miss), and tabs (`-\t-\t-` nests as `- - -` does).
_MULTIPLIERS = ("&", "*", "?", "\t", "\r", "\x85", "\u2028", "\u2029")
_PREFIX_MAX = 64
_FLOW_OPENS_MAX = 30
assert _PREFIX_MAX + 2 + _FLOW_OPENS_MAX < MAX_DEPTH
# A line whose indentation and `- ` items reach _PREFIX_MAX columns.
_DEEP_LINE = re.compile(f"^[ -]{{{_PREFIX_MAX}}}", re.MULTILINE)


def _may_pass_a_limit(text: str, budget: _Budget) -> bool:
    """Whether the scan must count text's events; False when no limit can be reached.

    Without the characters above, a block node nests only by indentation or a `- ` on its
    line: when no line starts with _PREFIX_MAX spaces and dashes, block nesting is at most
    _PREFIX_MAX + 2 deep and a line holds at most _PREFIX_MAX + 2 block nodes. Each flow
    collection needs a `[` or `{` (one level each), and each of its entries a `,` or its
    opening, for at most 3 nodes (`k: v` in a list is a mapping, a key and a value). Each
    document needs a line. Most files are far inside these bounds: the scan then costs a
    parse for nothing.
    """
    if any(c in text for c in _MULTIPLIERS) or _DEEP_LINE.search(text):
        return True
    opens = text.count("[") + text.count("{")
    if opens > _FLOW_OPENS_MAX:
        return True
    lines = text.count("\n") + 1
    nodes = lines * (_PREFIX_MAX + 2) + 3 * (opens + text.count(","))
    return lines >= MAX_DOCUMENTS_PER_FILE or not budget.allows(nodes)


def load_documents(shown: str, text: str) -> list[Document]:
    """Every non-empty document of a file; a syntax error anywhere makes the whole file invalid."""
    return _load(shown, text, _Budget())


def _load(shown: str, text: str, budget: _Budget) -> list[Document]:
    if len(text) > MAX_FILE_BYTES:
        raise InputError([Finding(shown, 1, 1, ".", f"file is larger than the {MAX_FILE_BYTES // (1024 * 1024)} MiB limit")])
    documents: list[Document] = []
    try:
        budget.new_file()
        _refuse_what_kubectl_refuses(text)
        if _may_pass_a_limit(text, budget):
            _scan(text, budget)
        for index, node in enumerate(yaml.compose_all(text, Loader=_Loader)):
            if isinstance(node, yaml.ScalarNode) and (
                node.tag == _T + "null" or (node.tag == PLAIN_TAG and plain_scalar(node.value)[0] == "null")
            ):
                continue  # an empty document (`---` alone, comments only), as kubectl skips it
            positions = Positions()
            budget.new_document()
            data = _construct(node, (), positions, 0, budget, set())
            documents.append(Document(shown, index, data, positions, text))
    except _Fault as fault:
        raise InputError([Finding(shown, fault.line, fault.column, format_path(fault.path), fault.message)]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        # At the end of a file without a final line break libyaml's mark is on a line that
        # doesn't exist: point just after the last character instead.
        line, col = min((line, col), line_col(text, len(text)))
        message = syntax_message(exc, text, too_deep=_TOO_DEEP)
        raise InputError([Finding(shown, line, col, ".", message if message == _TOO_DEEP else "YAML syntax: " + message)]) from None
    except yaml.YAMLError as exc:
        # The reader's errors (a character YAML does not allow) carry no line: find it.
        where = _not_yaml_text(shown, text)
        raise InputError([where or Finding(shown, 1, 1, ".", f"YAML syntax: {str(exc).splitlines()[0]}")]) from None
    except RecursionError:
        raise InputError([Finding(shown, 1, 1, ".", _TOO_DEEP)]) from None
    return documents


def _refuse_what_kubectl_refuses(text: str) -> None:
    """The first of what kubectl's splitter or go-yaml refuses in the text and libyaml reads (yamlio.kubectl_text)."""
    checks = (
        kubectl_text.directive(text, _Loader),
        kubectl_text.separator(text),
        kubectl_text.escape(text),
        kubectl_text.tag_against_flow_indicator(text, _Loader),
    )
    found = [f for f in checks if f]
    if found:
        index, message = min(found)
        raise _Fault.at(*line_col(text, index), message)


def _construct(node: Any, path: FieldPath, positions: Positions, depth: int, budget: _Budget, open_nodes: set[int]) -> Any:
    if depth > MAX_DEPTH:
        raise _Fault(node.start_mark, path, _TOO_DEEP)
    budget.spend(node.start_mark, path)
    positions.values[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.ScalarNode):
        budget.spend_text(node.start_mark, path, node.value)
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
        if id(node) in open_nodes:
            raise _Fault(node.start_mark, path, "an alias refers to a collection that contains it (a recursive structure)")
        open_nodes.add(id(node))
        try:
            return _construct_collection(node, path, positions, depth, budget, open_nodes)
        finally:
            open_nodes.discard(id(node))
    return _scalar(node, path, positions)


def _construct_collection(node: Any, path: FieldPath, positions: Positions, depth: int, budget: _Budget, open_nodes: set[int]) -> Any:
    tag = node.tag
    if isinstance(node, yaml.MappingNode):
        if tag != _T + "map":
            raise _Fault(node.start_mark, path, f"YAML tag {tag} is not allowed: only the core tags are")
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _T + "merge" or (key_node.tag == PLAIN_TAG and key_node.value == "<<"):
                raise _Fault(key_node.start_mark, path, "YAML merge keys (<<) are not supported: write the keys out")
            if not isinstance(key_node, yaml.ScalarNode):
                raise _Fault(key_node.start_mark, path, "a mapping key must be a scalar")
            budget.spend(key_node.start_mark, path)
            budget.spend_text(key_node.start_mark, path, key_node.value)
            key = _key_string(_scalar(key_node, path, None), key_node, path)
            child: FieldPath = path + (key,)
            if key in result:
                first = positions.keys[child][0]
                shown_key = key if _is_identifier(key) else MapKey(key)
                raise _Fault(key_node.start_mark, path + (shown_key,), f'duplicate key "{key}" (first given on line {first})')
            positions.keys[child] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            result[key] = _construct(value_node, child, positions, depth + 1, budget, open_nodes)
        return result
    if tag != _T + "seq":
        raise _Fault(node.start_mark, path, f"YAML tag {tag} is not allowed: only the core tags are")
    return [_construct(item, path + (i,), positions, depth + 1, budget, open_nodes) for i, item in enumerate(node.value)]


def _is_identifier(key: str) -> bool:
    return key.replace("_", "a").isalnum() and key.isascii() and not key[:1].isdigit()


def _scalar(node: Any, path: FieldPath, positions: Optional[Positions]) -> Any:
    tag = node.tag
    if tag == PLAIN_TAG:
        return _plain(node, path, positions)
    if tag in (_T + "str", "!"):
        return node.value
    kind = _TAGGED.get(tag)
    if kind is None:
        raise _Fault(
            node.start_mark,
            path,
            f"YAML tag {tag.replace(_T, '!!')} is not allowed: only the core tags (str, int, float, bool, null, map, seq) are",
        )
    found, value = plain_scalar(node.value)
    if found == "int" and kind == "float":
        found, value = "float", float(value)
    if found != kind:
        shown = node.value if len(node.value) <= 40 else node.value[:37] + "..."
        raise _Fault(node.start_mark, path, f'"{shown}" is not {_TAGGED_NOUN[kind]}, but is tagged {tag.replace(_T, "!!")}')
    return _json_value(node, path, kind, value)


# An explicitly tagged scalar (`!!int "1"`, `!!bool y`) as go-yaml v2's resolve() reads it: its text typed
# by the plain rules, which must give the tag's kind (an integer may be a !!float's); `!!int 1:20` fails.
_TAGGED = {_T + "int": "int", _T + "float": "float", _T + "bool": "bool", _T + "null": "null"}
_TAGGED_NOUN = {"int": "an integer", "float": "a number", "bool": "a boolean", "null": "null"}


def _plain(node: Any, path: FieldPath, positions: Optional[Positions]) -> Any:
    """A plain scalar as sigs.k8s.io/yaml hands it to the API server: go-yaml v2's type, then JSON's number."""
    kind, value = plain_scalar(node.value)
    if kind == "str":
        return value
    value = _json_value(node, path, kind, value)
    if positions is not None:
        positions.typed_plain[path] = node.value
    return value


def _json_value(node: Any, path: FieldPath, kind: str, value: Any) -> Any:
    """go-yaml's value as JSON carries it: no infinity or NaN, an integral float an integer, no integer past int64."""
    if kind == "float":
        if not math.isfinite(value):
            raise _Fault(
                node.start_mark,
                path,
                f"{node.value} reads as {'not-a-number' if math.isnan(value) else 'infinity'} in Kubernetes YAML, which JSON "
                "can't hold: kubectl refuses the whole document; quote it for text",
            )
        if value.is_integer() and abs(value) < _INT64:
            value = int(value)  # Go writes an integral float64 as a JSON integer: 1e3 is 1000 to the API server
    if kind == "int" and not -_INT64 <= value < _INT64:
        raise _Fault(node.start_mark, path, f"{node.value} is an integer past int64, which no Kubernetes field holds")
    return value


_INT64 = 1 << 63


def _key_string(key: Any, node: Any, path: FieldPath) -> str:
    """Map keys as sigs.k8s.io/yaml turns them into JSON object keys (a null key it refuses)."""
    if key is None:
        raise _Fault(node.start_mark, path, "a null mapping key: Kubernetes YAML refuses it; quote it for text")
    return json_key(key)
