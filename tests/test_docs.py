"""Executed documentation: every fenced block of README.md and docs/*.md is checked, or listed as not runnable.

A block is checked by the HTML comment on the line just above its fence (invisible on GitHub):

    <!-- docs: file PATH -->            the block is the file PATH of this repository, byte for byte
    <!-- docs: excerpt PATH -->         the block is a slice of PATH; a line `...` stands for lines left out
    <!-- docs: subtree PATH -->         the YAML block is a literal excerpt of the YAML file PATH (as for objects)
    <!-- docs: objects [OPTS] -- CMD --> each YAML object shown is a literal excerpt of the object of the same
                                        kind and name that CMD prints (keys may be left out; a value `...`
                                        stands for anything; `count=N`: CMD prints N objects)
    <!-- docs: run [OPTS] -->           a script: run by bash, must succeed; or a session (lines `$ CMD`
                                        followed by its output, stdout and stderr together, `...` for lines
                                        left out): each command is run and its output compared
    <!-- docs: ci -->                   a command of the README that .ci/run runs, step for step
    <!-- docs: check NAME -->           a check of its own, the function CHECKS[NAME] below
    <!-- docs: scenario-file SCENARIO PATH --> the block is written to PATH of SCENARIO before it is run

OPTS: `scenario=NAME` (default `repo`: a copy of the repository's examples and fixtures) and `cwd=DIR`.
Commands run in a temporary directory with this interpreter's `modelplane-render` first on PATH and,
when they name kustomize, the real kustomize peer (skipped locally when it isn't built, failed in CI).

A block without a marker must be in NOT_RUN, the one list of what the tests can't run, each with its
reason; a block that is neither, or an entry of NOT_RUN that matches no block, fails.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import ROOT
from peer import require_peer

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# The blocks no test can run, by their first line, each with its reason.
NOT_RUN: dict[str, str] = {
    'pip install "modelplane-render @ git+https://github.com/<owner>/modelplane-render@<commit>"': (
        "needs GitHub and a published repository (<owner> is a placeholder); .ci/run builds and installs the wheel"
    ),
    "podman build -f argocd/Containerfile -t registry.example.com/platform/modelplane-render-argocd-cmp:0.1.0 .": (
        "needs a container builder and a registry; test_sidecar_image.py checks the Containerfile against image.toml, and runs the image build-image.sh builds"
    ),
    "kubectl create namespace argocd": "needs a cluster; test_argocd.py builds argocd/ with the real kustomize",
    "helm upgrade --install argocd argo/argo-cd -n argocd --create-namespace -f argocd/helm-values.yaml": (
        "needs a cluster and the argo-cd chart (on no registry CI reaches); test_argocd.py holds the values to plugin.yaml"
    ),
    "kubectl -n argocd label secret cluster-gke-prod-us-central1 modelplane.ai/inference-cluster=gke-l4": (
        "needs a cluster with Argo CD; test_argocd.py runs the ApplicationSet's cluster generator on real secrets"
    ),
    "$ modelplane-render diff main -- kustomize/overlays/staging kustomize/overlays/prod": (
        "an edit of the example overlay in a repository of its own: tests/test_diff_kustomize.py makes it and asserts these lines"
    ),
    "- ModelReplica ml-prod/qwen3-8b-eks-l4-0: LeaderWorkerSet ml-prod/qwen3-8b-eks-l4-0-qwen3-8b-03010 rolls 1 group of 1 pod "
    "(2 devices a group), one group at a time without surge (a group's pods stop before its new ones start); ResourceClaimTemplate "
    "ml-prod/qwen3-8b-eks-l4-0-qwen3-8b-standalone-devices-9bc5862a94 replaces ResourceClaimTemplate "
    "ml-prod/qwen3-8b-eks-l4-0-qwen3-8b-standalone-devices-91a4dac7ac (a new template: the old one is pruned last)": (
        "a device-count edit of the example's base: tests/test_diff_kustomize.py makes it and asserts this line"
    ),
    "modelplane-render diff main main --base-renderer /opt/modelplane-render-0.1/bin/modelplane-render -- deploy/replicas": (
        "needs an install of an earlier release (a placeholder path); tests/test_diff.py runs the same with the previous release's tree"
    ),
    "# The Application's fields for an autoscaled app (the rest as in docs/argocd.md)": (
        "Argo CD's sync behaviour, which needs the Argo CD loop (issue 32); tests/test_autoscaling.py proves the plain applies"
    ),
    "kustomize build --enable-alpha-plugins --enable-exec overlays/prod > rendered.yaml   # with autoscaled: true": (
        "needs a cluster; tests/test_autoscaling.py runs these kubectl commands on the real kube-apiserver"
    ),
    "kubectl apply --server-side --field-manager=autoscaler-handover -f - <<EOF": (
        "needs a cluster; tests/test_autoscaling.py runs the same handover on the real kube-apiserver"
    ),
    "# An HPA on the example's rendered LeaderWorkerSet": (
        "needs a cluster; tests/test_autoscaling.py reads it from this page and creates it on the real kube-apiserver"
    ),
    "plugin:": (
        "an excerpt of an Application; tests/test_argocd.py sends these parameters, read from this page, to the real argocd-cmp-server"
    ),
    ".venv/bin/python benchmarks/run.py            # 1, 10, 100, 1000 and 10,000 replicas, median of 5 runs each (~10 min)": (
        "minutes long; .ci/run runs the benchmark itself (--quick --gate 2)"
    ),
}

FENCE = re.compile(r"^( *)(```+)(.*)$")
MARKER = re.compile(r"^\s*<!-- docs: (.*?) -->\s*$")


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int  # of the opening fence
    lang: str
    text: str  # the block's lines, the fence's indentation removed, each ending in a newline
    marker: str | None

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"

    @property
    def first_line(self) -> str:
        return self.text.splitlines()[0].strip() if self.text else ""


def blocks_of(doc: Path) -> list[Block]:
    lines = doc.read_text().splitlines()
    found, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent, fence, lang = opening.groups()
        body: list[str] = []
        end = index + 1
        while end < len(lines) and lines[end].strip() != fence:
            body.append(lines[end][len(indent) :] if lines[end].startswith(indent) else lines[end].lstrip())
            end += 1
        assert end < len(lines), f"{doc}:{index + 1}: a fence that is never closed"
        before = index - 1
        marker = MARKER.match(lines[before]) if before >= 0 else None
        found.append(Block(doc, index + 1, lang.strip(), "".join(f"{b}\n" for b in body), marker.group(1) if marker else None))
        index = end + 1
    return found


ALL_BLOCKS = [block for doc in DOCS for block in blocks_of(doc)]


# --- scenarios: the directories commands run in ----------------------------------------------------

SCENARIO_FILES: dict[str, dict[str, str]] = {}
for _block in ALL_BLOCKS:
    if _block.marker and _block.marker.split()[0] == "scenario-file":
        _, _scenario, _path = _block.marker.split()
        SCENARIO_FILES.setdefault(_scenario, {})[_path] = _block.text

GIT_ENV = {
    "GIT_AUTHOR_NAME": "docs",
    "GIT_AUTHOR_EMAIL": "docs@example.com",
    "GIT_COMMITTER_NAME": "docs",
    "GIT_COMMITTER_EMAIL": "docs@example.com",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
VALID = ROOT / "fixtures" / "valid"
INVALID = ROOT / "fixtures" / "invalid"


def git_repo(directory: Path, files: dict[str, str]) -> None:
    """A repository whose `main` holds FILES."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "main"]):
        subprocess.run(["git", *args], cwd=directory, env={**os.environ, **GIT_ENV}, check=True, capture_output=True)


