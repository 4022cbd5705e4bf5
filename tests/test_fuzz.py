"""Fuzzing the command with mutated fixtures and random YAML: every run keeps the CLI contract.

Each example is one file, rendered in-process through `main(["render", "--allow-empty", FILE])` (a file with no replica is about how it is read): either exit 0
with objects that parse back, or exit 1 with only `FILE:LINE:COL: path: message` lines and
nothing on stdout (`hostile.check_outcome`). Four sources of input:

- the replica documents of every valid fixture, mutated as data (drop, duplicate, retype,
  lengthen or swap any field; random unicode; extreme numbers), then written as YAML;
- a fixture's text, mutated as text (YAML tokens and random characters inserted, spans cut,
  lines repeated, swapped or re-indented);
- random YAML-ish text built from YAML's own tokens;
- random bytes, and fixture bytes with bad bytes spliced in or in another encoding.

The fast profile (a few hundred examples, derandomized so a run is repeatable) runs in the
default suite. The long profile (`pytest -m slow`, which CI runs) is at least 100,000 examples
in-process, with fresh randomness each run (CI replays a fixed MODELPLANE_FUZZ_SEED), plus a
sample through the real process. A failure it finds becomes a fixture under fixtures/invalid/ or
fixtures/valid/ and gets fixed.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import marshal
import multiprocessing
import os
import random
import resource
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis
import pytest
import yaml
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from conftest import VALID, run_cli, run_process
from hostile import KNOWN_BUG_FIXTURES, SOURCE, KnownCoreBug, check_outcome, run_source
from modelplane_render import crd
from modelplane_render import main as cli
from modelplane_render.walk import KUSTOMIZE_FILE_NAMES
from modelplane_render.yamlio.loader import load_documents

# ---------------------------------------------------------------------------------------------
# What the fuzzer starts from: every valid fixture file, as text and as documents.

FILES = [p for case in VALID for p in sorted(case.glob("*.y*ml")) if p.name not in KUSTOMIZE_FILE_NAMES]
TEXTS = [p.read_text(encoding="utf-8") for p in FILES]
DOCUMENTS = [[d.data for d in load_documents(p.name, t)] for p, t in zip(FILES, TEXTS, strict=True)]
WITH_REPLICAS = [docs for docs in DOCUMENTS if any(_d.get("kind") == crd.KIND for _d in docs)]


def _schema_keys(schema: Any, into: set[str]) -> set[str]:
    """Every field name the CRD knows: random mappings use them, so mutations reach deep checks."""
    if isinstance(schema, dict):
        for key, value in schema.get("properties", {}).items():
            into.add(key)
            _schema_keys(value, into)
        for key in ("items", "additionalProperties"):
            _schema_keys(schema.get(key), into)
    return into


FIELD_NAMES = sorted(_schema_keys(crd.openapi_schema(), {"apiVersion", "kind", "metadata", "name", "namespace", "labels", "annotations"}))

EXTREME_NUMBERS = [
    0,
    -1,
    1,
    2**31 - 1,
    2**31,
    2**32,
    2**53 + 1,
    2**63 - 1,
    2**63,
    -(2**63) - 1,
    2**64,
    10**100,
    -(10**100),
    10**4000,
    1.0,
    0.5,
    -0.0,
    1e-320,
    1e308,
    -1e308,
    float("inf"),
    float("-inf"),
    float("nan"),
    65535,
    65536,
]
# Strings that mean something to YAML, to a template engine or to a shell, and Unicode that
# means something to a line counter.
TRICKY_STRINGS = [
    "",
    " ",
    "yes",
    "no",
    "on",
    "off",
    "y",
    "~",
    "null",
    "true",
    "0755",
    "0x1F",
    "1:20",
    "1e3",
    ".inf",
    ".nan",
    "2001-12-14",
    "<<",
    "=",
    "---",
    "...",
    "- x",
    "a: b",
    "{{ 7 * 7 }}",
    "{% for x in y %}",
    "${HOME}",
    "$(id)",
    "`id`",
    "!!python/object/apply:os.system ['id']",
    "&anchor",
    "*alias",
    "#",
    "'",
    '"',
    "\\",
    "\n",
    "a\nb",
    "\r\n",
    "\t",
    "\u2028",
    "\u2029",
    "\x85",
    "\ufeff",
    "\U0001f600",
    "é",
    "İı",
    "a" * 63,
    "a" * 64,
    "a" * 254,
]

# Values by type, so a retype can pick any type but the old one without filtering.
BY_TYPE: dict[type, st.SearchStrategy[Any]] = {
    type(None): st.none(),
    bool: st.booleans(),
    int: st.integers() | st.sampled_from([n for n in EXTREME_NUMBERS if isinstance(n, int)]),
    float: st.floats() | st.sampled_from([n for n in EXTREME_NUMBERS if isinstance(n, float)]),
    str: st.text(max_size=20) | st.sampled_from(TRICKY_STRINGS),
}
SCALARS = st.one_of(*BY_TYPE.values())
KEYS = st.one_of(st.sampled_from(FIELD_NAMES), st.text(max_size=12), st.sampled_from(TRICKY_STRINGS))
# Collections one or two levels deep: deeper random trees cost generation time and reach no
# deeper checks (the fixture around them supplies the depth).
SMALL = st.lists(SCALARS, max_size=3) | st.dictionaries(KEYS, SCALARS, max_size=3)
BY_TYPE[list] = st.lists(SCALARS | SMALL, max_size=4)
BY_TYPE[dict] = st.dictionaries(KEYS, SCALARS | SMALL, max_size=4)
VALUES = st.one_of(*BY_TYPE.values())


# ---------------------------------------------------------------------------------------------
# Data mutations of a replica document.

Path_ = tuple[Any, ...]


def _paths(value: Any, prefix: Path_ = ()) -> list[Path_]:
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, prefix + (key,))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            found += _paths(child, prefix + (i,))
    return found


def _get(root: Any, path: Path_) -> Any:
    for part in path:
        root = root[part]
    return root


def _set(root: Any, path: Path_, value: Any) -> Any:
    if not path:
        return value
    _get(root, path[:-1])[path[-1]] = value
    return root


def _drop(draw: Any, root: Any, path: Path_) -> Any:
    if not path:
        return None
    parent = _get(root, path[:-1])
    del parent[path[-1]]
    return root


def _duplicate(draw: Any, root: Any, path: Path_) -> Any:
    value = _get(root, path)
    if isinstance(value, list) and value:
        value.extend(_copy(value[: draw(st.integers(1, len(value)))]))
        return root
    if path and isinstance(_get(root, path[:-1]), list):
        _get(root, path[:-1]).insert(path[-1], _copy(value))
        return root
    if path:  # a mapping entry: the same value under a second, similar key
        parent = _get(root, path[:-1])
        parent[draw(KEYS)] = _copy(value)
    return root


def _retype(draw: Any, root: Any, path: Path_) -> Any:
    old = type(_get(root, path))
    kind = draw(st.sampled_from([t for t in BY_TYPE if t is not old]))
    return _set(root, path, draw(BY_TYPE[kind]))


# What one lengthening may grow a value to (its marshalled size): enough to reach the size limits
# (with a few mutations, or beside other documents), never enough to exhaust the fuzzer's memory
# (three lengthenings of a string by 1000 each, unbounded, were 10^9 times its length).
MAX_LENGTHENED = 4 * 1024 * 1024


def _lengthen(draw: Any, root: Any, path: Path_) -> Any:
    value = _get(root, path)
    times = draw(st.sampled_from([2, 9, 64, 254, 1000]))
    times = max(1, min(times, MAX_LENGTHENED // max(1, len(marshal.dumps(value, 2)))))
    if isinstance(value, str):
        return _set(root, path, (value or "x") * times)
    if isinstance(value, list):  # copies, not one object many times (a later mutation would hit them all)
        return _set(root, path, [_copy(item) for _ in range(min(times, 100)) for item in (value or [None])])
    if isinstance(value, dict):
        name, filler = draw(st.sampled_from(FIELD_NAMES)), draw(SCALARS)
        value.update({f"{name}{i}": filler for i in range(min(times, 100))})
        return root
    if isinstance(value, bool) or value is None:
        return _set(root, path, [value] * times)
    return _set(root, path, value * times)


def _copy(value: Any) -> Any:
    """A deep copy of YAML data (dicts, lists, scalars), fast, with no object shared."""
    return marshal.loads(marshal.dumps(value, 2))  # version 2: no back-references, so no sharing


def _swap(draw: Any, root: Any, path: Path_) -> Any:
    other = draw(st.sampled_from(_paths(root)))
    if not path or not other or path[: len(other)] == other or other[: len(path)] == path:
        return root  # the same node, or one inside the other
    a, b = _get(root, path), _get(root, other)
    _set(root, path, b)
    return _set(root, other, a)


def _unicode(draw: Any, root: Any, path: Path_) -> Any:
    value = _get(root, path)
    text = draw(st.text(min_size=1, max_size=12) | st.sampled_from(TRICKY_STRINGS))
    if isinstance(value, str) and value:
        at = draw(st.integers(0, len(value)))
        return _set(root, path, value[:at] + text + value[at:])
    return _set(root, path, text)


def _rekey(draw: Any, root: Any, path: Path_) -> Any:
    if not path or not isinstance(_get(root, path[:-1]), dict):
        return root
    parent = _get(root, path[:-1])
    parent[draw(KEYS)] = parent.pop(path[-1])
    return root


def _extreme(draw: Any, root: Any, path: Path_) -> Any:
    return _set(root, path, draw(st.sampled_from(EXTREME_NUMBERS)))


MUTATIONS: list[Callable[[Any, Any, Path_], Any]] = [_drop, _duplicate, _retype, _lengthen, _swap, _unicode, _rekey, _extreme]


@st.composite
def mutated_replicas(draw: Any) -> str:
    documents = _copy(draw(st.sampled_from(WITH_REPLICAS)))
    replicas = [i for i, d in enumerate(documents) if isinstance(d, dict) and d.get("kind") == crd.KIND]
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.sampled_from(replicas))
        path = draw(st.sampled_from(_paths(documents[i])))
        mutate = draw(st.sampled_from(MUTATIONS))
        documents[i] = mutate(draw, documents[i], path)
    return yaml.dump_all(
        documents,
        Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
        sort_keys=False,
        allow_unicode=draw(st.booleans()),
        default_flow_style=draw(st.sampled_from([False, None, True])),
        width=draw(st.sampled_from([40, 80, 4096])),
        explicit_start=draw(st.booleans()),
    )


# ---------------------------------------------------------------------------------------------
# Text and bytes.

YAML_TOKENS = [
    ": ",
    ":",
    "- ",
    "-",
    "\n",
    "  ",
    "\t",
    "[",
    "]",
    "{",
    "}",
    ", ",
    "&a ",
    "*a",
    "&b ",
    "*b",
    "!!str ",
    "!!int ",
    "!!map ",
    "!!binary ",
    "!!python/object:os.system ",
    "!custom ",
    "! ",
    "? ",
    "| ",
    "|-\n",
    "> ",
    "'",
    '"',
    '"\\u2028"',
    '"\\ud800"',
    '"\\x00"',
    "# c\n",
    "---\n",
    "--- ",
    "...\n",
    "%YAML 1.1\n---\n",
    "%TAG !e! tag:e.com,2000:\n---\n",
    "<<: ",
    "<<: *a\n",
    "~",
    "yes",
    "0o17",
    "0x",
    "1e999",
    ".nan",
    "-.inf",
    "9" * 5000,
    "1:20:30",
    "\ufeff",
    "\x85",
    "\u2028",
    "\u2029",
    "\r",
    "\r\n",
    "é",
    "\U0001f600",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
    "apiVersion: modelplane.ai/v1alpha1\nkind: ModelReplica\n",
    "metadata:\n  name: r\n",
    "spec:\n  engines: []\n",
    "  name: x\n",
    "    - role: Leader\n",
    "x" * 1100,
]
TOKEN_TEXT = st.lists(st.sampled_from(YAML_TOKENS) | st.text(max_size=4) | st.sampled_from(FIELD_NAMES), max_size=30).map("".join)


@st.composite
def mutated_text(draw: Any) -> str:
    text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(1, 4))):
        lines = text.split("\n")
        kind = draw(st.sampled_from(["insert", "delete", "replace", "repeat-line", "swap-lines", "indent"]))
        at = draw(st.integers(0, len(text)))
        if kind == "insert":
            text = text[:at] + draw(TOKEN_TEXT) + text[at:]
        elif kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 80)) :]
        elif kind == "replace":
            text = text[:at] + draw(st.text(min_size=1, max_size=8) | st.sampled_from(YAML_TOKENS)) + text[at + draw(st.integers(1, 8)) :]
        else:
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            if kind == "repeat-line":
                lines.insert(i, lines[j])
            elif kind == "swap-lines":
                lines[i], lines[j] = lines[j], lines[i]
            else:
                lines[i] = draw(st.sampled_from(["", " ", "  ", "\t", "    "])) + lines[i].lstrip(" ")
            text = "\n".join(lines)
    return text


@st.composite
def hostile_bytes(draw: Any) -> bytes:
    kind = draw(st.sampled_from(["random", "splice", "encoding"]))
    if kind == "random":
        return bytes(draw(st.binary(max_size=200)))
    raw = draw(st.sampled_from(TEXTS)).encode("utf-8")
    if kind == "splice":
        at = draw(st.integers(0, len(raw)))
        bad = draw(
            st.binary(min_size=1, max_size=4) | st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xef\xbb\xbf", b"\r"])
        )
        return raw[:at] + bad + raw[at:]
    text = raw.decode("utf-8")
    codec = draw(st.sampled_from(["utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "utf-8-sig"]))
    return text.encode(codec, "replace")


SOURCES = st.one_of(mutated_replicas(), mutated_text(), TOKEN_TEXT, hostile_bytes())

# ---------------------------------------------------------------------------------------------
# The profiles.

FAST = {"deadline": None, "derandomize": True, "database": None, "suppress_health_check": list(HealthCheck), "print_blob": True}
SLOW = {"deadline": None, "database": None, "suppress_health_check": list(HealthCheck), "print_blob": True}
STRATEGIES = {"replica-data": mutated_replicas(), "fixture-text": mutated_text(), "yaml-tokens": TOKEN_TEXT, "bytes": hostile_bytes()}


@dataclass
class Outcome:
    ran: int = 0
    known: dict[str, int] = field(default_factory=dict)  # examples set aside per known core bug
    failure: str = ""


def fuzz(strategy: st.SearchStrategy[Any], examples: int, profile: dict[str, Any], seed: int | None = None) -> Outcome:
    """Run `examples` examples of `strategy` through the command in-process.

    `main()` runs whole for every example, except that its argument parser is built once: the
    parser (eight subcommands, gettext lookups) costs more than rendering a small file, and
    building it is the same work every time.
    """
    outcome = Outcome()
    with tempfile.TemporaryDirectory() as tmp, _parser_built_once():
        directory = Path(tmp)

        @settings(max_examples=examples, **profile)
        @given(source=strategy)
        def run(source: str | bytes) -> None:
            outcome.ran += 1
            result = run_source(directory, source)
            try:
                check_outcome(result.code, result.stdout, result.stderr, source)
            except KnownCoreBug as bug:
                outcome.known[str(bug)] = outcome.known.get(str(bug), 0) + 1
                reject()

        (hypothesis.seed(seed)(run) if seed is not None else run)()
    return outcome


def warn_known(known: dict[str, int]) -> None:
    if known:
        warnings.warn(f"examples that hit known core bugs (fixtures/known-core-bugs/), set aside: {known}", stacklevel=2)


@contextlib.contextmanager
def _parser_built_once() -> Iterator[None]:
    real = cli.build_parser
    cli.build_parser = functools.cache(real)  # type: ignore[method-assign]
    try:
        yield
    finally:
        cli.build_parser = real  # type: ignore[method-assign]


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_fuzz_fast(name):  # type: ignore[no-untyped-def]
    outcome = fuzz(STRATEGIES[name], 100, FAST)
    warn_known(outcome.known)
    assert outcome.ran >= 100


# Only defined while there are known bugs: an empty parameter set would show as a skip, and CI counts skips as failures.
KNOWN_BUGS = [pytest.param(p, id=p.name) for p in sorted(KNOWN_BUG_FIXTURES.glob("*/KNOWN_CORE_BUG"))]


if KNOWN_BUGS:

    @pytest.mark.xfail(
        strict=True,
        reason="a known core bug (fixtures/known-core-bugs/<case>/KNOWN_CORE_BUG): move the case to fixtures/invalid/ with the fix",
    )
    @pytest.mark.parametrize("note", KNOWN_BUGS)
    def test_known_core_bug_fixtures(note):  # type: ignore[no-untyped-def]
        """Each case, judged as its future folder will be: valid (expected.stdout) or invalid (expected.stderr)."""
        case = note.parent
        sources = sorted(p.name for p in case.iterdir() if p.suffix in (".yaml", ".yml"))
        if (case / "expected.stdout").exists():
            result = run_cli("render", *sources, cwd=case)
            assert (result.code, result.stderr, result.stdout) == (0, "", (case / "expected.stdout").read_text(encoding="utf-8"))
        else:
            result = run_cli("validate", *sources, cwd=case)
            assert (result.code, result.stdout, result.stderr) == (1, "", (case / "expected.stderr").read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------------------------
# The long profile: 100,000 examples in-process, most where the checks are deepest, in chunks
# spread over every core (fresh randomness each run; MODELPLANE_FUZZ_SEED replays one), plus a
# sample through the real process. MODELPLANE_FUZZ_SCALE scales it (CI says so when it does).

LONG = {"replica-data": 60_000, "fixture-text": 25_000, "yaml-tokens": 10_000, "bytes": 5_000}
CHUNK = 2_500
PROCESS_SAMPLE = 200


def _scale() -> float:
    return float(os.environ.get("MODELPLANE_FUZZ_SCALE", "1"))


def _workers() -> int:
    return int(os.environ.get("MODELPLANE_FUZZ_WORKERS", "0")) or os.cpu_count() or 1


def _base_seed() -> int:
    seed = int(os.environ.get("MODELPLANE_FUZZ_SEED") or random.randrange(2**32))
    print(f"MODELPLANE_FUZZ_SEED={seed} replays this run")
    return seed


def _long_chunk(job: tuple[str, int, int]) -> tuple[str, Outcome]:
    """One chunk, in a worker process: never raises, so every chunk's outcome comes back."""
    name, examples, seed = job
    warnings.simplefilter("ignore")
    try:
        return name, fuzz(STRATEGIES[name], examples, SLOW, seed)
    except BaseException as exc:  # hypothesis' report: the falsifying example and how to reproduce it
        return name, Outcome(failure=f"{name}, seed {seed}:\n" + "".join(traceback.format_exception(exc)))


