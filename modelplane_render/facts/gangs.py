"""What makes the pods of a multi-node gang one engine, and how many accelerators each pod's engine uses.

A LeaderWorkerSet starts a gang's pods side by side; nothing in them knows the others unless its
flags say so. Each pod is told, where its args leave it out, what its engine needs to join the gang
(from the LeaderWorkerSet's env, which GANG_ENV gives every member first):

- vLLM's mp backend (vllm/engine/arg_utils.py, v0.11.1 on: --nnodes, --node-rank, --master-addr;
  vllm/entrypoints/cli/serve.py: --headless runs no API server): every pod `--nnodes=N
  --node-rank=$(MODELPLANE_RANK) --master-addr=$(MODELPLANE_LEADER_ADDRESS)`, each Worker `--headless`,
  and the Leader's parallel sizes, which every node must share. Without them each pod starts alone and
  stops at "World size (16) is larger than the number of available GPUs (8) in this node"
  (vllm/config/parallel.py).
- SGLang (python/sglang/srt/server_args.py, 0.5: --nnodes, --node-rank, --dist-init-addr): the same
  command on every pod, rank 0 serving HTTP; the init address on port 20000, as LWS's SGLang example.

- vLLM's Ray backend (the Leader's `--distributed-executor-backend=ray`): Ray must run on every pod
  before vLLM starts, as vLLM's examples/online_serving/multi-node-serving.sh and LWS's vLLM example
  start it. The Leader's command runs in a fixed shell that starts the Ray head and then execs it
  unchanged (`exec "$@"`: the command and args are the shell's parameters, never its text); each Worker
  runs only `ray start` against the Leader, retried until the head answers. vLLM itself waits for the
  Workers' GPUs (its placement group).

What can't be added safely is refused with the fix: a Worker of a data-parallel gang needs its first
rank, a product Kubernetes' `$(VAR)` can't compute (a shell); a size that contradicts the gang; a Ray
Worker given engine args (it runs no engine).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

from .. import constants as c
from ..model import EngineMember
from .flags import find_flag, has_flag, small_decimal
from .versions import image_version, parse, shown

# (where in the container: ("args", k) for the arg holding the flag, ("args",) for the args as a whole), message
Refusal = tuple[tuple[object, ...], str]

RANK = f"$({c.ENV_RANK})"
LEADER = f"$({c.ENV_LEADER_ADDRESS})"
SGLANG_DIST_INIT_PORT = 20000

# A device request counts as an accelerator when its DeviceClass is a GPU driver's: NVIDIA's
# gpu.nvidia.com, AMD's gpu.amd.com, Intel's gpu.intel.com. A NIC (efa.networking.k8s.aws,
# rdma.dra.net) or any other class is a device the engine does not count in its parallel sizes.
ACCELERATOR_CLASS_PREFIX = "gpu."


@dataclass(frozen=True)
class ParallelFlags:
    """An engine's parallel-size flags, each with its aliases, as its argument parser has them."""

    tensor: tuple[str, ...]
    pipeline: tuple[str, ...]
    data: tuple[str, ...]
    data_local: tuple[str, ...]


VLLM_PARALLEL = ParallelFlags(
    ("--tensor-parallel-size", "-tp"),
    ("--pipeline-parallel-size", "-pp"),
    ("--data-parallel-size", "-dp"),
    ("--data-parallel-size-local", "-dpl"),
)
# SGLang's sizes are the whole gang's (its tp and pp span every node); --dp-size splits within tp.
SGLANG_PARALLEL = ParallelFlags(
    ("--tp-size", "--tensor-parallel-size"), ("--pp-size", "--pipeline-parallel-size"), ("--dp-size", "--data-parallel-size"), ()
)


# Ray's default GCS port, which LWS's and vLLM's examples start the head on.
RAY_PORT = 6379
# $0 of the Leader's shell, which names it in its errors; "$@" is the engine's command and args.
RAY_HEAD_SHELL = ("/bin/sh", "-c", f'ray start --head --port={RAY_PORT} && exec "$@"', "ray-head")
# The Leader's Ray head may start after a Worker: `ray start` gives up on an absent head, so it is
# retried, as vLLM's multi-node-serving.sh does. --block keeps the pod running with its raylet.
RAY_WORKER_COMMAND = (
    "/bin/sh",
    "-c",
    f'until ray start --block --address="${c.ENV_LEADER_ADDRESS}:{RAY_PORT}"; do sleep 5; done',
)


@dataclass
class Wiring:
    """What one member is told to join its gang, and what of its args we refuse."""

    added: list[str] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    # A shell the engine's command runs in: its script execs "$@", the command and args as they are.
    shell: tuple[str, ...] = ()
    # The command a pod of the gang runs instead of an engine (a Ray Worker's `ray start`), with no args.
    replaces: tuple[str, ...] = ()


def size(args: Sequence[str], names: tuple[str, ...]) -> Optional[int]:
    """A size flag's value (1 when absent; None when it is not a number we can read)."""
    if not names:
        return 1
    found = find_flag(args, *names)
    return 1 if found is None else small_decimal(found[1])


