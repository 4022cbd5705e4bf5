"""What start-up imports is what modelplane_render/startup.py says: the light paths stay light, and an
import waits inside a function only where it says why."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_cache_render import SEVERAL, _modules_of_a_run

from conftest import ROOT, VALID, bare_interpreter_modules, imported_by_us
from modelplane_render import startup

PACKAGE = ROOT / "modelplane_render"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(module: str, node: ast.Import | ast.ImportFrom, is_package: bool) -> list[str]:
    """The absolute names an import statement imports (the module, for `from X import y`)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not node.level:
        return [str(node.module)]
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return [".".join(base + ([node.module] if node.module else []))]


def imports_inside_functions() -> set[tuple[str, str]]:
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(function):
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        found.update((module, name) for name in _imported(module, node, path.name == "__init__.py"))
    return found


def test_every_import_inside_a_function_is_one_startup_defers_and_says_why() -> None:
    found = imports_inside_functions()
    assert found == set(startup.DEFERRED), (
        f"not in startup.DEFERRED (import it at the top of its module, or add it there with its reason): {sorted(found - set(startup.DEFERRED))}; "
        f"deferred no more (remove from startup.DEFERRED): {sorted(set(startup.DEFERRED) - found)}"
    )


def test_the_scan_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    tree = ast.parse("def f():\n    from ..pipeline import render_paths\n    import difflib\n")
    nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = [name for n in nodes for name in _imported("modelplane_render.cache.render", n, False)]
    assert names == ["modelplane_render.pipeline", "difflib"]


def test_a_cache_hit_imports_only_the_light_modules(tmp_path: Path) -> None:
    _modules_of_a_run(tmp_path, tmp_path / "c", "render", *SEVERAL)  # the miss stores it
    hit = _modules_of_a_run(tmp_path, tmp_path / "c", "render", *SEVERAL)
    ours = {m for m in hit if m.split(".")[0] == "modelplane_render"}
    assert ours <= startup.CACHE_HIT, sorted(ours - startup.CACHE_HIT)
    assert "modelplane_render.main" in ours  # the probe does see our modules
    assert not {m for m in hit if m.split(".")[0] in ("yaml", "argparse", "dataclasses", "jinja2")}


@pytest.mark.parametrize("site_imports", [None, "importlib.resources"], ids=["this-machine", "site-loads-importlib.resources"])
def test_a_cold_render_of_valid_input_imports_none_of_what_waits(tmp_path: Path, site_imports: str | None) -> None:
    """Judged on what the run adds to a bare interpreter: on some machines `site` itself loads
    importlib.resources (one of COLD_NEVER), which no change of ours could avoid."""
    probe = "import json, sys; from modelplane_render.main import main; code = main(sys.argv[2:]); json.dump([code, sorted(sys.modules)], open(sys.argv[1], 'w'))"
    report = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "MODELPLANE_"))}
    # A cache home of its own: the fixture's selectors are compiled, whatever ran before.
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    if site_imports:  # such a machine: site imports sitecustomize from PYTHONPATH
        (tmp_path / "site").mkdir()
        (tmp_path / "site" / "sitecustomize.py").write_text(f"import {site_imports}\n")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path / "site"), env.get("PYTHONPATH")]))
        assert site_imports in bare_interpreter_modules(env)
    done = subprocess.run([sys.executable, "-c", probe, str(report), "render", str(VALID[0])], env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr

    code, modules = json.loads(report.read_text())
    modules = imported_by_us(modules, env)  # what site loads on this machine is not ours to judge
    assert code == 0 and "modelplane_render.pipeline" in modules
    assert "cel_expr_python" in modules  # the selectors were compiled, not read from a verdict
    waiting = [m for m in modules if any(m == never or m.startswith(never + ".") for never in startup.COLD_NEVER)]
    assert waiting == []