def scenario_repo(root: Path) -> None:
    """What a user of this repository has: its examples and fixtures."""
    for name in ("fixtures", "kustomize", "argocd", "examples"):
        shutil.copytree(ROOT / name, root / name, symlinks=True)
    shutil.copy(ROOT / ".pre-commit-hooks.yaml", root / ".pre-commit-hooks.yaml")


def scenario_many_clusters(root: Path) -> None:
    """A repository of replicas for three clusters; then phi-4-gke-l4-1's image is changed in the work tree."""
    phi = (VALID / "several-replicas-in-one-file" / "replicas.yaml").read_text()
    git_repo(
        root,
        {
            "deploy/replicas/phi-4.yaml": phi,
            "deploy/replicas/qwen-eks.yaml": (VALID / "single-gpu-standalone" / "replica.yaml").read_text(),
        },
    )
    head, sep, tail = phi.partition("name: phi-4-gke-l4-1")
    assert sep and tail.count("vllm-openai:v0.23.0") == 1
    (root / "deploy" / "replicas" / "phi-4.yaml").write_text(head + sep + tail.replace("vllm-openai:v0.23.0", "vllm-openai:v0.24.0"))


def scenario_copies(root: Path) -> None:
    """A repository whose replica has 4 copies; the work tree makes them 2."""
    llama = (VALID / "several-copies" / "replica.yaml").read_text()
    git_repo(root, {"replicas/llama.yaml": llama})
    (root / "replicas" / "llama.yaml").write_text(llama.replace("copies: 4", "copies: 2"))


