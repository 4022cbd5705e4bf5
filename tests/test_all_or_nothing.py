"""All or nothing: the whole output is rendered and checked in memory, then written at once.

Argo CD applies what `generate` prints and prunes what is missing: half an output deletes live
workloads. Each failure is made to happen here, and each time stdout gets nothing (or, when the
reader or the disk fails mid-write, the exit status says so), stderr gets one line, never a
traceback, and nothing was written before the failure was known.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jinja2
import pytest

from conftest import ROOT, VALID, run_process
from modelplane_render import __version__, render
from modelplane_render.commands import writer
from modelplane_render.errors import EXIT_INTERNAL, EXIT_INVALID
from modelplane_render.main import main

ALL = ROOT / "fixtures" / "valid"
LAST_KIND_TEMPLATE = "inferencepool.yaml.j2"  # InferencePool sorts after every other rendered kind
PLUGIN = [sys.executable, str(ROOT / "plugin.py")]


@pytest.fixture
def writes(monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    """Every call of writer.write_stdout, passed on to the real writer (so capfd sees real fd 1)."""
    calls: list[str] = []
    real = writer.write_stdout

    def spy(text: str | list[str]) -> None:
        calls.append(text if isinstance(text, str) else "".join(text))
        real(text)

    monkeypatch.setattr(writer, "write_stdout", spy)
    return calls


def run_main(capfd, *args: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    code = main(list(args))
    out, err = capfd.readouterr()
    return code, out, err


def one_failure_line(code: int, out: str, err: str, *, internal: bool = False) -> str:
    """The one line of a failure; `internal` when the failure is, by construction, a bug of the tool (exit 4)."""
    assert (code, out) == (EXIT_INTERNAL if internal else EXIT_INVALID, "")
    assert "Traceback" not in err and ("internal error" in err) == internal, err
    if internal:
        assert f"a bug of modelplane-render {__version__}, not of the input; please report it" in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


def with_template(monkeypatch, name: str, text: str) -> None:  # type: ignore[no-untyped-def]
    """The Jinja environment, with one template replaced."""
    real = render.environment()
    env = real.overlay(loader=jinja2.ChoiceLoader([jinja2.DictLoader({name: text}), real.loader]))
    monkeypatch.setattr(render, "environment", lambda: env)


@pytest.mark.parametrize(
    ("broken", "says"),
    [
        pytest.param(
            "apiVersion: inference.networking.k8s.io/v1\nkind: InferencePool\nmetadata: {name: not-the-planned-name, namespace: {{ v.namespace | tojson }}}\n",
            "the plan says",
            id="wrong-name",
        ),
        pytest.param("apiVersion: [\n", "rendered invalid YAML", id="invalid-yaml"),
        pytest.param("---\na: 1\n---\nb: 2\n", "must render exactly one object, it rendered 2", id="two-documents"),
        # Every one is a bug of this tool (a template, or the plan, is wrong), so "internal error"
        # is the truth, exit 4, with the template (and line) to look at.
        pytest.param(
            "kind: x\n{{ v.no_such_value }}",
            f"internal error in template {LAST_KIND_TEMPLATE}:2 (UndefinedError: 'dict object' has no attribute 'no_such_value')",
            id="undefined-value",
        ),
        pytest.param("{% if %}", f"internal error in template {LAST_KIND_TEMPLATE}:1 (TemplateSyntaxError: ", id="syntax-error"),
    ],
)
def test_an_object_failing_its_check_prints_nothing(monkeypatch, capfd, writes, broken, says):  # type: ignore[no-untyped-def]
    """The failing object renders last of all: every object before it was rendered, none printed."""
    with_template(monkeypatch, LAST_KIND_TEMPLATE, broken)
    line = one_failure_line(*run_main(capfd, "render", str(ALL)), internal=True)
    assert line.startswith("modelplane-render: ") and says in line, line
    assert writes == []


def test_a_wrong_plan_prints_nothing(monkeypatch, capfd, writes):  # type: ignore[no-untyped-def]
    """The plan names an object one way and the template another: caught by the check, not printed."""
    from modelplane_render import pipeline

    real = pipeline.plan_replica

    def wrong(*args: Any, **kwargs: Any) -> Any:
        planned = real(*args, **kwargs)
        planned.objects[-1].namespace = "elsewhere"
        return planned

    monkeypatch.setattr(pipeline, "plan_replica", wrong)
    line = one_failure_line(*run_main(capfd, "render", str(ALL)), internal=True)
    assert "the plan says" in line and "elsewhere" in line
    assert writes == []


def test_an_output_that_would_hold_one_object_twice_prints_nothing(tmp_path, capfd, writes):  # type: ignore[no-untyped-def]
    """A passed-through object named like a rendered one: found after rendering, before printing."""
    case = VALID[0]
    (tmp_path / "replica.yaml").write_text((case / "replica.yaml").read_text())
    rendered = run_process("render", str(case)).stdout.decode()
    service = next(doc for doc in rendered.split("---\n") if doc.startswith("apiVersion: v1\nkind: Service\n"))
    (tmp_path / "zz-clash.yaml").write_text(service)
    os.chdir(tmp_path)
    try:
        line = one_failure_line(*run_main(capfd, "render", "."))
    finally:
        os.chdir(ROOT)
    assert "two objects would be Service" in line
    assert writes == []


def test_a_success_is_written_in_one_call(capfd, writes):  # type: ignore[no-untyped-def]
    code, out, err = run_main(capfd, "render", str(ALL))
    assert (code, err) == (0, "")
    assert writes == [out]


def test_validate_never_writes(capfd, writes):  # type: ignore[no-untyped-def]
    assert run_main(capfd, "validate", str(ALL)) == (0, "", "")
    assert writes == []


# ---------------------------------------------------------------------------------------------
# The real process: where the output goes fails


def test_stdout_closed_early_by_head(tmp_path):  # type: ignore[no-untyped-def]
    """`render | head -c 10`: the reader goes away mid-write; the exit status and one line say so."""
    assert len(run_process("render", str(ALL)).stdout) > 128 * 1024  # more than a pipe holds (64 KiB)
    script = f'{" ".join(PLUGIN)} render {ALL} 2>"{tmp_path}/err" | head -c 10 >/dev/null; echo "${{PIPESTATUS[0]}}"'
    done = subprocess.run(["bash", "-c", script], capture_output=True, timeout=120)
    assert done.stdout.decode().strip() == "1"
    assert (tmp_path / "err").read_text() == "modelplane-render: stdout was closed before all of the output was written\n"


def test_disk_full(tmp_path):  # type: ignore[no-untyped-def]
    with open("/dev/full", "wb") as full:
        done = subprocess.run([*PLUGIN, "render", str(ALL)], stdout=full, stderr=subprocess.PIPE, timeout=120)
    assert done.returncode == 1
    assert done.stderr.decode() == "modelplane-render: cannot write the output: No space left on device\n"


def test_stdout_not_open_at_all():  # type: ignore[no-untyped-def]
    done = subprocess.run(["bash", "-c", f"{' '.join(PLUGIN)} render {ALL} >&-"], capture_output=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.decode() == "modelplane-render: cannot write the output: stdout is closed\n"


def test_stderr_closed_too_is_still_an_exit_status_not_a_crash(tmp_path):  # type: ignore[no-untyped-def]
    (tmp_path / "bad.yaml").write_text("a: [\n")
    done = subprocess.run(
        ["bash", "-c", f'{" ".join(PLUGIN)} render bad.yaml 2>&- >&-; echo "$?"'], cwd=tmp_path, capture_output=True, timeout=120
    )
    assert done.stdout.decode().strip() == "1"


def test_a_non_blocking_stdout_is_waited_on_not_failed(tmp_path):  # type: ignore[no-untyped-def]
    """A parent that left the pipe non-blocking (EAGAIN once the pipe is full) still gets every byte."""
    expected = run_process("render", str(ALL)).stdout

    def non_blocking() -> None:
        flags = fcntl.fcntl(1, fcntl.F_GETFL)
        fcntl.fcntl(1, fcntl.F_SETFL, flags | os.O_NONBLOCK)

    process = subprocess.Popen([*PLUGIN, "render", str(ALL)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=non_blocking)
    time.sleep(0.5)  # let the pipe fill up: the writer meets EAGAIN
    out, err = process.communicate(timeout=120)
    assert (process.returncode, err) == (0, b"")
    assert out == expected


@pytest.mark.parametrize("fault", ["invalid-input", "object-clash"])
def test_nothing_reaches_the_output_file_before_the_failure_is_known(tmp_path, fault):  # type: ignore[no-untyped-def]
    """The last file read is the one that fails; the files before it render fine, yet the output
    file stays empty: nothing was written while the rest was still being judged."""
    for case in VALID:
        target = tmp_path / "app" / case.name
        target.mkdir(parents=True)
        for source in case.glob("*.yaml"):
            (target / source.name).write_text(source.read_text())
    if fault == "invalid-input":
        (tmp_path / "app" / "zzz.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [not, a, name]}\n")
        says = "app/zzz.yaml:3:"
    else:
        first = run_process("render", str(VALID[0])).stdout.decode().split("---\n")[1]
        (tmp_path / "app" / "zzz.yaml").write_text(first)
        says = "modelplane-render: two objects would be"
    out_file: Path = tmp_path / "out.yaml"
    with open(out_file, "wb") as out:
        done = subprocess.run([*PLUGIN, "render", "app"], cwd=tmp_path, stdout=out, stderr=subprocess.PIPE, timeout=120)
    assert done.returncode == 1
    assert out_file.stat().st_size == 0
    assert done.stderr.decode().startswith(says), done.stderr


def test_an_internal_error_prints_its_traceback_only_when_asked(monkeypatch, capfd, writes):  # type: ignore[no-untyped-def]
    with_template(monkeypatch, LAST_KIND_TEMPLATE, "kind: x\n{{ v.no_such_value }}")
    quiet = one_failure_line(*run_main(capfd, "render", str(ALL)), internal=True)
    monkeypatch.setenv("MODELPLANE_RENDER_DEBUG", "1")
    code, out, err = run_main(capfd, "render", str(ALL))
    assert (code, out) == (EXIT_INTERNAL, "")
    assert err.startswith("Traceback (most recent call last):") and "jinja2.exceptions.UndefinedError" in err, err
    assert err.splitlines()[-1] == quiet  # the same last line, after the traceback
    assert writes == []


def test_a_bug_of_ours_anywhere_is_exit_4_never_a_traceback(monkeypatch, capfd, writes):  # type: ignore[no-untyped-def]
    from modelplane_render import pipeline

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(pipeline, "plan_replica", broken)
    line = one_failure_line(*run_main(capfd, "render", str(ALL)), internal=True)
    assert line.startswith("modelplane-render: internal error (ZeroDivisionError: division by zero): a bug of modelplane-render ")


def test_ctrl_c_exits_130_with_one_line(monkeypatch, capfd, writes):  # type: ignore[no-untyped-def]
    from modelplane_render import pipeline

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "plan_replica", interrupted)
    assert run_main(capfd, "render", str(ALL)) == (130, "", "modelplane-render: interrupted\n")
    assert writes == []


def test_sigint_to_the_process_exits_130(tmp_path):  # type: ignore[no-untyped-def]
    """A real Ctrl-C: SIGINT to the KRM function while it waits for its ResourceList on stdin."""
    import signal

    process = subprocess.Popen([*PLUGIN, "krm"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.5)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert (process.returncode, out, err) == (130, b"", b"modelplane-render: interrupted\n")
