"""Shared fixtures: the fixture folders, and running the command in-process or as a real process."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

from snapshot_yaml import YamlSnapshotExtension

TYPE_CHECKING = False
if TYPE_CHECKING:
    from modelplane_render.plan import PlannedObject

sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
VALID = sorted(p for p in (FIXTURES / "valid").iterdir() if p.is_dir())
INVALID = sorted(p for p in (FIXTURES / "invalid").iterdir() if p.is_dir()) if (FIXTURES / "invalid").is_dir() else []


def _shared_dir() -> Path:
    """../shared (the upstream CRDs and notes the tests read): beside the checkout, or named by
    MODELPLANE_SHARED_DIR, or beside the repository a clean clone was made from (`git clone /work/main /tmp/x`)."""
    if os.environ.get("MODELPLANE_SHARED_DIR"):
        return Path(os.environ["MODELPLANE_SHARED_DIR"])
    beside = ROOT.parent / "shared"
    if beside.is_dir():
        return beside
    origin = subprocess.run(
        ["git", "-C", str(ROOT), "config", "--get", "remote.origin.url"], capture_output=True, text=True, check=False
    ).stdout.strip()
    cloned_from = Path(origin.removeprefix("file://")) if origin and "://" not in origin.removeprefix("file://") else None
    if cloned_from is not None and (cloned_from.parent / "shared").is_dir():
        return cloned_from.parent / "shared"
    return beside


SHARED = _shared_dir()


def rendered_fixture_objects() -> list[tuple[PlannedObject, str]]:
    """(planned object, the text its template renders) for every replica of the valid fixtures."""
    from modelplane_render import render
    from modelplane_render.errors import Finding
    from modelplane_render.options import Options
    from modelplane_render.pipeline import classify
    from modelplane_render.plan.replica import plan_replica
    from modelplane_render.sources import iter_documents
    from modelplane_render.validation import judge_replica

    rendered = []
    for document in iter_documents([str(p) for p in VALID]):
        if isinstance(document, Finding) or classify(document)[0] != "replica":
            continue
        replica, errors = judge_replica(document, "default")
        assert errors == []
        for planned in plan_replica(replica, Options(namespace="default"), document.file).objects:
            rendered.append((planned, render.render_object(planned)))
    assert len(rendered) > 100
    return rendered


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str


def run_cli(*args: str, cwd: Path | None = None) -> Result:
    """The command in this process (fast): main() with stdout and stderr captured."""
    from modelplane_render.commands import writer
    from modelplane_render.main import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    captured: list[str] = []
    real_write = writer.write_stdout

    def capture(text: str | list[str]) -> None:  # what write_stdout takes: the text, or its parts
        captured.extend([text] if isinstance(text, str) else text)

    writer.write_stdout = capture  # type: ignore[assignment]
    try:
        if cwd:
            os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(old)
        writer.write_stdout = real_write  # type: ignore[assignment]
    return Result(code, "".join(captured) + out.getvalue(), err.getvalue())


def run_process(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """The command as a real process, through plugin.py, as Argo CD and kustomize start it."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, str(ROOT / "plugin.py"), *args], cwd=cwd, env=full_env, capture_output=True, input=stdin, timeout=120
    )


def bare_interpreter_modules(env: dict[str, str] | None = None, cwd: Path | None = None) -> frozenset[str]:
    """The modules `python -c pass` has loaded before any code runs: this interpreter, env and cwd.

    `site` and the .pth files of the environment import what they like (on some machines `site`
    loads importlib.resources), and that is no import of ours. A test of what a run imports
    subtracts these, so it judges our modules and nothing the machine loads first. sys.modules
    is read before anything else is imported.
    """
    code = "import sys; print('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, timeout=120, check=True)
    return frozenset(done.stdout.split())


def imported_by_us(modules: set[str] | list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> set[str]:
    """`modules` (a run's sys.modules, same interpreter, env and cwd) less what a bare interpreter already has."""
    return set(modules) - bare_interpreter_modules(env, cwd)


@pytest.fixture
def snapshot_yaml(snapshot):  # type: ignore[no-untyped-def]
    return snapshot.use_extension(YamlSnapshotExtension)


# Markers whose tests run only when asked for with `-m` (CI asks; `.ci/run` says how long each takes).
OPT_IN_MARKERS = ("slow", "other_pythons", "picker_binary", "real_engine", "argocd_sync", "sidecar_image")


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Opt-in tests are deselected (not skipped) unless `-m` names them: a skip in CI counts as a failure."""
    selected = config.option.markexpr or ""
    keep, dropped = [], []
    for item in items:
        opt_in = [name for name in OPT_IN_MARKERS if name in item.keywords]
        (dropped if any(name not in selected for name in opt_in) else keep).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


@pytest.fixture(scope="module")
def rbac_api():  # type: ignore[no-untyped-def]
    """A real kube-apiserver with --authorization-mode=RBAC and every CRD the picker watches (or looks for)."""
    import yaml
    from test_apiserver import PICKER_CRDS, UPSTREAM_CRDS

    from peer import real_apiserver

    with real_apiserver(authorization_mode="RBAC") as server:
        for name in UPSTREAM_CRDS + PICKER_CRDS:
            server.apply_crd(yaml.safe_load((SHARED / "upstream" / "crds" / name).read_text()))
        yield server


def _skip_reason(report: pytest.TestReport) -> str:
    """A skipped test's reason as given to pytest.skip (pytest keeps it as (file, line, "Skipped: reason"))."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter, exitstatus, config):  # type: ignore[no-untyped-def]
    """The skips for peers that aren't built end the run as one line, with the one command that builds them all.

    They are kept out of `-ra`'s list of skips (one line per peer, more than a newcomer needs; `-v` shows it)
    and put back before the count. Under CI a missing peer fails the test instead (peer.peer_missing).
    """
    from peer import peer_skip_summary

    skipped = terminalreporter.stats.get("skipped", [])
    line = peer_skip_summary(_skip_reason(report) for report in skipped)
    folded = bool(line) and config.option.verbose <= 0
    if folded:
        terminalreporter.stats["skipped"] = [r for r in skipped if not peer_skip_summary([_skip_reason(r)])]
    try:
        return (yield)
    finally:
        if folded:
            terminalreporter.stats["skipped"] = skipped
        if line:
            terminalreporter.write_line(line, yellow=True, bold=True)
