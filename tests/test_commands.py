"""The command line as a contract: exit codes, streams, and the same behaviour through plugin.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, VALID, imported_by_us, run_cli, run_process
from modelplane_render.main import DEPENDENCIES


def test_usage_errors_exit_2_with_one_line():  # type: ignore[no-untyped-def]
    result = run_cli("render", "--gateway", "not-a-ref")
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == "modelplane-render: --gateway 'not-a-ref' must be NAMESPACE/NAME of a Gateway\n"
    assert run_cli("frobnicate").code == 2
    assert run_cli("render", "--namespace", "Bad_NS").code == 2


def test_missing_path_is_an_input_error():  # type: ignore[no-untyped-def]
    result = run_cli("render", "no/such/dir")
    assert (result.code, result.stdout, result.stderr) == (1, "", "no/such/dir:1:1: .: no such file or directory\n")


def test_namespace_option_fills_only_replicas_without_one(tmp_path):  # type: ignore[no-untyped-def]
    source = (VALID[0] / "replica.yaml").read_text() if (VALID[0] / "replica.yaml").exists() else None
    assert source
    (tmp_path / "r.yaml").write_text(source.replace("  namespace: ml-team\n", ""))
    missing = run_cli("render", "r.yaml", cwd=tmp_path)
    assert missing.code == 1 and missing.stdout == ""
    assert "has no namespace" in missing.stderr and "--namespace" in missing.stderr
    given = run_cli("render", "--namespace", "team-a", "r.yaml", cwd=tmp_path)
    assert given.code == 0
    assert "namespace: team-a" in given.stdout and "ml-team" not in given.stdout


def test_gateway_adds_an_httproute():  # type: ignore[no-untyped-def]
    result = run_cli("render", "--gateway", "gateways/inference", str(VALID[0]))
    assert result.code == 0
    assert "kind: HTTPRoute" in result.stdout and "namespace: gateways" in result.stdout


def test_errors_of_all_files_come_at_once_and_nothing_is_printed(tmp_path):  # type: ignore[no-untyped-def]
    shutil.copytree(ROOT / "fixtures" / "valid" / "several-copies", tmp_path / "good")
    (tmp_path / "b.yaml").write_text(
        "apiVersion: modelplane.ai/v1alpha1\nkind: ModelReplica\nmetadata: {name: b, namespace: x}\nspec: {}\n"
    )
    (tmp_path / "a.yaml").write_text("a: [\n")
    result = run_cli("render", ".", cwd=tmp_path)
    assert result.code == 1 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0].startswith("a.yaml:2:1: .: YAML syntax")
    assert lines[1:] == ["b.yaml:4:7: spec.clusterName: required field is missing", "b.yaml:4:7: spec.engines: required field is missing"]


def test_plugin_py_and_the_console_script_agree():  # type: ignore[no-untyped-def]
    case = VALID[0]
    via_plugin = run_process("render", str(case))
    assert via_plugin.returncode == 0 and via_plugin.stderr == b""
    assert via_plugin.stdout.decode() == run_cli("render", str(case)).stdout
    script = shutil.which("modelplane-render", path=os.path.dirname(os.path.realpath(__import__("sys").executable)))
    if script:
        import subprocess

        assert subprocess.run([script, "render", str(case)], capture_output=True).stdout == via_plugin.stdout


def test_closed_stdout_is_a_failure_with_one_line():  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    big = ROOT / "fixtures" / "valid"
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "plugin.py"), "render", str(big)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None
    process.stdout.read(10)
    process.stdout.close()
    _, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert err.decode() == "modelplane-render: stdout was closed before all of the output was written\n"


@pytest.mark.parametrize(
    "argv",
    [
        ["render"],
        ["render", "a", "b"],
        ["render", ""],
        ["render", "validate"],
        ["validate"],
        ["validate", "x/y.yaml"],
        ["argocd", "generate"],
    ],
)
def test_the_command_lines_parsed_without_argparse_are_what_argparse_makes_of_them(argv):  # type: ignore[no-untyped-def]
    from modelplane_render import main

    assert vars(main._plain_command_line(argv)) == vars(main.build_parser(argv[0]).parse_args(argv))


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--version"],
        ["render", "-n", "x"],
        ["render", "a", "--gateway=g/w"],
        ["render", "--", "-a"],
        ["argocd", "discover"],
        ["diff", "x"],
    ],
)
def test_every_other_command_line_is_left_to_argparse(argv):  # type: ignore[no-untyped-def]
    from modelplane_render import main

    assert main._plain_command_line(argv) is None


@pytest.mark.parametrize("argv", [["render", "."], ["validate", "."], ["argocd", "generate"]])
def test_the_command_lines_argo_cd_and_ci_run_never_import_argparse(argv):  # type: ignore[no-untyped-def]
    """Importing argparse costs about 8 ms of a cold render's ~120: these never build a parser (nor, on valid
    input, import difflib, which only suggests a field name in an error)."""
    probe = "import sys; from modelplane_render.main import main; code = main(sys.argv[1:]); print(code, *sorted(sys.modules))"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "MODELPLANE_"))}
    done = subprocess.run([sys.executable, "-c", probe, *argv], cwd=VALID[0], env=env, capture_output=True, text=True, timeout=120)
    code, *modules = done.stdout.splitlines()[-1].split()
    assert (code, imported_by_us(modules, env, VALID[0]) & {"argparse", "difflib"}) == ("0", set()), done.stderr


# What each needs first: render reads YAML and fills templates; the KRM function writes with ruamel.
@pytest.mark.parametrize(
    "module,args", [("yaml", ["render", "fixtures/valid"]), ("jinja2", ["render", "fixtures/valid"]), ("ruamel", ["krm"])]
)
def test_a_missing_dependency_is_a_setup_error_that_says_what_to_install(module, args):  # type: ignore[no-untyped-def]
    """A bare `python3 plugin.py` without the dependencies: not "internal error ... please report it"."""
    code = f"import sys; sys.modules[{module!r}] = None; from modelplane_render.main import main; sys.exit(main({args!r}))"
    env = {**os.environ, "MODELPLANE_RENDER_CACHE_DIR": ""}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, input="", capture_output=True, text=True, env=env)
    assert (result.returncode, result.stdout) == (2, "")
    assert "is not installed" in result.stderr and "internal error" not in result.stderr, result.stderr
    assert DEPENDENCIES[module] in result.stderr


def test_the_dependencies_main_names_are_pyprojects():  # type: ignore[no-untyped-def]
    import tomllib

    declared = {
        re.split(r"[<>=!~ \\[]", d, maxsplit=1)[0].lower()
        for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    }
    assert {d.lower() for d in DEPENDENCIES.values()} == declared


def test_a_dash_reads_standard_input_once_and_errors_name_it():  # type: ignore[no-untyped-def]
    source = (
        (VALID[0] / "replica.yaml").read_bytes() if (VALID[0] / "replica.yaml").exists() else next(VALID[0].glob("*.yaml")).read_bytes()
    )
    env = {**os.environ, "MODELPLANE_RENDER_CACHE_DIR": ""}
    exe = [sys.executable, str(ROOT / "plugin.py")]
    from_stdin = subprocess.run([*exe, "render", "-"], input=source, capture_output=True, env=env)
    from_file = subprocess.run([*exe, "render", str(next(VALID[0].glob("*.yaml")))], capture_output=True, env=env)
    assert (from_stdin.returncode, from_stdin.stdout, from_stdin.stderr) == (0, from_file.stdout, b"")
    twice = subprocess.run([*exe, "render", "-", "-"], input=source, capture_output=True, env=env)
    assert twice.stdout == from_file.stdout, "read once, not as two copies of one replica"
    broken = subprocess.run([*exe, "validate", "-"], input=b"apiVersion: v1\nkind: ConfigMap\n", capture_output=True, env=env)
    assert (broken.returncode, broken.stdout) == (1, b"")
    assert broken.stderr.decode().startswith("<stdin>:1:1: metadata.name: "), broken.stderr


def test_render_of_a_directory_holding_the_function_config_prints_no_renderconfig():  # type: ignore[no-untyped-def]
    result = run_cli("render", str(ROOT / "kustomize" / "base"))
    assert result.code == 0 and "kind: LeaderWorkerSet" in result.stdout
    assert "RenderConfig" not in result.stdout and "render.modelplane.ai" not in result.stdout
