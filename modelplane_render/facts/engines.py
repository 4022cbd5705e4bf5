"""What each engine (vLLM, SGLang) does with what we give it, and which one a container runs.

Each fact names the upstream file it comes from. An engine container's flags are read from its
args (facts.flags), with the defaults the engine takes when a flag is absent; the plan adds a
flag only where we choose a value the engine would not choose by itself.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Optional

from .. import constants as c
from ..model import Container, Engine, EngineMember, ModelReplica
from .flags import find_flag, has_flag, small_decimal


@dataclass(frozen=True)
class EngineFacts:
    """One engine's defaults and flags, as its server's argument parser has them."""

    name: str
    # The value of the picker's llm-d.ai/engine-type pod label, which chooses the metric names it scrapes.
    engine_type: str
    default_port: int
    # None: the engine listens on every address unless told otherwise.
    default_host: Optional[str]
    model_flags: tuple[str, ...]
    # Whether the model may be given as the first positional argument (`vllm serve /mnt/models`).
    positional_model: bool
    block_size_flags: tuple[str, ...]
    default_block_size: int
    # The pd-sidecar's --kv-connector for this engine's prefill/decode pair.
    pd_connector: str
    # Whether the container's image runs the model server when it has no `command`, and what does.
    image_serves: bool
    server_command: tuple[str, ...]
    # The flag that turns on /metrics, which the picker scrapes for queue and KV-cache load (None: always on).
    metrics_flag: Optional[str]
    # How long one /health answer may take: SGLang's generates a token, with its own 20 s limit.
    health_timeout_seconds: int


# vllm/entrypoints/openai/cli_args.py (host None: every address; port 8000); vllm/engine/arg_utils.py
# (--model, or the positional model_tag of `vllm serve`; --block-size, 16 on CUDA); the
# vllm/vllm-openai image's ENTRYPOINT is `vllm serve`.
VLLM = EngineFacts(
    name="vLLM",
    engine_type="vllm",
    default_port=8000,
    default_host=None,
    model_flags=("--model",),
    positional_model=True,
    block_size_flags=("--block-size",),
    default_block_size=16,
    pd_connector="nixlv2",
    image_serves=True,
    server_command=("vllm", "serve"),
    metrics_flag=None,
    # vllm/entrypoints/serve/instrumentator/health.py: asks the engine core, 503 once it is dead.
    # The 1 s default flaps on a busy engine whose /health shares the event loop with inference.
    health_timeout_seconds=5,
)

# python/sglang/srt/server_args.py: --host 127.0.0.1 and --port 30000 by default (a pod that sets
# neither is never reachable), --model-path (alias --model), --page-size 1. The lmsysorg/sglang
# image has no server entrypoint: it needs `command: [python3, -m, sglang.launch_server]`.
SGLANG = EngineFacts(
    name="SGLang",
    engine_type="sglang",
    default_port=30000,
    default_host="127.0.0.1",
    model_flags=("--model-path", "--model"),
    positional_model=False,
    block_size_flags=("--page-size",),
    default_block_size=1,
    pd_connector="sglang",
    image_serves=False,
    # python/sglang/launch_server.py: still supported; `sglang serve` is the newer spelling.
    server_command=("python3", "-m", "sglang.launch_server"),
    # srt/arg_groups/fields/observability.py: enable_metrics is False by default.
    metrics_flag="--enable-metrics",
    # srt/entrypoints/http_server.py: /health runs a one-token generation (SGLANG_HEALTH_CHECK_TIMEOUT, 20 s).
    health_timeout_seconds=25,
)

# A command that starts one of these runs a shell string: the engine's flags are inside it, where
# we neither read them nor can add to them.
SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh"})


def engine_of(container: Container) -> EngineFacts:
    """The engine a container runs: SGLang when its command or, lacking one, its image names sglang; else vLLM.

    The command decides first (`python3 -m sglang.launch_server`, `sglang serve`, or a shell
    string holding either), then the image's repository (`lmsysorg/sglang`); anything else is
    vLLM, whose images (vllm/vllm-openai, llm-d's) this tool was built for.
    """
    if container.command:
        return SGLANG if any("sglang" in part for part in container.command) else VLLM
    repository = container.image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0]
    return SGLANG if "sglang" in repository else VLLM


def args_reach_engine(container: Container) -> bool:
    """Whether flags we add to `args` reach the engine's parser (not a shell's positional parameters)."""
    command = container.command or []
    return not command or posixpath.basename(command[0]) not in SHELLS


def member_is_serving(member: EngineMember) -> bool:
    """Standalone pods and Leader pods serve; workers only join the leader's gang."""
    return member.role in ("Standalone", "Leader")


