"""The layering of the package, as pyproject.toml's import-linter contracts state it, holds, and would catch a break.

grimp (under import-linter) reads every import of a module, those inside functions included, so a
lazy import can't hide an upward dependency or a circle.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(package_parent: Path, *contracts: str) -> subprocess.CompletedProcess[str]:
    """lint-imports with the project's contracts (or only those named), on the package found first in package_parent."""
    env = os.environ | {"PYTHONPATH": str(package_parent)}
    only = [arg for contract in contracts for arg in ("--contract", contract)]
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", *only, str(ROOT / "pyproject.toml")],
        cwd=package_parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def copy_of_the_package(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "modelplane_render", tmp_path / "modelplane_render", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "modelplane_render"


def test_the_package_keeps_every_contract() -> None:
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 kept, 0 broken" in done.stdout


@pytest.mark.parametrize(
    ("module", "added", "contract"),
    [
        # A stage reaching up, inside a function, as the render cache once did for the pipeline.
        ("cache/render.py", "def _up():\n    from ..pipeline import render_paths\n\n    return render_paths\n", "layers"),
        # The plan borrowing the output stage's dumper, as it once did.
        ("plan/picker.py", "def _up():\n    from ..output import serialise\n\n    return serialise\n", "layers"),
        # One front end using another.
        ("frontends/krm/function.py", "from ..argocd import discover as _discover\n", "frontends"),
        # A circle inside one room.
        ("yamlio/scalars.py", "def _back():\n    from . import fast\n\n    return fast\n", "acyclic"),
    ],
)
def test_an_added_import_that_breaks_the_layering_fails(tmp_path: Path, module: str, added: str, contract: str) -> None:
    target = copy_of_the_package(tmp_path) / module
    assert lint_imports(tmp_path, contract).returncode == 0  # the copy keeps it before the change
    target.write_text(target.read_text() + "\n\n" + added)
    done = lint_imports(tmp_path, contract)
    assert done.returncode == 1 and "0 kept, 1 broken" in done.stdout, done.stdout + done.stderr


MAX_MODULE_LINES = 450


def test_every_module_is_small_enough_to_read_whole() -> None:
    """A module past 450 lines does more than one job: split it where its sections are (issue 23)."""
    package = Path(__file__).resolve().parent.parent / "modelplane_render"
    sizes = {str(p.relative_to(package)): len(p.read_text(encoding="utf-8").splitlines()) for p in sorted(package.rglob("*.py"))}
    assert len(sizes) > 50
    assert {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES} == {}
