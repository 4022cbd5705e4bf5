"""`modelplane-render krm`: the KRM function, as a ResourceList filter and under the real kustomize.

The unmarked tests run the function in this process on ResourceLists written here. The
`real_peers` tests run the real kustomize v5.8.2 (built by tests/peers/build-kustomize.sh) on
the examples in kustomize/ and on the fixtures, and compare what it builds with what the
command line renders from the same sources: as parsed objects, since kustomize re-sorts and
re-serialises everything.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import INVALID, ROOT, VALID, run_cli, run_process
from modelplane_render.frontends.krm import CONFIG_API_VERSION, CONFIG_KIND, is_orchestration_annotation, run_function
from modelplane_render.yamlio.loader import load_documents

EXAMPLES = ROOT / "kustomize"
WRAPPER = EXAMPLES / "bin" / "modelplane-render-krm"
EXAMPLE_GATEWAY = "gateway-system/inference-gateway"
SINGLE = ROOT / "fixtures" / "valid" / "single-gpu-standalone"
SEVERAL_FAULTS = ROOT / "fixtures" / "invalid" / "several-faults"


# --- helpers ----------------------------------------------------------------------------------


def resource_list(items: list[Any], spec: dict[str, Any] | None = None, *, config: Any = "default") -> bytes:
    body: dict[str, Any] = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
    if config == "default":
        config = {"apiVersion": CONFIG_API_VERSION, "kind": CONFIG_KIND, "metadata": {"name": "render"}, "spec": spec or {}}
    if config is not None:
        body["functionConfig"] = config
    return yaml.safe_dump(body, sort_keys=False).encode()


def fixture_objects(case: Path) -> list[dict[str, Any]]:
    """The documents of a fixture folder as kustomize would hand them over (kustomization.yaml aside)."""
    found = []
    for path in sorted(case.glob("*.y*ml")):
        if path.name != "kustomization.yaml":
            found += [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    return found


def normalised(obj: Any) -> str:
    """An object without the annotations kustomize uses to track it, as canonical JSON."""
    obj = copy.deepcopy(obj)
    annotations = obj.get("metadata", {}).get("annotations")
    if isinstance(annotations, dict):
        for key in [k for k in annotations if is_orchestration_annotation(k)]:
            del annotations[key]
        if not annotations:
            del obj["metadata"]["annotations"]
    return json.dumps(obj, sort_keys=True)


def is_local_config(obj: dict[str, Any]) -> bool:
    return (obj.get("metadata", {}).get("annotations") or {}).get("config.kubernetes.io/local-config") == "true"


def objects(stream: str | bytes) -> list[str]:
    """A YAML stream (or a ResourceList's items) as a sorted list of normalised objects."""
    documents = [d for d in yaml.safe_load_all(stream) if d is not None]
    if len(documents) == 1 and documents[0].get("kind") == "ResourceList":
        documents = documents[0].get("items") or []
    return sorted(normalised(d) for d in documents if not is_local_config(d))


def cli_objects(*args: str, cwd: Path | None = None) -> list[str]:
    result = run_cli("render", *args, cwd=cwd)
    assert (result.code, result.stderr) == (0, ""), result.stderr
    return objects(result.stdout)


def output(raw: bytes) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(raw)
    return loaded


# --- the ResourceList, in this process --------------------------------------------------------


@pytest.mark.parametrize("case", VALID, ids=[p.name for p in VALID])
def test_transformer_renders_the_replicas_among_the_items_as_the_command_line_does(case):  # type: ignore[no-untyped-def]
    outcome = run_function(resource_list(fixture_objects(case)))
    assert (outcome.code, outcome.stderr) == (0, "")
    assert objects(outcome.text) == cli_objects(str(case))


@pytest.mark.parametrize("case", VALID[:4], ids=[p.name for p in VALID[:4]])
def test_generator_reads_its_sources_as_the_command_line_does(case, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(case)
    outcome = run_function(resource_list([], {"sources": ["."], "gateway": "gateways/inference"}))
    assert (outcome.code, outcome.stderr) == (0, "")
    assert objects(outcome.text) == cli_objects("--gateway", "gateways/inference", ".", cwd=case)


def test_generator_and_transformer_in_one_run_see_a_replica_given_twice(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(SINGLE)
    outcome = run_function(resource_list(fixture_objects(SINGLE), {"sources": ["replica.yaml"]}))
    assert outcome.code == 1
    assert "replica ml-team/qwen3-8b-eks-l4-0 is also defined in" in outcome.stderr


PASSED_THROUGH = """\
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
# the team's quota, kept as written
- kind: ConfigMap    # kind first, on purpose
  apiVersion: v1
  metadata:
    name: quota
    namespace: ml-team
    annotations:
      internal.config.kubernetes.io/index: '0'
      config.k8s.io/id: '1'
      kustomize.config.k8s.io/id: |
        kind: ConfigMap
        name: quota
  data:
    mode: "0755"     # looks octal, is a string
    enabled: yes
    octal: 0755
    empty: ""
    note: |
      two
      lines
    flow: {b: 1, a: [x, 'y']}
- {REPLICA}
- apiVersion: v1
  kind: Secret
  metadata: {name: hf-token, namespace: ml-team}
  stringData:
    HF_TOKEN: placeholder   # rotated by external-secrets
functionConfig:
  apiVersion: render.modelplane.ai/v1alpha1
  kind: RenderConfig
  metadata:
    name: render
"""


def _passed_through_input() -> str:
    replica = json.dumps(fixture_objects(SINGLE)[0])
    return PASSED_THROUGH.replace("{REPLICA}", replica)


def test_items_other_than_replicas_pass_through_with_comments_order_and_quoting():  # type: ignore[no-untyped-def]
    text = _passed_through_input()
    outcome = run_function(text.encode())
    assert (outcome.code, outcome.stderr) == (0, "")
    config_map = text[text.index("# the team's quota") : text.index("- {")]
    secret = text[text.index("- apiVersion: v1\n  kind: Secret") : text.index("functionConfig:")]
    assert config_map in outcome.text
    assert secret in outcome.text
    assert outcome.text.endswith(text[text.index("functionConfig:") :])
    items = output(outcome.text.encode())["items"]
    # The rendered objects take the replica's place, in the command line's order.
    assert [i["kind"] for i in items][0] == "ConfigMap" and items[-1]["kind"] == "Secret"
    assert [normalised(i) for i in items[1:-1]] == [normalised(o) for o in yaml.safe_load_all(run_cli("render", str(SINGLE)).stdout)]


def test_the_function_is_idempotent():  # type: ignore[no-untyped-def]
    """Run again on its own output (which holds no replica any more), allowed to render nothing: no change."""
    first = run_function(_passed_through_input().encode())
    again = first.text.replace("    name: render\n", "    name: render\n  spec: {allowEmpty: true}\n")
    second = run_function(again.encode())
    assert (second.code, second.stderr) == (0, "")
    assert second.text == again


def test_the_function_refuses_to_render_nothing_unless_allowed():  # type: ignore[no-untyped-def]
    first = run_function(_passed_through_input().encode())
    refused = run_function(first.text.encode())
    assert refused.code == 1
    assert refused.stderr.startswith("modelplane-render: nothing to render: the sources hold no ModelReplica.")
    (result,) = output(refused.text.encode())["results"]
    assert result["severity"] == "error" and "spec.allowEmpty" in result["message"]


def test_tracking_annotations_stay_with_the_item_and_never_reach_rendered_objects():  # type: ignore[no-untyped-def]
    replica = fixture_objects(SINGLE)[0]
    replica["metadata"]["annotations"] = {
        "team.example.com/owner": "chat",
        "config.kubernetes.io/origin": "path: ../base/replica.yaml\n",
        "config.kubernetes.io/index": "0",
        "internal.config.kubernetes.io/id": "1",
        "config.k8s.io/id": "1",
        "kustomize.config.k8s.io/id": "kind: ModelReplica\nname: qwen3-8b-eks-l4-0\n",
        "alpha.config.kubernetes.io/transformations": "- configuredIn: kustomization.yaml\n",
    }
    outcome = run_function(resource_list([replica]))
    assert outcome.code == 0
    for item in output(outcome.text.encode())["items"]:
        assert _without_prune_last(item)["metadata"]["annotations"] == {"team.example.com/owner": "chat"}, item["kind"]


def test_strings_a_yaml_1_1_reader_would_misread_stay_strings():  # type: ignore[no-untyped-def]
    """kubectl reads YAML 1.1: `yes` is a boolean, `0755` an octal number, `1:20` base 60."""
    tricky = {f"example.com/v{i}": v for i, v in enumerate(["yes", "on", "0755", "1:20", "null", "~", "3.0", "2001-12-14", " x", "a\nb "])}
    replica = fixture_objects(SINGLE)[0]
    replica["metadata"]["annotations"] = tricky
    outcome = run_function(resource_list([replica]))
    assert outcome.code == 0
    assert all(_without_prune_last(item)["metadata"]["annotations"] == tricky for item in output(outcome.text.encode())["items"])


def _without_prune_last(item: dict[str, Any]) -> dict[str, Any]:
    """An object as the replica's annotations alone make it: a claim template also says it is pruned last (test_day_two)."""
    if item["kind"] != "ResourceClaimTemplate":
        return item
    annotations = {k: v for k, v in item["metadata"]["annotations"].items() if k != "argocd.argoproj.io/sync-options"}
    return {**item, "metadata": {**item["metadata"], "annotations": annotations}}


def _can_be_items(case: Path) -> bool:
    """Whether a fixture's documents can be items: objects whose annotations we may add to.

    kustomize never sends anything but objects, and the path annotations this test adds must
    not meet the fault itself.
    """
    try:
        documents = [d for p in sorted(case.glob("*.y*ml")) for d in load_documents(p.name, p.read_text())]
    except Exception:
        return False
    if "annotations" in (case / "expected.stderr").read_text():
        return False
    for document in documents:
        meta = document.data.get("metadata") if isinstance(document.data, dict) else None
        if not isinstance(meta, dict) or not isinstance(meta.get("annotations", {}), dict):
            return False
    return bool(documents)


ELIGIBLE = [case for case in INVALID if _can_be_items(case)]


def _items_with_paths(case: Path) -> list[dict[str, Any]]:
    items = []
    for path in sorted(case.glob("*.y*ml")):
        for document in load_documents(path.name, path.read_text()):
            item = copy.deepcopy(document.data)
            annotations = item["metadata"].get("annotations") or {}
            item["metadata"]["annotations"] = {
                **annotations,
                "internal.config.kubernetes.io/path": path.name,
                "internal.config.kubernetes.io/index": str(document.index),
            }
            items.append(item)
    return items


def test_most_invalid_fixtures_can_be_items():  # type: ignore[no-untyped-def]
    assert len(ELIGIBLE) >= 60


@pytest.mark.parametrize("case", ELIGIBLE, ids=[p.name for p in ELIGIBLE])
def test_an_item_with_a_path_annotation_gets_the_command_lines_errors(case, monkeypatch):  # type: ignore[no-untyped-def]
    """kpt and `kustomize fn` give items their file: then errors read exactly as the command line's."""
    monkeypatch.chdir(case)
    outcome = run_function(resource_list(_items_with_paths(case), config=None))
    expected = (case / "expected.stderr").read_text()
    assert outcome.code == 1
    assert outcome.stderr == expected
    results = output(outcome.text.encode())["results"]
    assert len(results) == len(expected.splitlines())
    assert all(r["severity"] == "error" and r["file"]["path"] == "replica.yaml" for r in results)


def test_an_item_without_a_file_is_named_by_its_object_and_field():  # type: ignore[no-untyped-def]
    (replica,) = fixture_objects(SEVERAL_FAULTS)
    outcome = run_function(resource_list([replica]))
    assert outcome.code == 1
    lines = outcome.stderr.splitlines()
    prefix = "ModelReplica ml-team/Qwen3-8B-eks-l4-0: "
    assert all(line.startswith(prefix) for line in lines)
    expected = [line.split(": ", 1)[1] for line in (SEVERAL_FAULTS / "expected.stderr").read_text().splitlines()]
    assert sorted(line[len(prefix) :] for line in lines) == sorted(expected)
    # stdout: the input items unchanged (nothing rendered) and one result per error.
    written = output(outcome.text.encode())
    assert written["items"] == [replica]
    assert len(written["results"]) == len(lines)
    copies = next(r for r in written["results"] if r["field"]["path"] == "spec.engines[0].copies")
    assert copies == {
        "message": "must be at least 1 (it is 0)",
        "severity": "error",
        "resourceRef": {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "ModelReplica",
            "name": "Qwen3-8B-eks-l4-0",
            "namespace": "ml-team",
        },
        "field": {"path": "spec.engines[0].copies"},
    }


def test_kustomizes_origin_annotation_names_the_file():  # type: ignore[no-untyped-def]
    (replica,) = fixture_objects(SEVERAL_FAULTS)
    replica["metadata"]["annotations"] = {"config.kubernetes.io/origin": "path: ../base/replica.yaml\n"}
    outcome = run_function(resource_list([replica]))
    assert outcome.code == 1
    assert "ModelReplica ml-team/Qwen3-8B-eks-l4-0 (../base/replica.yaml): spec.engines[0].copies: must be at least 1 (it is 0)\n" in (
        outcome.stderr
    )
    result = output(outcome.text.encode())["results"][0]
    assert result["file"] == {"path": "../base/replica.yaml"}
    remote = "path: base/replica.yaml\nrepo: https://github.com/example/models\nref: v1.2.0\n"
    replica["metadata"]["annotations"] = {"config.kubernetes.io/origin": remote}
    outcome = run_function(resource_list([replica]))
    assert "(https://github.com/example/models//base/replica.yaml?ref=v1.2.0): " in outcome.stderr


def test_generator_errors_point_at_the_source_file(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(SEVERAL_FAULTS)
    outcome = run_function(resource_list([], {"sources": ["replica.yaml"]}))
    assert outcome.code == 1
    assert outcome.stderr == (SEVERAL_FAULTS / "expected.stderr").read_text()
    result = output(outcome.text.encode())["results"][0]
    assert result["file"] == {"path": "replica.yaml", "index": 0}
    assert result["resourceRef"]["name"] == "Qwen3-8B-eks-l4-0"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"namespce": "x"}, 'RenderConfig render: spec.namespce: unknown field "namespce" (did you mean "namespace"?)'),
        (
            {"namespace": "Team_A"},
            "RenderConfig render: spec.namespace: 'Team_A' is not a namespace name (a DNS label: lowercase letters, digits and '-')",
        ),
        ({"namespace": 7}, "RenderConfig render: spec.namespace: must be a string, not an integer (7)"),
        ({"gateway": "inference"}, "RenderConfig render: spec.gateway: 'inference' must be NAMESPACE/NAME of a Gateway"),
        ({"sources": "replicas"}, 'RenderConfig render: spec.sources: must be a list of paths, not a string ("replicas")'),
        (
            {"sources": ["/etc"]},
            "RenderConfig render: spec.sources[0]: must be relative to the kustomization's directory, where the function runs",
        ),
        (
            {"sources": ["ok", "../elsewhere"]},
            "RenderConfig render: spec.sources[1]: must stay inside the kustomization's directory (kustomize's load restrictor does the same)",
        ),
        ({"sources": [""]}, 'RenderConfig render: spec.sources[0]: must be a path (a non-empty string), not a string ("")'),
    ],
)
def test_the_function_config_is_validated_strictly(spec, expected):  # type: ignore[no-untyped-def]
    outcome = run_function(resource_list(fixture_objects(SINGLE), spec))
    assert (outcome.code, outcome.stderr) == (1, expected + "\n")
    written = output(outcome.text.encode())
    assert written["items"] == fixture_objects(SINGLE)  # nothing rendered
    assert written["results"][0]["resourceRef"] == {"apiVersion": CONFIG_API_VERSION, "kind": CONFIG_KIND, "name": "render"}


