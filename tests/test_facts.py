"""Engine facts: flags read as argparse takes them (the last wins, numbers ASCII and small), which engine a container runs, what it is told.

The engine record (facts.registry) is held here to values written by hand, fixture by fixture;
tests/test_serving.py judges the rendered output with an oracle of its own.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

import pytest

from conftest import VALID
from modelplane_render import constants as c
from modelplane_render.errors import Finding
from modelplane_render.facts import registry
from modelplane_render.facts.engines import SGLANG, VLLM, needs_model_flag
from modelplane_render.facts.flags import find_flag, small_decimal
from modelplane_render.facts.registry import DEFAULT_ENGINE, ENGINES, RESERVED_ENV, EngineRecord, recognise, resolve, resolve_replica
from modelplane_render.model import Container, ModelReplica, from_validated
from modelplane_render.pipeline import classify
from modelplane_render.sources import iter_documents
from modelplane_render.validation import judge_replica


def test_the_last_occurrence_wins_in_either_spelling():  # type: ignore[no-untyped-def]
    assert find_flag(["--port=8001", "--port", "9000"], "--port") == (2, "9000")
    assert find_flag(["--port", "9000", "--port=8001"], "--port") == (2, "8001")
    assert find_flag(["--port"], "--port") == (0, None)
    assert find_flag(["--port-range=1"], "--port") is None


@pytest.mark.parametrize("text", ["8000", "0", "000000001", "999999999"])
def test_small_decimal_reads_up_to_nine_ascii_digits(text):  # type: ignore[no-untyped-def]
    assert small_decimal(text) == int(text)


# "²" and "٣" are digits to str.isdigit(); the 4,608-digit run is past int()'s limit (the fuzz found it).
@pytest.mark.parametrize("text", [None, "", "²", "٣", "1e3", "+1", "-1", " 1", "1\n", "1234567890", "80" * 2304])
def test_small_decimal_refuses_anything_else_without_raising(text):  # type: ignore[no-untyped-def]
    assert small_decimal(text) is None


# --- which engine a container runs, and what it is told ------------------------------------------------


def _replica(
    container: dict[str, Any], phase: Optional[str] = None, pd: bool = False, gang: bool = False, cache: bool = False
) -> ModelReplica:
    """A replica of one engine whose members run `container`; built as judged, so only what resolve() reads matters."""
    requests = [{"name": "gpu", "count": 1, "deviceClassName": "gpu.nvidia.com"}]
    template = {"spec": {"containers": [{"name": "engine", **container}]}}
    roles = [{"role": "Leader"}, {"role": "Worker", "worker": {"nodes": 2}}] if gang else [{"role": "Standalone"}]
    members = [{**role, "nodePoolName": "p", "deviceRequests": requests, "template": template} for role in roles]
    spec: dict[str, Any] = {"clusterName": "c", "engines": [{"name": "e", "phase": phase, "members": members}]}
    if pd:
        spec["serving"] = {"mode": "PrefillDecode"}
    if cache:
        spec["modelCacheRef"] = {"name": "weights"}
    return from_validated(ModelReplica, {"metadata": {"name": "r"}, "spec": spec})


def _record(container: dict[str, Any], phase: Optional[str] = None, pd: bool = False, cache: bool = False) -> EngineRecord:
    replica = _replica(container, phase, pd, cache=cache)
    engine = replica.spec.engines[0]
    return resolve(engine.members[0], engine, replica)


@pytest.mark.parametrize(
    "container,engine",
    [
        ({"image": "vllm/vllm-openai:v0.23.0"}, VLLM),
        ({"image": "ghcr.io/llm-d/llm-d-cuda:v0.4.0"}, VLLM),
        ({"image": "lmsysorg/sglang:v0.5.12"}, SGLANG),
        ({"image": "registry.example.com/mirror/sglang@sha256:" + "0" * 64}, SGLANG),
        ({"image": "x", "command": ["python3", "-m", "sglang.launch_server"]}, SGLANG),
        ({"image": "x", "command": ["sglang", "serve"]}, SGLANG),
        ({"image": "x", "command": ["/bin/sh", "-c", "exec python3 -m sglang.launch_server --port 30000"]}, SGLANG),
        # The program named in the args after an interpreter, or in a script given as the args.
        ({"image": "x", "command": ["python3"], "args": ["-m", "sglang.launch_server", "--port", "30000"]}, SGLANG),
        ({"image": "x", "command": ["sh", "-c"], "args": ["ulimit -n 65536 && exec sglang serve --model-path m"]}, SGLANG),
        # A word in a flag's value names no program.
        ({"image": "x", "command": ["vllm", "serve"], "args": ["--served-model-name=sglang"]}, VLLM),
        # The command decides before the image: vLLM in an image whose name says sglang is vLLM.
        ({"image": "lmsysorg/sglang:v0.5.12", "command": ["vllm", "serve"]}, VLLM),
        ({"image": "lmsysorg/sglang-tools:1", "command": ["ray", "start"]}, VLLM),
    ],
)
def test_the_engine_is_recognised_by_its_command_then_its_image(container, engine):  # type: ignore[no-untyped-def]
    assert recognise(from_validated(Container, {"name": "engine", **container})) is engine


# vLLM's NixlConnector, the transfer the pd-sidecar's nixlv2 protocol drives, on each side of the pair.
PRODUCER = '--kv-transfer-config={"kv_connector":"NixlConnector","kv_role":"kv_producer"}'
CONSUMER = '--kv-transfer-config={"kv_connector":"NixlConnector","kv_role":"kv_consumer"}'


@pytest.mark.parametrize(
    "container,phase,pd,added",
    [
        ({"image": "vllm/vllm-openai"}, None, False, []),
        ({"image": "vllm/vllm-openai"}, "Decode", True, ["--port=8001", CONSUMER]),
        ({"image": "vllm/vllm-openai", "args": ["--port=9000"]}, "Decode", True, [CONSUMER]),
        ({"image": "vllm/vllm-openai"}, "Prefill", True, [PRODUCER]),
        ({"image": "x", "command": ["sglang", "serve"]}, None, False, ["--host=0.0.0.0", "--enable-metrics"]),
        (
            {"image": "x", "command": ["sglang", "serve"]},
            "Prefill",
            True,
            ["--port=8000", "--host=0.0.0.0", "--enable-metrics", "--disaggregation-mode=prefill"],
        ),
        (
            {"image": "x", "command": ["sglang", "serve"]},
            "Decode",
            True,
            ["--host=0.0.0.0", "--enable-metrics", "--disaggregation-mode=decode"],
        ),
        ({"image": "x", "command": ["sglang", "serve"], "args": ["--host", "::", "--enable-metrics"]}, None, False, []),
        # Nothing is added to a shell script: the args would be the shell's $0, $1...
        ({"image": "x", "command": ["sh", "-c", "exec python3 -m sglang.launch_server"]}, None, False, []),
        ({"image": "vllm/vllm-openai", "command": ["/bin/bash", "-c", "vllm serve m"]}, "Decode", True, []),
    ],
)
def test_an_engine_is_told_only_what_it_would_not_choose_itself(container, phase, pd, added):  # type: ignore[no-untyped-def]
    assert _record(container, phase, pd).trailing_args == tuple(added)


@pytest.mark.parametrize(
    "container,needed",
    [
        ({"image": "vllm/vllm-openai"}, True),
        ({"image": "vllm/vllm-openai", "args": ["--headless", "--tensor-parallel-size=8"]}, True),
        ({"image": "vllm/vllm-openai", "args": ["meta-llama/Llama-3.1-8B", "--port=8000"]}, False),
        ({"image": "vllm/vllm-openai", "args": ["--model=/elsewhere"]}, False),
        ({"image": "vllm/vllm-openai", "args": ["--model-impl=vllm"]}, True),
        ({"image": "vllm/vllm-openai", "command": ["vllm", "serve"]}, False),
        # SGLang's images start no server by themselves: validation refuses it; no model is added.
        ({"image": "lmsysorg/sglang"}, False),
    ],
)
def test_the_model_is_named_for_an_image_entrypoint_that_names_none(container, needed):  # type: ignore[no-untyped-def]
    parsed = from_validated(Container, {"name": "engine", **container})
    assert needs_model_flag(recognise(parsed), parsed) is needed


# --- the engine record: each member resolved once, before validation's port checks and the plan --------

# (fixture, replica, engine, member role): (engine type, the port it binds, whether the user chose
# it, its prefill/decode role, its gang's pod count). Read from the fixtures by hand, not computed:
# the record must say what each fixture's YAML and its comments say.
FIXTURE_MEMBERS: dict[tuple[str, str, str, str], tuple[str, int, bool, Optional[str], int]] = {
    ("cel-selectors-two-device-requests", "mixtral-coreweave-h100-0", "mixtral", "Standalone"): ("vllm", 8000, False, None, 1),
    ("endpoint-picker-overrides", "qwen3-32b-eks-h100-0", "qwen3-32b", "Standalone"): ("vllm", 8000, False, None, 1),
    ("env-from-secrets-and-downward-api", "llama-405b-eks-h100-0", "llama-405b", "Leader"): ("vllm", 8000, False, None, 2),
    ("env-from-secrets-and-downward-api", "llama-405b-eks-h100-0", "llama-405b", "Worker"): ("vllm", 8000, False, None, 2),
    ("image-pull-secrets", "internal-llm-onprem-0", "internal-llm", "Standalone"): ("vllm", 8000, False, None, 1),
    ("model-cache-sglang-command", "laguna-nebius-h100-0", "laguna", "Standalone"): ("sglang", 8000, True, None, 1),
    ("model-cache-vllm", "qwen-72b-aks-a100-0", "qwen-72b", "Standalone"): ("vllm", 8000, False, None, 1),
    ("multi-node-leader-worker", "qwen3-coder-eks-h200-0", "qwen3-coder", "Leader"): ("vllm", 8000, False, None, 2),
    ("multi-node-leader-worker", "qwen3-coder-eks-h200-0", "qwen3-coder", "Worker"): ("vllm", 8000, False, None, 2),
    (
        "names-at-63-character-limit",
        "qwen3-235b-a22b-instruct-2507-fp8-eks-us-east-2-h200-pool-a-0",
        "qwen3-235b-a22b-instruct-2507-fp8-tensor-parallel-eight-engine",
        "Leader",
    ): ("vllm", 8000, False, None, 2),
    (
        "names-at-63-character-limit",
        "qwen3-235b-a22b-instruct-2507-fp8-eks-us-east-2-h200-pool-a-0",
        "qwen3-235b-a22b-instruct-2507-fp8-tensor-parallel-eight-engine",
        "Worker",
    ): ("vllm", 8000, False, None, 2),
    ("null-labels-and-annotations", "qwen3-8b-eks-l4-1", "qwen3-8b", "Standalone"): ("vllm", 8000, False, None, 1),
    ("objects-passed-through", "mistral-small-eks-l40s-0", "mistral-small", "Standalone"): ("vllm", 8000, False, None, 1),
    ("prefill-decode-kimi-k2", "kimi-k2-eks-h200-0", "kimi-prefill", "Standalone"): ("vllm", 8000, True, "prefill", 1),
    ("prefill-decode-kimi-k2", "kimi-k2-eks-h200-0", "kimi-decode", "Standalone"): ("vllm", 8001, True, "decode", 1),
    ("ray-gang-leader-serves", "deepseek-r1-gke-a3-0", "deepseek-r1", "Leader"): ("vllm", 8000, False, None, 3),
    ("ray-gang-leader-serves", "deepseek-r1-gke-a3-0", "deepseek-r1", "Worker"): ("vllm", 8000, False, None, 3),
    ("ray-gang-plain-args", "deepseek-r1-eks-h200-0", "deepseek-r1", "Leader"): ("vllm", 8000, False, None, 2),
    ("ray-gang-plain-args", "deepseek-r1-eks-h200-0", "deepseek-r1", "Worker"): ("vllm", 8000, False, None, 2),
    ("several-copies", "llama-8b-eks-l40s-0", "llama-8b", "Standalone"): ("vllm", 8000, False, None, 1),
    ("several-replicas-in-one-file", "phi-4-eks-l4-0", "phi-4", "Standalone"): ("vllm", 8000, False, None, 1),
    ("several-replicas-in-one-file", "phi-4-gke-l4-1", "phi-4", "Standalone"): ("vllm", 8000, False, None, 1),
    ("sglang-prefill-decode", "gpt-oss-gke-h100-0", "gpt-oss-prefill", "Standalone"): ("sglang", 8000, False, "prefill", 1),
    ("sglang-prefill-decode", "gpt-oss-gke-h100-0", "gpt-oss-decode", "Standalone"): ("sglang", 30000, False, "decode", 1),
    ("sidecar-with-ports-and-probe", "gemma-gke-l4-0", "gemma", "Standalone"): ("vllm", 8080, True, None, 1),
    # The port its script gives (read, not a flag of ours: user_port is about args).
    ("sglang-started-by-a-shell-script", "qwen3-32b-gke-h100-0", "qwen3-32b", "Standalone"): ("sglang", 30000, False, None, 1),
    ("single-gpu-standalone", "qwen3-8b-eks-l4-0", "qwen3-8b", "Standalone"): ("vllm", 8000, False, None, 1),
}


def _fixture_replicas() -> list[tuple[str, ModelReplica]]:
    replicas = []
    for document in iter_documents([str(p) for p in VALID]):
        if isinstance(document, Finding) or classify(document)[0] != "replica":
            continue
        replica, errors = judge_replica(document, "default")
        assert errors == []
        replicas.append((document.file.split("/")[-2], replica))
    return replicas


def test_every_fixture_member_resolves_to_its_engine_port_and_role():  # type: ignore[no-untyped-def]
    found = {}
    for fixture, replica in _fixture_replicas():
        for engine, records in zip(replica.spec.engines, resolve_replica(replica).records, strict=True):
            for member, record in zip(engine.members, records, strict=True):
                assert record.member is member and record.engine_name == engine.name and record.position == member.role
                assert record.container.name == c.ENGINE_CONTAINER
                key = (fixture, replica.metadata.name, engine.name, member.role)
                found[key] = (record.engine.engine_type, record.port, record.user_port, record.pd_role, record.gang_size)
    assert found == FIXTURE_MEMBERS


@pytest.mark.parametrize(
    "fixture,engine,port",
    [
        ("single-gpu-standalone", "qwen3-8b", 8000),
        ("prefill-decode-kimi-k2", "kimi-decode", 8001),
        ("sglang-prefill-decode", "gpt-oss-decode", 30000),
    ],
)
def test_the_pool_sends_to_the_first_engine_or_the_decode_engine(fixture, engine, port):  # type: ignore[no-untyped-def]
    (replica,) = [r for f, r in _fixture_replicas() if f == fixture]
    member = resolve_replica(replica).pool_member()
    assert (member.engine_name, member.port, member.serving) == (engine, port, True)


def test_the_registry_holds_vllm_first_as_the_default_and_sglang():  # type: ignore[no-untyped-def]
    # Not pinned to exactly these two: a new engine is an entry appended here and nothing else.
    assert ENGINES[:2] == (VLLM, SGLANG) and DEFAULT_ENGINE is VLLM
    assert len({f.engine_type for f in ENGINES}) == len(ENGINES)
    # An entry other than the default that shows no mark could never be recognised.
    assert all(f.program_marks and f.image_marks for f in ENGINES if f is not DEFAULT_ENGINE)


def test_a_new_engine_is_an_entry_in_the_registry(monkeypatch):  # type: ignore[no-untyped-def]
    """What issue 23 promises: an engine is added in facts/ alone, and the record then carries all of it."""
    fake = replace(SGLANG, name="Fake", engine_type="fake", program_marks=("fake-serve",), image_marks=("fake",), default_port=9000)
    monkeypatch.setattr(registry, "ENGINES", (*ENGINES, fake))
    assert recognise(from_validated(Container, {"name": "engine", "image": "example.com/fake:1"})) is fake
    record = _record({"image": "x", "command": ["fake-serve"]})
    assert (record.engine, record.port, record.user_port) == (fake, 9000, False)
    assert record.trailing_args == ("--host=0.0.0.0", "--enable-metrics")


@pytest.mark.parametrize(
    "container,pd,gang,env",
    [
        ({"image": "vllm/vllm-openai"}, False, False, []),
        ({"image": "vllm/vllm-openai"}, True, False, [c.NIXL_HOST_ENV, c.NIXL_PORT_ENV]),
        ({"image": "x", "command": ["sglang", "serve"]}, True, False, []),
        ({"image": "vllm/vllm-openai"}, False, True, [c.ENV_LEADER_ADDRESS, c.ENV_RANK]),
        # The gang's env comes first, so that `$(MODELPLANE_RANK)` resolves in whatever follows it.
        ({"image": "vllm/vllm-openai"}, True, True, [c.ENV_LEADER_ADDRESS, c.ENV_RANK, c.NIXL_HOST_ENV, c.NIXL_PORT_ENV]),
    ],
)
def test_each_member_is_told_its_gang_and_its_engines_transfer_env(container, pd, gang, env):  # type: ignore[no-untyped-def]
    replica = _replica(container, "Decode" if pd else None, pd, gang)
    engine = replica.spec.engines[0]
    for member in engine.members:
        assert [e.name for e in resolve(member, engine, replica).env] == env
    assert set(env) <= RESERVED_ENV


def test_reserved_env_is_every_name_we_set():  # type: ignore[no-untyped-def]
    assert RESERVED_ENV == {c.ENV_LEADER_ADDRESS, c.ENV_RANK, c.NIXL_HOST_ENV, c.NIXL_PORT_ENV}


@pytest.mark.parametrize(
    "args,phase,port,port_arg,ours",
    [
        (None, None, 8000, None, 8000),
        (["--port=9000"], None, 9000, 0, 8000),
        (["m", "--port", "9000"], None, 9000, 2, 8000),
        (["--port=abc"], None, None, 0, 8000),
        (["--port=0"], None, None, 0, 8000),
        (None, "Decode", 8001, None, 8001),
        (["--port=8000"], "Decode", 8000, 0, 8001),
        (None, "Prefill", 8000, None, 8000),
    ],
)
def test_the_port_is_the_users_or_ours_and_the_record_says_which(args, phase, port, port_arg, ours):  # type: ignore[no-untyped-def]
    container: dict[str, Any] = {"image": "vllm/vllm-openai"} | ({"args": args} if args is not None else {})
    record = _record(container, phase, pd=phase is not None)
    assert (record.port, record.port_arg, record.our_port, record.user_port) == (port, port_arg, ours, port_arg is not None)


@pytest.mark.parametrize(
    "container,leading,trailing",
    [
        ({"image": "vllm/vllm-openai"}, (c.MODEL_CACHE_PATH,), ()),
        ({"image": "vllm/vllm-openai", "args": ["--model=/m"]}, (), ()),
        # SGLang names the model by flag; this one also starts no server by itself (validation refuses it).
        ({"image": "lmsysorg/sglang"}, (), ("--host=0.0.0.0", "--enable-metrics")),
    ],
)
def test_the_model_cache_is_named_where_the_engine_reads_it(container, leading, trailing):  # type: ignore[no-untyped-def]
    record = _record(container, cache=True)
    assert (record.leading_args, record.trailing_args) == (leading, trailing)


def test_a_gang_member_is_told_only_what_its_args_leave_out() -> None:
    from modelplane_render.facts.gangs import sglang_gang, vllm_gang

    leader = ["--tensor-parallel-size=8", "--pipeline-parallel-size=2"]
    assert vllm_gang(leader, None, "Leader", 2, leader).added == [
        "--nnodes=2",
        "--node-rank=$(MODELPLANE_RANK)",
        "--master-addr=$(MODELPLANE_LEADER_ADDRESS)",
    ]
    worker = vllm_gang(["--model=m", "--master-addr=10.0.0.1"], None, "Worker", 2, leader)
    assert worker.added == [
        "--nnodes=2",
        "--node-rank=$(MODELPLANE_RANK)",
        "--headless",
        "--tensor-parallel-size=8",
        "--pipeline-parallel-size=2",
    ]
    assert worker.refusals == []
    sglang = sglang_gang(["--tp-size=16"], None, "Worker", 2, ["--tp-size=16"])
    assert sglang.added == ["--nnodes=2", "--node-rank=$(MODELPLANE_RANK)", "--dist-init-addr=$(MODELPLANE_LEADER_ADDRESS):20000"]
    assert sglang_gang(["--tp-size=8"], None, "Worker", 2, ["--tp-size=16"]).refusals != []


def test_the_gpus_an_engines_sizes_use_a_pod() -> None:
    from modelplane_render.facts.gangs import SGLANG_PARALLEL, VLLM_PARALLEL, per_pod

    assert per_pod(["-tp", "4", "--pipeline-parallel-size=2"], VLLM_PARALLEL, 1)[0] == 8
    assert per_pod(["--tensor-parallel-size=8", "--pipeline-parallel-size=2"], VLLM_PARALLEL, 2)[0] == 8
    assert per_pod(["--tensor-parallel-size=2", "--data-parallel-size=4"], VLLM_PARALLEL, 1)[0] == 8
    assert per_pod(["--data-parallel-size=16", "--data-parallel-size-local=8"], VLLM_PARALLEL, 2)[0] == 8
    assert per_pod(["--tp-size=16", "--dp-size=2"], SGLANG_PARALLEL, 2)[0] == 8  # SGLang's dp splits its tp
    assert per_pod(["--tensor-parallel-size=3"], VLLM_PARALLEL, 2)[0] is None  # not a whole number of GPUs a pod


@pytest.mark.parametrize(
    "image,version",
    [
        ("vllm/vllm-openai:v0.23.0", (0, 23, 0)),
        ("docker.io/vllm/vllm-openai:0.11.1", (0, 11, 1)),
        ("registry.example.com:5000/mirror/vllm/vllm-openai:v0.16.0", (0, 16, 0)),
        ("vllm/vllm-openai:latest", None),
        ("vllm/vllm-openai@sha256:" + "a" * 64, None),
        ("ghcr.io/llm-d/llm-d-cuda:v0.4.0", None),  # llm-d's tag is llm-d's release, not vLLM's
        ("registry.example.com:5000/vllm-openai", None),
    ],
)
def test_an_images_tag_says_its_engine_release_only_for_the_engines_own_images(image: str, version: object) -> None:
    from modelplane_render.facts.versions import image_version

    assert image_version(image, VLLM.release_images) == version
    assert image_version("lmsysorg/sglang:v0.5.12.post1-cu129", SGLANG.release_images) == (0, 5, 12)


@pytest.mark.parametrize(
    "image,quiet,refused",
    [
        ("vllm/vllm-openai:v0.23.0", True, False),
        ("vllm/vllm-openai:v0.12.0", False, False),  # too old to be quieter: left out, not refused
        ("ghcr.io/llm-d/llm-d-cuda:v0.4.0", False, False),  # a release we can't read: only what the shape needs
    ],
)
def test_a_flag_that_only_improves_is_added_only_for_a_release_known_to_have_it(image: str, quiet: bool, refused: bool) -> None:
    record = _record({"image": image}, None, False)
    assert ("--disable-access-log-for-endpoints=/health,/metrics" in record.trailing_args) is quiet
    assert bool(record.refusals) is refused


def test_a_scripts_port_is_its_serving_commands_one_line_by_line() -> None:
    """A line ends a command: `ray start --port=6379` on the line before is not the engine's port."""
    script = "ray start --head --port=6379\nexec vllm serve /mnt/models \\\n  --port 8001"
    record = _record({"image": "vllm/vllm-openai:v0.23.0", "command": ["/bin/sh", "-c", script]})
    assert (record.engine, record.port, record.trailing_args, record.refusals) == (VLLM, 8001, (), ())
    unreadable = _record({"image": "x", "command": ["sh", "-c"], "args": ['exec sglang serve --host 0.0.0.0 --enable-metrics --port "$P"']})
    assert unreadable.port is None and [where for where, _ in unreadable.refusals] == [("args", 0)]


