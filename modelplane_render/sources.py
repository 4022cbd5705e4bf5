"""Stage 1, sources: find the YAML files, read them as kubectl does, keep line and column of every node.

YAML is read as kubectl reads it (go-yaml v2 under sigs.k8s.io/yaml): YAML 1.1 scalars
(`yes`/`on` are booleans, `0755` is octal), timestamps kept as strings, non-string map
keys turned into their string form. Beyond kubectl, for a renderer that must not guess:
duplicate keys, tags other than the core ones, and merge keys (`<<`) are errors.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from .errors import FieldPath, InputError, MapKey, SourceError

# Limits that keep a hostile file from taking the process down (stated in the README).
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_NODES_PER_FILE = 2_000_000
MAX_DEPTH = 100
MAX_DOCUMENTS_PER_FILE = 10_000

YAML_SUFFIXES = (".yaml", ".yml")
# kustomize's own files sit beside the manifests in a kustomize base; they are not objects.
KUSTOMIZE_FILE_NAMES = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_T = "tag:yaml.org,2002:"
_SCALAR = yaml.constructor.SafeConstructor()


@dataclass
class Positions:
    """Where each node of a document is: value positions and (for map entries) key positions."""

    values: dict[FieldPath, tuple[int, int]] = field(default_factory=dict)
    keys: dict[FieldPath, tuple[int, int]] = field(default_factory=dict)

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

    def error(self, path: FieldPath, message: str, *, at_key: bool = False) -> SourceError:
        from .errors import format_path

        line, col = self.positions.of_key(path) if at_key else self.positions.of_value(path)
        return SourceError(self.file, line, col, format_path(path), message)


class _Fault(Exception):
    def __init__(self, mark: Any, path: FieldPath, message: str):
        self.line = mark.line + 1
        self.column = mark.column + 1
        self.path = path
        self.message = message


def display_path(path: str) -> str:
    """A found file's path relative to the current directory, or absolute when it is elsewhere."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def find_files(paths: list[str]) -> tuple[list[tuple[str, str]], list[SourceError]]:
    """Expand command-line paths into (display name, real path) pairs, in a stable order.

    Directories are walked recursively in sorted order; only `*.yaml`/`*.yml` files are
    read, names starting with `.` are skipped (`.git`, editor files) and so are
    kustomization files. A symlink may only lead to a regular file inside the directory
    that was given: Argo CD refuses out-of-bounds symlinks, and so do we.
    """
    found: list[tuple[str, str]] = []
    errors: list[SourceError] = []
    for given in paths:
        if not os.path.lexists(given):
            errors.append(SourceError(given, 1, 1, ".", "no such file or directory"))
            continue
        if os.path.isdir(given):
            root = os.path.realpath(given)
            for dirpath, dirnames, filenames in os.walk(given, onerror=None, followlinks=False):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    if name.startswith(".") or not name.endswith(YAML_SUFFIXES) or name in KUSTOMIZE_FILE_NAMES:
                        continue
                    full = os.path.join(dirpath, name)
                    shown = given if full == given else display_path(full)
                    problem = _unsafe_file(full, root)
                    if problem:
                        errors.append(SourceError(shown, 1, 1, ".", problem))
                    else:
                        found.append((shown, full))
        else:
            problem = _unsafe_file(given, None)
            if problem:
                errors.append(SourceError(given, 1, 1, ".", problem))
            else:
                found.append((given, given))
    return found, errors


def _unsafe_file(path: str, root: str | None) -> str | None:
    real = os.path.realpath(path)
    if root is not None and os.path.commonpath([root, real]) != root:
        return f"symlink leads outside {display_path(root)}: refusing to read {real}"
    try:
        mode = os.stat(real).st_mode
    except OSError as exc:
        return f"cannot read: {exc.strerror.lower() if exc.strerror else exc}"
    if not stat.S_ISREG(mode):
        return "not a regular file (a device, FIFO or socket): refusing to read it"
    return None


