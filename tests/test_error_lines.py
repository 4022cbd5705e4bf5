"""Every front end prints every finding as one line, `FILE:LINE:COL: PATH: MESSAGE`, through errors.error_line.

The hostile corpus below (keys with line breaks, a terminal's ESC, spaces, tabs and Unicode line
separators; a file name with `: ` in it; a key far too long) goes through `validate`, `render`,
`argocd generate`, the KRM function (items with kpt's path annotation, so their errors have a
line) and `diff`; each line of stderr must split as the one pattern and hold no control character.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURES, run_cli
from modelplane_render.errors import MAX_QUOTED, Finding, MapKey, error_line, format_path, tool_line

ROOT = Path(__file__).resolve().parent.parent
LINE = re.compile(r"^.+:\d+:\d+: \S+: .+$")
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
BASE = (FIXTURES / "valid" / "single-gpu-standalone" / "replica.yaml").read_text()


def _with_label(key: str) -> str:
    return BASE.replace("  namespace: ml-team\n", f"  namespace: ml-team\n  labels:\n    {json.dumps(key)}: x\n", 1)


# name -> (file name, text): each an invalid replica whose error quotes something hostile.
CORPUS = {
    "label key with a line break and ESC": ("replica.yaml", _with_label("bad\nkey\x1b[31mRED")),
    "label key with a space and a tab": ("replica.yaml", _with_label("cost center\tq3")),
    "label key with Unicode line separators": ("replica.yaml", _with_label("a\u2028b\u2029c\x85d")),
    "label key with quotes, brackets and a backslash": ("replica.yaml", _with_label('a"b]c[d\\e')),
    "empty label key": ("replica.yaml", _with_label("")),
    "unknown field with spaces": ("replica.yaml", BASE.replace("spec:\n", 'spec:\n  "cluster name": x\n', 1)),
    "a long key": ("replica.yaml", BASE.replace("spec:\n", "spec:\n  ? " + "k" * 5000 + " q\n  : 1\n", 1)),
    "a tab in a value's wrong type": ("replica.yaml", BASE.replace("count: 1", 'count: "1\\t2"', 1)),
    "a file name with ': '": ("a: b.yaml", _with_label("bad key")),
    "a file name with a line break": ("a\nb.yaml", _with_label("bad key")),
}
IDS = list(CORPUS)


def _check(stderr: str) -> list[str]:
    lines = stderr.splitlines()
    assert lines, "no error at all"
    for line in lines:
        assert LINE.match(line), f"not FILE:LINE:COL: PATH: MESSAGE: {line!r}"
        assert not CONTROL.search(line), f"a control character: {line!r}"
    return lines


def _write(directory: Path, case: str) -> str:
    name, text = CORPUS[case]
    (directory / name).write_text(text, encoding="utf-8")
    return name


@pytest.mark.parametrize("case", IDS)
@pytest.mark.parametrize("command", ["validate", "render"])
def test_the_command_line(case: str, command: str, tmp_path: Path) -> None:
    name = _write(tmp_path, case)
    result = run_cli(command, name, cwd=tmp_path)
    assert (result.code, result.stdout) == (1, "")
    _check(result.stderr)


@pytest.mark.parametrize("case", IDS)
def test_argocd_generate(case: str, tmp_path: Path) -> None:
    _write(tmp_path, case)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "MODELPLANE_"))}
    done = subprocess.run(
        [sys.executable, str(ROOT / "plugin.py"), "argocd", "generate"], cwd=tmp_path, env=env, capture_output=True, timeout=120
    )
    assert (done.returncode, done.stdout) == (1, b"")
    _check(done.stderr.decode("utf-8"))


@pytest.mark.parametrize("case", IDS)
def test_the_krm_function(case: str, tmp_path: Path) -> None:
    """Items with kpt's path annotation: the errors are at a line of that file, and printed as the command line prints them."""
    name, text = CORPUS[case]
    (tmp_path / name).write_text(text, encoding="utf-8")
    item = yaml.safe_load(text)
    item["metadata"].setdefault("annotations", {})["internal.config.kubernetes.io/path"] = name
    body = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [item]}
    done = subprocess.run(
        [sys.executable, str(ROOT / "plugin.py"), "krm"],
        cwd=tmp_path,
        input=yaml.safe_dump(body).encode(),
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 1
    validate = run_cli("validate", name, cwd=tmp_path)
    assert _check(done.stderr.decode("utf-8")) == validate.stderr.splitlines()


@pytest.mark.parametrize("case", IDS)
def test_diff(case: str, tmp_path: Path) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "replica.yaml").write_text(BASE)
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "valid"], cwd=tmp_path, check=True)
    (tmp_path / "replica.yaml").unlink()
    _write(tmp_path, case)
    result = run_cli("diff", "HEAD", cwd=tmp_path)
    assert (result.code, result.stdout) == (1, "")
    _check(result.stderr)