def scenario_generator(root: Path) -> None:
    """The kustomize example, and a generator kustomization beside it whose replicas hold six faults."""
    scenario_repo(root)
    (root / "kustomize" / "gen" / "replicas").mkdir(parents=True)
    shutil.copy(INVALID / "several-faults" / "replica.yaml", root / "kustomize" / "gen" / "replicas" / "replicas.yaml")
    (root / "kustomize" / "gen" / "kustomization.yaml").write_text("generators: [render.yaml]\n")


def scenario_edit(path: str, old: str, new: str) -> Callable[[Path], None]:
    """The kustomize example committed as main; the work tree makes one edit (docs/changing-a-replica.md)."""

    def make(root: Path) -> None:
        shutil.copytree(ROOT / "kustomize", root / "kustomize", symlinks=True)
        git_repo(root, {})
        text = (root / path).read_text()
        assert old in text, (path, old)
        (root / path).write_text(text.replace(old, new, 1))

    return make


SCENARIOS: dict[str, Callable[[Path], None]] = {
    "edit-copies": scenario_edit("kustomize/overlays/staging/kustomization.yaml", "copies: 2", "copies: 3"),
    "edit-image": scenario_edit("kustomize/overlays/staging/kustomization.yaml", "vllm-openai:v0.23.1", "vllm-openai:v0.24.0"),
    "edit-devices": scenario_edit("kustomize/base/qwen3-8b.yaml", "count: 1", "count: 2"),
    "edit-engine-name": scenario_edit("kustomize/base/qwen3-8b.yaml", "  - name: qwen3-8b\n", "  - name: qwen3-8b-v2\n"),
    "repo": scenario_repo,
    "many-clusters": scenario_many_clusters,
    "copies": scenario_copies,
    "generator": scenario_generator,
    "bad-overlay": scenario_repo,
    "platform": scenario_repo,
    "rdma": scenario_repo,
}


def prepare(scenario: str, tmp_path: Path) -> Path:
    root = tmp_path / "work"
    SCENARIOS[scenario](root)
    for path, text in SCENARIO_FILES.get(scenario, {}).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def environment(command: str) -> dict[str, str]:
    """This interpreter's modelplane-render first on PATH, and the real kustomize when the command runs it."""
    path = [str(Path(sys.executable).parent)]
    if re.search(r"\bkustomize build\b|\bkustomize/overlays/", command):
        path.insert(0, str(require_peer("kustomize").parent))
    env = {**os.environ, **GIT_ENV, "PATH": os.pathsep.join([*path, os.environ.get("PATH", "")]), "NO_COLOR": "1"}
    env.pop("MODELPLANE_RENDER_CACHE_DIR", None)
    script = shutil.which("modelplane-render", path=path[-1])
    assert script, "modelplane-render is not installed beside this interpreter"
    env["MODELPLANE_RENDER"] = script  # the kustomize wrapper's first choice
    return env


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        cwd=cwd,
        env=environment(command),
        capture_output=True,
        text=True,
        timeout=120,
    )


# --- comparing -----------------------------------------------------------------------------------

ELIDED = "..."


def excerpt_of(shown: Any, real: Any, where: str = "") -> list[str]:
    """Where SHOWN is not a literal excerpt of REAL: mappings may leave keys out, `...` is anything,
    a list is every element in order (or its first elements, then `...`)."""
    if shown == ELIDED:
        return []
    if isinstance(shown, dict):
        if not isinstance(real, dict):
            return [f"{where or '.'}: a mapping is shown, the real value is {real!r}"]
        problems = []
        for key, value in shown.items():
            if key not in real:
                problems.append(f"{where}.{key}: shown, not in the real output")
            else:
                problems += excerpt_of(value, real[key], f"{where}.{key}")
        return problems
    if isinstance(shown, list):
        if not isinstance(real, list):
            return [f"{where}: a list is shown, the real value is {real!r}"]
        open_ended = bool(shown) and shown[-1] == ELIDED
        items = shown[:-1] if open_ended else shown
        if len(items) > len(real) or (not open_ended and len(items) != len(real)):
            return [f"{where}: {len(items)} items shown, the real list has {len(real)} (end it with `- ...` to show only the first)"]
        return [p for i, item in enumerate(items) for p in excerpt_of(item, real[i], f"{where}[{i}]")]
    return [] if shown == real else [f"{where}: shown {shown!r}, the real value is {real!r}"]