def test_the_function_config_must_be_ours():  # type: ignore[no-untyped-def]
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "render"}, "data": {}}
    outcome = run_function(resource_list([], config=config))
    assert outcome.stderr == f"ConfigMap render: kind: functionConfig must be a {CONFIG_API_VERSION} {CONFIG_KIND}, not v1 ConfigMap\n"
    bad = {"apiVersion": CONFIG_API_VERSION, "kind": CONFIG_KIND, "metadata": {"name": "render"}, "sepc": {}, "spec": []}
    outcome = run_function(resource_list([], config=bad))
    assert outcome.stderr.splitlines() == [
        'RenderConfig render: sepc: unknown field "sepc" (did you mean "spec"?)',
        "RenderConfig render: spec: must be a mapping, not a list",
    ]


def test_no_function_config_means_the_defaults():  # type: ignore[no-untyped-def]
    outcome = run_function(resource_list(fixture_objects(SINGLE), config=None))
    assert (outcome.code, outcome.stderr) == (0, "")
    assert objects(outcome.text) == cli_objects(str(SINGLE))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"", "<stdin>:1:1: .: no input: a KRM function reads a config.kubernetes.io/v1 ResourceList on stdin"),
        (b"items: [\n", "<stdin>:2:1: .: YAML syntax: "),
        (
            b"apiVersion: v1\nkind: List\nitems: []\n",
            "<stdin>:2:7: kind: the input must be a config.kubernetes.io/v1 ResourceList, not v1 List",
        ),
        (b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: {}\n", "<stdin>:3:8: items: must be a list of objects"),
        (
            b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n---\na: 1\n",
            "<stdin>:4:1: .: more than one YAML document: the input must be one ResourceList",
        ),
    ],
)
def test_input_that_is_not_a_resource_list(raw, expected):  # type: ignore[no-untyped-def]
    outcome = run_function(raw)
    assert outcome.code == 1 and outcome.stderr.startswith(expected) and outcome.stderr.count("\n") == 1
    written = output(outcome.text.encode())
    assert written["kind"] == "ResourceList" and "items" not in written
    assert outcome.stderr.endswith(written["results"][0]["message"] + "\n")


