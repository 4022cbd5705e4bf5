"""Resource limits: hostile sizes are refused (or handled) in bounded memory, naming the limit.

Each case runs where a crash would show: the deep-nesting cases in a real process (a C stack
overflow in libyaml's composer would kill it, and the exit status would say so), the others
in-process under tracemalloc, which counts every Python allocation (a node graph, a file read
whole) without a separate process's start-up noise.

The memory bound is what shows a limit checked too late (the node graph built, the file read
whole); how long each case takes depends on the machine and what else it runs, so it is measured
by the benchmark (`benchmarks/run.py`, the `limits/...` rows), never asserted here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT, VALID, Result
from hostile import check_outcome, run_source
from modelplane_render import sources
from modelplane_render.errors import InputError
from modelplane_render.yamlio import loader
from modelplane_render.yamlio.loader import MAX_DEPTH, MAX_DOCUMENTS_PER_FILE, MAX_NODES_PER_FILE, MAX_NODES_PER_RUN

MiB = 1024 * 1024
REPLICA = (VALID[0] / "replica.yaml").read_text()


# A hang guard for a real process, not a speed expectation.
HANG_GUARD_SECONDS = 120


def measured(action: Callable[[], Result]) -> tuple[Result, int]:
    """The result and the peak bytes Python allocated meanwhile."""
    tracemalloc.start()
    try:
        result = action()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def only_error(result: Result) -> str:
    check_outcome(result.code, result.stdout, result.stderr)
    assert result.code == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# The child is forked by this small launcher, not by pytest: on exec, Linux keeps the high-water RSS of
# the memory being replaced (fs/exec.c exec_mmap), so a program forked from a pytest process of 300 MiB
# reports at least 300 MiB, whatever it used. The launcher reports its own child's peak instead.
_LAUNCHER = """
import os, signal, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as report:
    report.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def run_child(args: list[str], cwd: Path) -> tuple[int, bytes, bytes, int]:
    """A real process: exit status (negative for a signal), stdout, stderr and its own peak RSS.

    Killed (exit status -9) if it runs past HANG_GUARD_SECONDS.
    """
    report = cwd / "maxrss"
    with open(cwd / "stdout", "w+b") as out, open(cwd / "stderr", "w+b") as err:
        process = subprocess.Popen(
            [sys.executable, "-S", "-c", _LAUNCHER, str(report), *args], cwd=cwd, stdout=out, stderr=err, start_new_session=True
        )
        guard = threading.Timer(HANG_GUARD_SECONDS, lambda: os.killpg(process.pid, signal.SIGKILL))
        guard.start()
        try:
            process.wait()
        finally:
            guard.cancel()
        out.seek(0)
        err.seek(0)
        return process.returncode, out.read(), err.read(), int(report.read_text() or 0) * 1024 if report.exists() else 0


# ---------------------------------------------------------------------------------------------
# Aliases


def billion_laughs(levels: int = 9) -> str:
    text = 'lol0: &lol0 "lol"\n'
    for i in range(1, levels + 1):
        text += f"lol{i}: &lol{i} [" + ", ".join([f"*lol{i - 1}"] * 10) + "]\n"
    return text


def test_billion_laughs_is_refused_before_it_is_built_naming_the_limit(tmp_path):  # type: ignore[no-untyped-def]
    result, peak = measured(lambda: run_source(tmp_path, billion_laughs()))
    line = only_error(result)
    assert (
        line
        == f"case.yaml:7:35: .: more than {MAX_NODES_PER_FILE} YAML nodes in one file (keys and values, after expanding aliases): that is the limit"
    )
    assert peak < 40 * MiB, peak  # before: 450 MB (and 6 s) to construct 2 million nodes


def test_quadratic_alias_expansion_is_refused_before_it_is_built(tmp_path):  # type: ignore[no-untyped-def]
    """One big anchor repeated many times: few bytes per alias, the whole anchor per expansion."""
    anchor = "big: &big [" + ", ".join(str(i) for i in range(20_000)) + "]\n"
    text = anchor + "uses:\n" + "".join("- *big\n" for _ in range(100))
    result, peak = measured(lambda: run_source(tmp_path, text))
    assert "YAML nodes in one file (keys and values, after expanding aliases): that is the limit" in only_error(result)
    assert peak < 60 * MiB, peak