def is_prefill_decode(replica: ModelReplica) -> bool:
    return replica.spec.serving is not None and replica.spec.serving.mode == "PrefillDecode"


def decode_engine(replica: ModelReplica) -> Engine:
    return next(e for e in replica.spec.engines if e.phase == "Decode")


def engine_container(member: EngineMember) -> tuple[int, Container]:
    (found,) = [(i, ct) for i, ct in enumerate(member.template.spec.containers) if ct.name == c.ENGINE_CONTAINER]
    return found


def chosen_port(facts: EngineFacts, engine: Engine, prefill_decode: bool) -> int:
    """The port an engine with no --port serves on: its own default, unless the pool or the pd-sidecar needs another.

    Under PrefillDecode the pool targets the pd-sidecar's port on decode pods, and the sidecar
    sends prefill requests to that same port on prefill pods, so a prefill engine serves there;
    a decode engine whose default is the sidecar's port moves to DECODE_PORT.
    """
    if not prefill_decode:
        return facts.default_port
    if engine.phase == "Prefill":
        return c.PD_SIDECAR_PORT
    return c.DECODE_PORT if facts.default_port == c.PD_SIDECAR_PORT else facts.default_port


def engine_port_spec(engine: Engine, member: EngineMember, prefill_decode: bool) -> tuple[Optional[int], Optional[tuple[int, int]]]:
    """The port the engine serves on, and where in the args it was set (None: chosen by chosen_port).

    A `--port` that is not a port number gives None.
    """
    index, container = engine_container(member)
    found = find_flag(container.args or [], "--port")
    if found is None:
        return chosen_port(engine_of(container), engine, prefill_decode), None
    where = (index, found[0])
    port = small_decimal(found[1])
    if port is None or not 1 <= port <= 65535:
        return None, where
    return port, where


def serving_port(engine: Engine, member: EngineMember, prefill_decode: bool) -> int:
    port, _ = engine_port_spec(engine, member, prefill_decode)
    assert port is not None, "validated before planning"
    return port


def flags_to_add(engine: Engine, member: EngineMember, prefill_decode: bool) -> list[str]:
    """The flags a serving engine must be told: a port it would not choose, an address and metrics it would not serve."""
    _, container = engine_container(member)
    if not member_is_serving(member) or not args_reach_engine(container):
        return []
    facts = engine_of(container)
    args = container.args or []
    added = []
    if find_flag(args, "--port") is None:
        port = chosen_port(facts, engine, prefill_decode)
        if port != facts.default_port:
            added.append(f"--port={port}")
    if facts.default_host is not None and find_flag(args, "--host") is None:
        # The kubelet's probes and the pool's traffic come to the pod's IP, never its loopback.
        added.append("--host=0.0.0.0")
    if facts.metrics_flag is not None and not has_flag(args, facts.metrics_flag):
        added.append(facts.metrics_flag)
    return added


def names_a_model(facts: EngineFacts, args: list[str]) -> bool:
    """Whether the args already say which model to serve: a model flag, or vLLM's positional model."""
    if find_flag(args, *facts.model_flags) is not None:
        return True
    return facts.positional_model and bool(args) and not args[0].startswith("-")


def needs_model_flag(container: Container) -> bool:
    """A member whose image runs the model server with our args must be told the model; else vLLM serves its default.

    Every such member: a headless multi-node worker loads the weights too.
    """
    facts = engine_of(container)
    return container.command is None and facts.image_serves and not names_a_model(facts, container.args or [])


def block_size(engine: Engine) -> int:
    """The engine's KV block size: vLLM `--block-size`, SGLang `--page-size`, else the engine's default."""
    member = next(m for m in engine.members if member_is_serving(m))
    _, container = engine_container(member)
    facts = engine_of(container)
    found = find_flag(container.args or [], *facts.block_size_flags)
    size = small_decimal(found[1]) if found else None
    return size if size else facts.default_block_size