def test_the_command_reads_stdin_and_writes_stdout():  # type: ignore[no-untyped-def]
    good = run_process("krm", stdin=resource_list(fixture_objects(SINGLE)))
    assert (good.returncode, good.stderr) == (0, b"")
    assert objects(good.stdout) == cli_objects(str(SINGLE))
    (replica,) = fixture_objects(SEVERAL_FAULTS)
    bad = run_process("krm", stdin=resource_list([replica]))
    assert bad.returncode == 1
    assert b"ModelReplica ml-team/Qwen3-8B-eks-l4-0: spec.engines[0].copies: must be at least 1 (it is 0)\n" in bad.stderr
    assert output(bad.stdout)["results"]
    assert run_process("krm", "extra").returncode == 2


def test_the_wrapper_finds_this_checkout_when_nothing_is_installed(tmp_path):  # type: ignore[no-untyped-def]
    """No MODELPLANE_RENDER, no modelplane-render on PATH: the checkout's .venv, or python3 and plugin.py."""
    env = {k: v for k, v in os.environ.items() if k not in ("MODELPLANE_RENDER", "VIRTUAL_ENV")}
    env["PATH"] = "/usr/bin:/bin"
    if shutil.which("modelplane-render", path=env["PATH"]):
        pytest.skip("modelplane-render is installed system-wide")
    has_venv = (ROOT / ".venv" / "bin" / "modelplane-render").exists()
    if not has_venv and subprocess.run(["python3", "-c", "import jinja2, pydantic, ruamel.yaml"], env=env).returncode != 0:
        pytest.skip("neither this checkout's .venv nor a python3 with the dependencies")
    result = subprocess.run([str(WRAPPER)], input=resource_list(fixture_objects(SINGLE)), capture_output=True, env=env, cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, b"")
    assert objects(result.stdout) == cli_objects(str(SINGLE))


