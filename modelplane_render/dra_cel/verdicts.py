"""Verdicts on selector expressions, kept per expression text so a known expression costs no compile.

The CEL library and its environment take about 50 ms to load and build; most runs (every Argo CD
refresh of every app) judge the same few expressions again. A verdict is a file in the user cache
directory (`cache.compiled`), named by a digest of the expression and of everything that can change
the verdict: cel-expr-python's installed version, `environment.VERSION`, and the size and mtime of
this package's modules. The library is imported only on a miss. A verdict is stored whole
(written aside, then renamed) and read only if its header matches, so a corrupt file is a miss.
"""

from __future__ import annotations

import json
import os
from importlib.machinery import PathFinder
from typing import Optional

from ..cache.compiled import compiled_dir
from ..cache.directory import evict, write_whole
from . import environment

try:  # as in cache.render: no OpenSSL load for a digest
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - another Python
    from hashlib import blake2b

MAGIC = "modelplane-render-cel-verdict/1"
# Verdicts kept at most: one small file per distinct expression text ever judged, so a repository
# whose selectors keep changing would otherwise grow the directory without end.
MAX_VERDICTS = 10_000
SUFFIX = ".json"
_fingerprint: Optional[str] = None
# This run's verdicts: many replicas of a repository share their selectors, each read from disk once.
_this_run: dict[str, list[tuple[int, str]]] = {}


def judged(expression: str) -> list[tuple[int, str]]:
    """The problems of the expression, as (offset, message): from the cache, or compiled and stored."""
    verdict = _this_run.get(expression)
    if verdict is None:
        verdict = _this_run[expression] = _judged_once(expression)
    return verdict


def _judged_once(expression: str) -> list[tuple[int, str]]:
    directory = compiled_dir("cel-verdicts")
    key = _key(expression) if directory else ""
    if directory:
        known = _lookup(directory, key)
        if known is not None:
            return known
    from .check import problems

    verdict = [(p.offset, p.message) for p in problems(expression)]
    if directory:
        _store(directory, key, verdict)
    return verdict


def library_version() -> str:
    """cel-expr-python's dist-info name (it carries the version), found without importing it."""
    spec = PathFinder.find_spec("cel_expr_python")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        site = os.path.dirname(location)
        try:
            names = sorted(n for n in os.listdir(site) if n.startswith("cel_expr_python-") and n.endswith(".dist-info"))
        except OSError:
            continue
        if names:
            return names[-1]
    return "cel_expr_python: not installed"


def _key(expression: str) -> str:
    global _fingerprint
    if _fingerprint is None:
        here = os.path.dirname(os.path.abspath(__file__))
        parts = [MAGIC, environment.VERSION, library_version()]
        for name in sorted(os.listdir(here)):
            if name.endswith(".py"):
                st = os.stat(os.path.join(here, name))
                parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
        _fingerprint = "\n".join(parts)
    digest = blake2b(digest_size=32)
    digest.update(_fingerprint.encode())
    digest.update(b"\0")
    digest.update(expression.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _lookup(directory: str, key: str) -> Optional[list[tuple[int, str]]]:
    try:
        with open(os.path.join(directory, key + SUFFIX), encoding="utf-8") as handle:
            stored = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("key") != key or not isinstance(stored.get("problems"), list):
        return None
    try:
        return [(int(offset), str(message)) for offset, message in stored["problems"]]
    except (TypeError, ValueError):
        return None


def _store(directory: str, key: str, verdict: list[tuple[int, str]]) -> None:
    data = json.dumps({"key": key, "problems": verdict}).encode("utf-8")
    if write_whole(os.path.join(directory, key + SUFFIX), data):
        evict(directory, SUFFIX, max_entries=MAX_VERDICTS)