def lines_match(shown: list[str], real: list[str]) -> bool:
    """SHOWN equals REAL, a line `...` standing for any number of lines."""
    if not shown:
        return not real
    if shown[0] == ELIDED:
        return any(lines_match(shown[1:], real[i:]) for i in range(len(real) + 1))
    return bool(real) and shown[0] == real[0] and lines_match(shown[1:], real[1:])


def options(marker: str) -> tuple[dict[str, str], str]:
    """`KIND k=v ... [-- REST]`: the options and the rest."""
    head, _, rest = marker.partition(" -- ")
    pairs = dict(word.split("=", 1) for word in shlex.split(head)[1:])
    return pairs, rest.strip()


# --- the checks ------------------------------------------------------------------------------------


def check_file(block: Block, tmp_path: Path) -> None:
    (path,) = shlex.split(block.marker or "")[1:]
    assert block.text == (ROOT / path).read_text(), f"{block.where}: not the file {path} as it is"


def check_excerpt(block: Block, tmp_path: Path) -> None:
    (path,) = shlex.split(block.marker or "")[1:]
    real = (ROOT / path).read_text().splitlines()
    shown = block.text.splitlines()
    assert lines_match([ELIDED, *shown, ELIDED], real), f"{block.where}: not a slice of {path} (`...` for lines left out)"


def check_objects(block: Block, tmp_path: Path) -> None:
    opts, command = options(block.marker or "")
    cwd = prepare(opts.get("scenario", "repo"), tmp_path) / opts.get("cwd", ".")
    done = shell(command, cwd)
    assert done.returncode == 0, f"{block.where}: `{command}` failed: {done.stderr}"
    real = [o for o in yaml.safe_load_all(done.stdout) if o is not None]
    if "count" in opts:
        assert len(real) == int(opts["count"]), f"{block.where}: `{command}` prints {len(real)} objects, not {opts['count']}"
    by_name = {(o["kind"], o["metadata"]["name"]): o for o in real}
    shown = [o for o in yaml.safe_load_all(block.text) if o is not None]
    assert shown, f"{block.where}: no object shown"
    for obj in shown:
        key = (obj.get("kind"), (obj.get("metadata") or {}).get("name"))
        assert key in by_name, f"{block.where}: {key} is not among what `{command}` prints: {sorted(by_name)}"
        problems = excerpt_of(obj, by_name[key])
        assert not problems, f"{block.where}: {key[0]} {key[1]}:\n" + "\n".join(problems)


def sessions(text: str) -> list[tuple[str, list[str]]]:
    found: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            found.append((line[2:], []))
        else:
            assert found, "a session starts with `$ COMMAND`"
            found[-1][1].append(line.rstrip())
    return found


def check_run(block: Block, tmp_path: Path) -> None:
    opts, _ = options(block.marker or "")
    cwd = prepare(opts.get("scenario", "repo"), tmp_path) / opts.get("cwd", ".")
    if not block.text.startswith("$ "):
        done = shell(block.text, cwd)
        assert done.returncode == 0, f"{block.where}: failed ({done.returncode}): {done.stdout}{done.stderr}"
        return
    for command, shown in sessions(block.text):
        done = shell(command + " 2>&1", cwd)
        real = [line.rstrip() for line in done.stdout.splitlines()]
        if "exit" in opts:
            assert done.returncode == int(opts["exit"]), f"{block.where}: `{command}` exits {done.returncode}: {done.stdout}"
        assert lines_match(shown, real), f"{block.where}: `{command}` prints:\n" + "\n".join(real)