# A worker that needs more than this is a finding (the tool's own worst case is well under 1 GB),
# reported as a MemoryError with its example, not the machine's OOM killer ending the run.
WORKER_MEMORY = 3 * 1024**3


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY, WORKER_MEMORY))


def _run_in_pool(function: Callable[[Any], tuple[str, Outcome]], jobs: list[Any]) -> dict[str, Outcome]:
    """Every job's outcome, summed per name; a worker that dies (a crash, a kill) fails the run
    rather than leaving it waiting for a result that will never come."""
    totals: dict[str, Outcome] = {}
    context = multiprocessing.get_context("fork")
    workers = min(_workers(), len(jobs))
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_limit_memory) as pool:
        for name, outcome in pool.map(function, jobs):
            total = totals.setdefault(name, Outcome())
            total.ran += outcome.ran
            total.failure += outcome.failure
            for case, count in outcome.known.items():
                total.known[case] = total.known.get(case, 0) + count
    return totals


@pytest.mark.slow
def test_fuzz_long():  # type: ignore[no-untyped-def]
    seed = _base_seed()
    jobs = []
    for name, examples in LONG.items():
        wanted = int(examples * _scale())
        jobs += [(name, min(CHUNK, wanted - start), seed + len(jobs) + i) for i, start in enumerate(range(0, wanted, CHUNK))]
    started = time.monotonic()
    totals = _run_in_pool(_long_chunk, jobs)
    for name, total in sorted(totals.items()):
        print(f"{name}: {total.ran} examples; known core bugs set aside: {total.known or 'none'}")
    print(f"{sum(t.ran for t in totals.values())} examples in {time.monotonic() - started:.0f} s on {_workers()} workers")
    warn_known({k: v for t in totals.values() for k, v in t.known.items()})
    failures = [t.failure for t in totals.values() if t.failure]
    assert not failures, "\n\n".join(failures)
    for name, examples in LONG.items():
        assert totals[name].ran >= int(examples * _scale())