def test_aliases_within_the_limit_are_expanded_as_written_out(tmp_path):  # type: ignore[no-untyped-def]
    """An anchor for a repeated block is ordinary YAML: it renders as if written out twice."""
    written_out = yaml.safe_load(REPLICA)
    with_alias = REPLICA.replace("        selectors:\n", "        selectors: &sel\n", 1)
    with_alias += "---\n" + yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "b"}})
    plain = run_source(tmp_path, yaml.safe_dump_all([written_out]))
    assert run_source(tmp_path, with_alias).code == 0 and plain.code == 0


def test_a_recursive_alias_is_an_error_not_a_loop(tmp_path):  # type: ignore[no-untyped-def]
    line = only_error(run_source(tmp_path, "a: &a [1, *a]\n"))
    assert line == "case.yaml:1:4: a[1]: an alias refers to a collection that contains it (a recursive structure)"


# ---------------------------------------------------------------------------------------------
# Size


def test_a_50_mb_file_is_refused_without_reading_it_whole(tmp_path):  # type: ignore[no-untyped-def]
    line_text = "# " + "x" * 1021 + "\n"  # 1 KiB lines of comment: valid YAML all the way
    with open(tmp_path / "case.yaml", "w") as handle:
        handle.write(REPLICA)
        handle.write(line_text * (50 * 1024))
    from conftest import run_cli

    result, peak = measured(lambda: run_cli("render", "case.yaml", cwd=tmp_path))
    assert only_error(result) == "case.yaml:1:1: .: file is larger than the 16 MiB limit"
    assert peak < 40 * MiB, peak  # 16 MiB read, no more


def test_many_files_are_refused_once_the_run_has_read_its_limit(monkeypatch, tmp_path):  # type: ignore[no-untyped-def]
    """The run's byte limit (64 MiB), scaled down to 1 MiB so the test writes little."""
    from conftest import run_cli

    monkeypatch.setattr(sources, "MAX_TOTAL_BYTES", MiB)
    chunk = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  big: " + "x" * (300 * 1024) + "\n"
    for i in range(6):
        (tmp_path / f"part-{i}.yaml").write_text(chunk.replace("{name}", f"c{i}"))
    result = run_cli("render", ".", cwd=tmp_path)
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr == "part-3.yaml:1:1: .: the files read hold more than 1 MiB of YAML in all: that is the limit\n"


def test_a_long_string_is_handled_and_comes_out_whole(tmp_path):  # type: ignore[no-untyped-def]
    value = "v" * (2 * MiB)
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "long"}, "data": {"big": value}}, width=1 << 30)
    result, peak = measured(lambda: run_source(tmp_path, text))
    (obj,) = check_outcome(result.code, result.stdout, result.stderr, text)
    assert obj["data"]["big"] == value
    assert peak < 120 * MiB, peak


def test_a_replicas_annotations_are_capped_as_the_api_server_caps_them(tmp_path):  # type: ignore[no-untyped-def]
    """They are copied onto each of its objects: 2 MiB of annotations would render to about 20 MB. (Past 3 MiB the
    document is refused as a whole, before its annotations are looked at: test_aliases_of_a_long_string_...)"""
    assert "\nmetadata:\n  name: " in REPLICA
    text = REPLICA.replace("\nmetadata:\n", "\nmetadata:\n  annotations:\n    example.com/notes: " + "n" * (2 * MiB) + "\n", 1)
    result, peak = measured(lambda: run_source(tmp_path, text))
    line = text.splitlines().index("  annotations:") + 2  # the mapping's own position: its first key
    assert only_error(result) == (
        f"case.yaml:{line}:5: metadata.annotations: too long: keys and values together must be at most 262144 bytes (256 KiB), "
        "as the API server requires"
    )
    assert peak < 200 * MiB, peak