def vllm_gang(args: Sequence[str], command: Optional[Sequence[str]], position: str, gang_size: int, leader: Sequence[str]) -> Wiring:
    """vLLM across the gang's pods: the Ray backend where the Leader asks for it, else the mp backend (data
    parallelism across pods: refused unless the user wired it). `leader`: the words the Leader's engine starts with."""
    wiring = Wiring()
    backend = find_flag(leader, "--distributed-executor-backend")
    if backend is not None and backend[1] == "ray":
        return _vllm_ray(args, command, position)
    own = find_flag(args, "--distributed-executor-backend")
    if position == "Worker" and own is not None and own[1] == "ray":
        wiring.refusals.append(
            (
                ("args", own[0]),
                "the Worker asks for vLLM's Ray backend and the Leader does not: the Leader's args choose the gang's "
                "backend; say --distributed-executor-backend=ray there, and give the Worker no args",
            )
        )
        return wiring
    if (size(args, VLLM_PARALLEL.data) or 1) > 1 or (size(leader, VLLM_PARALLEL.data) or 1) > 1:
        if position == "Worker" and find_flag(args, "--data-parallel-start-rank") is None:
            wiring.refusals.append(
                (
                    ("args",),
                    "a Worker of a data-parallel gang needs its first rank, --data-parallel-start-rank: MODELPLANE_RANK "
                    "times the ranks a pod, which $(VAR) can't compute; start it in a shell "
                    "(docs/examples.md: Data parallel across nodes)",
                )
            )
        return wiring  # its data-parallel flags are the user's: only a shell can say them all
    given = find_flag(args, "--nnodes")
    if given is not None and small_decimal(given[1]) != gang_size:
        wiring.refusals.append((("args", given[0]), _nodes_mismatch(given[1], gang_size)))
    for flag, value in (("--nnodes", str(gang_size)), ("--node-rank", RANK), ("--master-addr", LEADER)):
        if find_flag(args, flag) is None:
            wiring.added.append(f"{flag}={value}")
    headless = has_flag(args, "--headless")
    if position == "Worker" and not headless:
        wiring.added.append("--headless")
    if position == "Leader" and headless:
        index = next(i for i, a in enumerate(args) if a == "--headless" or a.startswith("--headless="))
        wiring.refusals.append((("args", index), "the Leader serves the gang: --headless would start no API server; remove it"))
    if position == "Worker":
        wiring.added += _leaders_sizes(args, leader, VLLM_PARALLEL, wiring)
    return wiring


def _vllm_ray(args: Sequence[str], command: Optional[Sequence[str]], position: str) -> Wiring:
    """A member of a gang on vLLM's Ray backend: the Leader starts the Ray head before its engine; a Worker runs Ray only."""
    wiring = Wiring()
    if position == "Leader":
        wiring.shell = RAY_HEAD_SHELL
    elif command or args:
        where: tuple[object, ...] = ("command",) if command else ("args",)
        wiring.refusals.append(
            (
                where,
                "a Worker of a gang on vLLM's Ray backend runs no engine, only `ray start` joining the Leader's Ray head, "
                "which modelplane-render writes: remove the Worker's command and args (the Leader's args hold the "
                "engine's), or start Ray yourself in a shell (as fixtures/valid/ray-gang-leader-serves does)",
            )
        )
    else:
        wiring.replaces = RAY_WORKER_COMMAND
    return wiring


# vLLM's images carry Ray through v0.17.1 (the wheel's Requires-Dist: ray[cgraph]>=2.48.0); from v0.18.0
# the wheel, and so vllm/vllm-openai, has none: `ray: not found` on every pod of a Ray gang.
VLLM_IMAGE_WITHOUT_RAY = "0.18.0"
VLLM_IMAGES = ("vllm/vllm-openai",)

# vllm/engine/arg_utils.py (v0.23.0): data parallelism in which each node runs its own API server for its
# own ranks, balanced from outside: hybrid (-dph; inferred from --data-parallel-start-rank on a node that is
# not --headless), external (-dpe, -dpm, or a --data-parallel-rank of its own).
_EVERY_POD_SERVES = (
    "--data-parallel-hybrid-lb",
    "-dph",
    "--data-parallel-external-lb",
    "-dpe",
    "--data-parallel-multi-port-external-lb",
    "-dpm",
    "--data-parallel-rank",
    "-dpn",
)


