"""`diff`, `render` and `validate` of a directory kustomize builds, with the real kustomize (issue 28).

The project's own example (kustomize/: a base and two overlays) in a git repository of its own: a change to an
overlay's patch or to the base shows, per overlay, what it does to the rendered objects and to live pods.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, run_cli

pytestmark = pytest.mark.real_peers

GIT_ENV = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}
STAGING, PROD = "kustomize/overlays/staging", "kustomize/overlays/prod"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env={**os.environ, **GIT_ENV}, capture_output=True, check=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example in a repository, the real kustomize and this renderer first on PATH (as a user's shell has them)."""
    from peer import require_peer

    kustomize = require_peer("kustomize")
    monkeypatch.setenv("PATH", os.pathsep.join([str(kustomize.parent), str(Path(sys.executable).parent), os.environ["PATH"]]))
    monkeypatch.delenv("MODELPLANE_RENDER", raising=False)
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copytree(ROOT / "kustomize", root / "kustomize", ignore=shutil.ignore_patterns("bin"))
    # The function's launcher as a user's checkout has it (a copy, so the revision holds it).
    shutil.copytree(ROOT / "kustomize" / "bin", root / "kustomize" / "bin")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "the example")
    _git(root, "tag", "base")
    return root


def _edit(repo: Path, path: str, old: str, new: str, tag: str) -> None:
    file = repo / path
    text = file.read_text()
    assert old in text, (path, old)
    file.write_text(text.replace(old, new))
    _git(repo, "commit", "-qam", tag)
    _git(repo, "tag", tag)


def test_a_changed_overlay_patch_shows_in_that_overlays_diff_with_its_impact(repo: Path) -> None:
    _edit(repo, f"{STAGING}/kustomization.yaml", "copies: 2", "copies: 3", "copies")
    result = run_cli("diff", "base", "copies", "--", STAGING, PROD, cwd=repo)
    assert (result.code, result.stderr) == (3, "")
    staging, prod = result.stdout.split("\n\nbase -> copies (kustomization kustomize/overlays/prod)")
    assert staging.startswith("base -> copies (kustomization kustomize/overlays/staging): 0 added, 0 removed, 1 changed (+1 -1 lines)\n")
    assert "-  replicas: 2\n+  replicas: 3\n" in staging
    assert (
        "impact: ModelReplica ml-team/qwen3-8b-eks-l4-0: LeaderWorkerSet ml-team/qwen3-8b-eks-l4-0-qwen3-8b-03010 scales from 2 to 3 "
        "groups (no pod restarts)\n"
    ) in staging
    assert prod.startswith(": no change to the rendered output (")  # the other overlay is untouched by the patch


def test_a_device_count_change_names_the_replaced_claim_template_and_the_rolling_groups(repo: Path) -> None:
    _edit(repo, "kustomize/base/qwen3-8b.yaml", "count: 1", "count: 2", "devices")
    head = yaml.safe_load_all(run_cli("render", PROD, cwd=repo).stdout)  # the head's render: what the comment must name
    claims = {o["metadata"]["name"] for o in head if o and o["kind"] == "ResourceClaimTemplate"}
    result = run_cli("diff", "base", "devices", "--format", "markdown", "--", PROD, cwd=repo)
    assert (result.code, result.stderr) == (3, "")
    (new_claim,) = claims
    impact = next(line for line in result.stdout.splitlines() if line.startswith("- ModelReplica "))
    assert f"ResourceClaimTemplate ml-prod/{new_claim} replaces ResourceClaimTemplate ml-prod/" in impact, impact
    # prod serves the base's one copy of one pod, on one device and now on two: its group rolls.
    assert "rolls 1 group of 1 pod (2 devices a group), one group at a time without surge" in impact, impact