def test_a_long_key_gives_a_bounded_error_line(tmp_path):  # type: ignore[no-untyped-def]
    """A 1 MiB key (explicit `? key` syntax) in a replica: one error line, cut to a readable length."""
    key = "k" * MiB
    text = REPLICA.replace("spec:\n", f"spec:\n  ? {key}\n  : 1\n", 1)
    result, peak = measured(lambda: run_source(tmp_path, text))
    line = only_error(result)
    assert line.startswith("case.yaml:") and "unknown field" in line and "characters left out" in line
    assert len(line) < 1100 and peak < 100 * MiB, (len(line), peak)  # measured: 42 MiB


def test_a_simple_key_over_1024_characters_says_why(tmp_path):  # type: ignore[no-untyped-def]
    line = only_error(run_source(tmp_path, "k" * 1100 + ": 1\n"))
    assert line.startswith("case.yaml:1:1101: .: YAML syntax:") and "1024 characters" in line and "? key" in line


# ---------------------------------------------------------------------------------------------
# Count of nodes and documents


def test_a_huge_flow_list_is_refused_while_parsing_not_after(tmp_path):  # type: ignore[no-untyped-def]
    """16 MiB of `a,`: 8 million nodes, which PyYAML's composer alone would turn into gigabytes
    and a minute (measured before the limit was checked while parsing: 48 s, 2.9 GB)."""
    (tmp_path / "case.yaml").write_text("a: [" + "a," * (8 * MiB - 8) + "a]\n")
    code, out, err, rss = run_child([sys.executable, str(ROOT / "plugin.py"), "render", "case.yaml"], tmp_path)
    assert (code, out) == (1, b""), (code, err[-300:])
    (line,) = err.decode().splitlines()
    assert line.startswith("case.yaml:1:") and f"more than {MAX_NODES_PER_FILE} YAML nodes in one file" in line
    # Peak RSS is the 16 MiB text plus up to MAX_NODES_PER_FILE nodes before the limit trips: 230-290 MiB
    # measured across runs here, against 2.9 GB without the limit.
    assert rss < 400 * MiB, rss  # before: 2.9 GB (and 48 s)


def test_the_node_limit_holds_for_a_run_across_files(monkeypatch, tmp_path):  # type: ignore[no-untyped-def]
    """Many files each under the per-file limit still can't take the run over its own limit."""
    from conftest import run_cli

    monkeypatch.setattr(loader, "MAX_NODES_PER_FILE", 1000)
    monkeypatch.setattr(loader, "MAX_NODES_PER_RUN", 2500)
    for i in range(4):  # 11 nodes of ConfigMap and 900 of list: 911 a file
        items = ", ".join("x" for _ in range(900))
        (tmp_path / f"f{i}.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\nlist: [{items}]\n")
    result = run_cli("render", ".", cwd=tmp_path)
    assert result.code == 1 and result.stdout == ""
    f2, f3 = result.stderr.splitlines()
    assert f2.startswith("f2.yaml:4:") and f2.endswith(
        ": .: more than 2500 YAML nodes in all the files read (keys and values, after expanding aliases): that is the limit"
    )
    assert f3.startswith("f3.yaml:")


def test_100000_documents_are_refused_at_the_limit(tmp_path):  # type: ignore[no-untyped-def]
    text = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n" for i in range(100_000))
    result, peak = measured(lambda: run_source(tmp_path, text))
    line = only_error(result)
    assert line == f"case.yaml:{5 * MAX_DOCUMENTS_PER_FILE + 1}:1: .: more than {MAX_DOCUMENTS_PER_FILE} documents in one file"
    assert peak < 60 * MiB, peak


def test_many_documents_within_the_limit_render(tmp_path):  # type: ignore[no-untyped-def]
    text = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i:05}\n" for i in range(2000))
    result = run_source(tmp_path, text)
    assert len(check_outcome(result.code, result.stdout, result.stderr, text)) == 2000