def vllm_gang_refusals(words: Sequence[str], position: str, image: str, leader: Sequence[str]) -> list[tuple[str, str]]:
    """What a vLLM gang's member can't run, in its args or its script alike: ("image" or "words", why)."""
    refusals = []
    backend = find_flag(leader, "--distributed-executor-backend")
    version = image_version(image, VLLM_IMAGES)
    if backend is not None and backend[1] == "ray" and version is not None and version >= parse(VLLM_IMAGE_WITHOUT_RAY):
        refusals.append(
            (
                "image",
                f"{image} runs vLLM {shown(version)}, whose image has no Ray (vLLM's images dropped it in "
                f"{VLLM_IMAGE_WITHOUT_RAY}), and this gang's Ray backend runs `ray` on every pod: use an image that adds it "
                f"(FROM {image}, RUN pip install 'ray[cgraph]'), or leave the backend out and modelplane-render wires "
                "vLLM's mp backend",
            )
        )
    hybrid = position == "Worker" and has_flag(words, "--data-parallel-start-rank", "-dpr") and not has_flag(words, "--headless")
    if hybrid or has_flag(words, *_EVERY_POD_SERVES):
        refusals.append(
            (
                "words",
                "every pod of this data-parallel gang would serve its own ranks over HTTP (vLLM's hybrid or external load "
                "balancing; --data-parallel-start-rank on a Worker without --headless implies it), and modelplane-render "
                "puts only a gang's Leader in the pool: the Workers' ranks would get no traffic. Run each Worker "
                "--headless, so the Leader's API server balances every rank",
            )
        )
    return refusals


def sglang_gang_refusals(words: Sequence[str], position: str, image: str, leader: Sequence[str]) -> list[tuple[str, str]]:
    """SGLang serves from rank 0 alone in every multi-node mode (python/sglang/srt/entrypoints/http_server.py)."""
    return []


def sglang_gang(args: Sequence[str], command: Optional[Sequence[str]], position: str, gang_size: int, leader_args: Sequence[str]) -> Wiring:
    """SGLang across the gang's pods: one command on every pod, rank 0 serving."""
    wiring = Wiring()
    given = find_flag(args, "--nnodes")
    if given is not None and small_decimal(given[1]) != gang_size:
        wiring.refusals.append((("args", given[0]), _nodes_mismatch(given[1], gang_size)))
    for names, value in (
        (("--nnodes",), str(gang_size)),
        (("--node-rank",), RANK),
        (("--dist-init-addr", "--nccl-init-addr"), f"{LEADER}:{SGLANG_DIST_INIT_PORT}"),
    ):
        if find_flag(args, *names) is None:
            wiring.added.append(f"{names[0]}={value}")
    if position == "Worker":
        wiring.added += _leaders_sizes(args, leader_args, SGLANG_PARALLEL, wiring)
    return wiring


def _nodes_mismatch(given: Optional[str], gang_size: int) -> str:
    return (
        f"--nnodes={given}, but the gang is {gang_size} pods (the Leader and worker.nodes: {gang_size - 1}): "
        "leave it out, and modelplane-render sets it"
    )


def _leaders_sizes(args: Sequence[str], leader_args: Sequence[str], flags: ParallelFlags, wiring: Wiring) -> list[str]:
    """The Leader's tensor and pipeline sizes, which a Worker must share: added where it has none, refused where it differs."""
    added = []
    for names in (flags.tensor, flags.pipeline):
        leader, own = find_flag(leader_args, *names), find_flag(args, *names)
        if own is None:
            if leader is not None:
                added.append(f"{names[0]}={leader[1]}")
        elif small_decimal(own[1]) != (small_decimal(leader[1]) if leader else 1):
            wiring.refusals.append(
                (
                    ("args", own[0]),
                    f"{names[0]}={own[1]} differs from the Leader's ({leader[1] if leader else 1}): every pod of a gang runs one engine",
                )
            )
    return added


def accelerators(member: EngineMember) -> int:
    """The accelerators one pod of the member claims: the counts of its requests of a GPU DeviceClass."""
    return sum(r.count for r in member.device_requests or [] if r.device_class_name.startswith(ACCELERATOR_CLASS_PREFIX))


def per_pod(args: Sequence[str], flags: ParallelFlags, gang_size: int) -> tuple[Optional[int], str]:
    """The accelerators the engine's sizes give one pod, and how that is reckoned (None: not a whole number, or unreadable).

    vLLM: tensor × pipeline × data-parallel ranks, over the gang's pods, or × the local data-parallel
    ranks where --data-parallel-size-local says them; SGLang: tensor × pipeline over the pods (its
    data parallelism splits the tensor-parallel ranks).
    """
    tensor, pipeline = size(args, flags.tensor), size(args, flags.pipeline)
    if tensor is None or pipeline is None:
        return None, ""
    shown = f"{flags.tensor[0]}={tensor} × {flags.pipeline[0]}={pipeline}"
    total = tensor * pipeline
    if flags.data_local:
        if find_flag(args, *flags.data_local) is not None:
            local = size(args, flags.data_local)
            return (None, "") if local is None else (total * local, f"{shown} × {flags.data_local[0]}={local}")
        data = size(args, flags.data)
        if data is None:
            return None, ""
        if data != 1:
            total, shown = total * data, f"{shown} × {flags.data[0]}={data}"
    over = f"{shown} over {gang_size} pods" if gang_size != 1 else shown
    return (None, over) if total % gang_size else (total // gang_size, over)
