"""Byte-identical output whatever the hash seed, the locale, the order a directory lists in, the Python.

Argo CD compares what `generate` prints with the cluster; output that changes with the machine
is an endless OutOfSync. The locales are built here with `localedef` into a temporary LOCPATH
(no root, no package install), so the Turkish locale (whose dotted/dotless i breaks naive case
mapping) and a non-UTF-8 locale are really in effect, not silently replaced by C.
"""

from __future__ import annotations

import glob
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, VALID, run_cli, run_process

REFERENCE_ARGS = ("render", "fixtures/valid")
# An input whose errors quote non-ASCII text, so the bytes of stderr are compared too.
BAD = "apiVersion: modelplane.ai/v1alpha1\nkind: ModelReplica\nmetadata: {name: r, namespace: ns}\nspec:\n  İstanbul-café: 1\n"


@pytest.fixture(scope="module")
def locales(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """A LOCPATH holding tr_TR.UTF-8 and tr_TR.ISO-8859-9, compiled from glibc's locale sources."""
    target = tmp_path_factory.mktemp("locales")
    localedef = shutil.which("localedef")
    if not localedef or not os.path.exists("/usr/share/i18n/locales/tr_TR"):
        if os.environ.get("CI") == "true":
            pytest.fail("CI must test the Turkish locale: install glibc's locale sources (the locales package)")
        pytest.skip("no localedef or no tr_TR locale source here: only the locales this machine has are tested")
    for charmap in ("UTF-8", "ISO-8859-9"):
        subprocess.run([localedef, "-i", "tr_TR", "-f", charmap, str(target / f"tr_TR.{charmap}")], check=True, capture_output=True)
    return target


def environments(locpath: Path) -> list[dict[str, str]]:
    """Each locale once, each with another hash seed: every seed and every locale is met."""
    base = {"LOCPATH": str(locpath)}
    pairs = [("0", "C"), ("1", "POSIX"), ("4242", "C.UTF-8"), ("random", "tr_TR.UTF-8"), ("7", "tr_TR.ISO-8859-9")]
    found = [{**base, "PYTHONHASHSEED": seed, "LC_ALL": lc_all, "LANG": lc_all} for seed, lc_all in pairs]
    found.append({**base, "PYTHONHASHSEED": "random", "LC_ALL": "", "LANG": "", "LANGUAGE": "tr"})
    return found


def test_the_locales_are_really_in_effect(locales):  # type: ignore[no-untyped-def]
    probe = "import locale; locale.setlocale(locale.LC_ALL, ''); print(locale.setlocale(locale.LC_CTYPE), locale.getpreferredencoding())"
    for name, encoding in (("tr_TR.UTF-8", "UTF-8"), ("tr_TR.ISO-8859-9", "ISO-8859-9")):
        env = {**os.environ, "LOCPATH": str(locales), "LC_ALL": name}
        done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
        assert done.stdout.split() == [name, encoding]


def test_output_and_errors_are_the_same_bytes_across_hash_seeds_and_locales(locales, tmp_path):  # type: ignore[no-untyped-def]
    (tmp_path / "bad.yaml").write_text(BAD, encoding="utf-8")
    outputs, errors = set(), set()
    for env in environments(locales):
        good = run_process(*REFERENCE_ARGS, cwd=ROOT, env=env)
        assert (good.returncode, good.stderr) == (0, b""), (env, good.stderr)
        outputs.add(good.stdout)
        bad = run_process("render", "bad.yaml", cwd=tmp_path, env=env)
        assert bad.returncode == 1 and bad.stdout == b""
        errors.add(bad.stderr)
    assert len(outputs) == 1
    assert len(errors) == 1, errors
    (error,) = errors
    assert 'unknown field "İstanbul-café"' in error.decode("utf-8")  # UTF-8 on stderr, whatever the locale's encoding


@pytest.mark.parametrize("order", ["reversed", "shuffled"])
def test_output_does_not_depend_on_the_order_a_directory_lists_in(monkeypatch, tmp_path, order):  # type: ignore[no-untyped-def]
    """os.scandir lists in the file system's order (creation, hash); the walk must sort, for
    the output and for the order of errors alike."""
    for i, case in enumerate(VALID):
        shutil.copytree(case, tmp_path / "good" / ("deeper" if i % 2 else "") / case.name)
    shutil.copytree(ROOT / "fixtures" / "invalid", tmp_path / "bad")
    before = [run_cli("render", "good", cwd=tmp_path), run_cli("validate", "bad", cwd=tmp_path)]
    assert before[0].code == 0 and before[1].code == 1
    real = os.scandir
    reorder = (lambda entries: entries.reverse()) if order == "reversed" else random.Random(7).shuffle

    class Reordered:
        """os.scandir, its entries in another order."""

        def __init__(self, path: str = ".") -> None:
            with real(path) as listing:
                entries = list(listing)
            reorder(entries)
            self._entries = iter(entries)

        def __enter__(self) -> Reordered:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def __iter__(self) -> Reordered:
            return self

        def __next__(self) -> os.DirEntry[str]:
            return next(self._entries)

        def close(self) -> None:
            return None

    monkeypatch.setattr(os, "scandir", Reordered)
    assert [run_cli("render", "good", cwd=tmp_path), run_cli("validate", "bad", cwd=tmp_path)] == before


# ---------------------------------------------------------------------------------------------
# Other Python versions


def _other_pythons() -> list[Any]:
    """Every other CPython this machine has (pyenv's, or python3.X on PATH), newest patch first."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    if shutil.which("pyenv"):
        done = subprocess.run(["pyenv", "root"], capture_output=True, text=True)
        root = done.stdout.strip() or root
    params = []
    for version in ("3.12", "3.13"):
        found = sorted(glob.glob(f"{root}/versions/{version}.*/bin/python{version}"), reverse=True)
        path = found[0] if found else shutil.which(f"python{version}")
        if path is not None:  # one this machine lacks is not a test (.ci/run runs these where any exists)
            params.append(pytest.param(path, id=version))
    return params


def _bytes_of_every_fixture(command: list[str]) -> dict[str, bytes]:
    """stdout of rendering every valid fixture, and stderr of validating every invalid one at once."""
    valid = subprocess.run([*command, "render", "fixtures/valid"], cwd=ROOT, capture_output=True, timeout=300)
    assert (valid.returncode, valid.stderr) == (0, b""), valid.stderr
    invalid = subprocess.run([*command, "validate", "fixtures/invalid"], cwd=ROOT, capture_output=True, timeout=300)
    assert invalid.returncode == 1 and invalid.stdout == b"" and len(invalid.stderr.splitlines()) > 80
    return {"render fixtures/valid": valid.stdout, "validate fixtures/invalid": invalid.stderr}


@pytest.mark.other_pythons
@pytest.mark.parametrize("python", _other_pythons())
def test_another_python_renders_the_same_bytes(python, tmp_path):  # type: ignore[no-untyped-def]
    """Install the project into a fresh venv of that Python (from PyPI, as a user would) and compare."""
    where = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", str(where)], check=True, timeout=300)
    pip = [str(where / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    done = subprocess.run([*pip, str(ROOT)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = _bytes_of_every_fixture([str(where / "bin" / "modelplane-render")])
    ours = _bytes_of_every_fixture([sys.executable, str(ROOT / "plugin.py")])
    assert theirs.keys() == ours.keys()
    differ = [name for name in ours if theirs[name] != ours[name]]
    assert not differ, f"{python} differs from {sys.version.split()[0]} on {differ}"