# ---------------------------------------------------------------------------------------------
# Depth: in a real process, where a C stack overflow would show as a signal


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param(lambda n: "a: " + "[" * n + "]" * n + "\n", id="flow-lists"),
        pytest.param(lambda n: "a: " + "{a: " * n + "x" + "}" * n + "\n", id="flow-maps"),
        pytest.param(lambda n: "- " * n + "x\n", id="block-lists"),
        # Block mappings indent once more per level: 5,000 levels is already 12.5 MB of spaces,
        # and 10,000 would be refused as a file over 16 MiB before any parsing.
        pytest.param(lambda n: "".join(" " * i + "k:\n" for i in range(n // 2)) + " " * (n // 2) + "x\n", id="block-maps-5000"),
    ],
)
def test_10000_deep_nesting_is_refused_cleanly(shape, tmp_path):  # type: ignore[no-untyped-def]
    source = shape(10_000)
    (tmp_path / "case.yaml").write_text(source)
    code, out, err, rss = run_child([sys.executable, str(ROOT / "plugin.py"), "render", "case.yaml"], tmp_path)
    assert code == 1, (code, err[-300:])  # a signal would be negative
    assert out == b""
    (line,) = err.decode().splitlines()
    assert line.endswith(f": .: YAML nested deeper than {MAX_DEPTH} levels") and line.startswith("case.yaml:")
    assert rss < 300 * MiB, rss


def test_nesting_at_the_limit_is_read_and_one_more_is_not():  # type: ignore[no-untyped-def]
    def nested(levels: int) -> str:
        return "a: " + "[" * levels + "]" * levels + "\n"  # the root mapping is level 0

    assert loader.load_documents("f", nested(MAX_DEPTH))
    with pytest.raises(InputError) as caught:
        loader.load_documents("f", nested(MAX_DEPTH + 1))
    assert str(caught.value.errors[0]) == f"f:1:{4 + MAX_DEPTH}: .: YAML nested deeper than {MAX_DEPTH} levels"


def test_deep_nesting_through_aliases_is_refused(tmp_path):  # type: ignore[no-untyped-def]
    """Each alias adds the depth of what it repeats: 60 levels aliased 60 levels down is 120."""
    text = "a: &deep " + "[" * 60 + "]" * 60 + "\nb: " + "[" * 60 + "*deep" + "]" * 60 + "\n"
    assert f"YAML nested deeper than {MAX_DEPTH} levels" in only_error(run_source(tmp_path, text))


def test_the_pure_python_loader_is_bounded_too(monkeypatch, tmp_path):  # type: ignore[no-untyped-def]
    """Without libyaml (a platform with no wheel), the same limits and messages."""
    monkeypatch.setattr(loader, "_Loader", yaml.SafeLoader)
    line = only_error(run_source(tmp_path, "a: " + "[" * 10_000 + "]" * 10_000 + "\n"))
    assert line == f"case.yaml:1:{4 + MAX_DEPTH}: .: YAML nested deeper than {MAX_DEPTH} levels"
    assert "more than" in only_error(run_source(tmp_path, billion_laughs()))


def test_limits_are_what_the_docs_say():  # type: ignore[no-untyped-def]
    readme = (ROOT / "docs" / "validation.md").read_text()
    stated: dict[str, Any] = {
        f"{loader.MAX_FILE_BYTES // MiB} MiB": "file",
        f"{sources.MAX_TOTAL_BYTES // MiB} MiB": "run",
        f"{MAX_DOCUMENTS_PER_FILE:,}": "documents",
        f"{MAX_NODES_PER_FILE:,}": "nodes a file",
        f"{MAX_NODES_PER_RUN:,}": "nodes a run",
        f"{MAX_DEPTH} levels": "depth",
    }
    for text in stated:
        assert text in readme, f"docs/validation.md does not state the limit {text}"


# ---------------------------------------------------------------------------------------------
# The scan is skipped only where no limit can be reached


def _measured(text: str) -> tuple[int, int, int]:
    """(nodes, deepest nesting, documents) of text, as the scan counts them."""
    nodes = depth = deepest = documents = 0
    for event in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        kind = type(event)
        if kind in (yaml.ScalarEvent, yaml.AliasEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent):
            nodes += 1
        if kind in (yaml.SequenceStartEvent, yaml.MappingStartEvent):
            depth += 1
            deepest = max(deepest, depth)
        elif kind in (yaml.SequenceEndEvent, yaml.MappingEndEvent):
            depth -= 1
        elif kind is yaml.DocumentStartEvent:
            documents += 1
    return nodes, deepest, documents


block_data = st.recursive(
    st.none() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, min_size=1, max_size=3) | st.dictionaries(st.text(max_size=3), inner, min_size=1, max_size=3),
    max_leaves=60,
)