# --- the real kustomize -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def kustomize() -> Path:
    from peer import require_peer

    return require_peer("kustomize")


def _function_env() -> dict[str, str]:
    """Point the wrapper at the command of the interpreter under test (an editable install)."""
    script = shutil.which("modelplane-render", path=str(Path(sys.executable).parent))
    return {"MODELPLANE_RENDER": script} if script else {}


def build(kustomize: Path, directory: Path, *, run_functions: bool = True) -> subprocess.CompletedProcess[bytes]:
    """`kustomize build`; without run_functions, `--enable-exec` is left out and kustomize skips the function."""
    flags = ["--enable-alpha-plugins", "--enable-exec"] if run_functions else ["--enable-alpha-plugins"]
    return subprocess.run(
        [str(kustomize), "build", *flags, str(directory)],
        capture_output=True,
        env={**os.environ, **_function_env()},
        timeout=120,
    )


def render_config(spec: dict[str, Any], *, exec_path: str = str(WRAPPER)) -> str:
    config = {
        "apiVersion": CONFIG_API_VERSION,
        "kind": CONFIG_KIND,
        "metadata": {"name": "render", "annotations": {"config.kubernetes.io/function": yaml.safe_dump({"exec": {"path": exec_path}})}},
        "spec": spec,
    }
    return yaml.safe_dump(config, sort_keys=False)