@pytest.mark.parametrize(
    "image,refused",
    [
        ("vllm/vllm-openai:v0.17.1", False),  # the last release whose wheel requires ray[cgraph]
        ("vllm/vllm-openai:v0.18.0", True),
        ("docker.io/vllm/vllm-openai:v0.23.0", True),
        ("registry.example.com/ml-platform/vllm-openai-ray:v0.23.0", False),  # a build we can't read: the user's word
        ("vllm/vllm-openai:latest", False),
    ],
)
def test_a_ray_gang_needs_an_image_with_ray(image: str, refused: bool) -> None:
    from modelplane_render.facts.gangs import vllm_gang_refusals

    ray = ["--distributed-executor-backend=ray"]
    found = vllm_gang_refusals([], "Worker", image, ray)
    assert [field for field, _ in found] == (["image"] if refused else [])
    assert vllm_gang_refusals([], "Worker", image, ["--tensor-parallel-size=8"]) == []  # the mp backend needs no Ray


def test_a_data_parallel_gang_in_which_every_pod_serves_is_refused() -> None:
    from modelplane_render.facts.gangs import vllm_gang_refusals

    image, dp = "vllm/vllm-openai:v0.23.0", ["--data-parallel-size=16", "--data-parallel-size-local=8"]
    # vllm/engine/arg_utils.py: a start rank on a node that is not headless infers hybrid load balancing.
    assert vllm_gang_refusals([*dp, "--data-parallel-start-rank=8"], "Worker", image, dp) != []
    assert vllm_gang_refusals([*dp, "--data-parallel-start-rank=8", "--headless"], "Worker", image, dp) == []
    assert vllm_gang_refusals([*dp, "-dph"], "Leader", image, dp) != []
    assert vllm_gang_refusals(dp, "Leader", image, dp) == []