def read_file(shown: str, path: str) -> bytes:
    with open(path, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise InputError([SourceError(shown, 1, 1, ".", f"file is larger than the {MAX_FILE_BYTES // (1024 * 1024)} MiB limit")])
    return data


def decode(shown: str, raw: bytes) -> str:
    """Bytes to text as kubectl takes them: UTF-8 (an initial BOM dropped), or UTF-16 with a BOM."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError:
            raise InputError([SourceError(shown, 1, 1, ".", "invalid UTF-16 text")]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            [SourceError(shown, line, col, ".", f"invalid UTF-8 (byte 0x{raw[exc.start]:02x}): files must be UTF-8 text")]
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    nul = text.find("\x00")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        col = nul - (text.rfind("\n", 0, nul) + 1) + 1
        raise InputError([SourceError(shown, line, col, ".", "NUL byte in text: this looks like a binary file")])
    return text


def load_documents(shown: str, text: str) -> list[Document]:
    """Every non-empty document of a file; a syntax error anywhere makes the whole file invalid."""
    documents: list[Document] = []
    budget = [MAX_NODES_PER_FILE]
    try:
        for index, node in enumerate(yaml.compose_all(text, Loader=_Loader)):
            if index >= MAX_DOCUMENTS_PER_FILE:
                raise InputError(
                    [SourceError(shown, node.start_mark.line + 1, 1, ".", f"more than {MAX_DOCUMENTS_PER_FILE} documents in one file")]
                )
            if node.tag == _T + "null" and isinstance(node, yaml.ScalarNode):
                continue  # an empty document (`---` alone, comments only), as kubectl skips it
            positions = Positions()
            data = _construct(node, (), positions, 0, budget)
            documents.append(Document(shown, index, data, positions))
    except _Fault as fault:
        from .errors import format_path

        raise InputError([SourceError(shown, fault.line, fault.column, format_path(fault.path), fault.message)]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = "YAML syntax: " + (exc.problem or "invalid YAML") + (f" ({exc.context})" if exc.context else "")
        raise InputError([SourceError(shown, line, col, ".", message)]) from None
    except yaml.YAMLError as exc:
        raise InputError([SourceError(shown, 1, 1, ".", f"YAML syntax: {str(exc).splitlines()[0]}")]) from None
    except RecursionError:
        raise InputError([SourceError(shown, 1, 1, ".", f"YAML nested deeper than {MAX_DEPTH} levels")]) from None
    return documents


def _construct(node: Any, path: FieldPath, positions: Positions, depth: int, budget: list[int]) -> Any:
    if depth > MAX_DEPTH:
        raise _Fault(node.start_mark, path, f"YAML nested deeper than {MAX_DEPTH} levels")
    budget[0] -= 1
    if budget[0] < 0:
        raise _Fault(node.start_mark, path, f"more than {MAX_NODES_PER_FILE} YAML nodes in one file (after expanding aliases)")
    positions.values[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    tag = node.tag
    if isinstance(node, yaml.MappingNode):
        if tag != _T + "map":
            raise _Fault(node.start_mark, path, f"YAML tag {tag} is not allowed: only the core tags are")
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _T + "merge":
                raise _Fault(key_node.start_mark, path, "YAML merge keys (<<) are not supported: write the keys out")
            if not isinstance(key_node, yaml.ScalarNode):
                raise _Fault(key_node.start_mark, path, "a mapping key must be a scalar")
            key = _key_string(_scalar(key_node, path))
            child: FieldPath = path + (key,)
            if key in result:
                first = positions.keys[child][0]
                shown_key = key if _is_identifier(key) else MapKey(key)
                raise _Fault(key_node.start_mark, path + (shown_key,), f'duplicate key "{key}" (first given on line {first})')
            positions.keys[child] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            result[key] = _construct(value_node, child, positions, depth + 1, budget)
        return result
    if isinstance(node, yaml.SequenceNode):
        if tag != _T + "seq":
            raise _Fault(node.start_mark, path, f"YAML tag {tag} is not allowed: only the core tags are")
        return [_construct(item, path + (i,), positions, depth + 1, budget) for i, item in enumerate(node.value)]
    return _scalar(node, path)


def _is_identifier(key: str) -> bool:
    return key.replace("_", "a").isalnum() and key.isascii() and not key[:1].isdigit()


def _scalar(node: Any, path: FieldPath) -> Any:
    tag = node.tag
    if tag in (_T + "str", _T + "timestamp", "!"):
        return node.value  # go-yaml v2 hands timestamps to untyped fields as strings
    if tag == _T + "int":
        if ":" in node.value:
            return node.value  # YAML 1.1 base 60 (`1:20`); go-yaml reads it as a string
        return _SCALAR.construct_yaml_int(node)
    if tag == _T + "float":
        if ":" in node.value:
            return node.value
        return _SCALAR.construct_yaml_float(node)
    if tag == _T + "bool":
        return _SCALAR.construct_yaml_bool(node)
    if tag == _T + "null":
        return None
    raise _Fault(
        node.start_mark,
        path,
        f"YAML tag {tag.replace(_T, '!!')} is not allowed: only the core tags (str, int, float, bool, null, map, seq) are",
    )


def _key_string(key: Any) -> str:
    """Map keys as sigs.k8s.io/yaml turns them into JSON object keys."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    return str(key)


def iter_documents(paths: list[str]) -> Iterator[Document | SourceError]:
    """Every document of every file, or an error per file that can't be read."""
    files, errors = find_files(paths)
    yield from errors
    for shown, real in files:
        try:
            text = decode(shown, read_file(shown, real))
            yield from load_documents(shown, text)
        except InputError as exc:
            yield from exc.errors
        except OSError as exc:
            yield SourceError(shown, 1, 1, ".", f"cannot read: {(exc.strerror or str(exc)).lower()}")