def write(directory: Path, files: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(text)
    return directory


def built(result: subprocess.CompletedProcess[bytes]) -> bytes:
    assert (result.returncode, result.stderr.decode()) == (0, "")
    return result.stdout


@pytest.mark.real_peers
@pytest.mark.parametrize("overlay", ["staging", "prod"])
def test_the_example_overlays_build_what_the_command_line_renders(kustomize, overlay, tmp_path):  # type: ignore[no-untyped-def]
    directory = EXAMPLES / "overlays" / overlay
    rendered = built(build(kustomize, directory))
    # Without --enable-exec kustomize skips the function: what is left is what the function gets.
    replicas = built(build(kustomize, directory, run_functions=False))
    assert b"kind: ModelReplica" in replicas and b"kind: ModelReplica" not in rendered
    (tmp_path / "replicas.yaml").write_bytes(replicas)
    assert objects(rendered) == cli_objects("--gateway", EXAMPLE_GATEWAY, str(tmp_path / "replicas.yaml"))
    everything = list(yaml.safe_load_all(rendered))
    lws = next(o for o in everything if o["kind"] == "LeaderWorkerSet")
    if overlay == "staging":
        pod = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
        assert lws["spec"]["replicas"] == 2
        assert pod["containers"][0]["image"] == "vllm/vllm-openai:v0.23.1"
        assert pod["nodeSelector"] == {"modelplane.ai/pool": "gpu-l4-spot"}
    else:
        assert b"ml-team" not in rendered
        assert all(o["metadata"]["namespace"] == "ml-prod" and o["metadata"]["labels"]["env"] == "prod" for o in everything)


@pytest.mark.real_peers
def test_the_example_base_alone_is_the_unrendered_replicas(kustomize):  # type: ignore[no-untyped-def]
    assert [o["kind"] for o in yaml.safe_load_all(built(build(kustomize, EXAMPLES / "base")))] == ["ModelReplica"]


def _all_fixture_files(into: Path) -> list[str]:
    names = []
    for case in VALID:
        for path in sorted(case.glob("*.y*ml")):
            if path.name != "kustomization.yaml":
                names.append(f"{case.name}--{path.name}")
                shutil.copyfile(path, into / names[-1])
    return names


@pytest.mark.real_peers
def test_as_a_transformer_kustomize_builds_what_the_command_line_renders_for_every_fixture(kustomize, tmp_path):  # type: ignore[no-untyped-def]
    names = _all_fixture_files(tmp_path)
    kustomization = {"resources": names, "transformers": ["render.yaml"]}
    write(tmp_path, {"kustomization.yaml": yaml.safe_dump(kustomization), "render.yaml": render_config({"gateway": "gateways/inference"})})
    assert objects(built(build(kustomize, tmp_path))) == cli_objects("--gateway", "gateways/inference", str(ROOT / "fixtures" / "valid"))


@pytest.mark.real_peers
def test_as_a_generator_kustomize_builds_what_the_command_line_renders_for_every_fixture(kustomize, tmp_path):  # type: ignore[no-untyped-def]
    shutil.copytree(ROOT / "fixtures" / "valid", tmp_path / "replicas")
    write(tmp_path, {"kustomization.yaml": "generators: [render.yaml]\n", "render.yaml": render_config({"sources": ["replicas"]})})
    assert objects(built(build(kustomize, tmp_path))) == cli_objects(str(ROOT / "fixtures" / "valid"))


@pytest.mark.real_peers
def test_kustomize_passes_other_objects_through_unchanged(kustomize, tmp_path):  # type: ignore[no-untyped-def]
    case = ROOT / "fixtures" / "valid" / "objects-passed-through"
    for path in case.glob("*.yaml"):
        shutil.copyfile(path, tmp_path / path.name)
    (tmp_path / "kustomization.yaml").write_text("resources: [replica.yaml, extras.yaml]\ntransformers: [render.yaml]\n")
    (tmp_path / "render.yaml").write_text(render_config({}))
    with_function = objects(built(build(kustomize, tmp_path)))
    without = [o for o in objects(built(build(kustomize, tmp_path, run_functions=False))) if '"ModelReplica"' not in o]
    assert without and all(o in with_function for o in without)


@pytest.mark.real_peers
def test_kustomize_running_the_function_on_its_own_output_changes_nothing(kustomize, tmp_path):  # type: ignore[no-untyped-def]
    first = built(build(kustomize, EXAMPLES / "overlays" / "prod"))
    write(tmp_path, {"out.yaml": first.decode(), "render.yaml": render_config({"gateway": EXAMPLE_GATEWAY, "allowEmpty": True})})
    (tmp_path / "kustomization.yaml").write_text("resources: [out.yaml]\ntransformers: [render.yaml]\nsortOptions: {order: fifo}\n")
    assert built(build(kustomize, tmp_path)) == first


def _placements(tmp_path: Path, spec: dict[str, Any]) -> tuple[Path, Path]:
    """The same base, rendered in the final overlay (after its namespace) and in a base below it."""
    shutil.copytree(EXAMPLES / "base", tmp_path / "base", ignore=shutil.ignore_patterns("render"))
    write(tmp_path / "render", {"kustomization.yaml": "resources: [render.yaml]\n", "render.yaml": render_config(spec)})
    overlay = "namespace: ml-prod\nlabels:\n- pairs: {env: prod}\n"
    final = write(tmp_path / "final", {"kustomization.yaml": f"resources: [../base]\n{overlay}transformers: [../render]\n"})
    write(tmp_path / "rendered-base", {"kustomization.yaml": "resources: [../base]\ntransformers: [../render]\n"})
    early = write(tmp_path / "early", {"kustomization.yaml": f"resources: [../rendered-base]\n{overlay}"})
    return final, early


@pytest.mark.real_peers
@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({}, id="no-route"),
        pytest.param({"gateway": EXAMPLE_GATEWAY}, id="with-route"),
    ],
)
def test_a_namespace_overlay_gives_the_same_objects_wherever_the_function_runs(kustomize, tmp_path, spec):  # type: ignore[no-untyped-def]
    """The RoleBinding subject follows: kustomize's name-reference pass, not the namespace transformer."""
    final, early = _placements(tmp_path, spec)
    in_final, in_base = built(build(kustomize, final)), built(build(kustomize, early))
    assert b"ml-team" not in in_final
    assert objects(in_base) == objects(in_final)
    assert b"ml-team" not in in_base