def check_ci(block: Block, tmp_path: Path) -> None:
    """Each `&&` step of the README's command is a line .ci/run runs (its `-q` aside)."""
    ci = [re.sub(r" -q\b", "", line.strip()) for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    for step in (s.strip() for s in block.text.strip().split(" && ")):
        assert any(line == step or line.startswith(f"{step} >") for line in ci), f"{block.where}: .ci/run does not run `{step}`"
        if step.startswith(".venv/bin/modelplane-render "):  # quick, and read-only: run it here too
            done = shell(step.replace(".venv/bin/", "", 1), ROOT)
            assert (done.returncode, done.stderr) == (0, "") and done.stdout, f"{block.where}: `{step}` failed: {done.stderr}"


def named_check(block: Block, tmp_path: Path) -> None:
    (name,) = shlex.split(block.marker or "")[1:]
    CHECKS[name](block, tmp_path)


def check_layout(block: Block, tmp_path: Path) -> None:
    """Every path the layout names exists, and every module and package of modelplane_render/ is named."""
    parent, named = ROOT, set()
    for line in block.text.splitlines():
        if not line.strip() or line.startswith(" " * 10):  # a description's continuation
            continue
        indented = line.startswith("  ")
        names = line.strip().split("  ")[0].split()
        for name in names:
            path = (parent if indented else ROOT) / name.rstrip("/")
            assert path.exists(), f"{block.where}: {path.relative_to(ROOT)} does not exist"
            named.add(path)
        if not indented:
            parent = ROOT / names[0].rstrip("/")
    tracked = subprocess.run(["git", "ls-files", "modelplane_render"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    tops = {Path(*Path(name).parts[:2]) for name in tracked}  # committed rooms: work in progress is not yet a room
    rooms = {ROOT / top for top in tops if top.name != "__init__.py" and (top.suffix == ".py" or (ROOT / top).is_dir())}
    assert sorted(str(p.relative_to(ROOT)) for p in rooms - named) == [], f"{block.where}: rooms the layout does not name"


def check_many_clusters_tree(block: Block, tmp_path: Path) -> None:
    """The tree is the many-clusters scenario: its files, and the replicas and clusters each holds."""
    root = prepare("many-clusters", tmp_path)
    lines = block.text.splitlines()
    assert lines[0] == "deploy/replicas/"
    for line in lines[1:]:
        name, _, comment = line.strip().partition("#")
        replicas = [d for d in yaml.safe_load_all((root / "deploy" / "replicas" / name.strip()).read_text()) if d]
        stated = ", ".join(f"{r['metadata']['name']} (clusterName: {r['spec']['clusterName']})" for r in replicas)
        assert comment.strip() == stated, block.where
    assert len(lines) - 1 == len(list((root / "deploy" / "replicas").iterdir()))


def check_pre_commit_config(block: Block, tmp_path: Path) -> None:
    """The hook the config names is the one .pre-commit-hooks.yaml provides, and its args are validate's."""
    config = yaml.safe_load(block.text)
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    (hook,) = config["repos"][0]["hooks"]
    assert hook["id"] in hooks and hooks[hook["id"]]["entry"] == "modelplane-render validate"
    assert re.search(hook["files"], "deploy/replicas/qwen.yaml") and not re.search(hook["files"], "deploy/other/x.yaml")
    replica = (VALID / "several-copies" / "replica.yaml").read_text().replace("  namespace: inference\n", "")
    (tmp_path / "qwen.yaml").write_text(replica)
    done = shell(shlex.join(["modelplane-render", "validate", *hook["args"], "qwen.yaml"]), tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), done.stderr


def check_editor_settings(block: Block, tmp_path: Path) -> None:
    """The VS Code settings name the file the README's `schema >` command writes, and YAML 1.1."""
    settings = json.loads(block.text)
    schema_command = next(b for b in ALL_BLOCKS if "modelplane-render schema > " in b.text)
    written = schema_command.text.split("> ", 1)[1].split()[0]
    assert settings["yaml.schemas"] == {f"./{written}": "deploy/replicas/**/*.yaml"}
    assert settings["yaml.yamlVersion"] == "1.1"


def check_modeline(block: Block, tmp_path: Path) -> None:
    """The modeline is the one the real yaml-language-server test opens every fixture with, above a replica's head."""
    from test_yaml_language_server import MODELINE

    first, rest = block.text.split("\n", 1)
    assert first + "\n" == MODELINE
    assert all(line in (VALID / "single-gpu-standalone" / "replica.yaml").read_text().splitlines() for line in rest.splitlines())


def check_argocd_ui_error(block: Block, tmp_path: Path) -> None:
    """After Argo CD's own prefix, the lines are what generate prints for the real several-faults fixture."""
    prefix = "rpc error: code = Unknown desc = error generating manifests: `modelplane-render argocd generate` failed exit status 1: "
    assert block.text.startswith(prefix), block.where
    shown = block.text[len(prefix) :].splitlines()
    (tmp_path / "deploy" / "replicas").mkdir(parents=True)
    shutil.copy(INVALID / "several-faults" / "replica.yaml", tmp_path / "deploy" / "replicas" / "qwen.yaml")
    done = shell("modelplane-render validate deploy/replicas", tmp_path)
    assert done.returncode == 1, done.stderr
    assert lines_match([*shown, ELIDED], done.stderr.splitlines()), done.stderr


def check_kustomize_app(block: Block, tmp_path: Path) -> None:
    """An Application source that names the plugin as plugin.yaml defines it, at a kustomization of the example."""
    source = yaml.safe_load(block.text)["spec"]["source"]
    plugin = yaml.safe_load((ROOT / "argocd" / "plugin.yaml").read_text())
    assert source["plugin"] == {"name": f"{plugin['metadata']['name']}-{plugin['spec']['version']}"}
    assert (ROOT / source["path"] / "kustomization.yaml").is_file()


def check_data_parallel_worker(block: Block, tmp_path: Path) -> None:
    """The container, as the Worker's engine of the multi-node fixture, renders as written after the gang's two variables."""
    (container,) = yaml.safe_load(block.text)
    replica = yaml.safe_load((VALID / "multi-node-leader-worker" / "replica.yaml").read_text())
    (worker,) = [m for m in replica["spec"]["engines"][0]["members"] if m["role"] == "Worker"]
    worker["template"]["spec"]["containers"] = [container]
    (tmp_path / "replica.yaml").write_text(yaml.safe_dump(replica))
    done = shell("modelplane-render render replica.yaml", tmp_path)
    assert done.returncode == 0, f"{block.where}: {done.stderr}"
    (lws,) = [o for o in yaml.safe_load_all(done.stdout) if o["kind"] == "LeaderWorkerSet"]
    (engine,) = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"]
    assert engine["command"] == container["command"] and "args" not in engine, block.where
    assert [e["name"] for e in engine["env"]] == ["MODELPLANE_LEADER_ADDRESS", "MODELPLANE_RANK"], block.where


def check_subtree(block: Block, tmp_path: Path) -> None:
    """A literal excerpt of the YAML file PATH: keys may be left out, `...` is anything."""
    (path,) = shlex.split(block.marker or "")[1:]
    problems = excerpt_of(yaml.safe_load(block.text), yaml.safe_load((ROOT / path).read_text()))
    assert not problems, f"{block.where}: not an excerpt of {path}:\n" + "\n".join(problems)


def check_workflow_diff(block: Block, tmp_path: Path) -> None:
    """The workflow's command, as the workflow runs it, in a clone whose pull request changes a replica."""
    command = block.text.strip()
    workflow = (ROOT / "examples" / "github-workflow-render-diff.yaml").read_text()
    assert f"{command} > diff.md" in workflow, f"{block.where}: not the command the workflow runs"
    replicas = yaml.safe_load(workflow)["env"]["REPLICAS"]
    origin, clone = tmp_path / "origin", tmp_path / "clone"
    git_repo(origin, {f"{replicas}/qwen.yaml": (VALID / "single-gpu-standalone" / "replica.yaml").read_text()})
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True, capture_output=True, env={**os.environ, **GIT_ENV})
    (clone / replicas / "llama.yaml").write_text((VALID / "several-copies" / "replica.yaml").read_text())
    for args in (["add", "."], ["commit", "-q", "-m", "pull request"]):
        subprocess.run(["git", *args], cwd=clone, env={**os.environ, **GIT_ENV}, check=True, capture_output=True)
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=clone,
        env={**environment(command), "BASE_REF": "main", "REPLICAS": replicas},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout.startswith("<!-- modelplane-render diff -->\n"), done.stdout[:200]


CHECKS: dict[str, Callable[[Block, Path], None]] = {
    "layout": check_layout,
    "many-clusters-tree": check_many_clusters_tree,
    "pre-commit-config": check_pre_commit_config,
    "editor-settings": check_editor_settings,
    "modeline": check_modeline,
    "argocd-ui-error": check_argocd_ui_error,
    "kustomize-app": check_kustomize_app,
    "workflow-diff": check_workflow_diff,
    "data-parallel-worker": check_data_parallel_worker,
}

KINDS: dict[str, Callable[[Block, Path], None]] = {
    "file": check_file,
    "excerpt": check_excerpt,
    "subtree": check_subtree,
    "objects": check_objects,
    "run": check_run,
    "ci": check_ci,
    "check": named_check,
    "scenario-file": lambda block, tmp_path: None,  # checked by the run that uses it
}


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=[b.where for b in ALL_BLOCKS])
def test_every_block_is_checked_or_listed_as_not_run(block: Block, tmp_path: Path) -> None:
    if block.marker is None:
        assert block.first_line in NOT_RUN, (
            f"{block.where}: a block with no `<!-- docs: ... -->` check above it and not in NOT_RUN: {block.first_line!r}"
        )
        return
    assert block.first_line not in NOT_RUN, f"{block.where}: checked and listed as not run"
    kind = block.marker.split()[0]
    assert kind in KINDS, f"{block.where}: unknown check {kind!r}"
    KINDS[kind](block, tmp_path)


def test_every_block_listed_as_not_run_is_there() -> None:
    unmarked = [b.first_line for b in ALL_BLOCKS if b.marker is None]
    assert sorted(set(NOT_RUN) - set(unmarked)) == []
    assert all(unmarked.count(line) == 1 for line in NOT_RUN)


README_MAX_LINES = 600  # a guide a newcomer reads in an hour (issue 24): more goes to docs/, with a link


def test_the_readme_stays_a_guide() -> None:
    lines = len((ROOT / "README.md").read_text().splitlines())
    assert lines <= README_MAX_LINES, (
        f"README.md has {lines} lines, at most {README_MAX_LINES}: move detail to docs/ (docs/README.md says which page) and link it"
    )


def test_the_settings_table_is_the_settings() -> None:
    """The README's one table of settings has a row per setting of options.SETTINGS, under the names each front end gives it."""
    from modelplane_render.options import SETTINGS

    readme = (ROOT / "README.md").read_text()
    table = readme.split("### Settings", 1)[1].split("\n\n| ", 1)[1].split("\n\n", 1)[0]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in ("| " + table).splitlines()[2:]]
    assert len(rows) == len(SETTINGS)
    for setting, (_, flag, parameter, config, _) in zip(SETTINGS, rows, strict=True):
        assert flag.startswith(f"`{setting.option}") if setting.option else flag == "", (setting.name, flag)
        assert parameter.startswith(f"`{setting.name}`") if setting.title else parameter == "", (setting.name, parameter)
        assert config.startswith(f"`{setting.config_key}`") if setting.config_key else config == "", (setting.name, config)