def _process_chunk(job: tuple[str, int, int]) -> tuple[str, Outcome]:
    """Examples through plugin.py as Argo CD starts it: real streams, real exit status."""
    name, examples, seed = job
    warnings.simplefilter("ignore")
    outcome = Outcome()
    try:
        with tempfile.TemporaryDirectory() as tmp:

            @settings(max_examples=examples, **SLOW)
            @given(source=st.one_of(*STRATEGIES.values()))
            def run(source: str | bytes) -> None:
                outcome.ran += 1
                raw = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
                (Path(tmp) / SOURCE).write_bytes(raw)
                done = run_process("render", "--allow-empty", SOURCE, cwd=Path(tmp))  # about reading, not emptiness
                try:
                    check_outcome(done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8", "backslashreplace"), source)
                except KnownCoreBug as bug:
                    outcome.known[str(bug)] = outcome.known.get(str(bug), 0) + 1
                    reject()

            hypothesis.seed(seed)(run)()
    except BaseException as exc:
        outcome.failure = f"process sample, seed {seed}:\n" + "".join(traceback.format_exception(exc))
    return name, outcome


@pytest.mark.slow
def test_fuzz_sample_through_the_real_process():  # type: ignore[no-untyped-def]
    seed = _base_seed()
    wanted = max(1, int(PROCESS_SAMPLE * _scale()))
    per = -(-wanted // _workers())
    jobs = [("process", min(per, wanted - start), seed + i) for i, start in enumerate(range(0, wanted, per))]
    total = _run_in_pool(_process_chunk, jobs)["process"]
    warn_known(total.known)
    assert not total.failure, total.failure
    assert total.ran >= wanted
