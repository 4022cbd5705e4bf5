"""Engine facts: flags read as argparse takes them (the last wins, numbers ASCII and small), which engine a container runs, what it is told."""

from __future__ import annotations

from typing import Any, Optional

import pytest

from modelplane_render.facts.engines import SGLANG, VLLM, needs_model_flag
from modelplane_render.facts.flags import find_flag, small_decimal
from modelplane_render.facts.registry import EngineRecord, recognise, resolve
from modelplane_render.model import Container, ModelReplica, from_validated


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
        # The command decides before the image: vLLM in an image whose name says sglang is vLLM.
        ({"image": "lmsysorg/sglang:v0.5.12", "command": ["vllm", "serve"]}, VLLM),
        ({"image": "lmsysorg/sglang-tools:1", "command": ["ray", "start"]}, VLLM),
    ],
)
def test_the_engine_is_recognised_by_its_command_then_its_image(container, engine):  # type: ignore[no-untyped-def]
    assert recognise(from_validated(Container, {"name": "engine", **container})) is engine


@pytest.mark.parametrize(
    "container,phase,pd,added",
    [
        ({"image": "vllm/vllm-openai"}, None, False, []),
        ({"image": "vllm/vllm-openai"}, "Decode", True, ["--port=8001"]),
        ({"image": "vllm/vllm-openai", "args": ["--port=9000"]}, "Decode", True, []),
        ({"image": "vllm/vllm-openai"}, "Prefill", True, []),
        ({"image": "x", "command": ["sglang", "serve"]}, None, False, ["--host=0.0.0.0", "--enable-metrics"]),
        ({"image": "x", "command": ["sglang", "serve"]}, "Prefill", True, ["--port=8000", "--host=0.0.0.0", "--enable-metrics"]),
        ({"image": "x", "command": ["sglang", "serve"]}, "Decode", True, ["--host=0.0.0.0", "--enable-metrics"]),
        ({"image": "x", "command": ["sglang", "serve"], "args": ["--host", "::", "--enable-metrics"]}, None, False, []),
        # A shell string's flags are neither read nor added to: the args would be the shell's $0, $1...
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