def test_every_scenario_file_is_used() -> None:
    used = {options(b.marker)[0].get("scenario") for b in ALL_BLOCKS if b.marker and b.marker.split()[0] in ("run", "objects")}
    assert set(SCENARIO_FILES) <= used


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    found: set[str] = set()
    in_block = False
    for line in doc.read_text().splitlines():
        if FENCE.match(line):
            in_block = not in_block
        elif not in_block and line.startswith("#"):
            base = slug(line.lstrip("#"))
            name, n = base, 0
            while name in found:
                n += 1
                name = f"{base}-{n}"
            found.add(name)
    return found


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_every_link_leads_somewhere(doc: Path) -> None:
    """Links to a file of the repository or to a heading (of this page or another) resolve."""
    text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)  # a code span is no link, though `[a-z]([0-9])` looks like one
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        if not file.exists():
            broken.append(target)
        elif anchor and anchor not in anchors(file):
            broken.append(target)
    assert broken == []


def test_the_checks_can_fail() -> None:
    """The comparisons are not vacuous: a changed value, a missing key, a shorter list, an extra line."""
    real = {"kind": "X", "spec": {"a": 1, "b": [1, 2]}}
    assert excerpt_of({"kind": "X", "spec": {"b": [1, 2]}}, real) == []
    assert excerpt_of({"spec": {"a": 2}}, real) and excerpt_of({"spec": {"c": 1}}, real)
    assert excerpt_of({"spec": {"b": [1]}}, real) and excerpt_of({"spec": {"b": [1, ELIDED]}}, real) == []
    assert lines_match(["a", ELIDED, "d"], ["a", "b", "c", "d"]) and not lines_match(["a", "x"], ["a", "b"])