@pytest.mark.real_peers
def test_kustomize_shows_our_errors_and_fails(kustomize, tmp_path):  # type: ignore[no-untyped-def]
    shutil.copytree(EXAMPLES / "base", tmp_path / "base", ignore=shutil.ignore_patterns("render"))
    write(tmp_path / "render", {"kustomization.yaml": "resources: [render.yaml]\n", "render.yaml": render_config({})})
    patch = "- {op: replace, path: /spec/engines/0/copies, value: 0}\n- {op: add, path: /spec/engines/0/members/0/rolee, value: x}\n"
    kustomization = {
        "resources": ["../base"],
        "buildMetadata": ["originAnnotations"],
        "patches": [{"target": {"kind": "ModelReplica"}, "patch": patch}],
        "transformers": ["../render"],
    }
    write(tmp_path / "bad", {"kustomization.yaml": yaml.safe_dump(kustomization)})
    result = build(kustomize, tmp_path / "bad")
    assert result.returncode != 0 and result.stdout == b""
    where = "ModelReplica ml-team/qwen3-8b-eks-l4-0 (../base/qwen3-8b.yaml)"
    assert [line.rstrip() for line in result.stderr.decode().splitlines()] == [
        f"{where}: spec.engines[0].copies: must be at least 1 (it is 0)",
        f'{where}: spec.engines[0].members[0].rolee: unknown field "rolee" (did you mean "role"?)',
        "Error: couldn't execute function: exit status 1",
    ]


