"""`diff BASE [HEAD] [-- PATH ...]` over a real git repository whose history the tests commit.

The history, one tag per change a reviewer meets:
  base         replicas/qwen.yaml (a single-GPU replica) and a README
  add-replica  adds replicas/llama.yaml (four copies of a Llama engine)
  copies       llama: copies 4 -> 2
  image        qwen: a new vLLM image
  rename       llama: a new metadata.name
  reformat     qwen: moved to replicas/qwen/replica.yaml and rewritten (flow style, key order, comments)
  broken       llama: a YAML syntax error
"""

from __future__ import annotations

import io
import os
import re
import shlex
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from conftest import ROOT, imported_by_us, run_cli
from modelplane_render.frontends.diff.report import MARKDOWN_MARKER, NO_CHANGE

QWEN = (ROOT / "fixtures" / "valid" / "single-gpu-standalone" / "replica.yaml").read_text()
LLAMA = (ROOT / "fixtures" / "valid" / "several-copies" / "replica.yaml").read_text()
GIT_ENV = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}

QWEN_REFORMATTED = """\
# The same replica, moved and rewritten: flow style, other key order, other quoting.
kind: ModelReplica
apiVersion: modelplane.ai/v1alpha1
metadata: {namespace: ml-team, name: qwen3-8b-eks-l4-0}
spec:
  clusterName: "eks-l4"
  engines:
    - name: qwen3-8b
      members:
        - role: Standalone
          nodePoolName: gpu-l4
          deviceRequests:
            - {name: gpu, count: 1, deviceClassName: gpu.nvidia.com,
               selectors: [{cel: "device.capacity[\\"gpu.nvidia.com\\"].memory.compareTo(quantity(\\"20Gi\\")) >= 0\\n"}]}
          template:
            spec:
              containers:
                - name: engine
                  image: 'vllm/vllm-openai:v0.24.0'
                  args:
                    - --model=Qwen/Qwen3-8B
                    - --served-model-name=qwen
                    - --max-model-len=16384
                    - --gpu-memory-utilization=0.92
                    - --reasoning-parser=qwen3
                    - '--default-chat-template-kwargs={"enable_thinking": false}'
                    - --enable-auto-tool-choice
                    - --tool-call-parser=hermes
"""


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, env={**os.environ, **GIT_ENV}, capture_output=True, check=True)
    return done.stdout.decode()


def commit(repo: Path, tag: str, files: dict[str, str | None]) -> None:
    for name, text in files.items():
        path = repo / name
        if text is None:
            git(repo, "rm", "-q", name)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        git(repo, "add", name)
    git(repo, "commit", "-q", "-m", tag)
    git(repo, "tag", tag)


def build_history(repo: Path) -> None:
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "base", {"README.md": "# serving\n", "replicas/qwen.yaml": QWEN})
    commit(repo, "add-replica", {"replicas/llama.yaml": LLAMA})
    commit(repo, "copies", {"replicas/llama.yaml": LLAMA.replace("copies: 4", "copies: 2")})
    commit(repo, "image", {"replicas/qwen.yaml": QWEN.replace("vllm-openai:v0.23.0", "vllm-openai:v0.24.0")})
    renamed = LLAMA.replace("copies: 4", "copies: 2").replace("name: llama-8b-eks-l40s-0", "name: llama-8b-eks-l40s-1")
    commit(repo, "rename", {"replicas/llama.yaml": renamed})
    commit(repo, "reformat", {"replicas/qwen.yaml": None, "replicas/qwen/replica.yaml": QWEN_REFORMATTED})
    commit(repo, "broken", {"replicas/llama.yaml": renamed.replace("    copies: 2\n", "    copies: [2\n")})


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("diff") / "repo"
    build_history(repo)
    return repo


@pytest.fixture
def clone(history: Path, tmp_path: Path) -> Path:
    """A checkout of its own, for the tests that change the work tree."""
    target = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(history), str(target)], check=True, capture_output=True, env={**os.environ, **GIT_ENV})
    git(target, "checkout", "-q", "broken")
    return target


def rendered_objects(text: str) -> dict[str, str]:
    """`render`'s output split per object, keyed `Kind namespace/name`, each without its `---`."""
    found = {}
    for body in text.split("---\n")[1:]:
        kind = re.search(r"^kind: (.+)$", body, re.M)
        name = re.search(r"^  name: (.+)$", body, re.M)
        namespace = re.search(r"^  namespace: (.+)$", body, re.M)
        assert kind and name and namespace
        found[f"{kind[1]} {namespace[1]}/{name[1]}"] = body
    return found