def test_render_and_validate_of_an_overlay_are_kustomize_build_with_the_function(repo: Path) -> None:
    from peer import require_peer

    built = subprocess.run(
        [str(require_peer("kustomize")), "build", "--enable-alpha-plugins", "--enable-exec", STAGING],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    rendered = run_cli("render", STAGING, cwd=repo)
    assert (rendered.code, rendered.stdout) == (0, built.stdout)
    assert "ModelReplica" not in rendered.stdout and "kind: LeaderWorkerSet" in rendered.stdout
    assert run_cli("validate", STAGING, cwd=repo).code == 0
    # A broken patch: the function's error, through kustomize, and nothing on stdout.
    _edit(repo, f"{STAGING}/kustomization.yaml", "nodePoolName: gpu-l4-spot", "nodePoolName: 'gpu:l4'", "broken")
    for command in ("render", "validate"):
        broken = run_cli(command, STAGING, cwd=repo)
        assert (broken.code, broken.stdout) == (1, ""), command
        assert f"kustomize build --enable-alpha-plugins --enable-exec {STAGING} failed" in broken.stderr
        assert "nodePoolName" in broken.stderr


def test_a_walk_over_the_overlays_is_refused_not_read_unpatched(repo: Path) -> None:
    _edit(repo, f"{STAGING}/kustomization.yaml", "copies: 2", "copies: 3", "copies")
    for args in (("diff", "base", "copies", "--", "kustomize"), ("render", "kustomize"), ("validate", "kustomize")):
        result = run_cli(*args, cwd=repo)
        assert (result.code, result.stdout) == (1, ""), args
        for overlay in (PROD, STAGING):
            assert f"{overlay}/kustomization.yaml:1:1: .: kustomize builds {overlay} (" in result.stderr, (args, result.stderr)
    # The base alone lists its own files: it is read as before, no kustomize needed.
    assert run_cli("render", "kustomize/base", cwd=repo).code == 0


def test_an_overlay_without_kustomize_on_path_is_an_error_not_an_empty_side(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + "/usr/bin:/bin")
    if shutil.which("kustomize"):
        pytest.fail("a kustomize in /usr/bin or /bin hides the case")
    _edit(repo, f"{STAGING}/kustomization.yaml", "copies: 2", "copies: 3", "copies")
    for args in (("diff", "base", "copies", "--", STAGING), ("render", STAGING)):
        result = run_cli(*args, cwd=repo)
        assert (result.code, result.stdout) == (1, ""), args
        assert f"{STAGING} holds a kustomization, which kustomize builds, and kustomize is not on PATH" in result.stderr


def test_a_new_overlay_is_all_added(repo: Path) -> None:
    (repo / "kustomize" / "overlays" / "canary").mkdir()
    shutil.copy(repo / PROD / "kustomization.yaml", repo / "kustomize" / "overlays" / "canary" / "kustomization.yaml")
    result = run_cli("diff", "base", "--", "kustomize/overlays/canary", cwd=repo)  # the work tree
    assert result.code == 3, result.stderr
    assert "0 removed, 0 changed" in result.stdout.splitlines()[0] and " is new: " in result.stdout


def test_an_upgrade_of_the_renderer_is_reviewed_on_an_overlay_too(repo: Path, tmp_path: Path) -> None:
    """--base-renderer: the function kustomize runs for the base side is the other renderer."""
    import io
    import tarfile

    from test_day_two import PREVIOUS_RELEASE

    tree = tmp_path / "previous"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", PREVIOUS_RELEASE], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tree, filter="data")
    result = run_cli("diff", "base", "base", "--base-renderer", f"{sys.executable} {tree / 'plugin.py'}", "--", PROD, cwd=repo)
    assert (result.code, result.stderr) == (3, ""), result.stderr
    impact = [line for line in result.stdout.splitlines() if line.startswith("impact: ")]
    assert len(impact) == 1 and " replaces ResourceClaimTemplate ml-prod/" in impact[0] and " rolls 1 group " in impact[0], impact


def test_a_render_flag_with_an_overlay_is_refused_not_ignored(repo: Path) -> None:
    """The overlay's RenderConfig holds its options, as Argo CD's plugin parameters are refused for it."""
    for args in (
        ("render", "-n", "other", STAGING),
        ("validate", "--gateway", "a/b", STAGING),
        ("diff", "base", "--cluster", "x", "--", PROD),
    ):
        result = run_cli(*args, cwd=repo)
        assert (result.code, result.stdout) == (2, ""), args
        assert "is a kustomization that kustomize builds, and its RenderConfig (spec) holds the render options" in result.stderr


def test_turning_on_autoscaled_in_the_render_config_warns_of_the_scale_down_an_apply_would_do(repo: Path) -> None:
    _edit(repo, "kustomize/base/render/render.yaml", "spec:\n", "spec:\n  autoscaled: true\n", "autoscaled")
    result = run_cli("diff", "base", "autoscaled", "--", PROD, cwd=repo)
    assert (result.code, result.stderr) == (3, "")
    assert "-  replicas: 1\n" in result.stdout and "+  replicas" not in result.stdout
    assert (
        "impact: ModelReplica ml-prod/qwen3-8b-eks-l4-0: LeaderWorkerSet ml-prod/qwen3-8b-eks-l4-0-qwen3-8b-03010 leaves its group "
        "count (1 now) to an autoscaler: spec.replicas is no longer rendered, and an apply without the transition in "
        "docs/autoscaling.md scales it to 1 group (no pod restarts)\n"
    ) in result.stdout, result.stdout