def test_a_path_quotes_a_key_that_would_split_the_line_and_escapes_what_is_unprintable() -> None:
    assert format_path(("metadata", "labels", MapKey("app.kubernetes.io/name"))) == "metadata.labels[app.kubernetes.io/name]"
    assert format_path(("metadata", "labels", MapKey("cost center"))) == 'metadata.labels["cost\\x20center"]'
    assert format_path(("metadata", "labels", MapKey("bad\nkey\x1b[31mRED"))) == 'metadata.labels["bad\\nkey\\x1b[31mRED"]'
    assert format_path(("metadata", "labels", MapKey('a"b\\c\td'))) == 'metadata.labels["a\\"b\\\\c\\td"]'
    assert format_path(("metadata", "labels", MapKey(""))) == 'metadata.labels[""]'


def test_a_file_name_with_a_colon_and_space_keeps_the_first_colon_space_for_the_place() -> None:
    line = error_line(Finding("deploy: old/a.yaml", 3, 4, "spec", "must be a mapping"))
    assert line == "deploy:\\x20old/a.yaml:3:4: spec: must be a mapping"
    assert line.split(": ", 1)[0] == "deploy:\\x20old/a.yaml:3:4"
    assert error_line(Finding("deploy/a:b.yaml", 3, 4, "spec", "m")) == "deploy/a:b.yaml:3:4: spec: m"  # shown as it is


def test_input_quoted_in_a_message_is_cut_to_its_ends_and_the_tools_own_words_never() -> None:
    long_key = "k" * 5000
    line = error_line(Finding("a.yaml", 1, 1, format_path(("spec", MapKey(long_key))), f"unknown field {long_key}"))
    assert "characters left out" in line and len(line) < 5000
    own = "the destination cluster does not serve " + "; ".join(
        ["resource.k8s.io/v1 ResourceClaimTemplate (DRA v1 is served from Kubernetes 1.34)"] * 8
    )
    assert len(own) > MAX_QUOTED and tool_line(own) == f"modelplane-render: {own}"


def test_the_missing_api_error_says_all_of_what_to_install() -> None:
    """It used to be cut at 400 characters, in the middle of its own remedy."""
    from modelplane_render.commands import writer  # noqa: F401  (run_cli patches it)

    env = {
        "KUBE_API_VERSIONS": "v1,apps/v1",
        "ARGOCD_APP_NAMESPACE": "ml-team",
    }
    old = dict(os.environ)
    os.environ.update(env)
    try:
        result = run_cli("argocd", "generate", cwd=FIXTURES / "valid" / "prefill-decode-kimi-k2")
    finally:
        os.environ.clear()
        os.environ.update(old)
    (line,) = result.stderr.splitlines()
    assert result.code == 1 and "characters left out" not in line and len(line) > MAX_QUOTED, line
    assert line.endswith('set the plugin parameter check-cluster-apis to "false"'), line