def whole_object(title: str, body: str, before: str, after: str, sign: str) -> str:
    """The diff section of an added (sign +) or removed (sign -) object: every line of it."""
    lines = body.splitlines(keepends=True)
    span = f"-0,0 +1,{len(lines)}" if sign == "+" else f"-1,{len(lines)} +0,0"
    return f"\n{title}\n--- {before}\n+++ {after}\n@@ {span} @@\n" + "".join(sign + line for line in lines)


def render_text(tmp: Path, source: str) -> dict[str, str]:
    """What `render` prints for a source, per object: the bodies an added or removed object shows whole."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "replica.yaml").write_text(source)
    result = run_cli("render", "replica.yaml", cwd=tmp)
    assert result.code == 0, result.stderr
    return rendered_objects(result.stdout)


def llama_objects(replica: str) -> list[str]:
    workload = {"llama-8b-eks-l40s-0": "77066", "llama-8b-eks-l40s-1": "e1286"}[replica]
    claims = {"llama-8b-eks-l40s-0": "977a4797a6", "llama-8b-eks-l40s-1": "98d240b95b"}[replica]
    return [
        f"ServiceAccount inference/{replica}-epp",
        f"ConfigMap inference/{replica}-epp",
        f"Role inference/{replica}-epp",
        f"RoleBinding inference/{replica}-epp",
        f"ResourceClaimTemplate inference/{replica}-llama-8b-standalone-devices-{claims}",
        f"Service inference/{replica}-epp",
        f"LeaderWorkerSet inference/{replica}-llama-8b-{workload}",
        f"Deployment inference/{replica}-epp",
        f"InferencePool inference/{replica}-pool",
    ]


def snapshot_state(repo: Path) -> tuple[str, bytes, float]:
    """What the user has staged and checked out: must be the same after a diff."""
    index = repo / ".git" / "index"
    # GIT_OPTIONAL_LOCKS=0: `git status` itself must not refresh (rewrite) the index it is watching.
    status = subprocess.run(
        ["git", "status", "--porcelain=v1", "--untracked-files=all"],
        cwd=repo,
        env={**os.environ, **GIT_ENV, "GIT_OPTIONAL_LOCKS": "0"},
        capture_output=True,
        check=True,
    ).stdout.decode()
    return status, index.read_bytes(), index.stat().st_mtime_ns


# -- each change a reviewer meets, with its exact output ----------------------------------------


def test_adding_a_replica_shows_every_new_object_whole(history, tmp_path):  # type: ignore[no-untyped-def]
    result = run_cli("diff", "base", "add-replica", cwd=history)
    assert (result.code, result.stderr) == (3, "")
    titles = llama_objects("llama-8b-eks-l40s-0")
    bodies = render_text(tmp_path, LLAMA)
    assert list(bodies) == titles  # render's order: dependencies first
    total = sum(len(b.splitlines()) for b in bodies.values())
    width = max(map(len, titles))
    expected = f"base -> add-replica: {len(titles)} added, 0 removed, 0 changed (+{total} -0 lines)\n\n"
    expected += "".join(f"  added    {t:<{width}}  +{len(bodies[t].splitlines())}\n" for t in titles)
    # What it does to the cluster: the claim template, and the two workloads whose pods start.
    (claim,) = [t for t in titles if t.startswith("ResourceClaimTemplate ")]
    workloads = [t for t in titles if t.startswith(("LeaderWorkerSet ", "Deployment "))]
    expected += (
        f"\nimpact: ModelReplica inference/llama-8b-eks-l40s-0 is new: {claim} is created; "
        f"{', '.join(workloads)} are created (their pods start from nothing)\n"
    )
    expected += "".join(whole_object(t, bodies[t], "/dev/null", "add-replica", "+") for t in titles)
    assert result.stdout == expected


def test_changing_copies_changes_only_the_leaderworkerset_replicas(history):  # type: ignore[no-untyped-def]
    result = run_cli("diff", "add-replica", "copies", "--", "replicas", cwd=history)
    assert (result.code, result.stderr) == (3, "")
    assert result.stdout == (
        "add-replica -> copies: 0 added, 0 removed, 1 changed (+1 -1 lines)\n"
        "\n"
        "  changed  LeaderWorkerSet inference/llama-8b-eks-l40s-0-llama-8b-77066  +1 -1\n"
        "\n"
        "impact: ModelReplica inference/llama-8b-eks-l40s-0: LeaderWorkerSet inference/llama-8b-eks-l40s-0-llama-8b-77066 scales "
        "from 4 to 2 groups (no pod restarts)\n"
        "\n"
        "LeaderWorkerSet inference/llama-8b-eks-l40s-0-llama-8b-77066\n"
        "--- add-replica\n"
        "+++ copies\n"
        "@@ -8,7 +8,7 @@\n"
        "     app.kubernetes.io/managed-by: modelplane-render\n"
        "     modelplane.ai/replica: llama-8b-eks-l40s-0\n"
        " spec:\n"
        "-  replicas: 4\n"
        "+  replicas: 2\n"
        "   startupPolicy: LeaderCreated\n"
        "   networkConfig:\n"
        "     subdomainPolicy: Shared\n"
    )


def test_changing_an_image_changes_the_engine_container_only(history):  # type: ignore[no-untyped-def]
    result = run_cli("diff", "copies", "image", cwd=history)
    assert (result.code, result.stderr) == (3, "")
    assert result.stdout == (
        "copies -> image: 0 added, 0 removed, 1 changed (+1 -1 lines)\n"
        "\n"
        "  changed  LeaderWorkerSet ml-team/qwen3-8b-eks-l4-0-qwen3-8b-03010  +1 -1\n"
        "\n"
        "impact: ModelReplica ml-team/qwen3-8b-eks-l4-0: LeaderWorkerSet ml-team/qwen3-8b-eks-l4-0-qwen3-8b-03010 rolls 1 group "
        "of 1 pod (1 device a group), one group at a time without surge (a group's pods stop before its new ones start)\n"
        "\n"
        "LeaderWorkerSet ml-team/qwen3-8b-eks-l4-0-qwen3-8b-03010\n"
        "--- copies\n"
        "+++ image\n"
        "@@ -41,7 +41,7 @@\n"
        "           resourceClaimTemplateName: qwen3-8b-eks-l4-0-qwen3-8b-standalone-devices-25c31ceef1\n"
        "         containers:\n"
        "         - name: engine\n"
        "-          image: vllm/vllm-openai:v0.23.0\n"
        "+          image: vllm/vllm-openai:v0.24.0\n"
        "           args:\n"
        "           - --model=Qwen/Qwen3-8B\n"
        "           - --served-model-name=qwen\n"
    )


def test_a_renamed_replica_is_removed_and_added_with_a_note_on_live_pods(history, tmp_path):  # type: ignore[no-untyped-def]
    result = run_cli("diff", "image", "rename", cwd=history)
    assert (result.code, result.stderr) == (3, "")
    source = LLAMA.replace("copies: 4", "copies: 2")
    old = render_text(tmp_path / "old", source)
    new = render_text(tmp_path / "new", source.replace("name: llama-8b-eks-l40s-0", "name: llama-8b-eks-l40s-1"))
    old_titles, new_titles = llama_objects("llama-8b-eks-l40s-0"), llama_objects("llama-8b-eks-l40s-1")
    assert (list(old), list(new)) == (old_titles, new_titles)
    total = sum(len(b.splitlines()) for b in old.values())
    width = max(map(len, old_titles + new_titles))
    expected = f"image -> rename: 9 added, 9 removed, 0 changed (+{total} -{total} lines)\n\n"
    for gone, came in zip(old_titles, new_titles, strict=True):  # same kind: sorted side by side
        expected += f"  removed  {gone:<{width}}  -{len(old[gone].splitlines())}\n"
        expected += f"  added    {came:<{width}}  +{len(new[came].splitlines())}\n"

    def claim_and_workloads(titles: list[str]) -> tuple[str, str]:
        (claim,) = [t for t in titles if t.startswith("ResourceClaimTemplate ")]
        return claim, ", ".join(t for t in titles if t.startswith(("LeaderWorkerSet ", "Deployment ")))

    (old_claim, old_workloads), (new_claim, new_workloads) = claim_and_workloads(old_titles), claim_and_workloads(new_titles)
    expected += (
        f"\nimpact: ModelReplica inference/llama-8b-eks-l40s-0 is removed: {old_claim} is deleted; {old_workloads} are deleted "
        "(their pods stop)\n"
        f"impact: ModelReplica inference/llama-8b-eks-l40s-1 is new: {new_claim} is created; {new_workloads} are created "
        "(their pods start from nothing)\n"
    )
    expected += (
        "\n"
        "note: ModelReplica inference/llama-8b-eks-l40s-0 is renamed to inference/llama-8b-eks-l40s-1: its objects are removed "
        "and new ones added, so Argo CD will replace the live pods (the old ones are deleted and the new ones start from scratch "
        "on free GPUs), not roll them\n"
    )
    for gone, came in zip(old_titles, new_titles, strict=True):
        expected += whole_object(gone, old[gone], "image", "/dev/null", "-")
        expected += whole_object(came, new[came], "/dev/null", "rename", "+")
    assert result.stdout == expected


def test_a_renamed_engine_notes_that_its_pods_are_replaced(clone):  # type: ignore[no-untyped-def]
    git(clone, "checkout", "-q", "reformat")
    qwen = clone / "replicas" / "qwen" / "replica.yaml"
    qwen.write_text(qwen.read_text().replace("- name: qwen3-8b\n", "- name: qwen3-8b-v2\n"))
    result = run_cli("diff", "reformat", "--", "replicas/qwen", cwd=clone)
    assert result.code == 3
    assert re.findall(r"^  (added|removed|changed) +(\S+ \S+) ", result.stdout, re.M) == [
        ("removed", "ResourceClaimTemplate ml-team/qwen3-8b-eks-l4-0-qwen3-8b-standalone-devices-25c31ceef1"),
        ("added", "ResourceClaimTemplate ml-team/qwen3-8b-eks-l4-0-qwen3-8b-v2-standalone-devices-7d891fac29"),
        ("removed", "LeaderWorkerSet ml-team/qwen3-8b-eks-l4-0-qwen3-8b-03010"),
        ("added", "LeaderWorkerSet ml-team/qwen3-8b-eks-l4-0-qwen3-8b-v2-78d89"),
    ]
    notes = [line for line in result.stdout.splitlines() if line.startswith("note: ")]
    assert notes == [
        "note: LeaderWorkerSet ml-team/qwen3-8b-eks-l4-0-qwen3-8b-03010 is replaced by LeaderWorkerSet "
        "ml-team/qwen3-8b-eks-l4-0-qwen3-8b-v2-78d89: its live pods are deleted and the new ones start from scratch on free GPUs "
        "(a new name is not a rolling update)"
    ]


def test_moving_and_reformatting_a_source_is_no_change(history):  # type: ignore[no-untyped-def]
    assert git(history, "diff", "--stat", "rename", "reformat").count("replicas/qwen") == 2  # the sources did change
    result = run_cli("diff", "rename", "reformat", cwd=history)
    assert (result.code, result.stdout, result.stderr) == (0, f"rename -> reformat: {NO_CHANGE} (18 objects)\n", "")


def test_a_broken_file_is_an_error_named_with_its_revision_and_no_diff(history):  # type: ignore[no-untyped-def]
    message = "replicas/llama.yaml:15:12: .: YAML syntax: did not find expected ',' or ']' (while parsing a flow sequence that starts at line 14, column 13)\n"
    for base, head in (("reformat", "broken"), ("broken", "reformat")):
        result = run_cli("diff", base, head, cwd=history)
        assert (result.code, result.stdout, result.stderr) == (1, "", "broken:" + message)
    markdown = run_cli("diff", "reformat", "broken", "--format", "markdown", cwd=history)
    assert (markdown.code, markdown.stdout, markdown.stderr) == (1, "", "broken:" + message)


def test_the_same_revision_twice_is_no_change(history):  # type: ignore[no-untyped-def]
    result = run_cli("diff", "image", "image", cwd=history)
    assert (result.code, result.stdout, result.stderr) == (0, f"image -> image: {NO_CHANGE} (18 objects)\n", "")


# -- the work tree as HEAD, and the user's checkout left alone --------------------------------


def test_the_work_tree_is_head_and_the_index_and_checkout_are_untouched(clone):  # type: ignore[no-untyped-def]
    git(clone, "checkout", "-q", "reformat")
    llama = clone / "replicas" / "llama.yaml"
    llama.write_text(llama.read_text().replace("copies: 2", "copies: 3"))  # unstaged
    (clone / "README.md").write_text("# staged\n")
    git(clone, "add", "README.md")  # something staged, that the diff must leave staged
    (clone / "scratch.txt").write_text("untracked\n")
    before = snapshot_state(clone)
    result = run_cli("diff", "reformat", cwd=clone)
    assert (result.code, result.stderr) == (3, "")
    assert result.stdout.startswith(
        "reformat -> work tree: 0 added, 0 removed, 1 changed (+1 -1 lines)\n"
        "\n"
        "  changed  LeaderWorkerSet inference/llama-8b-eks-l40s-1-llama-8b-e1286  +1 -1\n"
        "\n"
        "impact: ModelReplica inference/llama-8b-eks-l40s-1: LeaderWorkerSet inference/llama-8b-eks-l40s-1-llama-8b-e1286 scales "
        "from 2 to 3 groups (no pod restarts)\n"
        "\n"
        "LeaderWorkerSet inference/llama-8b-eks-l40s-1-llama-8b-e1286\n"
        "--- reformat\n"
        "+++ work tree\n"
    )
    assert "-  replicas: 2\n+  replicas: 3\n" in result.stdout
    assert snapshot_state(clone) == before
    # A revision that is not checked out is read from git's objects, not from the disk.
    assert run_cli("diff", "base", "add-replica", cwd=clone).code == 3
    assert snapshot_state(clone) == before


def test_errors_of_both_sides_come_at_once(clone):  # type: ignore[no-untyped-def]
    git(clone, "checkout", "-q", "broken")
    qwen = clone / "replicas" / "qwen" / "replica.yaml"
    qwen.write_text(qwen.read_text().replace("role: Standalone", "role: Follower"))
    result = run_cli("diff", "broken", cwd=clone)
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr == (
        "broken:replicas/llama.yaml:15:12: .: YAML syntax: did not find expected ',' or ']' (while parsing a flow sequence that starts at line 14, column 13)\n"
        "replicas/llama.yaml:15:12: .: YAML syntax: did not find expected ',' or ']' (while parsing a flow sequence that starts at line 14, column 13)\n"
        "replicas/qwen/replica.yaml:10:17: spec.engines[0].members[0].role: must be one of Standalone, Leader, Worker\n"
    )


def test_paths_are_relative_to_the_current_directory(history):  # type: ignore[no-untyped-def]
    inside = history / "replicas"
    result = run_cli("diff", "reformat", "broken", cwd=inside)
    assert result.stderr.startswith("broken:llama.yaml:15:12: ")
    assert run_cli("diff", "copies", "image", "--", "qwen.yaml", cwd=inside).code == 3
    assert run_cli("diff", "copies", "image", "--", "llama.yaml", cwd=inside).code == 0


def test_a_path_need_exist_at_one_revision_only(history):  # type: ignore[no-untyped-def]
    added = run_cli("diff", "base", "add-replica", "--", "replicas/llama.yaml", cwd=history)
    assert added.code == 3 and added.stdout.startswith("base -> add-replica: 9 added, 0 removed, 0 changed")
    removed = run_cli("diff", "add-replica", "base", "--", "replicas/llama.yaml", cwd=history)
    assert removed.code == 3 and removed.stdout.startswith("add-replica -> base: 0 added, 9 removed, 0 changed")
    assert "note: ModelReplica inference/llama-8b-eks-l40s-0 is removed: Argo CD (with pruning) will delete" in removed.stdout
    neither = run_cli("diff", "base", "copies", "--", "nope", cwd=history)
    assert (neither.code, neither.stdout, neither.stderr) == (1, "", "nope:1:1: .: no such file or directory at base or copies\n")


def test_namespace_and_gateway_apply_to_both_sides(clone):  # type: ignore[no-untyped-def]
    git(clone, "checkout", "-q", "reformat")
    source = QWEN.replace("  namespace: ml-team\n", "").replace("v0.23.0", "v0.24.0")  # reformat's replica, less its namespace
    commit(clone, "no-namespace", {"replicas/qwen/replica.yaml": source})
    qwen = clone / "replicas" / "qwen" / "replica.yaml"
    qwen.write_text(qwen.read_text().replace("v0.24.0", "v0.25.0"))
    missing = run_cli("diff", "no-namespace", "--", "replicas/qwen", cwd=clone)
    assert (missing.code, missing.stdout) == (1, "")
    assert [line.split(": ")[:2] for line in missing.stderr.splitlines()] == [
        ["no-namespace:replicas/qwen/replica.yaml:6:3", "metadata"],  # the revision, then the work tree
        ["replicas/qwen/replica.yaml:6:3", "metadata"],
    ]
    assert "has no namespace" in missing.stderr
    given = run_cli("diff", "no-namespace", "--namespace", "team-a", "--gateway", "gw/main", "--", "replicas/qwen", cwd=clone)
    assert given.code == 3, given.stderr
    assert given.stdout.startswith("no-namespace -> work tree: 0 added, 0 removed, 1 changed (+1 -1 lines)\n\n")
    assert "  changed  LeaderWorkerSet team-a/qwen3-8b-eks-l4-0-qwen3-8b-03010  +1 -1\n" in given.stdout
    unchanged = run_cli("diff", "no-namespace", "reformat", "-n", "ml-team", "--gateway", "gw/main", "--", "replicas/qwen", cwd=clone)
    assert unchanged.stdout == f"no-namespace -> reformat: {NO_CHANGE} (10 objects)\n"  # nine, and the HTTPRoute


# -- the command line ---------------------------------------------------------------------------


def test_options_may_come_before_or_after_the_revisions(history):  # type: ignore[no-untyped-def]
    first = run_cli("diff", "--format", "markdown", "copies", "image", "--", "replicas", cwd=history)
    after = run_cli("diff", "copies", "--format", "markdown", "image", "--", "replicas", cwd=history)
    assert first.code == after.code == 3
    assert first.stdout == after.stdout and first.stdout.startswith(MARKDOWN_MARKER)
    narrow = run_cli("diff", "copies", "image", "-U", "0", cwd=history)
    assert "@@ -44 +44 @@\n-          image: vllm/vllm-openai:v0.23.0\n+          image: vllm/vllm-openai:v0.24.0\n" in narrow.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "a BASE revision is required (see modelplane-render diff --help)"),
        (("a", "b", "c"), "at most two revisions, got 3: put paths after -- (see modelplane-render diff --help)"),
        (("no-such-revision",), "unknown revision 'no-such-revision' (not a commit or tree in this repository)"),
        (
            ("base", "--format", "html"),
            "argument --format: invalid choice: 'html' (choose from 'text', 'markdown') (see modelplane-render diff --help)",
        ),
        (
            ("base", "--color", "sometimes"),
            "argument --color/--colour: invalid choice: 'sometimes' (choose from 'auto', 'always', 'never') (see modelplane-render diff --help)",
        ),
        (
            ("base", "--namespace", "Bad_NS"),
            "--namespace 'Bad_NS' is not a namespace name (a DNS label: lowercase letters, digits and '-')",
        ),
        (("base", "--", "/"), "/ is outside the git repository"),
    ],
)
def test_usage_errors_exit_2(history, args, message):  # type: ignore[no-untyped-def]
    result = run_cli("diff", *args, cwd=history)
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.startswith(f"modelplane-render: {message}"), result.stderr


def test_outside_a_repository_is_a_usage_error(tmp_path):  # type: ignore[no-untyped-def]
    result = run_cli("diff", "HEAD", cwd=tmp_path)
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.startswith("modelplane-render: not a git repository")


def test_colour_only_when_asked_or_on_a_terminal(history):  # type: ignore[no-untyped-def]
    plain = run_cli("diff", "copies", "image", cwd=history)
    never = run_cli("diff", "copies", "image", "--color", "never", cwd=history)
    always = run_cli("diff", "copies", "image", "--color", "always", cwd=history)
    assert plain.stdout == never.stdout and "\033[" not in plain.stdout
    assert "\033[31m-          image: vllm/vllm-openai:v0.23.0\033[0m\n" in always.stdout
    assert "\033[32m+          image: vllm/vllm-openai:v0.24.0\033[0m\n" in always.stdout
    assert re.sub(r"\033\[[0-9;]*m", "", always.stdout) == plain.stdout


def test_as_a_process_exit_3_and_the_diff_on_stdout(history):  # type: ignore[no-untyped-def]
    from conftest import run_process

    done = run_process("diff", "copies", "image", cwd=history)
    assert (done.returncode, done.stderr) == (3, b"")
    assert done.stdout.decode() == run_cli("diff", "copies", "image", cwd=history).stdout


def test_render_does_not_import_the_diff_machinery():  # type: ignore[no-untyped-def]
    code = "import sys; from modelplane_render.main import build_parser; build_parser(); print(*sorted(sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, timeout=120)
    assert imported_by_us(done.stdout.split(), cwd=ROOT) & {"modelplane_render.frontends.diff", "difflib", "subprocess"} == set()


# -- Markdown, for a pull-request comment ------------------------------------------------------


def markdown_structure(text: str) -> dict[str, object]:
    summary = re.search(r"\*\*(\d+) added, (\d+) removed, (\d+) changed \(\+(\d+) -(\d+) lines\)\*\*", text)
    assert summary, text[:500]
    rows = re.findall(r"^\| (added|removed|changed) \| `([^`]+)` \| `([^`]+)` \| ([-+0-9 ]+) \|$", text, re.M)
    headings = re.findall(r"^#### (.+) \((added|removed|changed)\)$", text, re.M)
    return {"summary": [int(n) for n in summary.groups()], "rows": rows, "headings": headings}


@pytest.mark.parametrize(("base", "head"), [("base", "add-replica"), ("add-replica", "copies"), ("copies", "image"), ("image", "rename")])
def test_markdown_counts_equal_the_objects_that_changed(history, base, head):  # type: ignore[no-untyped-def]
    text = run_cli("diff", base, head, "--format", "markdown", cwd=history)
    plain = run_cli("diff", base, head, cwd=history)
    assert text.code == plain.code == 3
    shape = markdown_structure(text.stdout)
    added, removed, changed, plus, minus = shape["summary"]  # type: ignore[misc]
    listed = re.findall(r"^  (added|removed|changed) +(\S+ \S+) ", plain.stdout, re.M)
    assert [(s, t) for s, t, _, _ in shape["rows"]] == listed  # type: ignore[attr-defined]
    assert [(s, t) for t, s in shape["headings"]] == sorted(listed, key=lambda x: listed.index(x))  # type: ignore[attr-defined]
    assert (added, removed, changed) == tuple(sum(1 for s, _ in listed if s == k) for k in ("added", "removed", "changed"))
    plus_lines = sum(1 for line in plain.stdout.splitlines() if line.startswith("+") and not line.startswith("+++ "))
    minus_lines = sum(1 for line in plain.stdout.splitlines() if line.startswith("-") and not line.startswith("--- "))
    assert (plus, minus) == (plus_lines, minus_lines)
    # One collapsible section per source file, each holding a diff block per object, every block closed.
    assert text.stdout.count("<details>") == text.stdout.count("</details>") == len({f for _, _, f, _ in shape["rows"]})  # type: ignore[attr-defined]
    assert text.stdout.count("```diff\n") == added + removed + changed
    assert text.stdout.count("\n```\n") == added + removed + changed
    assert ("> [!WARNING]\n> ModelReplica inference/llama-8b-eks-l40s-0 is renamed" in text.stdout) == (head == "rename")


def test_markdown_without_a_change_says_so(history):  # type: ignore[no-untyped-def]
    result = run_cli("diff", "rename", "reformat", "--format", "markdown", cwd=history)
    assert (result.code, result.stdout) == (
        0,
        f"{MARKDOWN_MARKER}\n### modelplane-render diff\n\n`rename` → `reformat`: {NO_CHANGE} (18 objects).\n",
    )


def test_markdown_stays_within_a_comment_and_says_what_it_left_out(history, monkeypatch):  # type: ignore[no-untyped-def]
    from modelplane_render.frontends.diff.compare import compare
    from modelplane_render.frontends.diff.report import format_markdown
    from modelplane_render.frontends.diff.sides import render_both
    from modelplane_render.options import Options

    monkeypatch.chdir(history)
    comparison = compare(*render_both("image", "rename", ["."], Options()))
    text = format_markdown(comparison, limit=8000)
    assert len(text) <= 8000
    assert text.count("| removed | ") + text.count("| added | ") == 18  # the whole table fits in half
    shown = text.count("```diff\n")
    assert 0 < shown < 20
    assert text.endswith(
        f"_{18 - shown} more object diffs are not shown (a comment holds at most 8000 characters): "
        "run the same `modelplane-render diff` without `--format markdown` to see them all._\n"
    )
    assert text.count("<details>") == text.count("</details>")
    small = format_markdown(comparison, limit=3000)
    assert len(small) <= 3000 and "| … | " in small and " more objects | | |\n" in small


def test_a_fence_in_an_object_cannot_close_the_diff_block(clone):  # type: ignore[no-untyped-def]
    git(clone, "checkout", "-q", "reformat")
    notes = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes, namespace: ml-team}\ndata:\n  readme: |\n    ```\n    not the end\n"
    (clone / "replicas" / "notes.yaml").write_text(notes)
    result = run_cli("diff", "reformat", "--format", "markdown", cwd=clone)
    assert result.code == 3
    assert "````diff\n" in result.stdout and "+    ```\n" in result.stdout and "\n````\n" in result.stdout


# -- the git side reads exactly the files `render` reads ----------------------------------------


def test_the_walk_at_a_revision_matches_the_walk_of_the_disk(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    from modelplane_render.frontends.diff.revisions import Git, RevisionTree, find_files_at
    from modelplane_render.walk import find_files

    repo = tmp_path / "tree"
    repo.mkdir()
    git(repo, "init", "-q")
    files = [
        "a.yaml", "b.yml", "c.json", "README.md", ".hidden.yaml", "kustomization.yaml", "Kustomization", "kustomization.yml",
        ".dot/x.yaml", "sub/z.yaml", "sub/a.yaml", "sub/deeper/k.yml", "sub/.x.yaml", "Sub/upper.yaml", "sub-dir/m.yaml", "sub.d/n.yaml",
        "outside/o.yaml",
    ]  # fmt: skip
    for name in files:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("a: 1\n")
    (repo / "root").mkdir()
    (repo / "root" / "r.yaml").write_text("a: 1\n")
    os.symlink("r.yaml", repo / "root" / "link.yaml")  # inside: read
    os.symlink("../outside/o.yaml", repo / "root" / "out.yaml")  # outside the given directory: refused
    os.symlink("missing.yaml", repo / "root" / "dangling.yaml")  # dangling: can't be read
    os.symlink("../sub", repo / "root" / "dir.yaml")  # a directory outside the given one: refused
    (repo / "root" / "data").mkdir()
    (repo / "root" / "data" / "d.yaml").write_text("a: 1\n")
    os.symlink("data", repo / "root" / "alias")  # a directory inside, holding YAML: refused, naming data
    (repo / "root" / "docs").mkdir()
    (repo / "root" / "docs" / "README.md").write_text("# docs\n")
    os.symlink("docs", repo / "root" / "manual")  # a directory inside without YAML: nothing lost
    os.symlink("/etc", repo / "root" / "etc")  # out of the repository: refused
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tree")
    monkeypatch.chdir(repo)
    tree = RevisionTree(Git(), "HEAD")
    for paths in (["."], ["sub"], ["./sub/"], ["root"], ["a.yaml", "c.json", "kustomization.yaml"], ["root/link.yaml"]):
        disk, disk_errors = find_files(paths)
        at_head, head_errors = find_files_at(tree, Git(), paths)
        assert [f.shown for f in at_head] == [shown for shown, _ in disk], paths
        assert head_errors == disk_errors, paths
    _, root_errors = find_files_at(tree, Git(), ["root"])
    assert [str(e) for e in root_errors if "symlink to a directory" in e.message] == [
        "root/alias:1:1: .: symlink to a directory is not followed, and its target holds YAML: give root/data as a path instead of the link",
        "root/dir.yaml:1:1: .: symlink to a directory leads outside root (to sub): refusing it, as Argo CD refuses links that leave the repository",
        "root/etc:1:1: .: symlink to a directory leads outside root (to /etc): refusing it, as Argo CD refuses links that leave the repository",
    ]


# -- several clusters: one report each -------------------------------------------------------------


@pytest.fixture(scope="module")
def two_clusters(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """qwen on eks-l4 and llama on eks-l40s; then llama is deleted."""
    repo = tmp_path_factory.mktemp("clusters") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    assert "clusterName: eks-l4\n" in QWEN and "clusterName: eks-l40s\n" in LLAMA
    commit(repo, "both", {"replicas/qwen.yaml": QWEN, "replicas/llama.yaml": LLAMA})
    commit(repo, "llama-gone", {"replicas/llama.yaml": None})
    return repo


def test_each_cluster_asked_for_gets_its_own_report_and_an_emptied_cluster_says_so(two_clusters: Path) -> None:
    done = run_cli("diff", "--cluster", "eks-l4", "--cluster", "eks-l40s", "both", "llama-gone", cwd=two_clusters)
    assert done.code == 3, done.stderr
    l4, l40s = done.stdout.split("\n\n", 1)[0], done.stdout.split("\n\n", 1)[1]
    assert l4.startswith("both -> llama-gone (cluster eks-l4): no change to the rendered output (")
    assert l40s.startswith("both -> llama-gone (cluster eks-l40s): 0 added, ")
    count = len(render_text(two_clusters.parent / "llama", LLAMA))  # what the deleted replica rendered to
    assert f"0 added, {count} removed, 0 changed" in l40s
    assert f"note: all {count} objects of cluster eks-l40s are removed: Argo CD (with pruning) will delete every one of them" in l40s


def test_one_cluster_compares_only_its_replicas(two_clusters: Path) -> None:
    done = run_cli("diff", "--cluster", "eks-l4", "both", "llama-gone", cwd=two_clusters)
    assert (done.code, done.stderr) == (0, "")
    assert done.stdout.startswith("both -> llama-gone (cluster eks-l4): no change to the rendered output")


def test_the_markdown_of_several_clusters_is_one_comment_with_a_section_each(two_clusters: Path) -> None:
    done = run_cli("diff", "--format", "markdown", "--cluster", "eks-l4", "--cluster", "eks-l40s", "both", "llama-gone", cwd=two_clusters)
    assert done.code == 3
    assert done.stdout.count(MARKDOWN_MARKER) == 1 and done.stdout.count("### modelplane-render diff") == 1
    first, second = done.stdout.index("#### Cluster `eks-l4`"), done.stdout.index("#### Cluster `eks-l40s`")
    assert first < second and NO_CHANGE in done.stdout[first:second]
    assert "objects of cluster eks-l40s are removed: Argo CD (with pruning) will delete every one of them" in done.stdout[second:]


def test_an_upgrade_of_the_renderer_is_reviewed_with_base_renderer(history, tmp_path):  # type: ignore[no-untyped-def]
    """The previous release (test_day_two's, before claim templates were named by what they claim) renders the
    base side, this one the head: the same revision shows what upgrading does, claim templates replaced."""
    from test_day_two import PREVIOUS_RELEASE

    tree = tmp_path / "previous"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", PREVIOUS_RELEASE], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tree, filter="data")
    previous = f"{sys.executable} {tree / 'plugin.py'}"
    result = run_cli("diff", "copies", "copies", "--base-renderer", previous, "--", "replicas", cwd=history)
    assert (result.code, result.stderr) == (3, ""), result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith(f"copies ({shlex.join(shlex.split(previous))}) -> copies: "), first
    impact = [line for line in result.stdout.splitlines() if line.startswith("impact: ")]
    assert impact and all(" replaces ResourceClaimTemplate " in line and " rolls " in line for line in impact), impact
    # The same renderer on both sides is no change; a base renderer that fails is an error, and no diff.
    assert run_cli("diff", "copies", "copies", "--base-renderer", f"{sys.executable} {ROOT / 'plugin.py'}", cwd=history).code == 0
    broken = run_cli("diff", "copies", "copies", "--base-renderer", "false", cwd=history)
    assert (broken.code, broken.stdout) == (1, "")
    assert "the base renderer (false) did not render copies" in broken.stderr