@pytest.mark.real_peers
def test_kustomize_shows_a_generators_errors_with_file_line_and_column(kustomize, tmp_path):  # type: ignore[no-untyped-def]
    shutil.copyfile(SEVERAL_FAULTS / "replica.yaml", tmp_path / "replica.yaml")
    write(tmp_path, {"kustomization.yaml": "generators: [render.yaml]\n", "render.yaml": render_config({"sources": ["replica.yaml"]})})
    result = build(kustomize, tmp_path)
    assert result.returncode != 0 and result.stdout == b""
    expected = (SEVERAL_FAULTS / "expected.stderr").read_text()
    lines = [line.rstrip() for line in result.stderr.decode().splitlines()]
    assert lines == [*expected.splitlines(), "Error: couldn't execute function: exit status 1"]


@pytest.mark.real_peers
def test_real_validate_of_what_an_overlay_builds_as_the_readme_shows(kustomize: Path) -> None:
    """`kustomize build --enable-alpha-plugins OVERLAY | modelplane-render validate -`: the replicas the function would get."""
    built = build(kustomize, ROOT / "kustomize" / "overlays" / "prod", run_functions=False)
    assert built.returncode == 0, built.stderr
    ok = subprocess.run([sys.executable, str(ROOT / "plugin.py"), "validate", "-"], input=built.stdout, capture_output=True)
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, b"", b"")
    broken = built.stdout.replace(b"nodePoolName: gpu-l4", b"nodePoolName: gpu:l4", 1)
    refused = subprocess.run([sys.executable, str(ROOT / "plugin.py"), "validate", "-"], input=broken, capture_output=True)
    assert refused.returncode == 1 and refused.stderr.startswith(b"<stdin>:"), refused.stderr


def test_the_shipped_openapi_schema_is_the_one_the_crd_gives() -> None:
    """kustomize/base/modelreplica-openapi.json is `modelplane-render schema --openapi`, never edited by hand."""
    result = run_cli("schema", "--openapi")
    assert result.code == 0
    assert result.stdout == (ROOT / "kustomize" / "base" / "modelreplica-openapi.json").read_text()


