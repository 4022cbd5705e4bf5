"""Helpers for the hostile-input tests: run one source file, and judge the outcome by the CLI contract.

The contract (README): exit 0 with a YAML stream of objects on stdout and nothing on stderr, or
exit 1 with only `FILE:LINE:COL: path: message` lines on stderr and nothing on stdout; never a
traceback, never "internal error", never another exit code.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from conftest import FIXTURES, Result, run_cli

# One error: the file, a 1-based line and column, a field path and a message, nothing unprintable.
ERROR_LINE = re.compile(r"^(?P<file>[^\n]+?):(?P<line>[1-9][0-9]*):(?P<col>[1-9][0-9]*): (?P<path>[^\n]+?): (?P<message>[^\n]+)$")
_UNPRINTABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
# Line breaks as the YAML parser counts them, to check that an error's line exists.
_BREAKS = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
SOURCE = "case.yaml"
KNOWN_BUG_FIXTURES = FIXTURES / "known-core-bugs"


def _known_core_bugs() -> dict[str, str]:
    """Crashes found by fuzzing in modules these tests may not fix, each kept as a fixture under
    fixtures/known-core-bugs/ with a KNOWN_CORE_BUG file whose `signature:` line is a piece of the
    stderr it causes. The fuzzer sets such examples aside (and says how many) to keep looking for
    new bugs; moving the fixture to fixtures/invalid/ with the fix ends that."""
    found = {}
    for note in sorted(KNOWN_BUG_FIXTURES.glob("*/KNOWN_CORE_BUG")):
        for line in note.read_text(encoding="utf-8").splitlines():
            if line.startswith("signature: "):
                found[line.removeprefix("signature: ")] = note.parent.name
    return found


KNOWN_CORE_BUGS = _known_core_bugs()


class KnownCoreBug(Exception):
    """The outcome is a known core bug (see KNOWN_CORE_BUGS): not a new failure."""


def run_source(directory: Path, source: str | bytes, *args: str, name: str = SOURCE) -> Result:
    """`render --allow-empty` of one file written with these exact bytes (text is written as UTF-8), in-process.

    --allow-empty: a file with no replica is about how it is read, not about an empty render (test_pipeline's).
    """
    raw = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    (directory / name).write_bytes(raw)
    return run_cli("render", "--allow-empty", *args, name, cwd=directory)


def check_outcome(code: int, stdout: str, stderr: str, source: str | bytes | None = None, name: str = SOURCE) -> list[dict[str, Any]]:
    """Assert the CLI contract; return the objects of a success (empty for a failure)."""
    for signature, case in KNOWN_CORE_BUGS.items():
        if signature in stderr:
            raise KnownCoreBug(case)
    assert "Traceback" not in stderr, stderr
    assert "internal error" not in stderr, stderr
    assert code in (0, 1), (code, stderr)
    if code == 0:
        assert stderr == "", stderr
        return check_output(stdout)
    assert stdout == "", "a failure printed output"
    lines = stderr.split("\n")
    assert lines[-1] == "" and len(lines) > 1, f"stderr must be whole lines: {stderr!r}"
    most = _line_count(source) if source is not None else None
    for line in lines[:-1]:
        match = ERROR_LINE.match(line)
        assert match, f"not a FILE:LINE:COL: path: message line: {line!r}"
        assert not _UNPRINTABLE.search(line), f"unprintable character in an error line: {line!r}"
        assert match["file"] == name, line
        if most is not None:
            assert int(match["line"]) <= most, f"line {match['line']} of a {most}-line file: {line}"
    return []


def check_output(stdout: str) -> list[dict[str, Any]]:
    """The output parses back as a stream of Kubernetes objects, each with apiVersion, kind and a name."""
    objects = list(yaml.load_all(stdout, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    for obj in objects:
        assert isinstance(obj, dict), obj
        assert isinstance(obj.get("apiVersion"), str) and obj["apiVersion"], obj
        assert isinstance(obj.get("kind"), str) and obj["kind"], obj
        meta = obj.get("metadata")
        assert isinstance(meta, dict) and isinstance(meta.get("name"), str) and meta["name"], obj
    return objects


def _line_count(source: str | bytes) -> int | None:
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-16" if source.startswith((b"\xff\xfe", b"\xfe\xff")) else "utf-8")
        except UnicodeDecodeError:
            return None
    return len(_BREAKS.findall(source)) + 1