@settings(max_examples=500, deadline=None)
@given(st.lists(block_data, min_size=1, max_size=3), st.sampled_from([2, 4]), st.sampled_from([False, None, True]))
def test_a_file_the_scan_skips_cannot_reach_a_limit(documents: list[Any], indent: int, flow: Any) -> None:
    """Block, flow and mixed YAML: where the scan is skipped, the bounds it relies on hold."""
    text = yaml.safe_dump_all(documents, default_flow_style=flow, indent=indent, explicit_start=True, width=40)
    if loader._may_pass_a_limit(text, loader._Budget()):
        return
    lines = text.count("\n") + 1
    opens = text.count("[") + text.count("{")
    nodes, deepest, count = _measured(text)
    assert deepest <= loader._PREFIX_MAX + 2 + opens < MAX_DEPTH
    assert nodes <= lines * (loader._PREFIX_MAX + 2) + 3 * (opens + text.count(","))
    assert count <= lines


@pytest.mark.parametrize(
    ("text", "skipped"),
    [
        ("- " * 31 + "x\n", True),  # 31 levels: nothing to count
        ("- " * 32 + "x\n", False),  # a line starting with 64 columns of `- `: counted
        ("".join(" " * i + "k:\n" for i in range(64)) + " " * 64 + "x\n", False),
        ("-\t" * 200 + "x\n", False),  # tabs separate items as spaces do
        ("a: &x 1\nb: *x\n", False),
        ("a: " + "[" * 30 + "]" * 30 + "\n", True),  # 30 flow levels: at most 31 deep
        ("a: " + "[" * 31 + "]" * 31 + "\n", False),
        ("- " * 31 + "[" * 30 + "]" * 30 + "\n", True),  # both at once: still under the limit
        ("a: [b: c, d: e, f]\n", True),
        ("? a\n: b\n", False),
        ("a: 1\r\nb: 2\r\n", False),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  k: v\n", True),
    ],
)
def test_the_scan_runs_where_a_file_could_reach_a_limit(text: str, skipped: bool) -> None:
    assert loader._may_pass_a_limit(text, loader._Budget()) is not skipped
    if skipped:
        assert _measured(text)[1] < MAX_DEPTH


def test_the_scan_runs_when_the_run_s_budget_is_nearly_spent() -> None:
    budget = loader._Budget()
    text = "a: 1\n"
    assert not loader._may_pass_a_limit(text, budget)
    budget.run_left = 10
    assert loader._may_pass_a_limit(text, budget)


def test_aliases_of_a_long_string_are_bounded_by_what_they_expand_to(tmp_path):  # type: ignore[no-untyped-def]
    """3,000 aliases of a 100 KB string: few nodes, 300 MB of text once expanded (accepted once, after 21 s at
    1.46 GB, and rendered 300 MB; the API server times out on it). Refused past the API server's 3 MiB request
    limit, at the alias that passes it, in bounded memory."""
    from modelplane_render.yamlio.loader import MAX_DOCUMENT_BYTES

    payload = "x" * 100_000
    aliases = "".join("            - *big\n" for _ in range(3000))
    text = REPLICA.replace("            args:\n", f"            args:\n            - &big {payload}\n{aliases}", 1)
    result, peak = measured(lambda: run_source(tmp_path, text))
    line = only_error(result)
    assert f"more than {MAX_DOCUMENT_BYTES // MiB} MiB of text once its aliases are expanded" in line, line
    assert line.startswith("case.yaml:") and ".args[31]" in line  # the 31st alias passes 3 MiB
    assert peak < 200 * MiB, peak