def _patched_build(kustomize: Path, tmp_path: Path, openapi: bool) -> dict[str, Any]:
    """A PrefillDecode base with the shipped schema (or none) and an overlay patching the decode engine's pool and image."""
    base, overlay = tmp_path / "base", tmp_path / "overlay"
    base.mkdir(parents=True)
    overlay.mkdir()
    shutil.copy(next(p for p in VALID if p.name == "prefill-decode-kimi-k2") / "replica.yaml", base / "replica.yaml")
    shutil.copy(ROOT / "kustomize" / "base" / "modelreplica-openapi.json", base / "openapi.json")
    (base / "kustomization.yaml").write_text("resources: [replica.yaml]\n" + ("openapi:\n  path: openapi.json\n" if openapi else ""))
    (overlay / "patch.yaml").write_text(
        "apiVersion: modelplane.ai/v1alpha1\nkind: ModelReplica\nmetadata: {name: kimi-k2-eks-h200-0, namespace: ml-team}\n"
        "spec:\n  engines:\n  - name: kimi-decode\n    members:\n    - role: Standalone\n      nodePoolName: gpu-h200-spot\n"
        "      template:\n        spec:\n          containers:\n          - name: engine\n            image: vllm/vllm-openai:v0.23.1\n"
    )
    (overlay / "kustomization.yaml").write_text("resources: [../base]\npatches:\n- path: patch.yaml\n")
    built = subprocess.run([str(kustomize), "build", str(overlay)], capture_output=True, text=True, timeout=60)
    assert built.returncode == 0, built.stderr
    replica: dict[str, Any] = yaml.safe_load(built.stdout)
    return replica


@pytest.mark.real_peers
def test_real_a_one_field_patch_merges_with_the_shipped_schema(kustomize: Path, tmp_path: Path) -> None:
    source = yaml.safe_load((next(p for p in VALID if p.name == "prefill-decode-kimi-k2") / "replica.yaml").read_text())
    merged = _patched_build(kustomize, tmp_path / "with", openapi=True)
    engines = {e["name"]: e for e in merged["spec"]["engines"]}
    assert set(engines) == {"kimi-prefill", "kimi-decode"}, "the engine the patch does not name is kept"
    decode = engines["kimi-decode"]["members"][0]
    (engine,) = decode["template"]["spec"]["containers"]
    assert (decode["nodePoolName"], engine["image"]) == ("gpu-h200-spot", "vllm/vllm-openai:v0.23.1")
    original = next(e for e in source["spec"]["engines"] if e["name"] == "kimi-decode")["members"][0]
    assert (
        decode["deviceRequests"] == original["deviceRequests"] and engine["args"] == original["template"]["spec"]["containers"][0]["args"]
    )
    assert engines["kimi-prefill"] == next(e for e in source["spec"]["engines"] if e["name"] == "kimi-prefill")
    # And what happens without it: the patch's list replaces the base's, the prefill engine is gone.
    replaced = _patched_build(kustomize, tmp_path / "without", openapi=False)
    assert [e["name"] for e in replaced["spec"]["engines"]] == ["kimi-decode"]


def test_real_kustomize_reads_an_item_before_the_function_does_and_its_reading_is_the_one_judged(kustomize: Path, tmp_path: Path) -> None:
    """kustomize reads the sources itself (kyaml, go-yaml v3): a plain `y` is the string "y" to it and `08` the
    number 8, and it writes them so (`"y"`, `8`), in its output and in the ResourceList it hands a function. So an
    item is judged as kustomize read it: the function reads that ResourceList by kubectl's rules, which agree with
    kyaml's quoting. The same file given to `render` directly is judged as kubectl would read it, where `y` is the
    boolean true."""
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "kustomization.yaml").write_text("resources: [config.yaml]\n")
    (plain / "config.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: y\n  b: 08\n")
    built = build(kustomize, plain)
    assert built.returncode == 0, built.stderr
    assert b'\n  a: "y"\n  b: 8\n' in built.stdout

    app = tmp_path / "app"
    app.mkdir()
    replica = (VALID[0] / "replica.yaml").read_text().replace("            args:\n", "            args:\n            - y\n", 1)
    (app / "replica.yaml").write_text(replica)
    (app / "render.yaml").write_text(render_config({}))
    (app / "kustomization.yaml").write_text("resources: [replica.yaml]\ntransformers: [render.yaml]\n")
    rendered = build(kustomize, app)
    assert rendered.returncode == 0, rendered.stderr
    (lws,) = [o for o in yaml.safe_load_all(rendered.stdout) if o["kind"] == "LeaderWorkerSet"]
    (engine,) = [c for c in lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"] if c["name"] == "engine"]
    assert engine["args"][0] == "y"
    direct = run_cli("validate", "replica.yaml", cwd=app)
    assert direct.code == 1 and "args[0]: must be a string: y reads as the boolean true" in direct.stderr
