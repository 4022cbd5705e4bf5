"""What each engine (vLLM, SGLang) does with what we give it: one `EngineFacts` per engine.

Each fact names the upstream file it comes from. An engine container's flags are read from its
args (facts.flags), with the defaults the engine takes when a flag is absent; we add a flag only
where we choose a value the engine would not choose by itself. Which engine a container runs,
and what one member is told, is resolved once from these facts by facts.registry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from .. import constants as c
from ..model import Container
from .flags import find_flag, small_decimal
from .gangs import SGLANG_PARALLEL, VLLM_PARALLEL, ParallelFlags, Wiring, sglang_gang, sglang_gang_refusals, vllm_gang, vllm_gang_refusals
from .kv_transfer import sglang_side, vllm_side
from .shells import is_shell


@dataclass(frozen=True)
class EnvFact:
    """An env var we set on an engine container: a literal value, or a field of the pod (the downward API)."""

    name: str
    value: Optional[str] = None
    field_path: Optional[str] = None

    def plain(self) -> dict[str, Any]:
        if self.field_path is not None:
            return {"name": self.name, "valueFrom": {"fieldRef": {"fieldPath": self.field_path}}}
        return {"name": self.name, "value": self.value}


@dataclass(frozen=True)
class EngineFacts:
    """One engine's defaults and flags, as its server's argument parser has them."""

    name: str
    # The value of the picker's llm-d.ai/engine-type pod label, which chooses the metric names it scrapes.
    engine_type: str
    # What the picker scrapes from an engine of that type (llm-d-router v0.9.0
    # pkg/epp/framework/plugins/datalayer/extractor/metrics/factories.go): queued and running requests, KV-cache
    # use, the KV block size; a family it misses is counted as an extract error and its scores go stale.
    # The LoRA family appears only once an adapter is loaded, and the picker takes its absence quietly.
    picker_metrics: tuple[str, ...]
    picker_lora_metrics: tuple[str, ...]
    # How a container is recognised as this engine (facts.registry.recognise): its program named in its
    # command, its args after an interpreter, or its shell script (program_marks: a word's basename, before
    # the command's first flag), or, with no command, an image repository that contains one of image_marks.
    program_marks: tuple[str, ...]
    image_marks: tuple[str, ...]
    default_port: int
    # None: the engine listens on every address unless told otherwise.
    default_host: Optional[str]
    model_flags: tuple[str, ...]
    # Whether the model may be given as the first positional argument (`vllm serve /mnt/models`).
    positional_model: bool
    block_size_flags: tuple[str, ...]
    default_block_size: int
    # What each engine of a prefill/decode pair is told of the KV transfer, and the pd-sidecar protocol
    # that drives it (facts.kv_transfer); None: refused.
    kv_side: Callable[[Sequence[str], str], tuple[Wiring, Optional[str]]]
    # What every member of a prefill/decode engine is told in its env, for the KV transfer.
    pd_env: tuple[EnvFact, ...]
    # Whether the container's image runs the model server when it has no `command`, and what does.
    image_serves: bool
    server_command: tuple[str, ...]
    # The flag that turns on /metrics, which the picker scrapes for queue and KV-cache load (None: always on).
    metrics_flag: Optional[str]
    # How long one /health answer may take: SGLang's generates a token, with its own 20 s limit.
    health_timeout_seconds: int
    # Its parallel-size flags, and what a member of a multi-node gang is told (facts.gangs).
    parallel_flags: ParallelFlags
    join_gang: Callable[[Sequence[str], Optional[Sequence[str]], str, int, Sequence[str]], Wiring]
    # What a gang member can't run, whether its words are plain args or a script's: (words, position, image,
    # the Leader's words) -> ("image" or "words", why).
    gang_refusals: Callable[[Sequence[str], str, str, Sequence[str]], list[tuple[str, str]]]
    # Flags a serving engine is told only to improve on its defaults (facts.versions: added only for a
    # release known to have them).
    quiet_flags: tuple[str, ...]
    # The repositories whose image tags are this engine's releases (facts.versions.image_version).
    release_images: tuple[str, ...]
    # flag -> (the release that introduced it, whether the shape needs it), for each flag we add that is
    # younger than the releases anyone still runs (facts.versions says what is done with each).
    since: dict[str, tuple[str, bool]]


# vllm/entrypoints/openai/cli_args.py (host None: every address; port 8000); vllm/engine/arg_utils.py
# (--model, or the positional model_tag of `vllm serve`; --block-size, 16 on CUDA); the
# vllm/vllm-openai image's ENTRYPOINT is `vllm serve`.
VLLM = EngineFacts(
    name="vLLM",
    engine_type="vllm",
    picker_metrics=("vllm:num_requests_waiting", "vllm:num_requests_running", "vllm:kv_cache_usage_perc", "vllm:cache_config_info"),
    picker_lora_metrics=("vllm:lora_requests_info",),
    # `vllm serve`, `python3 -m vllm.entrypoints.openai.api_server`; and the registry's default: whatever
    # names no other engine is vLLM (its images, llm-d's).
    program_marks=("vllm", "vllm.entrypoints.openai.api_server"),
    image_marks=(),
    default_port=8000,
    default_host=None,
    model_flags=("--model",),
    positional_model=True,
    block_size_flags=("--block-size",),
    default_block_size=16,
    kv_side=vllm_side,
    # vllm/envs.py: the NIXL connector's side channel listens on this host and port; localhost by
    # default, which the other pod of the pair can't reach.
    pd_env=(
        EnvFact(c.NIXL_HOST_ENV, field_path="status.podIP"),
        EnvFact(c.NIXL_PORT_ENV, value=c.NIXL_PORT),
    ),
    image_serves=True,
    server_command=("vllm", "serve"),
    metrics_flag=None,
    # vllm/entrypoints/serve/instrumentator/health.py: asks the engine core, 503 once it is dead.
    # The 1 s default flaps on a busy engine whose /health shares the event loop with inference.
    health_timeout_seconds=5,
    parallel_flags=VLLM_PARALLEL,
    join_gang=vllm_gang,
    gang_refusals=vllm_gang_refusals,
    # vllm/entrypoints/openai/cli_args.py (v0.16.0 on): the probes ask /health every 10 s and the picker
    # scrapes /metrics every 50 ms, each an access-log line otherwise (llm-d's guides and KServe set it too).
    quiet_flags=("--disable-access-log-for-endpoints=/health,/metrics",),
    release_images=("vllm/vllm-openai",),
    since={
        # vllm/engine/arg_utils.py: the mp backend across nodes, and --headless for it, from v0.11.1.
        "--nnodes": ("0.11.1", True),
        "--node-rank": ("0.11.1", True),
        "--master-addr": ("0.11.1", True),
        "--headless": ("0.11.1", True),
        # vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py: the NixlConnector, from v0.9.0.
        # vLLM 0.32 (which tests/test_real_engine.py runs) takes the same config and runs it as a pulling
        # connector (NixlPullConnector): decode reads prefill's blocks, as on v0.23.0.
        "--kv-transfer-config": ("0.9.0", True),
        "--disable-access-log-for-endpoints": ("0.16.0", False),
    },
)

# python/sglang/srt/server_args.py: --host 127.0.0.1 and --port 30000 by default (a pod that sets
# neither is never reachable), --model-path (alias --model), --page-size 1. The lmsysorg/sglang
# image has no server entrypoint: it needs `command: [python3, -m, sglang.launch_server]`.
SGLANG = EngineFacts(
    name="SGLang",
    engine_type="sglang",
    picker_metrics=("sglang:num_queue_reqs", "sglang:num_running_reqs", "sglang:token_usage", "sglang:cache_config_info"),
    picker_lora_metrics=(),
    # `python3 -m sglang.launch_server`, `sglang serve`, in a command, its args or a script; lmsysorg/sglang.
    program_marks=("sglang", "sglang.launch_server"),
    image_marks=("sglang",),
    default_port=30000,
    default_host="127.0.0.1",
    model_flags=("--model-path", "--model"),
    positional_model=False,
    block_size_flags=("--page-size",),
    default_block_size=1,
    kv_side=sglang_side,
    pd_env=(),
    image_serves=False,
    # python/sglang/launch_server.py: still supported; `sglang serve` is the newer spelling.
    server_command=("python3", "-m", "sglang.launch_server"),
    # srt/arg_groups/fields/observability.py: enable_metrics is False by default.
    metrics_flag="--enable-metrics",
    # srt/entrypoints/http_server.py: /health runs a one-token generation (SGLANG_HEALTH_CHECK_TIMEOUT, 20 s).
    health_timeout_seconds=25,
    parallel_flags=SGLANG_PARALLEL,
    join_gang=sglang_gang,
    gang_refusals=sglang_gang_refusals,
    quiet_flags=(),
    release_images=("lmsysorg/sglang",),
    # python/sglang/srt/server_args.py: prefill/decode disaggregation from v0.4.5; the rest we add is older.
    since={"--disaggregation-mode": ("0.4.5", True)},
)


def args_reach_engine(container: Container) -> bool:
    """Whether flags we add to `args` reach the engine's parser (not a shell's positional parameters)."""
    return not is_shell(container)


def names_a_model(facts: EngineFacts, args: Sequence[str]) -> bool:
    """Whether the args already say which model to serve: a model flag, or vLLM's positional model."""
    if find_flag(args, *facts.model_flags) is not None:
        return True
    return facts.positional_model and bool(args) and not args[0].startswith("-")


def needs_model_flag(facts: EngineFacts, container: Container) -> bool:
    """A member whose image runs the model server with our args must be told the model; else vLLM serves its default.

    Every such member: a headless multi-node worker loads the weights too.
    """
    return container.command is None and facts.image_serves and not names_a_model(facts, container.args or [])


def block_size(facts: EngineFacts, args: Sequence[str]) -> int:
    """The engine's KV block size: vLLM `--block-size`, SGLang `--page-size`, else the engine's default."""
    found = find_flag(args, *facts.block_size_flags)
    size = small_decimal(found[1]) if found else None
    return size if size else facts.default_block_size
